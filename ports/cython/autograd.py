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
# The clocks are read by cli.driver (ports/python/cli, shared with the CPython and Numba
# ports) around the call into a level's module (contract §5): the Python work outside that
# call (start-up, parsing, printing) is not timed.
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent / "python"))   # ports/python: cli
from cli.args import help_text  # noqa: E402
from cli.driver import Program, main  # noqa: E402

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
    from graph.threads import run_graph_v4, tapes_bytes
except ImportError as e:
    sys.stderr.write(f"error: the Cython port's modules are not on the path ({e}): run the program make "
                     "writes beside them, build/cython/autograd.py (make build/cython/autograd.py)\n")
    sys.exit(1)

# Each workload this port has, and its levels: all of them.
HAVE = {"softplus": ["v0", "v1", "v2", "v3", "v4", "fused", "fused-simd"], "graph": ["v0", "v1", "v2", "v3", "v4"]}

# This program's name in the output (cli.output takes it from the caller).
IMPL = "cython"

VERSION_TEXT = "autograd (cython) 0.1.0"
HELP_TEXT = help_text("""v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
               the default), or a softplus baseline: fused, fused-simd""")

RUNS = {"v0": run_v0, "v1": run_v1, "v2": run_v2, "v3": run_v3, "fused": run_fused, "fused-simd": run_fused_simd}
GRAPH_RUNS = {"v0": run_graph_v0, "v1": run_graph_v1, "v2": run_graph_v2, "v3": run_graph_v3}


def run_level(level, seed, threads):
    """A softplus level, ready to run n samples (cli.driver times it); v4 on its threads."""
    if level == "v4":
        return lambda n: run_v4(seed, n, threads)
    go = RUNS[level]
    return lambda n: go(seed, n)


def run_graph_level(level, seed, m, threads):
    """A graph level over m ops, ready to run n samples."""
    if level == "v4":
        return lambda n: run_graph_v4(seed, m, n, threads)
    go = GRAPH_RUNS[level]
    return lambda n: go(seed, m, n)


PROGRAM = Program(IMPL, lambda: VERSION_TEXT + "\n" + target_text(), HELP_TEXT, HAVE, run_level, run_graph_level,
                  eval_point, tapes_bytes)

if __name__ == "__main__":
    main(PROGRAM)
