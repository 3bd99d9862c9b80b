# autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
# through a reverse-mode autograd, level by level (docs/contract.md). This file is
# the entry: command line, dispatch to the levels, output.
#
# The Mojo port of the Codon program: the modules under core/, cli/, softplus/ and
# graph/ are the Codon program's, module by module (ports/mojo/README.md).
#
#   make build/autograd-mojo         (CPU=native by default; CPU=x86-64-v2|v3|v4 too)
#   mojo build -D ASSERT=none --fp-mode contract=off -D AUTOGRAD_TARGET=native \
#       -I ports/mojo -Xlinker -lmvec -o build/autograd-mojo ports/mojo/autograd.mojo

from std.ffi import external_call
from std.sys import argv, exit, stderr
from std.bit import pop_count
from std.math import isfinite
from core.ops import Sums
from core.vmath import target_text
from cli.args import (parse, Options, EVAL, HELP, VERSION, MAX_THREADS, MAX_GRAPH_OPS, DEFAULT_ITERS,
                      DEFAULT_GRAPH_ITERS, DEFAULT_OPS, DEFAULT_SEED)
from cli.output import (emit, Result, GraphResult, text_header, text_line, json_line, graph_text_header,
                        graph_text_line, graph_json_line, eval_text, eval_json)
from softplus.naive import run_v0
from softplus.pool import run_v1
from softplus.tape import run_v2, eval_point
from softplus.simd import run_v3
from softplus.threads import run_v4
from softplus.fused import run_fused, run_fused_simd
from graph.recipe import GraphSums
from graph.objects import run_graph_v0
from graph.pool import run_graph_v1
from graph.tape import run_graph_v2
from graph.simd import run_graph_v3
from graph.threads import run_graph_v4, tapes_bytes

comptime VERSION_TEXT = "autograd (mojo) 0.1.0"


def help_text() -> String:
    """The --help text, its bounds and defaults cli/args.mojo's."""
    return String("""usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
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
  --ops M      graph ops, 1..""", MAX_GRAPH_OPS, " (default ", DEFAULT_OPS, """; graph workload only)
  --iters N    samples, 1..10^12 (default """, DEFAULT_ITERS, "; graph ", DEFAULT_GRAPH_ITERS, """)
  --seed S     input stream seed, 0..2^64-1 (default """, DEFAULT_SEED, """)
  --threads T  threads for v4, 1..""", MAX_THREADS, """ (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape""")


def cpus_available() -> Int:
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    var mask = Array[UInt64, 16](fill=0)  # room for 1024 CPUs
    if external_call["sched_getaffinity", Int32](Int32(0), 128, mask.unsafe_ptr()) != 0:
        return 1
    var count = 0
    for w in range(16):
        count += Int(pop_count(mask[w]))
    return max(count, 1)


comptime CLOCK_MONOTONIC = 1
comptime CLOCK_PROCESS_CPUTIME_ID = 2
comptime CLOCK_THREAD_CPUTIME_ID = 3


def clock_ns(clock: Int) -> Int:
    var ts = Array[Int, 2](fill=0)
    _ = external_call["clock_gettime", Int32](Int32(clock), ts.unsafe_ptr())
    return ts[0] * 1_000_000_000 + ts[1]


def cpu_clock(level: String) -> Float64:
    """Seconds of CPU time (contract §5): the process's for v4, whose threads all count, this
    thread's for every other level."""
    var ts = Array[Int, 2](fill=0)
    _ = external_call["clock_gettime", Int32](
        Int32(CLOCK_PROCESS_CPUTIME_ID if level == "v4" else CLOCK_THREAD_CPUTIME_ID), ts.unsafe_ptr())
    return Float64(ts[0]) + Float64(ts[1]) * 1e-9


def run_level(level: String, seed: UInt64, n: Int, threads: Int) -> Sums:
    if level == "v0":
        return run_v0(seed, n)
    if level == "v1":
        return run_v1(seed, n)
    if level == "v2":
        return run_v2(seed, n)
    if level == "v3":
        return run_v3(seed, n)
    if level == "v4":
        return run_v4(seed, n, threads)
    if level == "fused":
        return run_fused(seed, n)
    return run_fused_simd(seed, n)


def run_graph_level(level: String, seed: UInt64, m: Int, n: Int, threads: Int) -> GraphSums:
    if level == "v0":
        return run_graph_v0(seed, m, n)
    if level == "v1":
        return run_graph_v1(seed, m, n)
    if level == "v2":
        return run_graph_v2(seed, m, n)
    if level == "v3":
        return run_graph_v3(seed, m, n)
    return run_graph_v4(seed, m, n, threads)


comptime SC_PAGESIZE = 30  # sysconf's names on Linux (glibc and musl)
comptime SC_PHYS_PAGES = 85
comptime MIB = 1 << 20


def check_memory(opts: Options) raises:
    """Refuses a graph run whose tapes cannot fit in this machine's memory (docs/contract-graph.md),
    before any is allocated: the most any requested level's tapes take (tapes_bytes) against the
    physical memory. A machine whose sysconf cannot tell is not refused."""
    var need = 0
    for k in range(len(opts.levels)):
        need = max(need, tapes_bytes(opts.levels[k], opts.ops, opts.iters, opts.threads))
    var pages = external_call["sysconf", Int](Int32(SC_PHYS_PAGES))
    var page_size = external_call["sysconf", Int](Int32(SC_PAGESIZE))
    if pages <= 0 or page_size <= 0:
        return
    var have = pages * page_size
    if need > have:
        raise Error("the tapes of --ops " + String(opts.ops) + " need at least " + String((need + MIB - 1) // MIB)
                    + " MiB, more than this machine's memory (" + String(have // MIB) + " MiB)")


def run_levels[
    S: ImplicitlyCopyable & Deinitable,
    run_one: def(Options, String, Int) thin -> S,
    line: def(Options, String, Int, Float64, Float64, S, Float64) thin -> String,
](opts: Options, header: String):
    """Each level of opts, timed, one output line each: both workloads' loop. The clocks time
    run_one(opts, level, threads) alone; line(opts, level, threads, seconds, cpu, sums, v0_seconds)
    is the level's output line (v0's seconds for the speed-up column). The Codon program's
    lambdas are functions here, given opts."""
    if not opts.json:
        emit(header)
    var v0_seconds = 0.0
    for k in range(len(opts.levels)):
        var level = opts.levels[k]
        var threads = opts.threads if level == "v4" else 1
        var start = clock_ns(CLOCK_MONOTONIC)
        var cpu_start = cpu_clock(level)
        var sums = run_one(opts, level, threads)
        var cpu = cpu_clock(level) - cpu_start
        var seconds = Float64(clock_ns(CLOCK_MONOTONIC) - start) / 1e9
        if level == "v0":
            v0_seconds = seconds
        emit(line(opts, level, threads, seconds, cpu, sums, v0_seconds))


def graph_run_one(opts: Options, level: String, threads: Int) -> GraphSums:
    """The Codon program's run_graph's lambda: the graph level to time."""
    return run_graph_level(level, opts.seed, opts.ops, opts.iters, threads)


def graph_line(opts: Options, level: String, threads: Int, seconds: Float64, cpu: Float64, sums: GraphSums,
               v0_seconds: Float64) -> String:
    var r = GraphResult(level, opts.ops, opts.iters, opts.seed, threads, seconds, cpu, sums)
    return graph_json_line(r) if opts.json else graph_text_line(r, v0_seconds)


def run_graph(opts: Options):
    """The graph workload (docs/contract-graph.md): each level, timed, one line each."""
    run_levels[GraphSums, graph_run_one, graph_line](opts, graph_text_header())


def softplus_run_one(opts: Options, level: String, threads: Int) -> Sums:
    """The Codon program's run's lambda: the softplus level to time."""
    return run_level(level, opts.seed, opts.iters, threads)


def softplus_line(opts: Options, level: String, threads: Int, seconds: Float64, cpu: Float64, sums: Sums,
                  v0_seconds: Float64) -> String:
    var r = Result(level, opts.iters, opts.seed, threads, seconds, cpu, sums)
    return json_line(r) if opts.json else text_line(r, v0_seconds)


def run(opts: Options):
    """The softplus workload: each level, timed, one line each."""
    run_levels[Sums, softplus_run_one, softplus_line](opts, text_header())


def evaluate(opts: Options) raises:
    var f, dfdx, dfdy = eval_point(opts.x, opts.y)
    var p = (opts.x + opts.y) * opts.x
    if not isfinite(p):
        raise Error("(X + Y) * X overflows at this point")
    if not isfinite(f) or not isfinite(dfdx) or not isfinite(dfdy):
        raise Error("the result overflows at this point")
    if opts.json:
        emit(eval_json(opts.x, opts.y, f, dfdx, dfdy))
    else:
        emit(eval_text(opts.x, opts.y, f, dfdx, dfdy))


def main():
    var args = List[String]()
    var raw = argv()
    for i in range(1, len(raw)):
        args.append(String(raw[i]))
    try:
        var opts = parse(args, cpus_available())
        if opts.mode == HELP:
            emit(help_text())
        elif opts.mode == VERSION:
            emit(VERSION_TEXT)
            emit(target_text())
        elif opts.mode == EVAL:
            evaluate(opts)
        elif opts.workload == "graph":
            check_memory(opts)
            run_graph(opts)
        else:
            run(opts)
    except e:
        print("error: " + String(e), file=stderr)
        exit(2)
