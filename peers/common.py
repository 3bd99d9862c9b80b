"""What the peers share: the program around a peer's computations, and its inputs.

A peer is a program a user might pick instead of this project's autograd (NumPy, JAX,
PyTorch). Each peer script gives `main` a `Peer`: its name, the levels it has for each
workload and its functions (running N samples at a level, evaluating a single point).
The command line and the output (contract §4-§6, graph G6) are the CPython port's own
package, ports/python/cli/ (args.py, output.py), imported here, so the peers parse and
print exactly what every implementation does; this file adds the clocks (wall and CPU
time) around the iteration loop only, the untimed preparation a library needs, and the
input streams as NumPy arrays.

The heavy library is imported by the peer's functions only after the arguments have been
checked, so bad input is answered at once and `--help` works where the library is absent.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ports" / "python"))
import cli  # noqa: E402  (ports/python/cli/: the one command line and output package, args and output)

# Samples per array batch: bounded memory, and small enough that a chunk's arrays stay in
# the CPU's L2 cache between one array operation and the next (a larger batch measured slower).
CHUNK = 1 << 16

GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB

GRAPH_INPUTS = 100           # input nodes per sample (contract-graph.md G1)


Sums, GraphSums = cli.Sums, cli.GraphSums   # the checksums, as cli.output prints them


def no_preparation(*_) -> None:
    return None


@dataclass(frozen=True)
class Peer:
    """What a peer script supplies: its identity, its levels and its computations."""
    impl: str                                      # contract §5's `impl`
    library: str                                   # distribution name, for --version
    description: str                               # the paragraph under usage in --help
    levels: dict[str, dict[str, str]]              # workload -> {level: what it is}, in order
    run: Callable[[str, int, int, int], Sums]      # (level, seed, n, threads) -> sums
    evaluate: Callable[[float, float], tuple[float, float, float]]   # (x, y) -> f, dfdx, dfdy
    prepare: Callable[[str, int, int, int], None] = field(default=no_preparation)
    # prepare(level, seed, n, threads) runs before the clock starts: imports, thread
    # settings and (JAX) the one compilation a jitted function needs.
    run_graph: Callable[[str, int, int, int, int], GraphSums] | None = None
    # run_graph(level, seed, m, n, threads): the graph workload, M ops, N samples.
    prepare_graph: Callable[[str, int, int, int, int], float | None] = field(default=no_preparation)
    # prepare_graph(level, seed, m, n, threads), before the clock: returns the seconds a
    # compilation took (printed beside the result, never in it), or None.


def help_text(peer: Peer) -> str:
    """--help: the same usage as every implementation, then what this peer is."""
    prog = f"python peers/{peer.impl.replace('-', '_')}_peer.py"
    pad = " " * len(f"usage: {prog} ")
    have = "\n".join(f"  {workload if k == 0 else '':<9} {lv:<11} {what}".rstrip()
                     for workload, lvs in peer.levels.items() for k, (lv, what) in enumerate(lvs.items()))
    graph = (f"""
       {prog} --workload graph [--level v0|v1|v2|v3|v4|all]
{pad}[--ops M] [--iters N] [--seed S] [--threads T] [--json]""" if "graph" in peer.levels else "")
    return f"""usage: {prog} [--level v0|v1|v2|v3|v4|fused|fused-simd|all]
{pad}[--iters N] [--seed S] [--threads T] [--json]{graph}
       {prog} --eval X Y [--json]
       {prog} --help | --version

{peer.description}

Levels, by workload (--level all runs every one listed; any other is an error):
{have}

  --workload W  softplus (the default: f(x, y) = softplus((x + y) * x)) or graph
                (M ops of docs/contract-graph.md, loss = the sum of every node)
  --ops M       graph ops, 1..1000000 (default 10000)
  --iters N     samples, 1..10^12 (default 10000000; graph 10000)
  --seed S      input stream seed, 0..2^64-1 (default 42)
  --threads T   threads for v4, 1..1024 (default: the CPUs this process may use)
  --json        one JSON object per line instead of the table
  --eval X Y    f and its gradient at one point (softplus)"""


def cpus_available() -> int:
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def library_version(name: str) -> str:
    """The installed version of a distribution, without importing it ('not installed' if absent)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def fail(message: str, status: int) -> NoReturn:
    """One `error:` line on stderr, nothing on stdout, then exit."""
    sys.stderr.write(f"error: {message}\n")
    sys.exit(status)


def cpu_clock(level: str) -> Callable[[], int]:
    """The CPU clock of a level's timed region, in ns (contract §5): the process's for v4,
    whose threads all work, the calling thread's own for the single-threaded levels."""
    return time.process_time_ns if level == "v4" else time.thread_time_ns


def run_levels(peer: Peer, opts: cli.Options) -> None:
    """The softplus workload, each level: prepare (untimed), then the clock around the
    iteration loop only, one line as soon as it is done."""
    if not opts.json:
        cli.emit(cli.text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        peer.prepare(level, opts.seed, opts.iters, threads)
        cpu_now = cpu_clock(level)
        start = time.perf_counter_ns()
        cpu_start = cpu_now()
        sums = peer.run(level, opts.seed, opts.iters, threads)
        cpu_seconds = (cpu_now() - cpu_start) / 1e9
        seconds = (time.perf_counter_ns() - start) / 1e9
        r = cli.Result(peer.impl, level, opts.iters, opts.seed, threads, seconds, cpu_seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        cli.emit(cli.json_line(r) if opts.json else cli.text_line(r, v0_seconds))


def run_graph_levels(peer: Peer, opts: cli.Options) -> None:
    """The graph workload, likewise. A compilation's time, where the peer has one, is
    a key of its own after `cpu_seconds` in JSON and a line of its own after the row in
    text."""
    if not opts.json:
        cli.emit(cli.graph_text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        compile_seconds = peer.prepare_graph(level, opts.seed, opts.ops, opts.iters, threads)
        cpu_now = cpu_clock(level)
        start = time.perf_counter_ns()
        cpu_start = cpu_now()
        sums = peer.run_graph(level, opts.seed, opts.ops, opts.iters, threads)
        cpu_seconds = (cpu_now() - cpu_start) / 1e9
        seconds = (time.perf_counter_ns() - start) / 1e9
        r = cli.GraphResult(peer.impl, level, opts.ops, opts.iters, opts.seed, threads, seconds,
                            cpu_seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        if opts.json:
            fields = cli.graph_json_fields(r)
            if compile_seconds is not None:
                at = [key for key, _ in fields].index("cpu_seconds") + 1
                fields.insert(at, ("compile_seconds", cli.g17(compile_seconds)))
            cli.emit(cli.json_object(fields))
        else:
            cli.emit(cli.graph_text_line(r, v0_seconds))
            if compile_seconds is not None:
                cli.emit(f"{peer.impl} {level}: compiled in {cli.fmt(compile_seconds, '%.3f')} s before the clock "
                         f"started (not in seconds)")


def evaluate(peer: Peer, opts: cli.Options) -> None:
    """--eval: one forward/backward through the peer's own machinery, overflow refused."""
    p = (opts.x + opts.y) * opts.x
    if p - p != 0.0:
        raise cli.UsageError("(X + Y) * X overflows at this point")
    f, dfdx, dfdy = peer.evaluate(opts.x, opts.y)
    if any(v - v != 0.0 for v in (f, dfdx, dfdy)):
        raise cli.UsageError("the result overflows at this point")
    cli.emit(cli.eval_json(peer.impl, opts.x, opts.y, f, dfdx, dfdy) if opts.json
             else cli.eval_text(opts.x, opts.y, f, dfdx, dfdy))


def main(peer: Peer, argv: list[str] | None = None) -> None:
    """The whole program: parse strictly, then help, version, eval or the timed levels."""
    # Die quietly like a C program when stdout is a closed pipe (`| head`).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:] if argv is None else argv
    try:
        opts = cli.parse(args, cpus_available(), {w: list(lvs) for w, lvs in peer.levels.items()})
        if opts.mode == cli.HELP:
            cli.emit(help_text(peer))
        elif opts.mode == cli.VERSION:
            cli.emit(f"autograd ({peer.impl} peer) 0.1.0, {peer.library} {library_version(peer.library)}")
        else:
            if library_version(peer.library) == "not installed":
                # Not bad input: the program cannot run here at all (`make peers` installs it).
                fail(f"{peer.library} is not installed (make peers installs it)", 1)
            if opts.mode == cli.EVAL:
                evaluate(peer, opts)
            elif opts.workload == "graph":
                run_graph_levels(peer, opts)
            else:
                run_levels(peer, opts)
    except cli.UsageError as e:
        fail(e.message, 2)


# --- inputs: the splitmix64 stream of contract §1, vectorised with NumPy ---------------
# uint64 array arithmetic wraps mod 2^64, which is exactly splitmix64's arithmetic.

def samples(seed: int, start: int, count: int):
    """x_i, y_i for i = start .. start+count-1 as two float64 NumPy arrays (contract §1)."""
    import numpy as np

    i = np.arange(start, start + count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        two_i = i + i
        return coordinate(np, seed, two_i + np.uint64(1)), coordinate(np, seed, two_i + np.uint64(2))


def graph_inputs(seed: int, start: int, count: int):
    """The inputs of samples start .. start+count-1 (contract-graph.md G1) as a float64
    array of shape (100, count): row i is input node i of every sample."""
    import numpy as np

    s = np.arange(start, start + count, dtype=np.uint64)
    i = np.arange(1, GRAPH_INPUTS + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return coordinate(np, seed, s[None, :] * np.uint64(GRAPH_INPUTS) + i[:, None])


def coordinate(np, seed: int, k):
    """2*unit(draw(k)) - 1 for an array of stream positions k."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + k * np.uint64(GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53 * 2.0 - 1.0
