"""The contract's command line and output (docs/contract.md §4-§6), shared by the peers.

A peer is a program a user might pick instead of this project's autograd (NumPy, JAX,
PyTorch). Each peer script gives `main` a `Peer`: its name, the levels it has and two
functions, one running N samples at a level, one evaluating a single point. Everything
else (strict argument parsing, `error:` lines with exit status 2, the text table, JSON
Lines, the clock around the iteration loop only) lives here, so the peers print exactly
what the compiled implementations print.

The heavy library is imported by the peer's functions only after the arguments have been
checked, so bad input is answered at once and `--help` works where the library is absent.
"""
from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from typing import Callable, NamedTuple, NoReturn

LEVELS = ["v0", "v1", "v2", "v3", "v4"]      # run by --level all, in this order
BASELINES = ["fused", "fused-simd"]          # run only when named
MAX_ITERS = 10**12
MAX_THREADS = 1024
MAX_SEED = 2**64 - 1
DEFAULT_ITERS = 10_000_000
DEFAULT_SEED = 42
# Samples per array batch: bounded memory, and small enough that a chunk's arrays stay in
# the CPU's L2 cache between one array operation and the next (2^20 measured slower).
CHUNK = 1 << 16

GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB

# Contract §6: [+-] (digits [. digits?] | . digits) ([eE] [+-] digits)?, ASCII digits only.
DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


class Sums(NamedTuple):
    """The three checksums of contract §2."""
    f: float
    dx: float
    dy: float


@dataclass(frozen=True)
class Peer:
    """What a peer script supplies: its identity, its levels and its two computations."""
    impl: str                                      # contract §5's `impl`
    library: str                                   # distribution name, for --version
    description: str                               # the paragraph under usage in --help
    levels: list[str]                              # what it has, from LEVELS + BASELINES
    run: Callable[[str, int, int, int], Sums]      # (level, seed, n, threads) -> sums
    evaluate: Callable[[float, float], tuple[float, float, float]]   # (x, y) -> f, dfdx, dfdy
    prepare: Callable[[str, int, int, int], None] = field(default=lambda *_: None)
    # prepare(level, seed, n, threads) runs before the clock starts: imports, thread
    # settings and (JAX) the one compilation a jitted function needs.


class UsageError(Exception):
    """Bad input: reported as one `error:` line on stderr, exit status 2."""


@dataclass
class Options:
    """The parsed command line."""
    mode: str = "run"                              # run, eval, help, version
    levels: list[str] | None = None                # None: --level all
    iters: int = DEFAULT_ITERS
    seed: int = DEFAULT_SEED
    threads: int = 1
    json: bool = False
    x: float = 0.0
    y: float = 0.0


def shown(arg: str) -> str:
    """An argument quoted for an error line, non-printable characters as '?'."""
    return "'" + "".join(c if " " <= c <= "~" else "?" for c in arg) + "'"


def parse_uint(flag: str, text: str, lo: int, hi: int) -> int:
    """A decimal integer in [lo, hi], 1-20 ASCII digits (no sign, exponent, separator, hex)."""
    if not (1 <= len(text) <= 20 and all("0" <= c <= "9" for c in text)) or not lo <= int(text) <= hi:
        raise UsageError(f"{flag} must be a whole number from {lo} to {hi}, got {shown(text)}")
    return int(text)


def parse_point(flag: str, text: str) -> float:
    """A finite decimal number; Python's float() rounds correctly, as strtod does."""
    if not DECIMAL.fullmatch(text):
        raise UsageError(f"{flag} needs finite decimal numbers, got {shown(text)}")
    value = float(text)
    if value - value != 0.0:                       # +-inf: beyond the double range
        raise UsageError(f"{flag} value {shown(text)} is out of range")
    return value


def parse_level(text: str) -> list[str] | None:
    """One named level or baseline, or None for `all`."""
    if text == "all":
        return None
    if text in LEVELS or text in BASELINES:
        return [text]
    raise UsageError(f"--level must be one of {', '.join(LEVELS + BASELINES)} or all, got {shown(text)}")


def parse(args: list[str], cpus: int) -> Options:
    """Options from the arguments after the program name; raises UsageError (contract §6)."""
    if args in (["--help"], ["--version"]):
        return Options(mode=args[0][2:])
    opts = Options(threads=cpus)
    seen: list[str] = []
    i = 0
    while i < len(args):
        flag = args[i]
        if flag in ("--help", "--version"):
            raise UsageError(f"{flag} takes no other arguments")
        if flag not in ("--level", "--iters", "--seed", "--threads", "--json", "--eval"):
            raise UsageError(f"unknown argument {shown(flag)} (try --help)")
        if flag in seen:
            raise UsageError(f"{flag} given twice")
        seen.append(flag)
        arity = {"--json": 0, "--eval": 2}.get(flag, 1)
        if i + arity >= len(args):
            raise UsageError(f"{flag} needs {'two values' if arity == 2 else 'a value'}")
        value = args[i + 1] if arity else ""
        if flag == "--json":
            opts.json = True
        elif flag == "--level":
            opts.levels = parse_level(value)
        elif flag == "--iters":
            opts.iters = parse_uint(flag, value, 1, MAX_ITERS)
        elif flag == "--seed":
            opts.seed = parse_uint(flag, value, 0, MAX_SEED)
        elif flag == "--threads":
            opts.threads = parse_uint(flag, value, 1, MAX_THREADS)
        else:
            opts.mode = "eval"
            opts.x = parse_point(flag, value)
            opts.y = parse_point(flag, args[i + 2])
        i += 1 + arity
    if opts.mode == "eval":
        for other in seen:
            if other not in ("--eval", "--json"):
                raise UsageError(f"--eval takes no {other}")
    return opts


def cpus_available() -> int:
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def g17(v: float) -> str:
    """17 significant digits, C locale: enough to round-trip any double."""
    return "%.17g" % v


# Contract §6 text table: (title, width); a negative width right-aligns.
COLUMNS = (("impl", 6), ("level", 11), ("threads", -7), ("iters", -14), ("seconds", -10),
           ("ns/iter", -10), ("vs v0", -8), ("sum_f", -25), ("sum_dx", -25), ("sum_dy", -25))


def row(cells: list[str]) -> str:
    """Cells padded to COLUMNS' widths, two spaces apart, trailing spaces removed."""
    return "  ".join(c.ljust(w) if w > 0 else c.rjust(-w) for c, (_, w) in zip(cells, COLUMNS)).rstrip()


def json_object(fields: list[tuple[str, str]]) -> str:
    """{"key": value, ...} from keys and already-encoded values, in order."""
    return "{" + ", ".join(f'"{k}": {v}' for k, v in fields) + "}"


def result_line(impl: str, level: str, opts: Options, threads: int, seconds: float,
                sums: Sums, v0_seconds: float) -> str:
    """One result as a JSON line or a table row (contract §5-§6)."""
    ns = seconds * 1e9 / opts.iters
    if opts.json:
        return json_object([("impl", f'"{impl}"'), ("level", f'"{level}"'), ("iters", str(opts.iters)),
                            ("seed", str(opts.seed)), ("threads", str(threads)),
                            ("seconds", g17(seconds)), ("ns_per_iter", g17(ns)),
                            ("sum_f", g17(sums.f)), ("sum_dx", g17(sums.dx)), ("sum_dy", g17(sums.dy))])
    speedup = "%.1fx" % (v0_seconds / seconds) if v0_seconds > 0 and seconds > 0 else "-"
    return row([impl, level, str(threads), str(opts.iters), "%.3f" % seconds, "%.2f" % ns, speedup,
                g17(sums.f), g17(sums.dx), g17(sums.dy)])


def eval_line(impl: str, opts: Options, f: float, dfdx: float, dfdy: float) -> str:
    """The --eval answer as JSON or text (contract §6)."""
    if opts.json:
        return json_object([("impl", f'"{impl}"'), ("x", g17(opts.x)), ("y", g17(opts.y)),
                            ("f", g17(f)), ("dfdx", g17(dfdx)), ("dfdy", g17(dfdy))])
    return f"x {g17(opts.x)}  y {g17(opts.y)}  f {g17(f)}  dfdx {g17(dfdx)}  dfdy {g17(dfdy)}"


def help_text(peer: Peer) -> str:
    """--help: the same usage as every implementation, then what this peer is."""
    prog = f"python peers/{peer.impl}_peer.py"
    pad = " " * len(f"usage: {prog} ")
    return f"""usage: {prog} [--level v0|v1|v2|v3|v4|fused|fused-simd|all]
{pad}[--iters N] [--seed S] [--threads T] [--json]
       {prog} --eval X Y [--json]
       {prog} --help | --version

{peer.description}
It has {', '.join(peer.levels)} (what --level all runs); any other level is an error.

  --iters N    samples, 1..10^12 (default 10000000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point"""


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


def chosen_levels(peer: Peer, opts: Options) -> list[str]:
    """The levels to run; a level the peer lacks is bad input."""
    if opts.levels is None:
        # `all` is every level v0-v4 the peer has; a peer that has only a baseline runs that.
        return [lv for lv in LEVELS if lv in peer.levels] or list(peer.levels)
    for level in opts.levels:
        if level not in peer.levels:
            raise UsageError(f"level {level} is not implemented by this program")
    return opts.levels


def run_levels(peer: Peer, opts: Options, levels: list[str]) -> None:
    """Each level: prepare (untimed), then the clock around the iteration loop only."""
    if not opts.json:
        print(row([title for title, _ in COLUMNS]), flush=True)
    v0_seconds = 0.0
    for level in levels:
        threads = opts.threads if level == "v4" else 1
        peer.prepare(level, opts.seed, opts.iters, threads)
        start = time.perf_counter_ns()
        sums = peer.run(level, opts.seed, opts.iters, threads)
        seconds = (time.perf_counter_ns() - start) / 1e9
        print(result_line(peer.impl, level, opts, threads, seconds, sums, v0_seconds), flush=True)


def evaluate(peer: Peer, opts: Options) -> None:
    """--eval: one forward/backward through the peer's own machinery, overflow refused."""
    p = (opts.x + opts.y) * opts.x
    if p - p != 0.0:
        raise UsageError("(X + Y) * X overflows at this point")
    f, dfdx, dfdy = peer.evaluate(opts.x, opts.y)
    if any(v - v != 0.0 for v in (f, dfdx, dfdy)):
        raise UsageError("the result overflows at this point")
    print(eval_line(peer.impl, opts, f, dfdx, dfdy))


def main(peer: Peer, argv: list[str] | None = None) -> None:
    """The whole program: parse strictly, then help, version, eval or the timed levels."""
    args = sys.argv[1:] if argv is None else argv
    try:
        opts = parse(args, cpus_available())
        if opts.mode == "help":
            print(help_text(peer))
        elif opts.mode == "version":
            print(f"autograd ({peer.impl} peer) 0.1.0, {peer.library} {library_version(peer.library)}")
        else:
            levels = chosen_levels(peer, opts) if opts.mode == "run" else []
            if library_version(peer.library) == "not installed":
                # Not bad input: the program cannot run here at all (`make peers` installs it).
                fail(f"{peer.library} is not installed (make peers installs it)", 1)
            if opts.mode == "eval":
                evaluate(peer, opts)
            else:
                run_levels(peer, opts, levels)
    except UsageError as e:
        fail(str(e), 2)


# --- inputs: contract §1's splitmix64 stream, vectorised with NumPy ------------------------

def samples(seed: int, start: int, count: int):
    """x_i, y_i for i = start .. start+count-1 as two float64 NumPy arrays.

    uint64 array arithmetic wraps mod 2^64, which is exactly splitmix64's arithmetic.
    """
    import numpy as np

    i = np.arange(start, start + count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        two_i = i + i
        return coordinate(np, seed, two_i + np.uint64(1)), coordinate(np, seed, two_i + np.uint64(2))


def coordinate(np, seed: int, k):
    """2*unit(draw(k)) - 1 for an array of stream positions k."""
    z = np.uint64(seed) + k * np.uint64(GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53 * 2.0 - 1.0
