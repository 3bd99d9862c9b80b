#!/usr/bin/env python3
# PyPy's JIT warm-up, which autograd.py runs before every timed region under PyPy (warm_up): for each
# level, in fresh pypy3 processes, the seconds the warm-up takes and the time per sample (graph: per
# op) of one run of N samples, cold (no warm-up: the JIT compiles inside the run) and warm (after the
# warm-up). One line per level, medians of --reps processes each. --sweep instead times that run after
# 0, 1, 2, 4, ... warm-up calls of warm_plan's size: the measurement behind warm_plan's counts.
# Any Python runs it; it spawns pypy3 for every measurement (without pypy3: a `skip:` line, exit 0).
#
#     python3 ports/python/warmup_time.py [--reps R] [--iters N] [--graph-iters N] [--ops M] [--sweep]
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LEVELS = [("softplus", lv) for lv in ("v0", "v1", "v2", "fused")] + [("graph", lv) for lv in ("v0", "v1", "v2")]
SWEEP = (0, 1, 2, 4, 8, 16, 32, 64)   # warm-up calls before the timed run, in --sweep
SEED = 42
RULE = -1                             # --one's calls: autograd.warm_up's own rule


def one(workload, level, calls, n, m):
    """In this (pypy3) process: `calls` warm-up calls of the level's go (RULE: autograd.warm_up), then
    one run of n samples under cli.driver's clock; prints the warm-up's seconds and calls, and the
    run's seconds."""
    sys.argv = [sys.argv[0]]
    import autograd
    from cli.driver import timed
    if workload == "graph":
        fn = autograd.GRAPH_RUNS[level]
        go = lambda k: fn(SEED, m, k)
    else:
        fn = autograd.RUNS[level]
        go = lambda k: fn(SEED, k)
    made = [0]

    def counted(k):
        made[0] += 1
        return go(k)

    start = time.monotonic()
    if calls == RULE:
        autograd.warm_up(counted, workload, m)
    else:
        chunk = autograd.warm_plan(workload, m)[1]
        for _ in range(calls):
            counted(chunk)
    warm = time.monotonic() - start
    _, seconds, _ = timed(level, go, n)
    print(f"{warm:.6f} {made[0]} {seconds:.9f}")


def spawn(workload, level, calls, n, m):
    """one() in a fresh pypy3 process: (warm-up seconds, warm-up calls, run seconds)."""
    out = subprocess.run(["pypy3", __file__, "--one", workload, level, str(calls), str(n), str(m)],
                         check=True, capture_output=True, text=True, timeout=300).stdout.split()
    return float(out[0]), int(out[1]), float(out[2])


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def per_unit(workload, seconds, n, m):
    """ns a sample (softplus) or an op (graph) of a run of n samples."""
    return seconds * 1e9 / (n * m if workload == "graph" else n)


def main():
    p = argparse.ArgumentParser(description="PyPy's JIT warm-up, level by level (autograd.warm_up)")
    p.add_argument("--reps", type=int, default=3, help="fresh processes per figure, their median (default 3)")
    p.add_argument("--iters", type=int, default=50_000, help="softplus samples of the timed run (default 50,000)")
    p.add_argument("--graph-iters", type=int, default=50, help="graph samples of the timed run (default 50)")
    p.add_argument("--ops", type=int, default=10_000, help="graph ops (default 10,000)")
    p.add_argument("--sweep", action="store_true", help="time the run after 0, 1, 2, 4, ... warm-up calls")
    p.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.one:
        workload, level, calls, n, m = opts.one
        one(workload, level, int(calls), int(n), int(m))
        return
    if shutil.which("pypy3") is None:
        print("skip: pypy3 not found (Debian's pypy3 package; .ci/run installs it)")
        return
    sys.path.insert(0, HERE)
    import autograd   # warm_plan, to name the calls' size (run by this Python: no warm-up happens here)
    for workload, level in LEVELS:
        graph = workload == "graph"
        n, m = (opts.graph_iters, opts.ops) if graph else (opts.iters, 0)
        chunk = autograd.warm_plan(workload, m)[1]
        what = f"pypy {workload} {level}" + (f" ({m:,} ops)" if graph else "")
        unit = "ns an op" if graph else "ns a sample"
        sample = "sample" if chunk == 1 else "samples"
        if opts.sweep:
            cells = []
            for calls in SWEEP:
                t = [per_unit(workload, spawn(workload, level, calls, n, m)[2], n, m) for _ in range(opts.reps)]
                cells.append(f"{calls}: {median(t):,.0f} ({min(t):,.0f})")
            print(f"{what}: {unit} of a {n:,}-sample run after C warm-up calls of {chunk:,} {sample}, "
                  f"median (min) of {opts.reps}: " + ", ".join(cells), flush=True)
            continue
        cold = [spawn(workload, level, 0, n, m) for _ in range(opts.reps)]
        warm = [spawn(workload, level, RULE, n, m) for _ in range(opts.reps)]
        calls = median([w[1] for w in warm])
        print(f"{what}: warm-up {median([w[0] for w in warm]):.3f} s ({calls:g} calls of {chunk:,} {sample}); "
              f"{n:,}-sample run {median([per_unit(workload, c[2], n, m) for c in cold]):,.0f} {unit} cold, "
              f"{median([per_unit(workload, w[2], n, m) for w in warm]):,.0f} warm", flush=True)


if __name__ == "__main__":
    main()
