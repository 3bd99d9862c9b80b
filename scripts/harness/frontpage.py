"""The README's generated front page: the headline (Codon against C, Rust and Zig, and against the best of
every implementation, level by level, with its chart), which tool to use for a Python autograd, and what
Codon needed. report.py fills these blocks as it fills the others (`report.py --readme README.md`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import codon_needs
from harness import analysis
from harness.charts import footer
from harness.rundata import TIE, Data
from harness.tables import PAIRED, reading, table
from impls import LEVELS

# The systems languages the headline names, as registry names and as the README spells them.
SYSTEMS = {"c": "C", "rust": "Rust", "zig": "Zig"}
BEST = "best of all"
# The headline chart, beside results/README.md's charts.
HEADLINE_PNG = "results/headline.png"
# The tools a Python programmer might reach for, in the order the README lists them.
TOOLS = ["codon", "mojo", "cython", "numba", "pypy", "python", "jax", "torch", "torch-compile"]
# Each tool's caveat: what its numbers do not say. Structural facts only; numbers come from the run.
CAVEATS = {
    "codon": "Python syntax compiled ahead of time, but not CPython: no C extensions, objects are "
             "garbage-collected (Boehm), so v0's fresh nodes cost more than malloc/free; the fast levels "
             "needed the constructs listed below",
    "mojo": "a new language with Python-like syntax, not Python; v0's nodes are freed by hand, v4 starts "
            "POSIX threads itself",
    "cython": "typed `.pyx` modules compiled by a C compiler against Python.h; v0/v1 nodes are `cdef class` "
              "objects with reference counts",
    "numba": "no v0/v1 (it cannot compile recursive, reference-linked nodes); each process loads its cached "
             "compiled code before the clock starts (`ports/numba/compile_time.py`)",
    "pypy": "runs the CPython port unchanged; v0-v2 and fused only (no vector math, no parallel threads); timed "
            "warm, its JIT warm-up reported on its own (`ports/python/warmup_time.py`)",
    "python": "the reference point: the same source under CPython",
    "jax": "a traced, compiled autograd: one compilation per shape; its graph row is timed at 100 ops, "
           "where its compile time still fits a run",
    "torch": "eager autograd: every op a dispatch on small tensors",
    "torch-compile": "compiles the graph in every process, before the clock; timed at 100 ops, one sample at a "
                     "time",
}


def same_ops(d: Data, name: str, workload: str, level: str) -> bool:
    """Whether a graph row ran at the run's ops (a peer timed at fewer cannot be paired per sample)."""
    r = d.ok.get((name, workload, level))
    return r is not None and (workload != "graph" or r.get("ops") in (None, d.doc["config"]["ops"]))


def against(d: Data, other: str, workload: str, level: str) -> dict[str, Any] | None:
    """Codon over another implementation at a level, from their adjacent runs; None where either is absent."""
    if other == "codon" or not same_ops(d, "codon", workload, level) or not same_ops(d, other, workload, level):
        return None
    return d.pair("codon", other, level, workload)


def best_of_all(d: Data, workload: str, level: str) -> tuple[str, dict[str, Any]] | None:
    """The implementation Codon fares worst against at a level (the worst read of Codon's paired ratios, then
    the largest median, as bench.py names the best port: analysis.hardest), among every other implementation
    timed at the run's ops."""
    readings = [(n, e) for n in d.names(workload) if (e := against(d, n, workload, level))]
    return analysis.hardest(readings) if readings else None


def levels_of(d: Data, workload: str) -> list[str]:
    return [lv for lv in LEVELS if lv in d.levels(workload)]


def read_of(e: dict[str, Any] | None) -> str:
    return analysis.STANDING[e["read"]] if e else ""


def cells_text(cells: list[str]) -> str:
    """`softplus v1, softplus v2, softplus v3, graph v0` as `softplus v1-v3, graph v0`: per workload, its
    levels, a run of three or more consecutive levels as a range."""
    out = []
    for workload in dict.fromkeys(c.split()[0] for c in cells):
        idx = [LEVELS.index(c.split()[1]) for c in cells if c.split()[0] == workload]
        runs: list[list[int]] = []
        for i in idx:
            if runs and i == runs[-1][-1] + 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        out.append(f"{workload} " + ", ".join(f"{LEVELS[r[0]]}-{LEVELS[r[-1]]}" if len(r) >= 3 else
                                              ", ".join(LEVELS[i] for i in r) for r in runs))
    return ", ".join(out)


def headline(d: Data) -> list[str]:
    """Codon's time over C's, Rust's, Zig's and the best other implementation's, per workload and level, then
    one line per comparison saying where Codon is ahead, tied and behind."""
    m = d.machine
    rounds = d.doc["config"]["repeats"]
    rows, verdicts = [], []
    for workload in ("softplus", "graph"):
        levels = levels_of(d, workload)
        for name, label in [*SYSTEMS.items(), ("", BEST)]:
            cells = []
            for lv in LEVELS:
                if lv not in levels:
                    cells.append("-")
                elif name:
                    cells.append(reading(against(d, name, workload, lv), pairs=rounds))
                else:
                    best = best_of_all(d, workload, lv)
                    cells.append(reading(best[1], name=best[0], pairs=rounds) if best else "-")
            rows.append([f"{workload}: {label}"] + cells)
    for name, label in [*SYSTEMS.items(), ("", BEST)]:
        by_read: dict[str, list[str]] = {"ahead": [], "tie": [], "behind": []}
        for workload in ("softplus", "graph"):
            for lv in levels_of(d, workload):
                e = against(d, name, workload, lv) if name else (best_of_all(d, workload, lv) or (None, None))[1]
                if e:
                    by_read[read_of(e)].append(f"{workload} {lv}")
        verdicts.append(f"- against {label if name else 'the best of all implementations'}: "
                        + "; ".join(f"{k} at {cells_text(v)}" for k, v in by_read.items() if v) + ".")
    cpu = (f"{m['cpu']} (family {m.get('cpu_family')} model {m.get('cpu_model')}, {m['cores']} cores"
           f"{', AVX-512' if m.get('avx512f') else ', AVX2' if m.get('avx2') else ''})")
    return [f"Machine: {cpu}, commit `{m['git_commit'][:7]}`, {m['date'][:10]}.", "",
            *table(["Codon's time over"] + LEVELS, rows, "l" + "r" * len(LEVELS),
                   PAIRED + f" Median [95% interval] of {rounds} pairs unless stated; {TIE}: a tie; below 1.00 "
                   "Codon is faster. Best of all: the implementation Codon fares worst against, of every port "
                   "and peer timed at the same size."),
            *verdicts, "", f"![Codon's time over C, Rust, Zig and the best of all]({HEADLINE_PNG})", ""]


def headline_chart(d: Data, path: Path) -> None:
    """The headline as bars: per workload, per level, Codon's time over each of C, Rust, Zig and the best of
    all, with its 95% interval; 1.0 marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [*SYSTEMS, ""]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, workload in zip(axes, ("softplus", "graph")):
        levels = levels_of(d, workload)
        width = 0.8 / len(names)
        for k, name in enumerate(names):
            xs, ys, lo, hi = [], [], [], []
            for i, lv in enumerate(levels):
                e = against(d, name, workload, lv) if name else (best_of_all(d, workload, lv) or (None, None))[1]
                if e:
                    xs.append(i + (k - (len(names) - 1) / 2) * width)
                    ys.append(e["median"])
                    lo.append(e["median"] - e["interval"][0])
                    hi.append(e["interval"][1] - e["median"])
            # Bars grow from 1.00, up where Codon is slower, down where it is faster.
            ax.bar(xs, [y - 1 for y in ys], width, bottom=1, yerr=[lo, hi], capsize=2, label=SYSTEMS.get(name, BEST))
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xticks(range(len(levels)), levels)
        ax.set_yscale("log")
        ax.minorticks_off()
        ax.set_title(workload)
        ax.grid(True, which="both", axis="y", alpha=0.3)
    # The axis spans the bars (shared by both panels), with plain numbers as ticks.
    low = min(0.8, min(b.get_y() + min(b.get_height(), 0) for ax in axes for b in ax.patches) * 0.95)
    high = max(1.25, max(b.get_y() + max(b.get_height(), 0) for ax in axes for b in ax.patches) * 1.08)
    ticks = [t for t in (0.25, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0) if low <= t <= high]
    axes[0].set_ylim(low, high)
    axes[0].set_yticks(ticks, [f"{t:g}" for t in ticks])
    axes[0].set_ylabel("Codon's time over theirs (log; below 1: Codon faster)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Codon against C, Rust, Zig and the best of all, {d.machine['slug']} "
                 "(median of paired runs, 95% interval)", fontsize=10)
    fig.text(0.01, 0.005, footer(d), fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    # The PNG names the module by its path before the harness was a package: the committed chart's bytes stay
    # those report.py regenerates.
    fig.savefig(path, dpi=100, metadata={"Description": footer(d), "Software": "scripts/frontpage.py (matplotlib)"})
    plt.close(fig)


def over_codon(d: Data, name: str, workload: str) -> str:
    """A tool's time over Codon's at each level both have, from adjacent runs (ratio of medians, per op, for a
    row timed at fewer graph ops, which cannot be paired per sample)."""
    cells = []
    for lv in levels_of(d, workload) + [b for b in ("fused", "fused-simd") if workload == "softplus"]:
        if (name, workload, lv) not in d.ok or ("codon", workload, lv) not in d.ok:
            continue
        if same_ops(d, name, workload, lv):
            e = d.pair(name, "codon", lv, workload)
            cells.append(f"{lv} {TIE if e['read'] == 'tie' else ''}{e['median']:,.2f}" if e else f"{lv} -")
        else:
            ops = d.ok[(name, workload, lv)]["ops"]
            ratio = d.ns(name, lv, workload) / d.ns("codon", lv, workload)
            cells.append(f"{lv} {ratio:,.0f}" if ratio >= 10 else f"{lv} {ratio:.2f}")
            cells[-1] += f" (at {ops:,} ops, medians)"
    return " · ".join(cells) or "-"


def verdict(d: Data, name: str) -> str:
    """The span of a tool's time over Codon's at the levels v0-v4 both have, naming where each end lies."""
    spans = []
    for workload in ("softplus", "graph"):
        for lv in levels_of(d, workload):
            if (name, workload, lv) in d.ok and ("codon", workload, lv) in d.ok:
                if same_ops(d, name, workload, lv):
                    e = d.pair(name, "codon", lv, workload)
                    if e:
                        spans.append((e["median"], f"{workload} {lv}"))
                else:
                    spans.append((d.ns(name, lv, workload) / d.ns("codon", lv, workload), f"{workload} {lv}"))
    if not spans:
        return "-"
    (lo, at_lo), (hi, at_hi) = min(spans), max(spans)

    def x(v: float) -> str:
        return f"{v:,.0f}x" if v >= 10 else f"{v:.2f}x"
    if len(spans) == 1:
        return f"{x(lo)} Codon's time ({at_lo})"
    return f"{x(lo)} ({at_lo}) to {x(hi)} ({at_hi}) Codon's time"


def which_tool(d: Data) -> list[str]:
    """One row per tool: the span of its time over Codon's, its time over Codon's at each level it has, and
    its caveat."""
    rows = []
    for name in TOOLS:
        if not (d.names("softplus").count(name) or d.names("graph").count(name)):
            continue
        if name == "codon":
            cells = ["the reference", "1.00", "1.00"]
        else:
            cells = [verdict(d, name), over_codon(d, name, "softplus"), over_codon(d, name, "graph")]
        rows.append([f"**{name}**: {d.impls[name].get('label', name)}", *cells, CAVEATS.get(name, "")])
    return table(["tool", "its time over Codon's, v0-v4", "softplus, by level", "graph, by level", "caveat"], rows,
                 "lllll", PAIRED + " Cells marked `medians`: the ratio of the two medians (a row timed at fewer ops "
                 f"cannot be paired per sample). Above 1.00 the tool is slower than Codon; {TIE}: a tie.")


BLOCKS = {
    "headline": headline,
    "which-tool": which_tool,
}
# Blocks drawn from the sources, not from a run.
SOURCE_BLOCKS = {
    "codon-needs": lambda: codon_needs.table(),
}
# Blocks that come with a chart, drawn by `report.py --readme` where matplotlib is installed.
CHART_BLOCKS = {
    "headline": (HEADLINE_PNG, headline_chart),
}
