"""One raw file as report.py reads it: implementations in order, successful results by (impl, workload, level),
the run's paired ratios; and the names every part of the report shares."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import ROOT, analysis, rawfile
from impls import LEVEL_ORDER, ranking_clock

COMMAND = "make bench"
TIE = "≈"


def every_machines_runs(results: Path) -> list[list[Path]]:
    """Each machine folder's raw files, oldest first (names start with a UTC date, so the last is the
    latest); a folder without any is left out."""
    found = [rawfile.runs(d) for d in sorted((results / "raw").glob("*/"))]
    if not any(found):
        raise FileNotFoundError(f"no raw results under {results / 'raw'}/<machine>/: run `make bench` first")
    return [runs for runs in found if runs]


def shown_path(path: Path) -> str:
    """A path relative to the repository when it lies inside it."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# The keys of a raw file's machine and config that the report reads of every run.
MACHINE_KEYS = ("slug", "cpu", "cores", "date", "git_commit")
CONFIG_KEYS = ("repeats", "min_time", "shuffle_seed")


class Data:
    """One raw file, indexed: implementations in order, ok results by (impl, workload, level)."""

    def __init__(self, doc: dict[str, Any], path: Path):
        if doc.get("schema") != rawfile.SCHEMA:
            raise ValueError(f"{shown_path(path)} is schema {doc.get('schema')}, not {rawfile.SCHEMA}: "
                             "rerun `make bench`")
        self.doc, self.path = doc, path
        try:
            self.machine = doc["machine"]
            for key in MACHINE_KEYS:                    # what every page and table of a run reads
                self.machine[key]
            for key in CONFIG_KEYS:
                doc["config"][key]
            self.impls = {i["name"]: i for i in doc["implementations"]}
            self.results = doc["results"]
            self.ok = {(r["impl"], r["workload"], r["level"]): r for r in self.results
                       if r["status"] == "ok" and not r.get("scan")}
            # Ratios from adjacent runs (bench.py's interleaved rounds), where the run has them: each pair
            # against its level's fastest, and Codon against the best port.
            self.paired = {k: r["paired"] for k, r in self.ok.items() if "paired" in r}
            self.codon_best = {(e["workload"], e["level"]): e for e in doc.get("codon_vs_best_port", {}).values()}
        except (KeyError, TypeError, AttributeError) as e:
            raise rawfile.malformed(shown_path(path), "a run's raw file", e) from None

    def levels(self, workload: str = "softplus") -> list[str]:
        """The levels timed in a workload, in order."""
        return [lv for lv in LEVEL_ORDER if any(k[1:] == (workload, lv) for k in self.ok)]

    def names(self, workload: str = "softplus") -> list[str]:
        """The implementations timed in a workload, in registry order."""
        return [n for n in self.impls if any(k[:2] == (n, workload) for k in self.ok)]

    def unit(self, workload: str) -> str:
        """The key of a workload's time: ns per sample (softplus) or ns per op (graph)."""
        return "ns_per_op" if workload == "graph" else "ns_per_iter"

    def ns(self, impl: str, level: str, workload: str = "softplus") -> float | None:
        """The median time of a pair, None when it was not timed successfully."""
        r = self.ok.get((impl, workload, level))
        return r[self.unit(workload)] if r else None

    def ci(self, impl: str, level: str, workload: str = "softplus") -> tuple[float, float] | None:
        """The 95% interval of a pair's median, in the workload's unit."""
        r = self.ok.get((impl, workload, level))
        return tuple(r[f"ci_{self.unit(workload)}"]) if r else None

    def peak_kb(self, impl: str, level: str, workload: str = "softplus") -> float | None:
        """The median over a pair's timed runs of the process's peak RSS in KiB (`peak_rss_kb`); None where it
        was not timed or its runs predate the record."""
        r = self.ok.get((impl, workload, level))
        return peak_kb(r) if r else None

    def has_peaks(self) -> bool:
        """Whether any timed pair's runs recorded their peak RSS (runs before it did: none)."""
        return any(peak_kb(r) is not None for r in self.ok.values())

    def fastest(self, level: str, workload: str = "softplus", among: list[str] | None = None) -> str | None:
        """The implementation with the smallest median at a level (among some names only); of all, the one
        the run's paired ratios are against where it has them (as bench.py found it: analysis.fastest)."""
        if among is None:
            cell = {k[0]: r for k, r in self.ok.items() if k[1:] == (workload, level)}
            against = {r["paired"]["against"] for r in cell.values() if "paired" in r}
            if len(against) == 1 and (a := against.pop()) in cell and "paired" not in cell[a] and \
                    {r.get("ops") for r in cell.values() if "paired" in r} == {cell[a].get("ops")}:
                return a            # (older runs paired the graph's 10,000 ops with a peer's 100)
        timed = [n for n in (among if among is not None else self.names(workload)) if self.ns(n, level, workload)]
        return analysis.fastest(timed, lambda n: self.ns(n, level, workload), analysis.no_pairs) if timed else None

    def ratio(self, impl: str, other: str, level: str, workload: str = "softplus") -> str:
        """impl over other: the median of their paired ratios where the run has them, marked TIE when its 95%
        interval holds 1.00; else the ratio of medians, TIE when their 95% intervals overlap; '-' if either
        is absent."""
        paired = self.paired.get((impl, workload, level))
        if paired and paired["against"] == other:
            return f"{TIE if paired['read'] == 'tie' else ''}{paired['median']:.2f}"
        a, b = self.ns(impl, level, workload), self.ns(other, level, workload)
        if a is None or b is None:
            return "-"
        tie = impl != other and analysis.overlap(self.ci(impl, level, workload), self.ci(other, level, workload))
        return f"{TIE if tie else ''}{a / b:.2f}"

    def pair(self, a: str, b: str, level: str, workload: str = "softplus") -> dict[str, Any] | None:
        """a over b at a level, from their adjacent runs (the rounds both ran in), by impls.ranking_clock:
        analysis.paired_reading's median, interval and read; None where either was not timed."""
        ra, rb = self.ok.get((a, workload, level)), self.ok.get((b, workload, level))
        if not ra or not rb:
            return None
        key = ranking_clock(level, bool(self.impls[a].get("compiled") and self.impls[b].get("compiled")))
        ratios = analysis.paired_ratios(ra["runs"], ra["iters"], rb["runs"], rb["iters"], key)
        return {**analysis.paired_reading(ratios), "clock": key} if ratios else None

    def ports(self) -> list[str]:
        """The compiled ports (C, Zig, Rust, Mojo, Cython, ...: the registry's compiled entries of kind port): what
        Codon is measured against."""
        return [n for n, i in self.impls.items() if i["kind"] == "port" and i.get("compiled")]

    def label(self, name: str, workload: str = "softplus") -> str:
        """How a row is named: peers marked as peers, a formula baseline as not an autograd, and a graph
        row timed at other ops than the run's (JAX: its compile time) with its own M."""
        impl = self.impls[name]
        notes = []
        if impl.get("kind") == "peer":
            notes.append("peer, autograd" if impl.get("autograd", True) else "peer, formula baseline, not an autograd")
        if workload == "graph":
            ops = sorted({r["ops"] for k, r in self.ok.items() if k[:2] == (name, "graph")})
            if ops and ops != [self.doc["config"]["ops"]]:
                notes.append(f"at {', '.join(f'{m:,}' for m in ops)} ops")
        return f"{name} ({', '.join(notes)})" if notes else name

    def scaling(self, workload: str = "softplus") -> dict[str, list[dict[str, Any]]]:
        """v4's results at every thread count, per implementation, fewest threads first."""
        out: dict[str, list[dict[str, Any]]] = {}
        for r in self.results:
            if r["status"] == "ok" and r["workload"] == workload and r["level"] == "v4":
                out.setdefault(r["impl"], []).append(r)
        return {n: sorted(rs, key=lambda r: r["threads"]) for n, rs in out.items()}


def peak_kb(r: dict[str, Any]) -> float | None:
    """The median of a result's runs' peak RSS in KiB (`peak_rss_kb`, processes.run_process); None without."""
    seen = [run["peak_rss_kb"] for run in r.get("runs", []) if run.get("peak_rss_kb") is not None]
    return analysis.median(seen) if seen else None
