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
import math
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The CPython port's cli package, shared (one definition of the command line and output);
# this folder's own core/, softplus/ and graph/ come first on sys.path.
sys.path.append(os.path.join(os.path.dirname(HERE), "python"))

from cli.args import parse, UsageError, EVAL, HELP, VERSION  # noqa: E402
from cli.output import (emit, Result, GraphResult, text_header, graph_text_header, text_line,  # noqa: E402
                        graph_text_line, json_line, graph_json_line, eval_text, eval_json)
from core.target import target_text  # noqa: E402  (no Numba import: --help, --version and errors stay quick)

# Each workload this port has, and its levels (cli.args.parse refuses the others): v0 and v1's
# pointer-linked nodes do not compile under Numba (README).
HAVE = {"softplus": ["v2", "v3", "v4", "fused", "fused-simd"],
        "graph": ["v2", "v3", "v4"]}

# This program's name in the output (cli.output takes it from the caller).
IMPL = "numba"

VERSION_TEXT = "autograd (numba) 0.1.0"
HELP_TEXT = """usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
                [--threads T] [--json]
       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
                [--seed S] [--threads T] [--json]
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes through a reverse-mode autograd at each
optimization level and prints the time and the checksums. Workloads:
  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
            sums of f, df/dx and df/dy over the samples
  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
            loss = the sum of every node; checksums are the sums of the loss,
            of the inputs' weighted gradients and of every node's gradient

  --workload W softplus or graph (default softplus)
  --level L    v2 tape, v3 simd, v4 threads, all (v2..v4, the default), or
               the softplus baselines fused and fused-simd (v0, v1: not in this
               Numba port)
  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)
  --iters N    samples, 1..10^12 (default 10000000; graph 10000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape"""


def cpus_available():
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    return max(len(os.sched_getaffinity(0)), 1)


def cpu_clock(level):
    """The CPU clock of a level's timed region, in ns (contract §5): the process's for v4,
    whose threads all work, the calling thread's own for the single-threaded levels."""
    return time.process_time_ns if level == "v4" else time.thread_time_ns


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
        return lambda seed, n, threads: run_v4(seed, n, threads)
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
    return lambda seed, m, n, threads: run_graph_v4(seed, m, n, threads)


def use_threads(level, threads):
    """v4's prange runs on min(T, Numba's pool) threads; the other levels on one."""
    if level == "v4":
        import numba
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


def timed(level, call):
    """Run call() under the contract's clocks: (result, seconds, cpu_seconds)."""
    cpu_now = cpu_clock(level)
    start = time.monotonic_ns()
    cpu_start = cpu_now()
    out = call()
    cpu_seconds = (cpu_now() - cpu_start) / 1e9
    seconds = (time.monotonic_ns() - start) / 1e9
    return out, seconds, cpu_seconds


def run_graph(opts):
    """The graph workload (docs/contract-graph.md): each level, timed, one line each."""
    import numpy as np
    if not opts.json:
        emit(graph_text_header())
    v0_seconds = 0.0
    seed = np.uint64(opts.seed)
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        fn = graph_level_function(level)
        use_threads(level, threads)
        fn(seed, opts.ops, 1, threads)   # compiled (or loaded from the cache) before the clock
        sums, seconds, cpu_seconds = timed(level, lambda: fn(seed, opts.ops, opts.iters, threads))
        r = GraphResult(IMPL, level, opts.ops, opts.iters, opts.seed, threads, seconds, cpu_seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(graph_json_line(r) if opts.json else graph_text_line(r, v0_seconds))


def run(opts):
    import numpy as np
    if not opts.json:
        emit(text_header())
    v0_seconds = 0.0
    seed = np.uint64(opts.seed)
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        fn = level_function(level)
        use_threads(level, threads)
        fn(seed, 1, threads)             # compiled (or loaded from the cache) before the clock
        sums, seconds, cpu_seconds = timed(level, lambda: fn(seed, opts.iters, threads))
        r = Result(IMPL, level, opts.iters, opts.seed, threads, seconds, cpu_seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(json_line(r) if opts.json else text_line(r, v0_seconds))


def evaluate(opts):
    from softplus.tape import eval_point
    f, dfdx, dfdy = eval_point(opts.x, opts.y)
    p = (opts.x + opts.y) * opts.x
    if not math.isfinite(p):
        raise UsageError("(X + Y) * X overflows at this point")
    for v in (f, dfdx, dfdy):
        if not math.isfinite(v):
            raise UsageError("the result overflows at this point")
    emit(eval_json(IMPL, opts.x, opts.y, f, dfdx, dfdy) if opts.json else eval_text(opts.x, opts.y, f, dfdx, dfdy))


def main():
    # Die quietly like a C program when stdout is a closed pipe (`| head`), rather
    # than with a BrokenPipeError trace.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        # parse refuses a workload or level this port lacks (HAVE), as bad input.
        opts = parse(sys.argv[1:], cpus_available(), HAVE)
        if opts.mode == HELP:
            emit(HELP_TEXT)
        elif opts.mode == VERSION:
            emit(VERSION_TEXT + "\n" + target_text())
        elif opts.mode == EVAL:
            evaluate(opts)
        elif opts.workload == "graph":
            run_graph(opts)
        else:
            run(opts)
    except UsageError as e:
        sys.stderr.write("error: " + e.message + "\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
