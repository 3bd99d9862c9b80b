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
    """In this process: import Numba, then the level's modules, then time the level's first call
    on one sample (the compilation, or the loading from the cache); prints the three seconds."""
    sys.path.insert(0, HERE)
    sys.argv = [sys.argv[0]]
    start = time.perf_counter()
    import numba  # noqa: F401
    import numpy as np
    import autograd
    imported = time.perf_counter()
    fn = (autograd.graph_level_function if workload == "graph" else autograd.level_function)(level)
    loaded = time.perf_counter()
    seed = np.uint64(42)
    if workload == "graph":
        fn(seed, 8, 1, 2)
    else:
        fn(seed, 1, 2)
    print(f"{imported - start:.3f} {loaded - imported:.3f} {time.perf_counter() - loaded:.3f}")


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
        (imp, mod, cold), (_, _, warm) = runs
        print(f"numba {workload} {level}: first call {float(cold):.2f} s with an empty cache (compiling), "
              f"{float(warm):.2f} s from the on-disk cache; before it, importing Numba {float(imp):.2f} s "
              f"and the level's modules {float(mod):.2f} s")


if __name__ == "__main__":
    main()
