#!/usr/bin/env python3
# autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
# through a reverse-mode autograd, level by level (docs/contract.md). This file is
# the entry: command line, dispatch to the levels, output.
#
# The CPython port of the Codon program: the same modules in the same packages (core/,
# softplus/, graph/, cli/ beside this file), run by the plain interpreter, standard library
# only. It has levels v0, v1, v2 of both workloads (graph: docs/contract-graph.md) and
# softplus's fused baseline; v3, v4 and fused-simd need vector math and threads that run
# in parallel, which plain CPython does not have, so they are reported as not implemented.
#
#     python3 ports/python/autograd.py --level v2 --iters 100000
#     python3 ports/python/autograd.py --workload graph --level v2 --iters 20
import math
import os
import platform
import signal
import sys
import time

from cli.args import parse, UsageError, EVAL, HELP, VERSION
from cli.output import (emit, Result, GraphResult, text_header, graph_text_header, text_line, graph_text_line,
                        json_line, graph_json_line, eval_text, eval_json)
from softplus.naive import run_v0
from softplus.pool import run_v1
from softplus.tape import run_v2, eval_point
from softplus.fused import run_fused
from graph.objects import run_graph_v0
from graph.pool import run_graph_v1
from graph.tape import run_graph_v2

# Each workload this port has, and its levels (cli.args.parse refuses the others): no
# vector math or parallel threads here for v3, v4 and fused-simd.
HAVE = {"softplus": ["v0", "v1", "v2", "fused"], "graph": ["v0", "v1", "v2"]}

# This program's name in the output (cli.output takes it from the caller): the same source
# run by PyPy (Debian's pypy3) is the registry's `pypy`.
IMPL = "pypy" if platform.python_implementation() == "PyPy" else "python"

VERSION_TEXT = f"autograd ({IMPL}) 0.1.0"
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
  --level L    v0 naive, v1 pool, v2 tape, all (v0..v2, the default), or the
               softplus baseline fused (v3, v4 and fused-simd: not in this
               CPython port)
  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)
  --iters N    samples, 1..10^12 (default 10000000; graph 10000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape"""


def cpus_available():
    """CPUs in this process's affinity mask (what taskset or a container allows). PyPy 3.9
    has no os.sched_getaffinity: there, every CPU (only v4 uses the count, which this port
    lacks)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


def cpu_clock(level):
    """The CPU clock of a level's timed region, in ns (contract §5): the process's for v4,
    whose threads all work, the calling thread's own for the single-threaded levels."""
    return time.process_time_ns if level == "v4" else time.thread_time_ns


def run_level(level, seed, n, threads):
    if level == "v0":
        return run_v0(seed, n)
    if level == "v1":
        return run_v1(seed, n)
    if level == "v2":
        return run_v2(seed, n)
    return run_fused(seed, n)


def run_graph_level(level, seed, m, n, threads):
    if level == "v0":
        return run_graph_v0(seed, m, n)
    if level == "v1":
        return run_graph_v1(seed, m, n)
    return run_graph_v2(seed, m, n)


def run_graph(opts):
    """The graph workload (docs/contract-graph.md): each level, timed, one line each."""
    if not opts.json:
        emit(graph_text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        cpu_now = cpu_clock(level)
        start = time.monotonic_ns()
        cpu_start = cpu_now()
        sums = run_graph_level(level, opts.seed, opts.ops, opts.iters, threads)
        cpu_seconds = (cpu_now() - cpu_start) / 1e9
        seconds = (time.monotonic_ns() - start) / 1e9
        r = GraphResult(IMPL, level, opts.ops, opts.iters, opts.seed, threads, seconds, cpu_seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(graph_json_line(r) if opts.json else graph_text_line(r, v0_seconds))


def run(opts):
    if not opts.json:
        emit(text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        cpu_now = cpu_clock(level)
        start = time.monotonic_ns()
        cpu_start = cpu_now()
        sums = run_level(level, opts.seed, opts.iters, threads)
        cpu_seconds = (cpu_now() - cpu_start) / 1e9
        seconds = (time.monotonic_ns() - start) / 1e9
        r = Result(IMPL, level, opts.iters, opts.seed, threads, seconds, cpu_seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(json_line(r) if opts.json else text_line(r, v0_seconds))


def evaluate(opts):
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
            emit(VERSION_TEXT)
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
