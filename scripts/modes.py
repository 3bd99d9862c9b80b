#!/usr/bin/env python3
"""One cell of a `make bench` run, A over B, its paired ratios split by how fast both runs of a pair were.

    scripts/modes.py RAW --workload softplus --level v1 --b c [--a codon] --split-ns 85

On a 2-vCPU VM the runs of a level can fall into two modes (the Zen 3's softplus v1,
docs/findings/softplus-v1.md), and a median of paired ratios then mixes two comparisons. This prints how
many of each program's runs were under --split-ns a sample (ns per op for the graph), and the median of
A's time over B's, with its 95% distribution-free interval, over all pairs, over the pairs where both runs
were under it and over those where both were at or over it. The clock is the run's (impls.ranking_clock)
and a pair is a round both ran in, as analysis.paired_ratios pairs them, so the "all" line is the median
report.py prints. Exit status: 0, or 2 for bad usage.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import analysis, rawfile  # noqa: E402
from harness.processes import run_main  # noqa: E402
from impls import LEVEL_ORDER, WORKLOADS, ranking_clock  # noqa: E402


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def cell(doc: dict, impl: str, workload: str, level: str) -> dict:
    """The run's single-count result of one implementation at one level (not a thread scan's)."""
    for r in doc.get("results", []):
        if (r.get("impl"), r.get("workload"), r.get("level")) == (impl, workload, level) \
                and not r.get("scan") and r.get("status") == "ok":
            return r
    fail(f"{impl} has no timed {workload} {level} in this run")
    raise AssertionError  # unreachable


def per_sample(result: dict, key: str) -> dict[int, float]:
    """Each round's time per sample (per op for the graph), in ns, by the given clock."""
    unit = result["iters"] * (result.get("ops") or 1)
    return {r["round"]: r[key] / unit * 1e9 for r in result["runs"] if "round" in r and key in r}


def line(name: str, ratios: list[float]) -> str:
    if not ratios:
        return f"  {name:<10} no pairs"
    if len(ratios) < 2:
        return f"  {name:<10} {ratios[0]:.3f} (1 pair)"
    reading = analysis.paired_reading(ratios)
    low, high = reading["interval"]
    return f"  {name:<10} {reading['median']:.3f} [{low:.3f}, {high:.3f}]  {len(ratios)} pairs  {reading['read']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw", help="a raw results file (results/raw/<machine>/<date>.json.gz)")
    ap.add_argument("--workload", default="softplus", choices=WORKLOADS, help="the workload (default softplus)")
    ap.add_argument("--level", required=True, choices=LEVEL_ORDER, help="the level, e.g. v1")
    ap.add_argument("--a", default="codon", help="the numerator (default codon)")
    ap.add_argument("--b", required=True, help="the denominator, e.g. c")
    ap.add_argument("--split-ns", type=float, required=True, help="ns a sample (graph: a op) between the modes")
    opts = ap.parse_args(argv)
    if opts.split_ns <= 0:
        fail("--split-ns must be positive")
    try:
        doc = rawfile.read(opts.raw)
    except OSError as e:
        fail(f"cannot read {opts.raw}: {e.strerror or e}")
    except ValueError as e:                             # rawfile.read names the file
        fail(str(e))
    a, b = (cell(doc, name, opts.workload, opts.level) for name in (opts.a, opts.b))
    impls = {i["name"]: i for i in doc.get("implementations", [])}
    both_compiled = bool(impls.get(opts.a, {}).get("compiled") and impls.get(opts.b, {}).get("compiled"))
    key = ranking_clock(opts.level, both_compiled)
    ta, tb = per_sample(a, key), per_sample(b, key)
    rounds = sorted(set(ta) & set(tb))
    split = opts.split_ns
    print(f"{opts.workload} {opts.level}: {opts.a} / {opts.b} by {key}, split at {split:g} ns")
    for name, times in ((opts.a, ta), (opts.b, tb)):
        print(f"  {name}: {sum(t < split for t in times.values())} of {len(times)} runs under {split:g} ns")
    ratio = {k: ta[k] / tb[k] for k in rounds}
    print(line("all", [ratio[k] for k in rounds]))
    print(line("both fast", [ratio[k] for k in rounds if ta[k] < split and tb[k] < split]))
    print(line("both slow", [ratio[k] for k in rounds if ta[k] >= split and tb[k] >= split]))
    return 0


if __name__ == "__main__":
    run_main(main)
