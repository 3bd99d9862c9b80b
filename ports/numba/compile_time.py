#!/usr/bin/env python3
# The Numba port's JIT cost, which autograd.py keeps out of every timed region: for each level,
# the seconds its first call takes in a fresh process, once with an empty on-disk cache (Numba
# compiles every function the level calls) and once more with the cache that run left (Numba
# loads the compiled code). One line per level; nothing else is timed. The caches are made in
# a temporary folder under the build folder and removed afterwards.
#
#     .venv/bin/python ports/numba/compile_time.py [--build build]
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LEVELS = [("softplus", lv) for lv in ("v2", "v3", "v4", "fused", "fused-simd")] + \
         [("graph", lv) for lv in ("v2", "v3", "v4")]


def first_call(workload, level):
    """In this process: import the level (Numba included) and time its first call, on one sample."""
    sys.path.insert(0, HERE)
    sys.argv = [sys.argv[0]]
    start = time.perf_counter()
    import numpy as np
    import autograd
    imported = time.perf_counter()
    seed = np.uint64(42)
    if workload == "graph":
        autograd.graph_level_function(level)(seed, 8, 1, 2)
    else:
        autograd.level_function(level)(seed, 1, 2)
    print(f"{imported - start:.3f} {time.perf_counter() - imported:.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default="build", help="the build folder the caches are made in")
    p.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.one:
        first_call(*opts.one)
        return
    os.makedirs(opts.build, exist_ok=True)
    for workload, level in LEVELS:
        cache = tempfile.mkdtemp(prefix="numba-compile-time-", dir=opts.build)
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        runs = [subprocess.run([sys.executable, __file__, "--one", workload, level], env=env, check=True,
                               capture_output=True, text=True).stdout.split() for _ in range(2)]
        shutil.rmtree(cache)
        (imp, cold), (_, warm) = runs
        print(f"numba {workload} {level}: compiled in {float(cold):.2f} s (empty cache), loaded from the "
              f"on-disk cache in {float(warm):.2f} s; importing Numba and the level {float(imp):.2f} s")


if __name__ == "__main__":
    main()
