#!/usr/bin/env python3
"""The graph size sweep (`make sweep`, issue 51): the graph workload at M = 100 to 1,000,000 ops, v0-v4, every
compiled implementation at the levels it has, with `make bench`'s verification, calibration and paired rounds
at each size (scripts/harness/sweep.py), fewer rounds; v4 at the CPUs this process may use.

    python scripts/sweep.py [--sizes 100,300,...] [--impls codon,c] [--min-time S] [--repeats R]

Writes results/sweep/<machine slug>/<date>.json.gz with the machine's L1d, L2 and L3 sizes (sysfs; absent
ones recorded as absent); `scripts/report.py --sweep` draws its charts and says what it found.
Exit status as bench.py's: 0, 1 (a failure; results written), 2 (bad usage), 130 (interrupted).
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.contract import DEFAULT_SEED  # noqa: E402
from harness.options import (FULL, iters_int, name_list, ops_list, positive_float, positive_int,  # noqa: E402
                             registry_file, seed_int, threads_int)
from harness.sweep import REPEATS, SIZES, defaults, sweep  # noqa: E402
from harness.processes import run_main  # noqa: E402
from impls import WORKLOAD_LEVELS  # noqa: E402


def size_list(text: str) -> list[int]:
    """argparse type: comma-separated sizes (ops), each within the programs' --ops, in increasing order."""
    sizes = ops_list(text)
    if sizes != sorted(set(sizes)):
        raise argparse.ArgumentTypeError(f"sizes must increase, got {text}")
    return sizes


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description="Time the graph workload of every compiled implementation at a "
                                "range of sizes; write results/sweep/<machine>/<date>.json.gz.")
    p.add_argument("--sizes", type=size_list, default=list(SIZES),
                   help=f"ops of the graph, increasing (default {','.join(str(s) for s in SIZES)})")
    p.add_argument("--impls", type=name_list, help="compiled implementations to run (default: all)")
    p.add_argument("--graph-levels", "--levels", dest="graph_levels", type=name_list,
                   help=f"levels (default {','.join(WORKLOAD_LEVELS['graph'])})")
    p.add_argument("--min-time", type=positive_float, default=FULL.min_time,
                   help=f"seconds a timed run lasts at least: N is calibrated to it at each size (default "
                        f"{FULL.min_time:g}, make bench's)")
    p.add_argument("--repeats", type=positive_int, default=REPEATS,
                   help=f"paired rounds at each size (default {REPEATS}; make bench: {FULL.repeats})")
    p.add_argument("--iters", type=iters_int, help="a fixed N instead of calibrating")
    p.add_argument("--threads", type=threads_int, help="v4's threads (default: the CPUs this process may use)")
    p.add_argument("--seed", type=seed_int, default=DEFAULT_SEED, help=f"input stream seed (default {DEFAULT_SEED})")
    p.add_argument("--shuffle-seed", type=int, help="seed of each round's order (default: random, recorded)")
    p.add_argument("--timeout", type=positive_float, default=FULL.timeout,
                   help=f"seconds before a run is killed as hung (default {FULL.timeout:g}, make bench's)")
    p.add_argument("--results-dir", type=Path, default=Path(FULL.results_dir),
                   help=f"where sweep/<machine>/<date>.json.gz goes (default {FULL.results_dir}, make bench's)")
    p.add_argument("--build-dir", default="build", help="the Makefile's BUILD (default build)")
    p.add_argument("--cpu", help="the Makefile's CPU (default: the Makefile's, native)")
    p.add_argument("--no-build", action="store_true", help="use what is built; run no make")
    p.add_argument("--registry", type=registry_file, metavar="FILE",
                   help="a JSON list of implementations replacing the built-in one")
    p.add_argument("--no-strict", dest="strict", action="store_false",
                   help="exit 0 even when an implementation failed (failures are still reported)")
    args = p.parse_args(argv)
    unknown = [x for x in args.graph_levels or [] if x not in WORKLOAD_LEVELS["graph"]]
    if unknown:
        p.error(f"unknown level(s) {', '.join(unknown)}; levels are {', '.join(WORKLOAD_LEVELS['graph'])}")
    if args.shuffle_seed is None:
        args.shuffle_seed = random.SystemRandom().randrange(2**32)
    return defaults(args)


def main(argv: list[str] | None = None) -> int:
    """The whole sweep; returns the exit status."""
    return sweep(parse_args(argv), argv)


if __name__ == "__main__":
    run_main(main)
