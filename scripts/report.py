#!/usr/bin/env python3
"""Turn raw benchmark files (scripts/bench.py's results/raw/<machine>/*.json.gz) into results/README.md
and PNG charts: a section per machine (its latest run), cross-machine tables of Codon against the best
port (each machine's latest run, and every run), ns/iter normalized to the fastest with ties marked, the
v0 -> v4 ladder, the tape's overhead, thread scaling, and the graph workload beside A. Rogozhnikov's
published numbers.

    python scripts/report.py [RAW.json.gz ...] [--out DIR] [--no-charts]

Without RAW it reads every file under results/raw/*/: each machine's latest for its section, all of them
for the table of every run (given RAW, those runs alone). The charts are drawn
from the newest of the runs. The markdown needs only the standard library; the charts need
matplotlib (`make bench` installs it).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from harness import rawfile  # noqa: E402
from harness.analysis import median, overlap, paired_ratios, paired_reading  # noqa: E402
from harness.rawfile import SCHEMA  # noqa: E402
from impls import BASELINES, LEVEL_ORDER, LEVELS, WORKLOADS, ranking_clock  # noqa: E402

CHARTS = {"normalized": "normalized.png", "ladder": "ladder.png", "threads": "threads.png", "graph": "graph.png"}
COMMAND = "make bench"
TIE = "≈"
# A. Rogozhnikov, "Fastest Autograd in the West" (2023): his seconds for 10,000 ops x 10,000
# passes on an Apple M1, so ns/op = seconds * 10. Replayed here as published, never rerun, and
# his gradients were not verified (his loss leaves the inputs' gradients at 0, contract-graph).
ROGOZHNIKOV = [("C", 0.99), ("Rust", 1.4), ("numba", 41.0), ("Python (index tape)", 94.0),
               ("JAX (jit, compile included)", 470.0), ("PyTorch", 1130.0)]
ROGOZHNIKOV_LABEL = ("A. Rogozhnikov's published numbers (his: Apple M1, 2023; replayed, not rerun; "
                     "gradients unverified)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description="Write results/README.md and charts from raw benchmark files.")
    p.add_argument("raw", nargs="*", type=Path,
                   help="raw results files (default: every results/raw/<machine>/*.json.gz, each machine's "
                        "latest for its section)")
    p.add_argument("--out", type=Path, default=ROOT / "results", help="output directory (default results/)")
    p.add_argument("--no-charts", action="store_true", help="write the markdown only (no matplotlib needed)")
    p.add_argument("--readme", type=Path, metavar="FILE", nargs="+",
                   help="instead: regenerate each FILE's report blocks (`<!-- report.py: NAME from RAW -->` ... "
                        "`<!-- report.py: end -->`), each from the raw file it names, and the charts they show")
    return p.parse_args(argv)


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


# --- reading a raw file ----------------------------------------------------------------------

class Data:
    """One raw file, indexed: implementations in order, ok results by (impl, workload, level)."""

    def __init__(self, doc: dict[str, Any], path: Path):
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"{shown_path(path)} is schema {doc.get('schema')}, not {SCHEMA}: rerun `make bench`")
        self.doc, self.path = doc, path
        self.machine = doc["machine"]
        self.impls = {i["name"]: i for i in doc["implementations"]}
        self.results = doc["results"]
        self.ok = {(r["impl"], r["workload"], r["level"]): r for r in self.results
                   if r["status"] == "ok" and not r.get("scan")}
        # Ratios from adjacent runs (bench.py's interleaved rounds), where the run has them: each pair
        # against its level's fastest, and Codon against the best port.
        self.paired = {k: r["paired"] for k, r in self.ok.items() if "paired" in r}
        self.codon_best = {(e["workload"], e["level"]): e for e in doc.get("codon_vs_best_port", {}).values()}

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

    def fastest(self, level: str, workload: str = "softplus", among: list[str] | None = None) -> str | None:
        """The implementation with the smallest median at a level (among some names only); of all, the one
        the run's paired ratios are against where it has them (bench.py's: harness.analysis.fastest)."""
        if among is None:
            cell = {k[0]: r for k, r in self.ok.items() if k[1:] == (workload, level)}
            against = {r["paired"]["against"] for r in cell.values() if "paired" in r}
            if len(against) == 1 and (a := against.pop()) in cell and "paired" not in cell[a] and \
                    {r.get("ops") for r in cell.values() if "paired" in r} == {cell[a].get("ops")}:
                return a            # (runs before 2026-12-04 paired the graph's 10,000 ops with a peer's 100)
        timed = [n for n in (among if among is not None else self.names(workload)) if self.ns(n, level, workload)]
        return min(timed, key=lambda n: self.ns(n, level, workload)) if timed else None

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
        tie = impl != other and overlap(self.ci(impl, level, workload), self.ci(other, level, workload))
        return f"{TIE if tie else ''}{a / b:.2f}"

    def pair(self, a: str, b: str, level: str, workload: str = "softplus") -> dict[str, Any] | None:
        """a over b at a level, from their adjacent runs (the rounds both ran in), by impls.ranking_clock:
        stats.paired_reading's median, interval and read; None where either was not timed."""
        ra, rb = self.ok.get((a, workload, level)), self.ok.get((b, workload, level))
        if not ra or not rb:
            return None
        key = ranking_clock(level, bool(self.impls[a].get("compiled") and self.impls[b].get("compiled")))
        ratios = paired_ratios(ra["runs"], ra["iters"], rb["runs"], rb["iters"], key)
        return {**paired_reading(ratios), "clock": key} if ratios else None

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


# --- markdown --------------------------------------------------------------------------------

# Every table of times says which clock its numbers come from (the timed region's, as the program reports it).
WALL = "Clock: wall time of the timed region (`seconds`), the median of the runs."
PAIRED = ("Clock: each ratio is the median of paired ratios from adjacent runs, by the timed region's CPU time "
          "(`cpu_seconds`) where both sides are single-threaded levels of compiled programs, by its wall time "
          "(`seconds`) at v4 and wherever a peer or an interpreter is one side.")
NO_CLOCK = ""     # a table of no times (the machines, the toolchains)


def table(header: list[str], rows: list[list[str]], align: str, clock: str) -> list[str]:
    """A markdown table, after the line saying which clock its times come from (NO_CLOCK: none); align has
    one letter per column, l or r."""
    marks = {"l": ":--", "r": "--:"}
    return ([f"*{clock}*", ""] if clock else []) + [
        "| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |",
        *("| " + " | ".join(r) + " |" for r in rows), ""]


def num(v: float | None, fmt: str = "{:.2f}") -> str:
    """A number for a cell; '-' when absent."""
    return "-" if v is None else fmt.format(v)


def ns_table(d: Data, workload: str = "softplus", names: list[str] | None = None) -> list[str]:
    """Median time, implementation x level (names: only those, in that order)."""
    levels = d.levels(workload)
    shown = [n for n in names if n in d.names(workload)] if names is not None else d.names(workload)
    rows = [[d.label(n, workload)] + [num(d.ns(n, lv, workload)) for lv in levels] for n in shown]
    return table([d.unit(workload).replace("_per_", "/")] + levels, rows, "l" + "r" * len(levels), WALL)


def normalized_table(d: Data, workload: str = "softplus") -> list[str]:
    """Each level's times over that level's fastest (bold); TIE where the intervals overlap the fastest's."""
    levels = d.levels(workload)
    rows = []
    for n in d.names(workload):
        cells = []
        for lv in levels:
            best = d.fastest(lv, workload)
            cells.append("**1.00**" if n == best else d.ratio(n, best, lv, workload) if best else "-")
        rows.append([d.label(n, workload)] + cells)
    return table(["x fastest"] + levels, rows, "l" + "r" * len(levels), PAIRED if d.paired else WALL)


def c_v2_table(d: Data) -> list[str]:
    """Times over C v2's (the reference point of the project's claims)."""
    base = d.ns("c", "v2")
    if base is None:
        return ["C v2 was not timed, so there are no ratios to it.", ""]
    levels = d.levels()
    rows = [[d.label(n)] + [num(None if d.ns(n, lv) is None else d.ns(n, lv) / base) for lv in levels]
            for n in d.names()]
    return table(["x C v2"] + levels, rows, "l" + "r" * len(levels), WALL)


def ladder_table(d: Data, workload: str = "softplus") -> list[str]:
    """Per language, each level's time and speed-up over its own v0."""
    rows = []
    for n in d.names(workload):
        if not any(d.ns(n, lv, workload) for lv in LEVELS[:3]):
            continue                                   # the peers have no ladder
        v0 = d.ns(n, "v0", workload)
        cells = []
        for lv in LEVELS:
            v = d.ns(n, lv, workload)
            cells.append("-" if v is None else (f"{v:.2f}" + (f" ({v0 / v:.1f}x)" if v0 and lv != "v0" else "")))
        best = min((d.ns(n, lv, workload) for lv in LEVELS if d.ns(n, lv, workload)), default=None)
        rows.append([d.label(n, workload)] + cells + [num(v0 / best if v0 and best else None, "{:.1f}x")])
    unit = d.unit(workload).replace("_per_", "/")
    return table([f"{unit} (x its v0)"] + LEVELS + ["v0 / best level"], rows, "l" + "r" * (len(LEVELS) + 1),
                 WALL)


def overhead_table(d: Data) -> list[str]:
    """What the tape costs over the same math written without one (1.00 = free)."""
    best_simd = d.fastest("fused-simd")
    rows = []
    for n in d.names():
        v2, fused = d.ns(n, "v2"), d.ns(n, "fused")
        v3, simd = d.ns(n, "v3"), d.ns(n, "fused-simd")
        cells = [num(v2 / fused if v2 and fused else None), num(v3 / simd if v3 and simd else None),
                 num(v3 / d.ns(best_simd, "fused-simd") if v3 and best_simd else None)]
        if any(c != "-" for c in cells):
            rows.append([d.label(n)] + cells)
    return table(["tape / baseline", "v2 / its fused", "v3 / its fused-simd", "v3 / fastest fused-simd"],
                 rows, "lrrr", WALL)


def threads_table(d: Data, workload: str = "softplus") -> list[str]:
    """v4 at each thread count: time, speed-up over the same implementation's v3, parallel efficiency, and the
    process's CPU time over wall time (the threads it kept busy: a speed-up alone does not show that)."""
    unit = d.unit(workload)
    rows = []
    for n, rs in d.scaling(workload).items():
        v3 = d.ns(n, "v3", workload)
        for r in rs:
            speedup = v3 / r[unit] if v3 else None
            rows.append([d.label(n, workload), str(r["threads"]), f"{r[unit]:.2f}", num(speedup, "{:.2f}x"),
                         num(speedup / r["threads"] if speedup else None, "{:.0%}"), num(busy(r), "{:.1f}")])
    if not rows:
        return ["No v4 was timed.", ""]
    return table(["v4", "threads", unit.replace("_per_", "/"), "speed-up over its v3", "efficiency", "CPU / wall"],
                 rows, "lrrrrr", WALL)


def busy(r: dict[str, Any]) -> float | None:
    """The median over a result's runs of the timed region's CPU time over its wall time."""
    ratios = [x["cpu_seconds"] / x["seconds"] for x in r.get("runs", []) if x.get("seconds") and "cpu_seconds" in x]
    return median(ratios) if ratios else None


def gpu_table(runs: list[Data]) -> list[str]:
    """The runs at a fixed N of v4 (on the most threads the run had) and v5: one row per run, its build's target,
    both medians with their 95% intervals, and v4 over v5 (a ratio of medians: no adjacent pairs across a
    device and the CPU's threads)."""
    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "-"
        lo, hi = r["ci_ns_per_iter"]
        return f"{r['ns_per_iter']:.4g} [{lo:.4g}, {hi:.4g}]"
    rows = []
    for d in runs:
        n = d.doc["config"].get("iters")
        v4, v5 = d.ok.get(("codon", "softplus", "v4")), d.ok.get(("codon", "softplus", "v5"))
        if n is None or (v4 is None and v5 is None):
            continue
        codon = d.impls["codon"]
        rows.append([f"[{d.path.name}]({shown_path(d.path)})", f"`{codon['command']}`, {codon.get('target')}",
                     f"{n:.0e}".replace("e+", "e"), str(v4["threads"]) if v4 else "-", cell(v4),
                     num(busy(v4) if v4 else None, "{:.1f}"), cell(v5),
                     f"{v4['ns_per_iter'] / v5['ns_per_iter']:.0f}x" if v4 and v5 else "-"])
    return table(["run", "program, target", "N", "v4 threads", "v4 ns/iter [95%]", "v4 CPU / wall",
                  "v5 ns/iter [95%]", "v4 / v5"], rows, "llrrrrrr", WALL)


def rogozhnikov_table() -> list[str]:
    """His published row, in ns per op, labelled as his."""
    return table(["", *(name for name, _ in ROGOZHNIKOV)],
                 [["ns/op (his)", *(f"{s * 10:,.1f}".removesuffix(".0") for _, s in ROGOZHNIKOV)]],
                 "l" + "r" * len(ROGOZHNIKOV), "Clock: his, as published (wall time of his whole run).")


def runs_table(d: Data) -> list[str]:
    """Every timed pair: N, median, its 95% interval, min, max, the median CPU time, the runs' count, and the
    most the rest of the machine did during one of its runs (other processes, steal; '?' for older runs)."""
    rows = []
    for r in d.results:
        if r["status"] != "ok":
            continue
        cpu = [run["cpu_seconds"] for run in r["runs"] if "cpu_seconds" in run]
        rows.append([r["impl"], r["workload"], r["level"], str(r["threads"]), f"{r['iters']:,}",
                     f"{r['median_s']:.4f}", f"{r['ci_low_s']:.4f}-{r['ci_high_s']:.4f}",
                     f"{r['ci_coverage']:.1%}", f"{r['min_s']:.4f}", f"{r['max_s']:.4f}",
                     num(median(cpu) if cpu else None, "{:.4f}"), str(len(r["runs"])),
                     *("?" if r.get(k) is None else f"{r[k]:.2f}" for k in ("max_other_load", "max_steal"))])
    return table(["impl", "workload", "level", "threads", "N", "median s", "interval s", "coverage", "min s",
                  "max s", "median CPU s", "runs", "others, CPUs (max)", "steal, CPUs (max)"], rows,
                 "lllrrrrrrrrrrr", "Clock: wall time of the timed region (`seconds`), and its CPU time "
                 "(`cpu_seconds`) in its own column; others: the CPUs other processes kept busy during the run, "
                 "steal included, from /proc/stat.")


def problems(d: Data) -> list[str]:
    """Skipped or failed implementations, failed pairs (with their numbers) and the harness's notes."""
    out = [f"- **{i['name']}** {i['status']}: {i['reason']}" for i in d.doc["implementations"] if i["status"] != "ok"]
    out += [f"- **{i['name']}** graph probe {i['graph']}" for i in d.doc["implementations"]
            if str(i.get("graph", "")).startswith("failed")]
    out += [f"- **{r['impl']} {r['workload']} {r['level']}**"
            + (f" ({r['threads']} threads)" if r["level"] == "v4" else "")
            + f" failed (not in the tables): {r['reason']}" for r in d.results if r["status"] == "failed"]
    out += [f"- {n}" for n in d.doc.get("notes", [])]
    return out + [""] if out else ["None: every implementation built and every level agreed with the reference.", ""]


def loads(values: list[float] | None) -> str:
    """A load average triple as '0.12, 0.30, 0.25'."""
    return ", ".join(f"{v:.2f}" for v in values) if values else "?"


def machine_table(d: Data) -> list[str]:
    """The machine, the commit, the run, and each implementation's toolchain, target and vector width."""
    m, c = d.machine, d.doc["config"]
    flags = ", ".join(f for f in ("avx2", "avx512f") if m.get(f)) or "neither avx2 nor avx512f"
    rows = [["CPU", f"{m['cpu']} (family {m.get('cpu_family')}, model {m.get('cpu_model')}; {flags})"],
            ["cores", f"{m['cores']} available to the run ({m['logical_cpus']} logical CPUs)"],
            ["memory", m.get("memory", "")], ["OS", m["os"]], ["Python", m["python"]],
            ["commit", f"`{m['git_commit'][:12]}`" + (" (with uncommitted changes)" if m.get("git_dirty") else "")],
            ["date", m["date"]],
            ["load average (1, 5, 15 min)", f"{loads(m.get('load_average_start'))} at the start, "
                                            f"{loads(m.get('load_average_end'))} at the end"],
            ["other processes while timing", "?" if m.get("other_load") is None else
             f"{m['other_load']:.2f} CPUs busy on average (besides the benchmark)"
             + ("" if m.get("steal") is None
                else f", of which steal (the hypervisor's other guests) {m['steal']:.2f}")],
            ["run", f"`{d.doc['command']}`, {m.get('seconds', 0):.0f} s; built for CPU={c.get('cpu_target')}; "
                    f"round order shuffled with seed {c.get('shuffle_seed')}"]]
    for i in d.doc["implementations"]:
        if i["status"] != "ok":
            continue
        parts = [i.get("version", "")]
        if i.get("vector_width") is not None:
            parts.append(f"target {i['target']}, vector width {i['vector_width']}"
                         + (f" ({i['vector']})" if i.get("vector") else ""))
        elif i.get("compiled"):
            parts.append("target and vector width not stated")
        if i.get("compiler_version"):
            parts.append(f"compiler `{i['compiler']}`: {i['compiler_version']}")
        for var, flags_ in i.get("flags", {}).items():
            parts.append(f"{var} `{flags_}`")
        if i.get("python"):
            parts.append(i["python"])
        rows.append([i["name"], "; ".join(p for p in parts if p)])
    return table(["", ""], rows, "ll", NO_CLOCK)


def method(d: Data) -> str:
    """How the numbers of a run were measured, in one paragraph."""
    c = d.doc["config"]
    size = (f"N fixed at {c['iters']:,}" if c.get("iters") else
            f"N calibrated per level so that a run lasts at least {c['min_time']:g} s (doubled on the Codon "
            "program; every compiled implementation of a level runs that same N, the interpreted ones their own)")
    coverage = min((r["ci_coverage"] for r in d.results if r["status"] == "ok"), default=1.0)
    weak = (f"; with {c['repeats']} runs an interval can only be [min, max], which covers the median with "
            f"{coverage:.0%}" if coverage < 0.95 else "")
    if d.paired:
        return (f"Every pair was checked against the reference before timing, then timed {c['repeats']} times in "
                f"rounds (seed {c['shuffle_seed']}), one process per run, {size}. Each round ran the levels in a "
                "shuffled order and a level's implementations back to back, also shuffled, so every ratio to a "
                "level's fastest is the median of that many paired ratios from adjacent runs, by the timed "
                "region's CPU time (single-threaded levels of compiled programs) or wall time (v4, peers, "
                "interpreters); "
                f"{TIE} marks one whose 95% interval (order statistics, distribution-free{weak}) holds 1.00: a tie "
                "at this machine's noise. Times per sample are medians.")
    return (f"Every pair was checked against the reference before timing, then timed {c['repeats']} times in rounds "
            f"whose order was shuffled (seed {c['shuffle_seed']}), one process per run, {size}. Tables give the "
            f"median; {TIE} marks a ratio whose two 95% confidence intervals of the median (order statistics, "
            f"distribution-free{weak}) overlap: a tie at this machine's noise.")


def machine_section(d: Data, charts: list[str], out: Path) -> list[str]:
    """Everything about one machine's latest run (charts: those drawn from it; out: README's folder)."""
    m = d.machine
    lines = [f"## {m['slug']}", "",
             f"{m['cpu']}, {m['cores']} cores, commit `{m['git_commit'][:12]}`, {m['date']}, from "
             f"[`{shown_path(d.path)}`]({os.path.relpath(d.path.resolve(), out.resolve())}). {method(d)}", "",
             *precision(d),
             "### softplus: time per sample (ns/iter, median)", "", *ns_table(d),
             "### softplus: normalized to the fastest at each level", "",
             f"1.00 is the fastest implementation of that level; 2.00 takes twice as long; {TIE}: a tie.", "",
             *normalized_table(d)]
    if "normalized" in charts:
        lines += [f"![ns/iter normalized to the fastest, per level]({CHARTS['normalized']})", ""]
    lines += ["### softplus: the ladder, v0 to v4", "",
              "ns/iter at each level and, in brackets, the speed-up over the same language's v0.", "", *ladder_table(d)]
    if "ladder" in charts:
        lines += [f"![the v0 to v4 ladder]({CHARTS['ladder']})", ""]
    lines += ["### softplus: tape overhead against the baselines", "",
              "v2 over the scalar `fused`, v3 over the batched `fused-simd` of the same implementation and over the "
              "fastest `fused-simd` of all (1.00: the tape is free).", "", *overhead_table(d),
              "### softplus: relative to C v2", "", *c_v2_table(d),
              "### Thread scaling (v4)", "",
              "v4 at 1, 2, 4, ... threads up to the cores available; speed-up over the same implementation's "
              "one-thread v3, and that over the threads (parallel efficiency).", "", *threads_table(d)]
    if d.scaling("graph"):
        lines += ["Graph workload:", "", *threads_table(d, "graph")]
    if "threads" in charts:
        lines += [f"![v4 speed-up over v3 by threads]({CHARTS['threads']})", ""]
    if d.names("graph"):
        lines += ["### Graph workload: time per op (ns/op, median)", "",
                  f"{d.doc['config']['ops']:,} ops a sample (docs/contract-graph.md), one forward and backward pass "
                  "over the whole graph per sample, over its ops.", "", *ns_table(d, "graph"),
                  "Normalized to the fastest at each level:", "", *normalized_table(d, "graph"),
                  f"{ROGOZHNIKOV_LABEL}; his 10,000 ops x 10,000 passes, his loss:", "", *rogozhnikov_table()]
        if "graph" in charts:
            lines += [f"![graph workload, ns per op, beside Rogozhnikov's published numbers]({CHARTS['graph']})", ""]
    lines += ["### Failures, skips and notes", "", *problems(d),
              "### Machine and toolchains", "", *machine_table(d),
              "### Every timed pair", "", *runs_table(d)]
    return lines


def codon_vs_best(d: Data, workload: str, level: str, interval: bool = True) -> tuple[str, str]:
    """Codon over the best compiled port at a level, as a cell (`0.96 [0.95, 0.98] (zig)`; without the
    interval if not `interval`), and its read: 'faster', 'tie' or 'slower' ('' where not timed). From the
    run's paired ratios where it has them, else the ratio of medians (a tie where their intervals overlap)."""
    e = d.codon_best.get((workload, level))
    if e:
        lo, hi = e["interval"]
        span = f" [{lo:.2f}, {hi:.2f}]" if interval else ""
        return f"{TIE if e['read'] == 'tie' else ''}{e['median']:.2f}{span} ({e['port']})", e["read"]
    best = d.fastest(level, workload, among=d.ports())
    if not best or not d.ns("codon", level, workload):
        return "-", ""
    cell = d.ratio("codon", best, level, workload)
    read = "tie" if cell.startswith(TIE) else "faster" if float(cell) < 1 else "slower"
    return f"{cell} ({best})", read


def cross_machine(runs: list[Data]) -> list[str]:
    """Codon's median over the best compiled port's, per level, one row per machine."""
    out = []
    for workload in ("softplus", "graph"):
        levels = [lv for lv in LEVEL_ORDER if any(lv in d.levels(workload) for d in runs)]
        rows = []
        for d in runs:
            if not any(d.ns("codon", lv, workload) for lv in levels):
                continue
            rows.append([d.machine["slug"]] + [codon_vs_best(d, workload, lv)[0] for lv in levels])
        if rows:
            out += [f"{workload}:", "", *table(["machine"] + levels, rows, "l" + "r" * len(levels),
                                               PAIRED + " Older runs without pairs: " + WALL[7:])]
    return out or ["No run timed Codon and a port.", ""]


# The levels at which the project claims Codon at or ahead of the best port
# (docs/findings/codon-against-the-best-port.md; v0's gap is explained there instead).
CLAIMED = [(w, lv) for w in ("softplus", "graph") for lv in ("v1", "v2", "v3", "v4")]


def every_run(runs: list[Data], base: Path) -> list[str]:
    """Per machine (the machine of the newest run first), one row per run (newest first): its commit and
    Codon over the best port at v1-v4 of both workloads, the cells where Codon is behind in bold and named in
    the last column (base: the folder of the markdown, which links each run's raw file)."""
    out = []
    newest_first = sorted(runs, key=lambda d: d.machine["date"], reverse=True)
    for slug in dict.fromkeys(d.machine["slug"] for d in newest_first):
        rows = []
        for d in (d for d in newest_first if d.machine["slug"] == slug):
            cells, behind = [], []
            for workload, lv in CLAIMED:
                cell, read = codon_vs_best(d, workload, lv, interval=False)
                cells.append(f"**{cell}**" if read == "slower" else cell)
                if read == "slower":
                    behind.append(f"{workload} {lv}")
            link = Path(os.path.relpath(d.path.resolve(), base.resolve())).as_posix()
            rows.append([f"[{d.machine['date'][:16].replace('T', ' ')}]({link})",
                         f"`{d.machine['git_commit'][:7]}`" + (" (dirty)" if d.machine.get("git_dirty") else ""),
                         *cells, ", ".join(behind) or "none"])
        out += [f"{slug}:", "", *table(["run", "commit", *(f"{w} {lv}" for w, lv in CLAIMED), "behind"], rows,
                                        "ll" + "r" * len(CLAIMED) + "l",
                                        PAIRED + " Runs without pairs: " + WALL[7:])]
    return out


def machines_table(runs: list[Data]) -> list[str]:
    """One row per machine: its slug, CPU, family/model, cores, vector extensions, date and commit."""
    rows = []
    for d in runs:
        m = d.machine
        rows.append([f"[{m['slug']}]({page_name(d)})", m["cpu"], f"{m.get('cpu_family')} / {m.get('cpu_model')}",
                     str(m["cores"]),
                     "yes" if m.get("avx2") else "no", "yes" if m.get("avx512f") else "no", m["date"],
                     f"`{m['git_commit'][:12]}`"])
    return table(["machine", "CPU", "family / model", "cores", "AVX2", "AVX-512F", "date", "commit"], rows,
                 "lllrllll", NO_CLOCK)


def markdown(runs: list[Data], charts: list[str], out: Path, history: list[Data] | None = None) -> str:
    """results/README.md in `out`: the machines, Codon against the best port on each, the charts (from the
    first run), every run of every machine; runs newest first, each machine's latest; history: every run of
    the machines, for the table of every run (default: runs). Each machine's full tables: machine_page."""
    files = " ".join(shown_path(d.path) for d in runs)
    lines = [f"<!-- Generated by `{COMMAND}` (python scripts/report.py {files}); do not edit. -->",
             "# Benchmark results", "",
             f"Generated by `{COMMAND}` with `scripts/report.py` from results/raw/<machine>/, the raw file of every "
             "run; rerun `make bench` to add yours ([CONTRIBUTING.md](../CONTRIBUTING.md)). Each machine's page "
             "holds its latest run's full tables, with every timed pair.", "",
             "Levels v0-v4 are reverse-mode tapes (docs/contract.md §3); `fused` and `fused-simd` are baselines "
             "with no tape, the floor a tape can approach. The peers are what a user might pick instead: "
             "**JAX** (`jit(vmap(value_and_grad))`, float64, one thread; the one compilation is done by a "
             "warm-up call before the clock starts) and **PyTorch** (`torch.autograd` over batched float64 CPU "
             "tensors, one thread) are real autograds, reported at v3; **NumPy** computes hand-derived gradient "
             "formulas over arrays: a formula baseline, not an autograd, reported at `fused-simd`.", "",
             "## Machines", "",
             *machines_table(runs),
             "## Codon against the best port, every machine", "",
             f"Codon over the best compiled port (named: the one Codon fares worst against in their paired ratios) "
             f"at each level, from each machine's latest run; below 1.00 Codon is faster. Where a run has them, "
             f"the median of paired ratios from adjacent runs with its 95% interval, {TIE} when the interval holds "
             f"1.00; else (older runs) the ratio of medians, {TIE} when the two 95% intervals overlap.", "",
             *cross_machine(runs)]
    if charts:
        d = runs[0]
        lines += [f"## Charts ({d.machine['slug']})", "",
                  f"From the newest run, [{d.machine['slug']}]({page_name(d)}) of {d.machine['date'][:10]}.", "",
                  *(f"![{CHART_TITLES[k]}]({CHARTS[k]})" + "\n" for k in CHARTS if k in charts)]
    lines += ["## Every run of every machine", "",
              "Codon over the best compiled port at v1-v4 of both workloads in every run read (by `make bench`: "
              f"every run kept under results/raw/), newest first, as above without the intervals ({TIE}: a tie); "
              "in bold where Codon is behind. A run's commit is the code it timed; (dirty): the tree had "
              "uncommitted changes as well.", "",
              *every_run(history or runs, out)]
    return "\n".join(lines).rstrip() + "\n"


CHART_TITLES = {"normalized": "ns/iter normalized to the fastest, per level", "ladder": "the v0 to v4 ladder",
                "threads": "v4 speed-up over v3 by threads",
                "graph": "graph workload, ns per op, beside Rogozhnikov's published numbers"}


def page_name(d: Data) -> str:
    """A machine's page in results/: <slug>.md."""
    return f"{d.machine['slug']}.md"


def machine_page(d: Data, charts: list[str], out: Path) -> str:
    """results/<slug>.md: one machine's latest run, every table of it (charts: those drawn from it)."""
    generated = f"<!-- Generated by `{COMMAND}` (python scripts/report.py {shown_path(d.path)}); do not edit. -->"
    return "\n".join([generated,
                      f"# Benchmark results: {d.machine['slug']}", "",
                      "This machine's latest run, every table of it; [all machines and every run](README.md).", "",
                      *machine_section(d, charts, out)]).rstrip() + "\n"


# --- the README's numbers ------------------------------------------------------------------------
# Every number the project's README states from a `make bench` run sits in a block that names that run's raw
# file; `report.py --readme README.md` regenerates the blocks and tests/test_docs.py checks they are current,
# so the README cannot drift from the file it cites.

BLOCK = re.compile(r"<!-- report\.py: (?P<name>[\w-]+)(?: from (?P<raw>\S+))? -->\n.*?<!-- report\.py: end -->", re.S)
READS = {"faster": "ahead", "tie": "tie", "slower": "behind"}
# The ways to make this Python fast (README), as registry names, in the table's order.
PYTHON_WAYS = ["python", "pypy", "numba", "cython", "codon", "mojo"]


def reading(e: dict[str, Any] | None, *, name: str = "", pairs: int | None = None) -> str:
    """A paired reading as `0.95 [0.94, 0.98]`, `≈` first when its interval holds 1.00, its number of pairs
    added where it is not `pairs` (a side with fewer rounds, Impl.rounds); '-' when absent."""
    if not e:
        return "-"
    lo, hi = e["interval"]
    n = len(e["ratios"])
    return (f"{TIE if e['read'] == 'tie' else ''}{e['median']:.2f} [{lo:.2f}, {hi:.2f}]" + (f" {name}" if name else "")
            + (f" ({n} pairs)" if pairs is not None and n != pairs else ""))


def half_widths(d: Data) -> dict[str, list[float]]:
    """The relative half-width, (high - low) / 2 / median, of every paired interval the run states: each
    implementation over its level's fastest and Codon over the best port. "compiled": those between two
    compiled programs (by the timed region's CPU time, v4 by wall time), "all": every one, peers and
    interpreters included."""
    out: dict[str, list[float]] = {"compiled": [], "all": []}
    entries = [(k[0], p["against"], p) for k, p in d.paired.items() if p["against"] != k[0]]
    entries += [("codon", e["port"], e) for e in d.codon_best.values()]
    for a, b, e in entries:
        lo, hi = e["interval"]
        w = (hi - lo) / 2 / e["median"]
        out["all"].append(w)
        if d.impls.get(a, {}).get("compiled") and d.impls.get(b, {}).get("compiled"):
            out["compiled"].append(w)
    return out


def precision(d: Data) -> list[str]:
    """One line: how narrow the run's paired intervals are (the median half-width, compiled pairs and all),
    from how many rounds, in how long."""
    w = half_widths(d)
    if not w["all"]:
        return []
    c = d.doc["config"]
    seconds = d.machine.get("seconds")
    compiled = (f"±{median(w['compiled']):.1%} at the median of its {len(w['compiled'])} paired ratios between "
                "compiled programs, " if w["compiled"] else "")
    return [f"Paired intervals of this run ({c['repeats']} rounds of at least {c['min_time']:g} s"
            + (f", {seconds:,.0f} s in all" if seconds else "") + f"): {compiled}"
            f"±{median(w['all']):.1%} at the median of all {len(w['all'])} (the half-width of the 95% interval "
            "over the median, each implementation over its level's fastest and Codon over the best port).", ""]


def versus_table(d: Data, a: str, b: str | None) -> list[str]:
    """a over b (b None: over the best compiled port, named), per workload and level, from adjacent runs."""
    rows = []
    levels = [lv for lv in LEVEL_ORDER if any(lv in d.levels(w) for w in WORKLOADS)]
    for w in WORKLOADS:
        if not d.levels(w):
            continue
        if b is None:
            cells = [reading(d.codon_best.get((w, lv)), name=d.codon_best.get((w, lv), {}).get("port", ""),
                             pairs=d.doc["config"]["repeats"]) for lv in levels]
        else:
            cells = [reading(d.pair(a, b, lv, w), pairs=d.doc["config"]["repeats"]) for lv in levels]
        rows.append([w] + cells)
    head = f"{a} / " + (b if b else "best port")
    return table([head] + levels, rows, "l" + "r" * len(levels),
                 PAIRED + f" Median [95% interval] of {d.doc['config']['repeats']} pairs; {TIE}: a tie, below 1.00 "
                 f"{a} is faster.")


def verdicts(d: Data) -> list[str]:
    """One line: where Codon is ahead of, tied with and behind the best port, level by level."""
    out = []
    for read in ("faster", "tie", "slower"):
        cells = [f"{e['workload']} {e['level']}" for e in d.codon_best.values()
                 if e["read"] == read]
        out.append(f"{READS[read]}: {', '.join(cells) if cells else 'none'}")
    return ["Codon against the best port: " + "; ".join(out) + ".", ""]


def python_ways(d: Data, workload: str) -> list[str]:
    """The ways to make this Python fast at each level: ns, the speed-up over CPython, the time over Codon's."""
    names = [n for n in PYTHON_WAYS if n in d.names(workload)]
    levels = d.levels(workload)
    unit = d.unit(workload)
    rows = []
    for n in names:
        cells = []
        for lv in levels:
            v = d.ns(n, lv, workload)
            if v is None:
                cells.append("-")
                continue
            py, co = d.pair("python", n, lv, workload), d.pair(n, "codon", lv, workload)
            speedup = "" if not py or n == "python" else \
                f" · {py['median']:,.0f}x" if py["median"] >= 10 else f" · {py['median']:.2f}x"
            cells.append(f"{v:,.2f}" + speedup
                         + (f" · {TIE if co['read'] == 'tie' else ''}{co['median']:.2f}"
                            if co and n != "codon" else ""))
        rows.append([d.label(n, workload)] + cells)
    return table([unit.replace("_per_", "/") + " · x CPython · / Codon"] + levels, rows, "l" + "r" * len(levels),
                 WALL + " x CPython: CPython's time over the row's; / Codon: the row's time over Codon's; each the "
                 "median of ratios from adjacent runs, by CPU time where both sides are single-threaded levels of "
                 f"compiled programs, else by wall time; {TIE}: a tie.")


BLOCKS = {
    "softplus-ns": lambda d: ns_table(d),
    "graph-ns": lambda d: ns_table(d, "graph"),
    "softplus-x-fastest": lambda d: normalized_table(d),
    "graph-x-fastest": lambda d: normalized_table(d, "graph"),
    "graph-peers": lambda d: ns_table(d, "graph", ["codon", "python", "jax", "torch", "torch-compile"]),
    "codon-vs-best-port": lambda d: versus_table(d, "codon", None) + verdicts(d),
    "codon-vs-mojo": lambda d: versus_table(d, "codon", "mojo"),
    "python-ways-softplus": lambda d: python_ways(d, "softplus"),
    "python-ways-graph": lambda d: python_ways(d, "graph"),
    "precision": precision,
    "softplus-threads": lambda d: threads_table(d),
    "graph-threads": lambda d: threads_table(d, "graph"),
}
# Blocks over several runs: RAW is a glob (relative to the repository), the runs in the order of their files.
MANY_BLOCKS = {
    "precision-runs": lambda runs: precision_table(runs),
    "gpu-runs": gpu_table,
}


def precision_table(runs: list[Data]) -> list[str]:
    """Rounds, run length and time in all against the median half-width of the paired intervals, run by run."""
    rows = []
    for d in runs:
        c, w = d.doc["config"], half_widths(d)
        seconds = d.machine.get("seconds")
        rows.append([f"[{d.path.name}]({shown_path(d.path)})", str(c["repeats"]), f"{c['min_time']:g}",
                     f"{seconds:,.0f}" if seconds else "-", f"{len(w['compiled'])}",
                     f"±{median(w['compiled']):.1%}" if w["compiled"] else "-",
                     f"±{median(w['all']):.1%}" if w["all"] else "-"])
    return table(["run", "rounds", "min s", "s in all", "compiled pairs", "median half-width, compiled",
                  "median half-width, all"], rows, "lrrrrrr",
                 "Clock: as in each run's paired tables (CPU time of the timed region for single-threaded levels "
                 "of compiled programs, wall time otherwise); half-width: (high - low) / 2 / median of a paired "
                 "ratio's 95% interval.")


def rebase(body: str, root: Path, base: Path) -> str:
    """A block's links, written relative to the repository, made relative to the page's folder."""
    def fix(m: re.Match) -> str:
        return f"]({Path(os.path.relpath(root / m[1], base)).as_posix()}{m[2] or ''})"
    return body if base.resolve() == root.resolve() else re.sub(r"\]\(([^)#:\s]+)(#[^)\s]*)?\)", fix, body)


def fill_blocks(text: str, root: Path = ROOT, base: Path | None = None) -> str:
    """text with every report block regenerated from the raw file it names (relative to root); base: the
    folder of the page the text is, which its links are relative to (default root)."""
    cache: dict[str, Data] = {}

    import frontpage
    blocks = {**BLOCKS, **frontpage.BLOCKS}

    def fill(m: re.Match) -> str:
        name, raw = m["name"], m["raw"]
        if raw is None:
            if name not in frontpage.SOURCE_BLOCKS:
                raise ValueError(f"report block {name!r} names no raw file (only {', '.join(frontpage.SOURCE_BLOCKS)} "
                                 "are drawn from the sources)")
            body = "\n".join(frontpage.SOURCE_BLOCKS[name]()).rstrip()
            return f"<!-- report.py: {name} -->\n{body}\n<!-- report.py: end -->"
        if name in MANY_BLOCKS:
            paths = sorted(root.glob(raw))
            if not paths:
                raise ValueError(f"report block {name!r}: no file matches {raw}")
            body = "\n".join(MANY_BLOCKS[name]([Data(rawfile.read(p), p) for p in paths])).rstrip()
            return f"<!-- report.py: {name} from {raw} -->\n{body}\n<!-- report.py: end -->"
        if name not in blocks:
            raise ValueError(f"unknown report block {name!r} (known: {', '.join([*blocks, *MANY_BLOCKS])})")
        body = "\n".join(blocks[name](run(raw))).rstrip()
        return f"<!-- report.py: {name} from {raw} -->\n{body}\n<!-- report.py: end -->"

    def run(raw: str) -> Data:
        if raw not in cache:
            path = root / raw
            cache[raw] = Data(rawfile.read(path), path)
        return cache[raw]

    return BLOCK.sub(lambda m: rebase(fill(m), root, base or root), text)


def draw_block_charts(text: str, root: Path = ROOT) -> list[str]:
    """The charts that text's blocks show (frontpage.CHART_BLOCKS), drawn from the raw files the blocks name;
    returns the paths written."""
    import frontpage
    written = []
    for m in BLOCK.finditer(text):
        if m["name"] in frontpage.CHART_BLOCKS and m["raw"]:
            png, draw = frontpage.CHART_BLOCKS[m["name"]]
            draw(Data(rawfile.read(root / m["raw"]), root / m["raw"]), root / png)
            written.append(png)
    return written


# --- charts ----------------------------------------------------------------------------------

def footer(d: Data) -> str:
    """The note each chart carries: it is generated, and by what."""
    return f"Generated by `{COMMAND}` (scripts/report.py {shown_path(d.path)}); do not edit."


def charts(d: Data, out: Path) -> list[str]:
    """normalized.png, ladder.png, threads.png (if v4 ran) and graph.png (if the graph ran); returns their keys."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = {"Description": footer(d), "Software": "scripts/report.py (matplotlib)"}
    colors = {n: plt.cm.tab10(k % 10) for k, n in enumerate(d.impls)}
    written: list[str] = []

    def save(fig, key: str) -> None:
        """Footer, layout, PNG with the generator in its metadata; closes the figure."""
        fig.text(0.01, 0.005, footer(d), fontsize=7, color="grey")
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        fig.savefig(out / CHARTS[key], dpi=110, metadata=meta)
        plt.close(fig)
        written.append(key)

    # Normalized bars: one panel per level, each implementation's time over the fastest's.
    levels = d.levels()
    cols = min(4, len(levels)) or 1
    rows = -(-len(levels) // cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 0.5 + 2.6 * rows), squeeze=False)
    for ax, lv in zip(axes.flat, levels):
        names = sorted((n for n in d.names() if d.ns(n, lv)), key=lambda n: d.ns(n, lv))
        ratios = [d.ns(n, lv) / d.ns(names[0], lv) for n in names]
        bars = ax.barh(names, ratios, color=[colors[n] for n in names])
        ax.bar_label(bars, labels=[d.ratio(n, names[0], lv) + "x" for n in names], padding=2, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(lv + (" (baseline)" if lv in BASELINES else ""))
        ax.set_xscale("log" if max(ratios) > 20 else "linear")
        ax.set_xlim(right=max(ratios) * (3 if max(ratios) > 20 else 1.3))
        ax.axvline(1, color="grey", lw=0.8)
    for ax in list(axes.flat)[len(levels):]:
        ax.axis("off")
    fig.suptitle(f"Time per sample over the fastest at each level (1.00x = fastest; {TIE}: a tie)")
    save(fig, "normalized")

    # The ladder: ns/iter at v0..v4, one line per language; peers as single points.
    fig, ax = plt.subplots(figsize=(8, 5))
    for n in d.names():
        xs = [k for k, lv in enumerate(LEVELS) if d.ns(n, lv)]
        if not xs:
            continue
        peer = d.impls[n].get("kind") == "peer"
        ax.plot(xs, [d.ns(n, LEVELS[k]) for k in xs], marker="s" if peer else "o",
                linestyle="none" if peer else "-", color=colors[n], label=d.label(n))
    ax.set_xticks(range(len(LEVELS)), ["v0 naive", "v1 pool", "v2 tape", "v3 simd", "v4 threads"])
    ax.set_yscale("log")
    ax.set_ylabel("ns per sample (log scale; lower is better)")
    ax.set_title("The ladder: each level's time per sample, per implementation")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "ladder")

    # Thread scaling: v4's speed-up over the same implementation's v3, by threads.
    scaling = {n: rs for n, rs in d.scaling().items() if d.ns(n, "v3")}
    if scaling:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        most = max(r["threads"] for rs in scaling.values() for r in rs)
        ax.plot([1, most], [1, most], color="grey", lw=0.8, linestyle="--", label="ideal (T x v3)")
        for n, rs in scaling.items():
            ax.plot([r["threads"] for r in rs], [d.ns(n, "v3") / r["ns_per_iter"] for r in rs], marker="o",
                    color=colors[n], label=d.label(n))
        ax.set_xlabel("threads (T)")
        ax.set_ylabel("speed-up over its own v3 (one thread)")
        ax.set_xticks(sorted({r["threads"] for rs in scaling.values() for r in rs}))
        ax.set_title(f"v4 thread scaling on {d.machine['cores']} cores (higher is better)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "threads")

    # The graph workload: ns/op per level and implementation, beside Rogozhnikov's published row.
    if d.names("graph"):
        fig, (ax, his) = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 2]})
        levels, names = d.levels("graph"), d.names("graph")
        width = 0.8 / len(names)
        for k, n in enumerate(names):
            xs = [i + k * width for i, lv in enumerate(levels) if d.ns(n, lv, "graph")]
            ys = [d.ns(n, lv, "graph") for lv in levels if d.ns(n, lv, "graph")]
            ax.bar(xs, ys, width, color=colors[n], label=d.label(n, "graph"))
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(levels))], levels)
        ax.set_yscale("log")
        ax.set_ylabel("ns per op (log scale; lower is better)")
        ax.set_title(f"This run: {d.doc['config']['ops']:,} ops, {d.machine['slug']}")
        ax.legend(fontsize=8)
        his.bar(range(len(ROGOZHNIKOV)), [s * 10 for _, s in ROGOZHNIKOV], color="lightgrey", hatch="//",
                edgecolor="grey")
        his.set_xticks(range(len(ROGOZHNIKOV)), [name for name, _ in ROGOZHNIKOV], rotation=30, ha="right",
                       fontsize=8)
        his.set_title("Rogozhnikov's published numbers (his;\nM1, 2023; not rerun, gradients unverified)",
                      fontsize=9)
        for a in (ax, his):
            a.grid(True, which="both", axis="y", alpha=0.3)
        save(fig, "graph")
    return written


def write(path: Path, text: str) -> None:
    """Write a file through a temporary name, so a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def fill_files(paths: list[Path], charts: bool) -> int:
    """`--readme`: each file's blocks regenerated in place, then the charts they show (where matplotlib is)."""
    for path in paths:
        try:
            old = path.read_text()
            new = fill_blocks(old, base=path.resolve().parent)
            if new != old:
                write(path, new)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"{shown_path(path)}: {len(BLOCK.findall(old))} report blocks "
              + ("regenerated" if new != old else "already current"))
        if charts:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                print("skip: charts (matplotlib is not installed: `make bench` installs it)")
                continue
            for png in draw_block_charts(new):
                print(f"wrote {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Read the raw files, write the markdown and (unless --no-charts) the charts."""
    args = parse_args(argv)
    if args.readme:
        return fill_files(args.readme, charts=not args.no_charts)
    try:
        # Given files: those runs alone. Else every run kept, and each machine's latest for the tables.
        machines = [args.raw] if args.raw else every_machines_runs(args.out)
        read = [[Data(rawfile.read(p), p) for p in paths] for paths in machines]
        history = [d for group in read for d in group]
        runs = history if args.raw else [group[-1] for group in read]
        paths = [d.path for d in runs]
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    runs = [d for d in runs if d.ok]
    if not runs:
        print(f"error: {', '.join(shown_path(p) for p in paths)}: no successful timing to report", file=sys.stderr)
        return 1
    runs.sort(key=lambda d: d.machine["date"], reverse=True)
    args.out.mkdir(parents=True, exist_ok=True)
    drawn: list[str] = []
    if not args.no_charts:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("error: matplotlib is not installed (`make bench` installs it; or use --no-charts)",
                  file=sys.stderr)
            return 1
        drawn = charts(runs[0], args.out)
    write(args.out / "README.md", markdown(runs, drawn, args.out, [d for d in history if d.ok]))
    pages = [args.out / page_name(d) for d in runs]
    for k, (d, page) in enumerate(zip(runs, pages)):
        write(page, machine_page(d, drawn if k == 0 else [], args.out))
    print("wrote " + ", ".join(shown_path(p) for p in [args.out / "README.md", *pages]
                               + [args.out / CHARTS[k] for k in drawn]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
