# Output of contract §5. Numbers are formatted by the C library's strfromd (C locale,
# not variadic: Mojo's external_call does not do C varargs), lines written with write(2)
# on file descriptor 1, each as soon as it is made, with no user-space buffer (a short
# write is continued).

from std.ffi import external_call
from std.sys import exit, stderr
from core.ops import Sums
from graph.recipe import GraphSums

comptime IMPL = "mojo"


def output_error():
    """Output that cannot be written (a full disk, /dev/full) ends the program with one
    line on stderr and exit status 1, not 2: the command line was fine."""
    print("error: cannot write to standard output", file=stderr)
    exit(1)


def emit(line: String):
    """Write a line to stdout now, continuing a short write; a write that fails or writes
    nothing ends the program (output_error)."""
    var text = line + "\n"
    var p = text.unsafe_ptr()
    var left = text.byte_length()
    var done = 0
    while left > 0:
        var wrote = external_call["write", Int](Int32(1), p.unsafe_offset(done), left)
        if wrote <= 0:
            output_error()
        done += wrote
        left -= wrote


def fmt(v: Float64, spec: String) -> String:
    """v formatted by a printf-style spec such as "%.17g"."""
    var buf = Array[UInt8, 64](fill=0)
    var c_spec = spec
    var n = Int(external_call["strfromd", Int32](buf.unsafe_ptr(), 64, c_spec.as_c_string_span().ptr(), v))
    var out = String()
    for i in range(min(n, 63)):
        out += chr(Int(buf[i]))
    return out^


def g17(v: Float64) -> String:
    """17 significant digits: enough to round-trip any double."""
    return fmt(v, "%.17g")


@fieldwise_init
struct Result(Copyable, Movable):
    var level: String
    var iters: Int
    var seed: UInt64
    var threads: Int
    var seconds: Float64
    var cpu_seconds: Float64  # the CPU time of the same region (contract §5)
    var sums: Sums

    def ns_per_iter(self) -> Float64:
        return self.seconds * 1e9 / Float64(self.iters)


@fieldwise_init
struct GraphResult(Copyable, Movable):
    var level: String
    var ops: Int
    var iters: Int
    var seed: UInt64
    var threads: Int
    var seconds: Float64
    var cpu_seconds: Float64
    var sums: GraphSums

    def ns_per_iter(self) -> Float64:
        return self.seconds * 1e9 / Float64(self.iters)

    def ns_per_op(self) -> Float64:
        return self.ns_per_iter() / Float64(self.ops)


# Text columns: names and widths, negative widths right-aligned.
comptime COLUMN_NAMES: List[String] = ["impl", "level", "threads", "iters", "seconds", "ns/iter", "vs v0",
                                       "sum_f", "sum_dx", "sum_dy"]
comptime COLUMN_WIDTHS: List[Int] = [6, 11, -7, -14, -10, -10, -8, -25, -25, -25]
comptime GRAPH_COLUMN_NAMES: List[String] = ["impl", "level", "threads", "ops", "iters", "seconds", "ns/iter",
                                             "ns/op", "vs v0", "sum_loss", "sum_grad_in", "sum_grad_all"]
comptime GRAPH_COLUMN_WIDTHS: List[Int] = [6, 11, -7, -8, -14, -10, -14, -10, -8, -25, -25, -25]


def row(widths: List[Int], cells: List[String]) -> String:
    """Cells padded to the columns' widths, two spaces apart, trailing spaces removed."""
    var out = String()
    for k in range(len(cells)):
        if k > 0:
            out += "  "
        var width = widths[k]
        var pad = abs(width) - cells[k].byte_length()
        if width < 0 and pad > 0:
            out += String(" ") * pad
        out += cells[k]
        if width > 0 and pad > 0:
            out += String(" ") * pad
    return String(out.rstrip())


def text_header() -> String:
    return row(materialize[COLUMN_WIDTHS](), materialize[COLUMN_NAMES]())


def graph_text_header() -> String:
    return row(materialize[GRAPH_COLUMN_WIDTHS](), materialize[GRAPH_COLUMN_NAMES]())


def speedup(v0_seconds: Float64, seconds: Float64) -> String:
    """v0's time over this one, "-" when v0 was not run before it."""
    return fmt(v0_seconds / seconds, "%.1f") + "x" if v0_seconds > 0.0 and seconds > 0.0 else "-"


def text_line(r: Result, v0_seconds: Float64) -> String:
    return row(materialize[COLUMN_WIDTHS](), [String(IMPL), r.level, String(r.threads), String(r.iters),
               fmt(r.seconds, "%.3f"), fmt(r.ns_per_iter(), "%.2f"), speedup(v0_seconds, r.seconds),
               g17(r.sums.f), g17(r.sums.dx), g17(r.sums.dy)])


def graph_text_line(r: GraphResult, v0_seconds: Float64) -> String:
    return row(materialize[GRAPH_COLUMN_WIDTHS](), [String(IMPL), r.level, String(r.threads), String(r.ops),
               String(r.iters), fmt(r.seconds, "%.3f"), fmt(r.ns_per_iter(), "%.1f"),
               fmt(r.ns_per_op(), "%.2f"), speedup(v0_seconds, r.seconds),
               g17(r.sums.loss), g17(r.sums.grad_in), g17(r.sums.grad_all)])


def json_object(keys: List[String], values: List[String]) -> String:
    """{"key": value, ...} from keys and already-encoded values, in order."""
    var out = String("{")
    for k in range(len(keys)):
        if k > 0:
            out += ", "
        out += "\"" + keys[k] + "\": " + values[k]
    return out + "}"


def quoted(s: String) -> String:
    return "\"" + s + "\""


def json_line(r: Result) -> String:
    return json_object(["impl", "workload", "level", "iters", "seed", "threads", "seconds", "cpu_seconds",
                        "ns_per_iter", "sum_f", "sum_dx", "sum_dy"],
                       [quoted(IMPL), quoted("softplus"), quoted(r.level), String(r.iters), String(r.seed),
                        String(r.threads), g17(r.seconds), g17(r.cpu_seconds), g17(r.ns_per_iter()),
                        g17(r.sums.f), g17(r.sums.dx), g17(r.sums.dy)])


def graph_json_line(r: GraphResult) -> String:
    return json_object(["impl", "workload", "level", "ops", "iters", "seed", "threads", "seconds",
                        "cpu_seconds", "ns_per_iter", "ns_per_op", "sum_loss", "sum_grad_in", "sum_grad_all"],
                       [quoted(IMPL), quoted("graph"), quoted(r.level), String(r.ops), String(r.iters),
                        String(r.seed), String(r.threads), g17(r.seconds), g17(r.cpu_seconds),
                        g17(r.ns_per_iter()), g17(r.ns_per_op()), g17(r.sums.loss), g17(r.sums.grad_in),
                        g17(r.sums.grad_all)])


def eval_text(x: Float64, y: Float64, f: Float64, dfdx: Float64, dfdy: Float64) -> String:
    return String("x ", g17(x), "  y ", g17(y), "  f ", g17(f), "  dfdx ", g17(dfdx), "  dfdy ", g17(dfdy))


def eval_json(x: Float64, y: Float64, f: Float64, dfdx: Float64, dfdy: Float64) -> String:
    return json_object(["impl", "x", "y", "f", "dfdx", "dfdy"],
                       [quoted(IMPL), g17(x), g17(y), g17(f), g17(dfdx), g17(dfdy)])
