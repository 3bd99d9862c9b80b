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
# Run by PyPy (the registry's `pypy`), each level is timed warm: warm_up runs it before the clock
# until PyPy's JIT has compiled its loops, as the Numba port compiles before its clock
# (warmup_time.py beside this file reports what the warm-up takes and buys).
#
#     python3 ports/python/autograd.py --level v2 --iters 100000
#     python3 ports/python/autograd.py --workload graph --level v2 --iters 20
import platform
import time

from cli.args import help_text
from cli.driver import Program, main
from softplus.naive import run_v0
from softplus.pool import run_v1
from softplus.tape import run_v2, eval_point
from softplus.fused import run_fused
from graph.objects import run_graph_v0
from graph.pool import run_graph_v1
from graph.tape import run_graph_v2, tapes_bytes

# Each workload this port has, and its levels (cli.args.parse refuses the others): no
# vector math or parallel threads here for v3, v4 and fused-simd.
HAVE = {"softplus": ["v0", "v1", "v2", "fused"], "graph": ["v0", "v1", "v2"]}

# This program's name in the output (cli.output takes it from the caller): the same source
# run by PyPy (Debian's pypy3) is the registry's `pypy`.
IMPL = "pypy" if platform.python_implementation() == "PyPy" else "python"

VERSION_TEXT = f"autograd ({IMPL}) 0.1.0"
HELP_TEXT = help_text("""v0 naive, v1 pool, v2 tape, all (v0..v2, the default), or the
               softplus baseline fused (v3, v4 and fused-simd: not in this
               CPython port)""")

RUNS = {"v0": run_v0, "v1": run_v1, "v2": run_v2, "fused": run_fused}
GRAPH_RUNS = {"v0": run_graph_v0, "v1": run_graph_v1, "v2": run_graph_v2}

# PyPy's warm-up (warm_up): calls of go before the clock, each of a chunk of samples. PyPy compiles a
# loop once it has run 1039 times (pypyjit's `threshold`) and a guard's bridge once it has failed 200
# times, so a level is warm only when its least-run loop has passed that: softplus's sample loop runs
# once a sample, the graph's input and grad_in loops 100 times a sample whatever M is. The counts are
# at or past where a timed run's time per sample stopped falling (`warmup_time.py --sweep`,
# docs/findings/port-python.md#the-sweep-behind-the-counts).
WARM_SOFTPLUS = (8, 1000)        # (calls, samples per call)
WARM_GRAPH_CALLS = 16            # graph: calls of about 10,000 ops (one sample at the default M)
WARM_GRAPH_OPS = 10_000
WARM_SECONDS = 1.0               # no further call once the warm-up has taken this long (a large M)


def warm_plan(workload, m=0):
    """(calls, samples per call) of a level's warm-up in the workload (graph: over m ops)."""
    if workload == "graph":
        return WARM_GRAPH_CALLS, max(1, -(-WARM_GRAPH_OPS // m))
    return WARM_SOFTPLUS


def warm_up(go, workload, m=0):
    """Run go on warm_plan's samples before the clock, under PyPy; returns go. Every go(n) starts
    again from the seed (fresh state and inputs each call), so the warm-up changes no sum."""
    if IMPL != "pypy":
        return go   # CPython has no JIT: a warm-up would compile nothing and speed nothing up
    calls, chunk = warm_plan(workload, m)
    start = time.monotonic()
    for _ in range(calls):
        go(chunk)
        if time.monotonic() - start >= WARM_SECONDS:
            break
    return go


def run_level(level, seed, threads):
    """A softplus level, ready to run n samples (cli.driver times it): under PyPy, warm."""
    go = RUNS[level]
    return warm_up(lambda n: go(seed, n), "softplus")


def run_graph_level(level, seed, m, threads):
    """A graph level over m ops, ready to run n samples: under PyPy, warm."""
    go = GRAPH_RUNS[level]
    return warm_up(lambda n: go(seed, m, n), "graph", m)


PROGRAM = Program(IMPL, lambda: VERSION_TEXT, HELP_TEXT, HAVE, run_level, run_graph_level, eval_point,
                  tapes_bytes)

if __name__ == "__main__":
    main(PROGRAM)
