#!/usr/bin/env python3
# autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
# through a reverse-mode autograd, level by level (docs/contract.md). This file is
# the entry: command line, dispatch to the levels, output.
#
# The Cython port of the Codon program. Every level of both workloads is a Cython module
# (core/, softplus/, graph/ beside this file, .pyx and .pxd), compiled by the Makefile with
# the C port's flags into extension modules under $(BUILD)/cython/; this launcher is plain
# Python and shares the CPython port's command line and output (ports/python/cli). The
# program is $(BUILD)/cython/autograd.py, which make writes to run this file with its
# modules first on the path (sys.path[0] is that folder):
#
#     make build/cython/autograd.py          (CPU=native by default; CPU=x86-64-v2|v3|v4 too)
#     python3 build/cython/autograd.py --level v2 --iters 1000000
#     python3 build/cython/autograd.py --workload graph --level v3 --iters 160
#
# The clocks are read here, around the call into a level's module, as the CPython port
# does (contract §5): the Python work outside that call (start-up, parsing, printing) is
# not timed.
import math
import os
import signal
import sys
import time
from pathlib import Path
from typing import NamedTuple

sys.path.append(str(Path(__file__).resolve().parent.parent / "python"))   # ports/python: cli
from cli.args import parse, UsageError, EVAL, HELP, VERSION  # noqa: E402
from cli.output import (emit, Result, GraphResult, text_header, graph_text_header, text_line,  # noqa: E402
                        graph_text_line, json_line, graph_json_line, eval_text, eval_json)

try:   # the extension modules, from the build folder at sys.path[0]
    from core.vmath import target_text
    from softplus.naive import run_v0
    from softplus.pool import run_v1
    from softplus.tape import run_v2, eval_point
    from softplus.simd import run_v3
    from softplus.threads import run_v4
    from softplus.fused import run_fused, run_fused_simd
    from graph.objects import run_graph_v0
    from graph.pool import run_graph_v1
    from graph.tape import run_graph_v2
    from graph.simd import run_graph_v3
    from graph.threads import run_graph_v4
except ImportError as e:
    sys.stderr.write(f"error: the Cython port's modules are not on the path ({e}): run the program make "
                     "writes beside them, build/cython/autograd.py (make build/cython/autograd.py)\n")
    sys.exit(1)

# Each workload this port has, and its levels: all of them.
HAVE = {"softplus": ["v0", "v1", "v2", "v3", "v4", "fused", "fused-simd"], "graph": ["v0", "v1", "v2", "v3", "v4"]}

# This program's name in the output (cli.output takes it from the caller).
IMPL = "cython"

VERSION_TEXT = "autograd (cython) 0.1.0"
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
  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
               the default), or a softplus baseline: fused, fused-simd
  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)
  --iters N    samples, 1..10^12 (default 10000000; graph 10000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape"""


# The checksums as cli.output reads them (the modules return plain tuples).
class Sums(NamedTuple):
    f: float
    dx: float
    dy: float


class GraphSums(NamedTuple):
    loss: float
    grad_in: float
    grad_all: float


LEVEL_RUNS = {"v0": lambda seed, n, t: run_v0(seed, n), "v1": lambda seed, n, t: run_v1(seed, n),
              "v2": lambda seed, n, t: run_v2(seed, n), "v3": lambda seed, n, t: run_v3(seed, n),
              "v4": run_v4, "fused": lambda seed, n, t: run_fused(seed, n),
              "fused-simd": lambda seed, n, t: run_fused_simd(seed, n)}
GRAPH_RUNS = {"v0": lambda seed, m, n, t: run_graph_v0(seed, m, n), "v1": lambda seed, m, n, t: run_graph_v1(seed, m, n),
              "v2": lambda seed, m, n, t: run_graph_v2(seed, m, n), "v3": lambda seed, m, n, t: run_graph_v3(seed, m, n),
              "v4": run_graph_v4}


def cpus_available():
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    return max(len(os.sched_getaffinity(0)), 1)


def cpu_clock(level):
    """The CPU clock of a level's timed region, in ns (contract §5): the process's for v4,
    whose OpenMP threads all work, the calling thread's own for the single-threaded levels."""
    return time.process_time_ns if level == "v4" else time.thread_time_ns


def run_graph(opts):
    """The graph workload (docs/contract-graph.md): each level, timed, one line each."""
    if not opts.json:
        emit(graph_text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        go, cpu_now = GRAPH_RUNS[level], cpu_clock(level)
        start = time.monotonic_ns()
        cpu_start = cpu_now()
        sums = go(opts.seed, opts.ops, opts.iters, threads)
        cpu_seconds = (cpu_now() - cpu_start) / 1e9
        seconds = (time.monotonic_ns() - start) / 1e9
        r = GraphResult(IMPL, level, opts.ops, opts.iters, opts.seed, threads, seconds, cpu_seconds, GraphSums(*sums))
        if level == "v0":
            v0_seconds = seconds
        emit(graph_json_line(r) if opts.json else graph_text_line(r, v0_seconds))


def run(opts):
    if not opts.json:
        emit(text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        go, cpu_now = LEVEL_RUNS[level], cpu_clock(level)
        start = time.monotonic_ns()
        cpu_start = cpu_now()
        sums = go(opts.seed, opts.iters, threads)
        cpu_seconds = (cpu_now() - cpu_start) / 1e9
        seconds = (time.monotonic_ns() - start) / 1e9
        r = Result(IMPL, level, opts.iters, opts.seed, threads, seconds, cpu_seconds, Sums(*sums))
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
