"""A size sweep's raw file (scripts/sweep.py) as report.py reads it: ns/op by (implementation, level, M), the
tape's bytes at each M, and what the data say (issue 51 item 3), the report block `sweep`: where each level's
ns/op first doubles, Codon over the best port at 100, 10,000 and 1,000,000 ops, and whether v2's arrays keep
their lead over v0's and v1's objects as the graph leaves the caches (the seed's claim)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness import ROOT, analysis, rawfile
from harness.oracle import graph_nodes
from harness.rundata import TIE, peak_kb, shown_path
from harness.tables import reading
from impls import LEVELS, ranking_clock

# A sweep's raw file, as harness/sweep.py writes it: results/FOLDER/<machine slug>/<date>.json.gz, with
# "kind": KIND and "schema": SCHEMA (the layout of its keys, the one this module reads).
SCHEMA = 1
KIND = "sweep"
FOLDER = "sweep"
# Lanes of a v3/v4 tape: the Codon program's GRAPH_BATCH, read from its one definition.
GRAPH_BATCH = int(re.search(r"^GRAPH_BATCH: Literal\[int\] = (\d+)$",
                            (ROOT / "graph" / "simd.codon").read_text(), re.M)[1])
NODE_BYTES = 16                      # a node's val and grad doubles (graph/threads.codon's tapes_bytes)
CODON_AT = (100, 10_000, 1_000_000)  # the sizes Codon is compared with its best port at (issue 51)
COMMAND = "make sweep"


def tape_bytes(level: str, ops: int) -> int:
    """Bytes of one thread's tape at M ops: lanes x nodes x 16 (the programs' tapes_bytes for one tape)."""
    return (GRAPH_BATCH if level in ("v3", "v4") else 1) * graph_nodes(ops) * NODE_BYTES


def size_text(n: int) -> str:
    """Bytes as KiB, MiB or GiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v == int(v) or v >= 100 else f"{v:.1f} {unit}"
    return f"{n} B"


def doubling(series: list[tuple[int, float]]) -> int | None:
    """The first M at which ns/op reaches twice its value at the smallest M of the series (ascending M);
    None when it never does."""
    if not series:
        return None
    base = series[0][1]
    return next((ops for ops, ns in series[1:] if ns >= 2 * base), None)


class Sweep:
    """One sweep's raw file, indexed: ok results by (impl, level, ops); Codon over the best port by (level, ops)."""

    def __init__(self, doc: dict[str, Any], path: Path):
        if doc.get("kind") != KIND or doc.get("schema") != SCHEMA:
            raise ValueError(f"{shown_path(path)} is not a sweep's raw file of schema {SCHEMA}: rerun `make sweep`")
        self.doc, self.path = doc, path
        try:
            self.machine, self.config = doc["machine"], doc["config"]
            self.caches: dict[str, int | None] = self.machine.get("caches", {})
            self.sizes = [s["ops"] for s in doc["sizes"]]
            self.entries = {(e["impl"], e["level"], s["ops"]): e for s in doc["sizes"] for e in s["results"]
                            if not e.get("scan")}
            self.ok = {k: e for k, e in self.entries.items() if e["status"] == "ok"}
            self.codon_best = {(e["level"], s["ops"]): e for s in doc["sizes"]
                               for e in s["codon_vs_best_port"].values()}
            self.labels = {i["name"]: i["label"] for i in doc["implementations"]}
            for key in ("repeats", "min_time", "threads"):   # what the sentences read
                self.config[key]
            if not self.sizes:
                raise IndexError("no sizes")
        except (KeyError, TypeError, AttributeError, IndexError) as e:
            raise rawfile.malformed(shown_path(path), "a sweep's raw file", e) from None

    def names(self) -> list[str]:
        """The implementations timed, in registry order, Codon first."""
        return [n for n in self.labels if any(k[0] == n for k in self.ok)]

    def levels(self) -> list[str]:
        """The levels timed, in order."""
        return [lv for lv in LEVELS if any(k[1] == lv for k in self.ok)]

    def series(self, impl: str, level: str) -> list[tuple[int, float]]:
        """(M, median ns/op) at every size it was timed at, ascending."""
        return [(m, self.ok[impl, level, m]["ns_per_op"]) for m in self.sizes if (impl, level, m) in self.ok]

    def rss(self, impl: str, level: str) -> list[tuple[int, float]]:
        """(M, the median peak RSS in KiB of its timed runs: rundata.peak_kb) where the runs record it."""
        out = []
        for m in self.sizes:
            kb = peak_kb(self.ok[impl, level, m]) if (impl, level, m) in self.ok else None
            if kb is not None:
                out.append((m, kb))
        return out

    def refused_from(self, impl: str, level: str) -> int | None:
        """The smallest M the program refused (its tapes past the machine's memory), if any."""
        return next((m for m in self.sizes if self.entries.get((impl, level, m), {}).get("status") == "refused"),
                    None)

    def paired(self, impl: str, a: str, b: str, ops: int) -> dict[str, Any] | None:
        """impl's level a over its level b at M ops, from runs of the same rounds (time per sample, by CPU time
        as compiled single-threaded levels are compared); None where either is missing."""
        ea, eb = self.ok.get((impl, a, ops)), self.ok.get((impl, b, ops))
        if not ea or not eb:
            return None
        ratios = analysis.paired_ratios(ea["runs"], ea["iters"], eb["runs"], eb["iters"], ranking_clock(a, True))
        return analysis.paired_reading(ratios) if ratios else None


def v2_lead(sw: Sweep) -> list[tuple[str, dict[str, dict[str, Any] | None], str]]:
    """Per implementation with v0, v1 and v2 (Codon first): v2's time over v0's and over v1's at the smallest and
    the largest M (keys "v0@M"), and its verdict: "keeps" (ahead, interval below 1.00, at the largest M of every
    level it was ahead of at the smallest, and ahead of one at least), "loses" (behind or tied at the largest M
    where it was ahead at the smallest), or "no lead" (ahead of neither at the smallest M)."""
    out = []
    first, last = sw.sizes[0], sw.sizes[-1]
    for n in sw.names():
        if not all(sw.series(n, lv) for lv in ("v0", "v1", "v2")):
            continue
        got = {f"{lv}@{m}": sw.paired(n, "v2", lv, m) for m in (first, last) for lv in ("v0", "v1")}

        def ahead(key: str) -> bool:
            return got[key] is not None and got[key]["read"] == "faster"

        led = [lv for lv in ("v0", "v1") if ahead(f"{lv}@{first}")]
        verdict = "no lead" if not led else "keeps" if all(ahead(f"{lv}@{last}") for lv in led) else "loses"
        out.append((n, got, verdict))
    return out


def claim(leads: list[tuple[str, dict, str]], sizes: int = 2) -> str:
    """The seed's claim, decided by the data: confirmed when every implementation with a lead at the smallest M
    keeps it at the largest (and one has a lead at least); not judged where nothing could show it (one size, or
    no implementation timed at v0, v1 and v2)."""
    if sizes < 2:
        return "not judged (one size: the graph does not grow)"
    if not leads:
        return "not judged (no implementation was timed at v0, v1 and v2)"
    lost = [n for n, _, verdict in leads if verdict == "loses"]
    if lost:
        return f"not confirmed ({', '.join(lost)} loses it)"
    if not any(verdict == "keeps" for _, _, verdict in leads):
        return "not confirmed (no implementation's v2 leads v0 or v1 at the smallest size)"
    return "confirmed"


def plural(n: int, word: str) -> str:
    """`1 size`, `9 sizes`."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def every_size(sw: Sweep) -> str | None:
    """Codon over the best port at every size and level past v0 (the levels issue 51 holds to 1.0x): ahead of or
    tied with it in every cell, or the cells where it is behind; None where no such cell was timed."""
    cells = [(lv, m, sw.codon_best[lv, m]) for lv in sw.levels() if lv != "v0" for m in sw.sizes
             if (lv, m) in sw.codon_best]
    if not cells:
        return None
    levels = ", ".join(dict.fromkeys(lv for lv, _, _ in cells))
    behind = [f"{lv} at {m:,} ops {reading(e, name=e.get('port', ''))}" for lv, m, e in cells if e["read"] == "slower"]
    if behind:
        return (f"At every size, Codon at {levels} against the best port: behind in {len(behind)} of {len(cells)} "
                f"cells ({'; '.join(behind)}), ahead or tied in the rest.")
    ahead = sum(e["read"] == "faster" for _, _, e in cells)
    return (f"At every size, Codon at {levels} against the best port: ahead or tied in all {len(cells)} cells "
            f"(ahead in {ahead}).")


def caches_text(caches: dict[str, int | None]) -> str:
    """`L1d 32 KiB, L2 1 MiB, L3 32 MiB`, saying which the host does not report."""
    parts = [f"{k} {size_text(v)}" if v else f"{k} not reported by the host" for k, v in caches.items()]
    return ", ".join(parts) if parts else "caches not recorded"


def sentences(sw: Sweep) -> list[str]:
    """The report block `sweep`: the three answers of issue 51 item 3, generated from the sweep's raw file."""
    c, names, levels = sw.config, sw.names(), sw.levels()
    first, last = sw.sizes[0], sw.sizes[-1]
    host = sw.machine.get("slug") or sw.machine["cpu"]
    span = f"{first:,} to {last:,} ops" if last != first else f"{first:,} ops"
    out = [f"From [{sw.path.name}]({shown_path(sw.path)}) ({host}; {caches_text(sw.caches)}): "
           f"{plural(c['repeats'], 'paired round')} of at least {c['min_time']:g} s at each of "
           f"{plural(len(sw.sizes), 'size')}, {span}; v4 at {plural(c['threads'], 'thread')}.", ""]
    out += [f"Where ns/op (median seconds / iters / ops, the timed region's wall time) first reaches twice its "
            f"value at {first:,} ops, and Codon's time over the best compiled port's (the one it fares worst "
            "against; median of paired ratios from adjacent runs [95% interval], CPU time, v4 wall time; "
            f"{TIE}: a tie):",
            ""]
    at = [m for m in CODON_AT if m in sw.sizes] or [first, last]
    for lv in levels:
        doubles = []
        for n in names:
            series = sw.series(n, lv)
            if series:
                at_m, refused = doubling(series), sw.refused_from(n, lv)
                doubles.append(f"{n} {at_m:,}" if at_m else f"{n} never up to {series[-1][0]:,}"
                               + (f" (refused from {refused:,})" if refused else ""))
        codon = [f"{reading(sw.codon_best.get((lv, m)), name=sw.codon_best.get((lv, m), {}).get('port', ''))} at "
                 f"{m:,}" for m in at]
        out.append(f"- **{lv}** doubles at: {', '.join(doubles)}. Codon / best port: {'; '.join(codon)} ops.")
    if summary := every_size(sw):
        out += ["", summary]
    leads, ends = v2_lead(sw), " and ".join(f"{m:,}" for m in dict.fromkeys((first, last)))
    if leads:
        out += ["", f"v2's time over v0's and v1's in each implementation, at {ends} ops (same rounds, CPU time):", ""]
    else:
        out += ["", "v2's time over v0's and v1's: not measured, no implementation was timed at v0, v1 and v2."]
    for n, got, verdict in leads:
        led = [lv for lv in ("v0", "v1") if got[f"{lv}@{first}"] and got[f"{lv}@{first}"]["read"] == "faster"]
        kept = [lv for lv in led if got[f"{lv}@{last}"] and got[f"{lv}@{last}"]["read"] == "faster"]
        said = {"keeps": f"it led {' and '.join(led)} at {first:,} ops and still does: keeps its lead.",
                "loses": f"it led {' and '.join(led)} at {first:,} ops and no longer leads "
                         f"{' and '.join(lv for lv in led if lv not in kept)}: loses its lead.",
                "no lead": f"it led neither at {first:,} ops: no lead to keep."}[verdict]
        cells = [f"{reading(got[f'v0@{m}'])} of v0's and {reading(got[f'v1@{m}'])} of v1's at {m:,} ops"
                 for m in dict.fromkeys((first, last))]
        out.append(f"- {n}: v2's time is {'; '.join(cells)}; {said}")
    tape = " to ".join(dict.fromkeys(size_text(tape_bytes("v2", m)) for m in (first, last)))
    out += ["", f"The seed's claim, that v2's arrays keep their lead over v0's and v1's objects as the graph leaves "
            f"the caches ({span}, {tape} of v2's tape): **{claim(leads, len(sw.sizes))}**."]
    return out


def footer(sw: Sweep) -> str:
    """The note each chart carries: generated, and from which raw file."""
    return f"Generated by `{COMMAND}` (scripts/report.py --sweep {shown_path(sw.path)}); do not edit."


def latest(results: Path) -> Path:
    """The newest sweep raw file under results/sweep/<machine>/."""
    found = sorted((p for d in (results / FOLDER).glob("*/") for p in rawfile.runs(d)), key=lambda p: p.name)
    if not found:
        raise FileNotFoundError(f"no sweep under {results / FOLDER}/<machine>/: run `make sweep` first")
    return found[-1]
