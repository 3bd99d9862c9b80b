# The entry's work, the part of autograd.codon after its imports (cpus_available, cpu_clock,
# check_memory, run_levels, run_graph, run, evaluate, main), once for every Python-launched port: the CPython port
# (and PyPy), Cython and Numba. Each port's autograd.py says what it has (a Program: its
# name, help and version text, its levels and how to run one) and calls main(program).
import math
import os
import signal
import sys
import time
from typing import Callable, NamedTuple

from .args import parse, UsageError, EVAL, HELP, VERSION
from .output import (emit, Sums, GraphSums, Result, GraphResult, text_header, graph_text_header, text_line,
                     graph_text_line, json_line, graph_json_line, eval_text, eval_json)


class Program(NamedTuple):
    """What a port's autograd.py tells main."""
    impl: str                          # its name in the output (contract §5)
    version: Callable[[], str]         # the --version text
    help: str                          # the --help text
    have: dict                         # each workload it has, and its levels (parse refuses the others)
    softplus: Callable                 # (level, seed, threads) -> go(n) -> (f, dx, dy), ready before the clock
    graph: Callable                    # (level, seed, ops, threads) -> go(n) -> (loss, grad_in, grad_all)
    eval_point: Callable               # (x, y) -> (f, dfdx, dfdy), through the softplus v2 tape
    tapes_bytes: Callable              # (level, ops, n, threads) -> the least bytes its graph tapes take


def cpus_available():
    """CPUs in this process's affinity mask (what taskset or a container allows). PyPy 3.9
    has no os.sched_getaffinity: there, every CPU (only v4 uses the count, which the CPython
    port lacks)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


def cpu_clock(level):
    """The CPU clock of a level's timed region, in ns (contract §5): the process's for v4,
    whose threads all work, the calling thread's own for the single-threaded levels."""
    return time.process_time_ns if level == "v4" else time.thread_time_ns


def timed(level, go, n):
    """go(n) under the contract's clocks: (its result, seconds, cpu_seconds)."""
    cpu_now = cpu_clock(level)
    start = time.monotonic_ns()
    cpu_start = cpu_now()
    out = go(n)
    cpu_seconds = (cpu_now() - cpu_start) / 1e9
    seconds = (time.monotonic_ns() - start) / 1e9
    return out, seconds, cpu_seconds


MIB = 2**20


def check_memory(program, opts):
    """Refuses a graph run whose tapes cannot fit in this machine's memory (docs/contract-graph.md),
    before any is allocated: the most any requested level's tapes take (the port's tapes_bytes)
    against the physical memory. A machine whose sysconf cannot tell is not refused."""
    need = max(program.tapes_bytes(level, opts.ops, opts.iters, opts.threads) for level in opts.levels)
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGESIZE")
    except (AttributeError, ValueError, OSError):
        return
    if pages <= 0 or page_size <= 0:
        return
    have = pages * page_size
    if need > have:
        raise UsageError(f"the tapes of --ops {opts.ops} need at least {-(-need // MIB)} MiB, "
                         f"more than this machine's memory ({have // MIB} MiB)")


def run_levels(opts, header, prepare, line):
    """Each level of opts, timed, one output line each: both workloads' loop. prepare(level, threads)
    gives the level ready to run, go(n), before the clock; the clocks time go alone (timed);
    line(level, threads, seconds, cpu_seconds, sums, v0_seconds) is the level's output line (v0's
    seconds for the speed-up column)."""
    if not opts.json:
        emit(header)
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        go = prepare(level, threads)
        sums, seconds, cpu_seconds = timed(level, go, opts.iters)
        if level == "v0":
            v0_seconds = seconds
        emit(line(level, threads, seconds, cpu_seconds, sums, v0_seconds))


def graph_line(program, opts, level, threads, seconds, cpu_seconds, sums, v0_seconds):
    r = GraphResult(program.impl, level, opts.ops, opts.iters, opts.seed, threads, seconds, cpu_seconds,
                    GraphSums(*sums))
    return graph_json_line(r) if opts.json else graph_text_line(r, v0_seconds)


def run_graph(program, opts):
    """The graph workload (docs/contract-graph.md): each level, timed, one line each."""
    run_levels(opts, graph_text_header(),
               lambda level, threads: program.graph(level, opts.seed, opts.ops, threads),
               lambda *timing: graph_line(program, opts, *timing))


def softplus_line(program, opts, level, threads, seconds, cpu_seconds, sums, v0_seconds):
    r = Result(program.impl, level, opts.iters, opts.seed, threads, seconds, cpu_seconds, Sums(*sums))
    return json_line(r) if opts.json else text_line(r, v0_seconds)


def run(program, opts):
    """The softplus workload: each level, timed, one line each."""
    run_levels(opts, text_header(),
               lambda level, threads: program.softplus(level, opts.seed, threads),
               lambda *timing: softplus_line(program, opts, *timing))


def evaluate(program, opts):
    """--eval X Y: f and its gradient at one point."""
    f, dfdx, dfdy = program.eval_point(opts.x, opts.y)
    p = (opts.x + opts.y) * opts.x
    if not math.isfinite(p):
        raise UsageError("(X + Y) * X overflows at this point")
    for v in (f, dfdx, dfdy):
        if not math.isfinite(v):
            raise UsageError("the result overflows at this point")
    emit(eval_json(program.impl, opts.x, opts.y, f, dfdx, dfdy) if opts.json
         else eval_text(opts.x, opts.y, f, dfdx, dfdy))


def main(program):
    # Die quietly like a C program when stdout is a closed pipe (`| head`), rather
    # than with a BrokenPipeError trace.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        # parse refuses a workload or level this port lacks (program.have), as bad input.
        opts = parse(sys.argv[1:], cpus_available(), program.have)
        if opts.mode == HELP:
            emit(program.help)
        elif opts.mode == VERSION:
            emit(program.version())
        elif opts.mode == EVAL:
            evaluate(program, opts)
        elif opts.workload == "graph":
            check_memory(program, opts)
            run_graph(program, opts)
        else:
            run(program, opts)
    except UsageError as e:
        sys.stderr.write("error: " + e.message + "\n")
        sys.exit(2)
