#!/usr/bin/env python3
# autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
# through a reverse-mode autograd, level by level (docs/contract.md). This file is
# the entry: command line, dispatch to the levels, output.
#
# The Numba port of the Codon program: the same modules in the same packages (core/,
# softplus/, graph/ beside this file), every function a level runs compiled by Numba's
# @njit (v4's with parallel=True and prange), the CPython port's cli/ (ports/python/cli)
# for the command line and output. Compiled code is cached on disk (NUMBA_CACHE_DIR, set by
# the wrapper `make` writes into the build folder), and every level is compiled, or loaded
# from that cache, before its clock starts: the timed region is the iteration loop only.
#
#     build/autograd-numba --level v2 --iters 1000000
#     build/autograd-numba --workload graph --level v3 --iters 200
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The CPython port's cli package, shared (one definition of the command line, the dispatch
# and timing, and the output); this folder's own core/, softplus/ and graph/ come first on
# sys.path.
sys.path.append(os.path.join(os.path.dirname(HERE), "python"))

from cli.args import help_text  # noqa: E402
from cli.driver import Program, main  # noqa: E402
from core.target import target_text  # noqa: E402  (no Numba import: --help, --version and errors stay quick)

# Each workload this port has, and its levels (cli.args.parse refuses the others): v0 and v1's
# pointer-linked nodes do not compile under Numba (ports/numba/README.md).
HAVE = {"softplus": ["v2", "v3", "v4", "fused", "fused-simd"],
        "graph": ["v2", "v3", "v4"]}

# This program's name in the output (cli.output takes it from the caller).
IMPL = "numba"

VERSION_TEXT = "autograd (numba) 0.1.0"
HELP_TEXT = help_text("""v2 tape, v3 simd, v4 threads, all (v2..v4, the default), or
               the softplus baselines fused and fused-simd (v0, v1: not in this
               Numba port)""")


def level_function(level):
    """The compiled function of a softplus level: f(seed, n, threads) -> Sums. Imported on
    first use, so that a run compiles (or loads) only the levels it runs."""
    if level == "v2":
        from softplus.tape import run_v2
        return lambda seed, n, threads: run_v2(seed, n)
    if level == "v3":
        from softplus.simd import run_v3
        return lambda seed, n, threads: run_v3(seed, n)
    if level == "v4":
        from softplus.threads import run_v4
        from softplus.simd import n_batches

        def run_v4_on_team(seed, n, threads):
            on_team(threads, n_batches(n))
            return run_v4(seed, n, threads)
        return run_v4_on_team
    if level == "fused":
        from softplus.fused import run_fused
        return lambda seed, n, threads: run_fused(seed, n)
    from softplus.fused import run_fused_simd
    return lambda seed, n, threads: run_fused_simd(seed, n)


def graph_level_function(level):
    """The compiled function of a graph level: f(seed, m, n, threads) -> GraphSums."""
    if level == "v2":
        from graph.tape import run_graph_v2
        return lambda seed, m, n, threads: run_graph_v2(seed, m, n)
    if level == "v3":
        from graph.simd import run_graph_v3
        return lambda seed, m, n, threads: run_graph_v3(seed, m, n)
    from graph.threads import run_graph_v4
    from graph.simd import n_graph_batches

    def run_graph_v4_on_team(seed, m, n, threads):
        on_team(threads, n_graph_batches(n))
        return run_graph_v4(seed, m, n, threads)
    return run_graph_v4_on_team


def on_team(threads, nb):
    """Numba's pool set to v4's team, min(team_size(T, nb), the pool's threads), before each v4
    call (inside the timed region): a prange starts every thread of the pool,
    whatever its ranges (core/threads). OpenMP (Numba's threading layer here) starts its worker
    threads at the first parallel region with more than one thread, so they start inside v4's
    timed region, as every other program's do (contract §5; tests/test_ports.py checks it); the
    warm-up's one sample is a team of one."""
    import numba
    from core.threads import team_size
    numba.set_num_threads(min(team_size(threads, nb), numba.config.NUMBA_NUM_THREADS))


# The graph warm-up's ops (run_graph_level): the smallest graph, 101 nodes.
WARM_OPS = 1


def run_level(level, seed, threads):
    """A softplus level ready to run n samples (cli.driver times it): compiled, or loaded
    from the cache, by a one-sample call before the clock (on one thread: on_team)."""
    import numpy as np
    fn, seed = level_function(level), np.uint64(seed)
    fn(seed, 1, threads)
    return lambda n: fn(seed, n, threads)


def run_graph_level(level, seed, m, threads):
    """A graph level over m ops, ready to run n samples, compiled or loaded before the clock. The
    warm-up's sample is of WARM_OPS ops, not m: what Numba compiles depends on the arguments' types
    alone, and one sample at m = 10^6 is a 448-MB batch tape, as long as a short timed run."""
    import numpy as np
    fn, seed = graph_level_function(level), np.uint64(seed)
    fn(seed, WARM_OPS, 1, threads)
    return lambda n: fn(seed, m, n, threads)


def eval_point(x, y):
    """f and its gradient at (x, y) through the softplus v2 tape, compiled on first use."""
    from softplus import tape
    return tape.eval_point(x, y)


def tapes_bytes(level, m, n, threads):
    """The least memory a graph level's tapes take (graph.threads), imported on first use."""
    from graph import threads as graph_threads
    return graph_threads.tapes_bytes(level, m, n, threads)


PROGRAM = Program(IMPL, lambda: VERSION_TEXT + "\n" + target_text(), HELP_TEXT, HAVE, run_level, run_graph_level,
                  eval_point, tapes_bytes)

if __name__ == "__main__":
    main(PROGRAM)
