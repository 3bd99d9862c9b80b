"""results/README.md (every machine, Codon against the best port, every run) and each machine's page."""
from __future__ import annotations

import os
from pathlib import Path

from harness.charts import CHARTS
from harness.rundata import COMMAND, TIE, Data, shown_path
from harness.tables import (NO_CLOCK, PAIRED, ROGOZHNIKOV_LABEL, WALL, c_v2_table, ladder_table, machine_table,
                            memory_table, normalized_table, ns_table, overhead_table, precision, problems,
                            rogozhnikov_table, runs_table, table, threads_table)
from impls import LEVEL_ORDER


def method(d: Data) -> str:
    """How the numbers of a run were measured, in one paragraph."""
    c = d.doc["config"]
    size = (f"N fixed at {c['iters']:,}" if c.get("iters") else
            f"N calibrated per level so that a run lasts at least {c['min_time']:g} s (doubled on the Codon "
            "program; every compiled implementation of a level runs that same N, the interpreted ones their own)")
    weakest = min((r for r in d.results if r["status"] == "ok"), key=lambda r: r["ci_coverage"], default=None)
    weak = (f"; {weakest['impl']} {weakest['workload']} {weakest['level']} has {len(weakest['runs'])} runs, the most "
            "it takes, so its interval can only be [min, max], which covers the median with "
            f"{weakest['ci_coverage']:.0%}" if weakest and weakest["ci_coverage"] < 0.95 else "")
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
             "### softplus: time per sample (ns/iter, median)", "", *ns_table(d), *memory(d),
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
                  "over the whole graph per sample, over its ops.", "", *ns_table(d, "graph"), *memory(d, "graph"),
                  "Normalized to the fastest at each level:", "", *normalized_table(d, "graph"),
                  f"{ROGOZHNIKOV_LABEL}; his 10,000 ops x 10,000 passes, his loss:", "", *rogozhnikov_table()]
        if "graph" in charts:
            lines += [f"![graph workload, ns per op, beside Rogozhnikov's published numbers]({CHARTS['graph']})", ""]
    lines += ["### Failures, skips and notes", "", *problems(d),
              "### Machine and toolchains", "", *machine_table(d),
              "### Every timed pair", "", *runs_table(d)]
    return lines


def memory(d: Data, workload: str = "softplus") -> list[str]:
    """A workload's peak memory, after its times; nothing for a run from before runs recorded it."""
    if not d.has_peaks():
        return []
    per_op = (", and in brackets the bytes per op: the peak bytes over the pair's ops (the runtime's fixed part "
              "spread over them too)" if workload == "graph" else "")
    return [f"Peak memory: the median over the timed runs of the process's peak resident set (ru_maxrss: the "
            f"whole process, runtime and interpreter included), in MB of 10^6 bytes{per_op}.", "",
            *memory_table(d, workload)]


def codon_vs_best(d: Data, workload: str, level: str, interval: bool = True) -> tuple[str, str]:
    """Codon over the best compiled port at a level, as a cell (`MEDIAN [LOW, HIGH] (PORT)`; without the
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
    lines = [f"<!-- Generated by `{COMMAND}` (scripts/report.py, each machine's latest run: {files}); do not edit. -->",
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
    generated = f"<!-- Generated by `{COMMAND}` (scripts/report.py, from {shown_path(d.path)}); do not edit. -->"
    return "\n".join([generated,
                      f"# Benchmark results: {d.machine['slug']}", "",
                      "This machine's latest run, every table of it; [all machines and every run](README.md).", "",
                      *machine_section(d, charts, out)]).rstrip() + "\n"
