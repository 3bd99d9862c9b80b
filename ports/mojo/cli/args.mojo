# The command line of contract §4, parsed strictly: every bad input raises an Error
# whose message is one line (the Codon program's UsageError), so that main can print
# `error: ...` and exit 2 before anything reaches stdout.

from std.ffi import external_call
from std.math import isfinite

comptime LEVELS: List[String] = ["v0", "v1", "v2", "v3", "v4"]  # run by --level all, in this order
comptime BASELINES: List[String] = ["fused", "fused-simd"]  # run only when named (softplus workload)
comptime WORKLOADS: List[String] = ["softplus", "graph"]  # --workload, the first the default
comptime MAX_ITERS = 1_000_000_000_000
comptime MAX_THREADS = 1024
comptime MAX_GRAPH_OPS = 1_000_000  # --ops (MAX_OPS is the softplus tape's)
comptime DEFAULT_ITERS = 10_000_000  # softplus samples
comptime DEFAULT_GRAPH_ITERS = 10_000  # graph samples (Rogozhnikov's 10,000 passes)
comptime DEFAULT_OPS = 10_000
comptime DEFAULT_SEED: UInt64 = 42
comptime FLAGS: List[String] = ["--workload", "--level", "--ops", "--iters", "--seed", "--threads", "--json",
                                "--eval"]

comptime RUN = 0
comptime EVAL = 1
comptime HELP = 2
comptime VERSION = 3


struct Options(Copyable, Movable):
    var mode: Int
    var workload: String
    var levels: List[String]
    var ops: Int
    var iters: Int
    var seed: UInt64
    var threads: Int
    var json: Bool
    var x: Float64
    var y: Float64

    def __init__(out self, mode: Int, threads: Int):
        self.mode = mode
        self.workload = materialize[WORKLOADS]()[0]
        self.levels = materialize[LEVELS]()
        self.ops = DEFAULT_OPS
        self.iters = DEFAULT_ITERS
        self.seed = DEFAULT_SEED
        self.threads = threads
        self.json = False
        self.x = 0.0
        self.y = 0.0


def shown(arg: String) -> String:
    """An argument quoted for an error line, control and non-ASCII bytes shown as '?'."""
    var out = String("'")
    for c in arg.as_bytes():
        out += chr(Int(c)) if c >= 32 and c <= 126 else "?"
    return out + "'"


def parse_uint(flag: String, text: String, lo: UInt64, hi: UInt64) raises -> UInt64:
    """A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex)."""
    var bad = String(flag, " must be a whole number from ", lo, " to ", hi, ", got ", shown(text))
    var digits = text.as_bytes()
    if len(digits) < 1 or len(digits) > 20:
        raise Error(bad)
    var value: UInt64 = 0
    for c in digits:
        if c < 48 or c > 57:
            raise Error(bad)
        var digit = UInt64(c - 48)
        if value > (hi - digit) // 10:  # value * 10 + digit would pass hi (or wrap)
            raise Error(bad)
        value = value * 10 + digit
    if value < lo:
        raise Error(bad)
    return value


def is_decimal(text: String) -> Bool:
    """[+-] digits [. digits] [e [+-] digits], with at least one mantissa digit."""
    var s = text.as_bytes()
    var n = len(s)
    var i = 0
    if i < n and (s[i] == 43 or s[i] == 45):
        i += 1
    var digits = 0
    while i < n and s[i] >= 48 and s[i] <= 57:
        i += 1
        digits += 1
    if i < n and s[i] == 46:
        i += 1
        while i < n and s[i] >= 48 and s[i] <= 57:
            i += 1
            digits += 1
    if digits == 0:
        return False
    if i < n and (s[i] == 101 or s[i] == 69):
        i += 1
        if i < n and (s[i] == 43 or s[i] == 45):
            i += 1
        var start = i
        while i < n and s[i] >= 48 and s[i] <= 57:
            i += 1
        if i == start:
            return False
    return i == n


def parse_point(flag: String, text: String) raises -> Float64:
    """A finite decimal number (no hex, inf or nan), read by the C library's strtod."""
    if not is_decimal(text):
        raise Error(String(flag, " needs finite decimal numbers, got ", shown(text)))
    var copy = text
    var value = external_call["strtod", Float64](copy.as_c_string_span().ptr(), Int(0))
    if not isfinite(value):  # +-inf: the decimal is beyond the double range
        raise Error(String(flag, " value ", shown(text), " is out of range"))
    return value


def contains(names: List[String], name: String) -> Bool:
    for k in range(len(names)):
        if names[k] == name:
            return True
    return False


def joined(names: List[String]) -> String:
    var out = String()
    for k in range(len(names)):
        if k > 0:
            out += ", "
        out += names[k]
    return out^


def parse_level(text: String, workload: String) raises -> List[String]:
    """The levels --level names; the graph workload has no baselines."""
    var named = materialize[LEVELS]()
    if workload == "softplus":
        named += materialize[BASELINES]()
    if text == "all":
        return materialize[LEVELS]()
    if contains(named, text):
        return [text]
    raise Error(String("--level must be one of ", joined(named), " or all, got ", shown(text)))


def parse_workload(text: String) raises -> String:
    if contains(materialize[WORKLOADS](), text):
        return text
    raise Error(String("--workload must be one of ", joined(materialize[WORKLOADS]()), ", got ", shown(text)))


def parse(args: List[String], cpus: Int) raises -> Options:
    """Options from the arguments after the program name; raises an Error (UsageError)."""
    if len(args) == 1 and args[0] == "--help":
        return Options(HELP, cpus)
    if len(args) == 1 and args[0] == "--version":
        return Options(VERSION, cpus)
    var opts = Options(RUN, cpus)
    var seen = List[String]()
    var level = String("all")
    var i = 0
    while i < len(args):
        var flag = args[i]
        if flag == "--help" or flag == "--version":
            raise Error(String(flag, " takes no other arguments"))
        if not contains(materialize[FLAGS](), flag):
            raise Error(String("unknown argument ", shown(flag), " (try --help)"))
        if contains(seen, flag):
            raise Error(String(flag, " given twice"))
        seen.append(flag)
        var arity = 0 if flag == "--json" else (2 if flag == "--eval" else 1)
        if i + arity >= len(args):
            raise Error(String(flag, " needs ", "two values" if arity == 2 else "a value"))
        var value = args[i + 1] if arity > 0 else String("")
        if flag == "--json":
            opts.json = True
        elif flag == "--workload":
            opts.workload = parse_workload(value)
        elif flag == "--level":
            level = value  # checked below, once the workload is known
        elif flag == "--ops":
            opts.ops = Int(parse_uint(flag, value, 1, MAX_GRAPH_OPS))
        elif flag == "--iters":
            opts.iters = Int(parse_uint(flag, value, 1, MAX_ITERS))
        elif flag == "--seed":
            opts.seed = parse_uint(flag, value, 0, UInt64.MAX)
        elif flag == "--threads":
            opts.threads = Int(parse_uint(flag, value, 1, MAX_THREADS))
        else:  # --eval X Y
            opts.mode = EVAL
            opts.x = parse_point(flag, value)
            opts.y = parse_point(flag, args[i + 2])
        i += 1 + arity
    if opts.mode == EVAL:
        for k in range(len(seen)):
            if seen[k] != "--eval" and seen[k] != "--json":
                raise Error(String("--eval takes no ", seen[k]))
        return opts^
    if contains(seen, "--ops") and opts.workload != "graph":
        raise Error("--ops belongs to the graph workload (add --workload graph)")
    opts.levels = parse_level(level, opts.workload)
    if opts.workload == "graph" and not contains(seen, "--iters"):
        opts.iters = DEFAULT_GRAPH_ITERS
    return opts^
