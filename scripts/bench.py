#!/usr/bin/env python3
"""The benchmark harness's command line: build, verify, calibrate, time, compare, publish (`make bench`,
`make bench-ci`). This file parses the options; the package scripts/harness/ does each step (harness.session).

1. Build every implementation with the project's Makefile (BUILD=, CPU=), each on its own. A
   missing toolchain (make prints `skip:` and succeeds) is a skip; a failed make is a failure.
2. Probe the graph workload (`PROG --workload graph --ops 4 --iters 1 --json`): a program that
   refuses it (exit 2) is not timed for the graph; any other failure is a failure.
3. Verify every (implementation, workload, level) before timing it: softplus against
   harness/oracle.py at a small N, the graph against the contract's known answers (§G4) and
   harness/oracle.py's `graph_sums` where it exists; sequential levels within 1e-12 relative,
   batched ones within 1e-9. One that disagrees is failed, with the numbers, and never timed.
4. Calibrate N per (workload, level): the Codon program's N is doubled until one run lasts
   --min-time, and every compiled implementation of that level is timed at that same N (so
   their sums can be checked against each other); interpreted ones (CPython, peers) calibrate
   their own N. v4 is also timed at T = 1, 2, 4, ... threads up to the CPUs available.
5. Time every verified pair R times in rounds, the order shuffled every round (seed recorded),
   one process per run, each with a timeout. A crash or a hang fails that pair; the rest go on.
6. Check the timed sums: against the reference where it is cheap, else against each other at
   the same N, within the contract's tolerances.
7. Record each pair's median and a 95% distribution-free confidence interval of it (harness/analysis.py),
   the machine (CPU, family/model, flags, cores; machine.py) and every program's target and
   vector width in results/raw/<machine-slug>/<date>.json.gz, written atomically.
   scripts/report.py turns the latest file of every machine into results/README.md and charts.

Strict: the exit status is 1 when any implementation failed to build, failed verification,
crashed or timed out, refused a level its registry entry declares, or refused the graph workload
while its entry lists graph levels (--no-strict reports them and exits 0); 2 for bad usage; 130 when
interrupted (no results file). `--ci` is the CI timing job: 0.25-s runs, then budgets judged on
adjacent pairs of runs and on instruction counts (harness/budgets.py).
Progress goes to stderr as it runs; the summary and the results path go to stdout.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.contract import DEFAULT_OPS, DEFAULT_SEED, VERIFY_ITERS  # noqa: E402
from harness.options import (CI, FULL, iters_int, name_list, ops_int, positive_float, positive_int,  # noqa: E402
                             registry_file, seed_int, threads_int)
from harness.session import bench, by_default  # noqa: E402
from harness.processes import run_main  # noqa: E402
from impls import DEFAULT, LEVEL_ORDER, WORKLOAD_LEVELS, WORKLOADS  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; unset sizes come from the preset (--ci or the full benchmark)."""
    p = argparse.ArgumentParser(
        description="Build, verify, calibrate and time every implementation of the autograd benchmark, "
                    "and write results/raw/<machine>/<date>.json.gz (see scripts/report.py).")
    full, ci = ([i.name for i in DEFAULT if by_default(i, preset.peers, preset is CI)] for preset in (FULL, CI))
    p.add_argument("--impls", type=name_list, help="implementations to run, comma-separated (default: all of "
                   f"{', '.join(full)}; --ci: {', '.join(ci)}, the registry's entries marked ci, no peers)")
    p.add_argument("--levels", type=name_list, help=f"levels to run (default: all of {', '.join(LEVEL_ORDER)}; "
                   "a GPU level only where the program finds a device)")
    p.add_argument("--workloads", type=name_list, help=f"workloads (default {','.join(FULL.workloads)}; "
                   f"--ci {','.join(CI.workloads)})")
    p.add_argument("--graph-levels", type=name_list, help="graph levels to run, of those --levels allows "
                   f"(default all; --ci {','.join(CI.graph_levels)})")
    p.add_argument("--ops", type=ops_int, default=DEFAULT_OPS, help=f"ops of the graph workload (default "
                   f"{DEFAULT_OPS:,})")
    p.add_argument("--min-time", type=positive_float, help="seconds a timed run lasts at least: N is "
                   f"calibrated to it (default {FULL.min_time:g}; --ci {CI.min_time:g})")
    p.add_argument("--iters", type=iters_int, help="a fixed N for the compiled implementations instead "
                   "of calibrating")
    p.add_argument("--python-iters", type=iters_int, help="a fixed N for the interpreted ones (CPython, "
                   "peers) instead of calibrating")
    p.add_argument("--verify-iters", type=iters_int, default=VERIFY_ITERS,
                   help=f"softplus samples of the check against the reference before timing (default "
                        f"{VERIFY_ITERS:,})")
    p.add_argument("--repeats", type=positive_int, help=f"timed runs of each pair (default {FULL.repeats}; "
                   f"--ci {CI.repeats})")
    p.add_argument("--budget-pairs", type=positive_int, help="--ci: adjacent pairs of runs each budget is "
                   f"judged on (default {CI.budget_pairs})")
    p.add_argument("--threads", type=threads_int, help="the most threads for v4 (default: the CPUs this "
                   "process may use)")
    p.add_argument("--no-thread-scan", dest="thread_scan", action="store_false", default=None,
                   help="time v4 at the most threads only, not also at 1, 2, 4, ... (--ci: never scans)")
    p.add_argument("--seed", type=seed_int, default=DEFAULT_SEED, help=f"input stream seed (default {DEFAULT_SEED})")
    p.add_argument("--shuffle-seed", type=int, help="seed of the order of each round (default: random, "
                   "recorded)")
    p.add_argument("--timeout", type=positive_float, help="seconds before a run is killed as hung "
                   f"(default {FULL.timeout:g}; --ci {CI.timeout:g})")
    p.add_argument("--results-dir", type=Path, help="where raw/<machine>/<date>.json.gz goes "
                   f"(default {FULL.results_dir}; --ci BUILD_DIR/bench-ci)")
    p.add_argument("--build-dir", default="build", help="the Makefile's BUILD (default build)")
    p.add_argument("--cpu", help="the Makefile's CPU: native, x86-64-v2, x86-64-v3 or x86-64-v4 "
                   "(default: the Makefile's, native)")
    p.add_argument("--no-build", action="store_true", help="use what is built; run no make")
    p.add_argument("--registry", type=registry_file, metavar="FILE", help="a JSON list of implementations "
                   "replacing the built-in one (scripts/impls.py's fields)")
    p.add_argument("--ci", action="store_true", help="the CI timing job: no peers, the graph at v2 and v3, then "
                   "the budgets (adjacent pairs of runs, instruction counts); exit 1 on a breach")
    p.add_argument("--no-strict", dest="strict", action="store_false",
                   help="exit 0 even when an implementation failed (failures are still reported)")
    args = p.parse_args(argv)
    preset = CI if args.ci else FULL
    for name in ("min_time", "repeats", "timeout", "thread_scan", "budget_pairs", "graph_levels"):
        if getattr(args, name) is None:
            setattr(args, name, getattr(preset, name))
    args.results_dir = Path(args.results_dir or preset.results_dir or f"{args.build_dir}/bench-ci")
    args.workloads = args.workloads or list(preset.workloads)
    args.peers_by_default = preset.peers
    if args.shuffle_seed is None:
        args.shuffle_seed = random.SystemRandom().randrange(2**32)
    for given, known, what in ((args.levels, LEVEL_ORDER, "level"), (args.workloads, WORKLOADS, "workload"),
                               (args.graph_levels, WORKLOAD_LEVELS["graph"], "graph level")):
        unknown = [x for x in given or [] if x not in known]
        if unknown:
            p.error(f"unknown {what}(s) {', '.join(unknown)}; {what}s are {', '.join(known)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """The whole run (harness.session); returns the exit status."""
    return bench(parse_args(argv), argv)


if __name__ == "__main__":
    run_main(main)
