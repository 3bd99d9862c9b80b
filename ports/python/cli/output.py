# Output of contract §5, written with Python's printf-style formatting, which is
# locale-free: numbers are formatted as the C library's printf does in the C locale.
import os
import sys
from typing import NamedTuple


def emit(line):
    """Print a line and flush it at once. Output that cannot be written (a full disk,
    `> /dev/full`, a closed stdout) ends the program with one `error:` line on stderr and
    exit status 1, never a silent success or a traceback. os._exit, because a normal exit
    would flush the lost line again and print a second error (and exit 120)."""
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (OSError, AttributeError, ValueError):  # AttributeError: stdout is None (closed)
        try:
            sys.stderr.write("error: cannot write to standard output\n")
            sys.stderr.flush()
        finally:
            os._exit(1)


def fmt(v, spec):
    """v formatted by a printf-style spec such as "%.17g"."""
    return spec % v


def g17(v):
    """17 significant digits: enough to round-trip any double."""
    return fmt(v, "%.17g")


class Sums(NamedTuple):
    """The three checksums of contract §2, as Result holds them."""
    f: float
    dx: float
    dy: float


class GraphSums(NamedTuple):
    """The three checksums of contract-graph.md G3, as GraphResult holds them."""
    loss: float
    grad_in: float
    grad_all: float


class Result(NamedTuple):
    """One level's run of the softplus workload: one line of output."""
    impl: str
    level: str
    iters: int
    seed: int
    threads: int
    seconds: float
    cpu_seconds: float   # CPU time of the same timed region (contract §5)
    sums: tuple   # .f, .dx, .dy

    def ns_per_iter(self):
        return self.seconds * 1e9 / float(self.iters)


class GraphResult(NamedTuple):
    """One level's run of the graph workload: one line of output."""
    impl: str
    level: str
    ops: int
    iters: int
    seed: int
    threads: int
    seconds: float
    cpu_seconds: float   # CPU time of the same timed region (contract-graph.md G6)
    sums: tuple   # .loss, .grad_in, .grad_all

    def ns_per_iter(self):
        return self.seconds * 1e9 / float(self.iters)

    def ns_per_op(self):
        return self.ns_per_iter() / float(self.ops)


# Text columns: (name, width), negative widths right-aligned.
COLUMNS = (("impl", 6), ("level", 11), ("threads", -7), ("iters", -14), ("seconds", -10),
           ("ns/iter", -10), ("vs v0", -8), ("sum_f", -25), ("sum_dx", -25), ("sum_dy", -25))
GRAPH_COLUMNS = (("impl", 6), ("level", 11), ("threads", -7), ("ops", -8), ("iters", -14),
                 ("seconds", -10), ("ns/iter", -14), ("ns/op", -10), ("vs v0", -8),
                 ("sum_loss", -25), ("sum_grad_in", -25), ("sum_grad_all", -25))


def row(columns, cells):
    """Cells padded to the columns' widths, two spaces apart, trailing spaces removed."""
    out = []
    for cell, (_, width) in zip(cells, columns):
        out.append(cell.ljust(width) if width > 0 else cell.rjust(-width))
    return "  ".join(out).rstrip()


def text_header():
    return row(COLUMNS, [name for name, _ in COLUMNS])


def graph_text_header():
    return row(GRAPH_COLUMNS, [name for name, _ in GRAPH_COLUMNS])


def speedup(v0_seconds, seconds):
    """v0's time over this one, "-" when v0 was not run before it."""
    return fmt(v0_seconds / seconds, "%.1f") + "x" if v0_seconds > 0.0 and seconds > 0.0 else "-"


def text_line(r, v0_seconds):
    return row(COLUMNS, [r.impl, r.level, str(r.threads), str(r.iters), fmt(r.seconds, "%.3f"),
                         fmt(r.ns_per_iter(), "%.2f"), speedup(v0_seconds, r.seconds),
                         g17(r.sums.f), g17(r.sums.dx), g17(r.sums.dy)])


def graph_text_line(r, v0_seconds):
    return row(GRAPH_COLUMNS, [r.impl, r.level, str(r.threads), str(r.ops), str(r.iters),
                               fmt(r.seconds, "%.3f"), fmt(r.ns_per_iter(), "%.1f"),
                               fmt(r.ns_per_op(), "%.2f"), speedup(v0_seconds, r.seconds),
                               g17(r.sums.loss), g17(r.sums.grad_in), g17(r.sums.grad_all)])


def json_object(fields):
    """{"key": value, ...} from keys and already-encoded values, in order."""
    return "{" + ", ".join(f'"{key}": {value}' for key, value in fields) + "}"


def json_fields(r):
    return [("impl", f'"{r.impl}"'), ("workload", '"softplus"'), ("level", f'"{r.level}"'),
            ("iters", str(r.iters)), ("seed", str(r.seed)), ("threads", str(r.threads)),
            ("seconds", g17(r.seconds)), ("cpu_seconds", g17(r.cpu_seconds)),
            ("ns_per_iter", g17(r.ns_per_iter())), ("sum_f", g17(r.sums.f)),
            ("sum_dx", g17(r.sums.dx)), ("sum_dy", g17(r.sums.dy))]


def json_line(r):
    return json_object(json_fields(r))


def graph_json_fields(r):
    return [("impl", f'"{r.impl}"'), ("workload", '"graph"'), ("level", f'"{r.level}"'),
            ("ops", str(r.ops)), ("iters", str(r.iters)), ("seed", str(r.seed)),
            ("threads", str(r.threads)), ("seconds", g17(r.seconds)),
            ("cpu_seconds", g17(r.cpu_seconds)), ("ns_per_iter", g17(r.ns_per_iter())),
            ("ns_per_op", g17(r.ns_per_op())),
            ("sum_loss", g17(r.sums.loss)), ("sum_grad_in", g17(r.sums.grad_in)),
            ("sum_grad_all", g17(r.sums.grad_all))]


def graph_json_line(r):
    return json_object(graph_json_fields(r))


def eval_text(x, y, f, dfdx, dfdy):
    return f"x {g17(x)}  y {g17(y)}  f {g17(f)}  dfdx {g17(dfdx)}  dfdy {g17(dfdy)}"


def eval_json(impl, x, y, f, dfdx, dfdy):
    return json_object([("impl", f'"{impl}"'), ("x", g17(x)), ("y", g17(y)), ("f", g17(f)),
                        ("dfdx", g17(dfdx)), ("dfdy", g17(dfdy))])
