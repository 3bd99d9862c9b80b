// The command line of contract §4 (and of the graph workload, contract-graph G6), parsed
// strictly: every bad input becomes error.Usage with a message of one line, so that main
// can print `error: ...` and exit 2 before anything reaches stdout.
const std = @import("std");
const Allocator = std.mem.Allocator;

extern "c" fn strtod(text: [*:0]const u8, end: ?*[*:0]u8) f64;

pub const Level = enum { v0, v1, v2, v3, v4, fused, @"fused-simd" };
const LEVELS = [_]Level{ .v0, .v1, .v2, .v3, .v4 }; // run by --level all, in this order
const BASELINES = [_]Level{ .fused, .@"fused-simd" }; // run only when named (softplus workload)
const ALL_LEVELS = LEVELS ++ BASELINES;
pub const Workload = enum { softplus, graph };
const WORKLOADS = [_]Workload{ .softplus, .graph }; // --workload, the first the default
const MAX_ITERS: u64 = 1_000_000_000_000;
pub const MAX_THREADS = 1024; // --threads; also the length of v4's per-thread arrays (softplus and graph)
pub const MAX_GRAPH_OPS: u64 = 1_000_000; // --ops (MAX_OPS is the softplus tape's)
pub const DEFAULT_ITERS: u64 = 10_000_000; // softplus samples
pub const DEFAULT_GRAPH_ITERS: u64 = 10_000; // graph samples (Rogozhnikov's 10,000 passes)
pub const DEFAULT_OPS: usize = 10_000;
pub const DEFAULT_SEED: u64 = 42;
const FLAGS = [_][]const u8{ "--workload", "--level", "--ops", "--iters", "--seed", "--threads", "--json", "--eval" };

const Mode = enum { run, eval, help, version };

/// Every bad input becomes error.Usage with a one-line message kept here, so that main can print
/// `error: ...` and exit 2 before anything reaches stdout.
pub const Usage = struct {
    arena: Allocator,
    message: []const u8 = "",

    pub fn fail(self: *Usage, comptime format: []const u8, args: anytype) error{Usage} {
        self.message = std.fmt.allocPrint(self.arena, format, args) catch "bad command line (and out of memory)";
        return error.Usage;
    }
};

pub const Options = struct {
    mode: Mode,
    workload: Workload = WORKLOADS[0],
    levels: []const Level = &LEVELS,
    ops: usize = DEFAULT_OPS,
    iters: u64 = DEFAULT_ITERS,
    seed: u64 = DEFAULT_SEED,
    threads: usize,
    json: bool = false,
    x: f64 = 0.0,
    y: f64 = 0.0,
};

/// An argument quoted for an error line, bytes outside printable ASCII shown as '?'.
const Shown = struct {
    text: []const u8,

    pub fn format(self: Shown, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try w.writeByte('\'');
        for (self.text) |c| try w.writeByte(if (c >= ' ' and c <= '~') c else '?');
        try w.writeByte('\'');
    }
};

fn shown(arg: []const u8) Shown {
    return .{ .text = arg };
}

/// A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex).
fn parse_uint(usage: *Usage, flag: []const u8, text: []const u8, lo: u64, hi: u64) error{Usage}!u64 {
    const bad = "{s} must be a whole number from {d} to {d}, got {f}";
    if (text.len == 0 or text.len > 20) return usage.fail(bad, .{ flag, lo, hi, shown(text) });
    var value: u64 = 0;
    for (text) |c| {
        if (c < '0' or c > '9') return usage.fail(bad, .{ flag, lo, hi, shown(text) });
        const digit: u64 = c - '0';
        if (value > (hi - digit) / 10) // value * 10 + digit would pass hi (or wrap)
            return usage.fail(bad, .{ flag, lo, hi, shown(text) });
        value = value * 10 + digit;
    }
    if (value < lo) return usage.fail(bad, .{ flag, lo, hi, shown(text) });
    return value;
}

/// [+-] digits [. digits] [e [+-] digits], with at least one mantissa digit.
fn is_decimal(text: []const u8) bool {
    var i: usize = 0;
    const n = text.len;
    if (i < n and (text[i] == '+' or text[i] == '-')) i += 1;
    var digits: usize = 0;
    while (i < n and std.ascii.isDigit(text[i])) : (i += 1) digits += 1;
    if (i < n and text[i] == '.') {
        i += 1;
        while (i < n and std.ascii.isDigit(text[i])) : (i += 1) digits += 1;
    }
    if (digits == 0) return false;
    if (i < n and (text[i] == 'e' or text[i] == 'E')) {
        i += 1;
        if (i < n and (text[i] == '+' or text[i] == '-')) i += 1;
        const start = i;
        while (i < n and std.ascii.isDigit(text[i])) i += 1;
        if (i == start) return false;
    }
    return i == n;
}

/// A finite decimal number (no hex, inf or nan), read by the C library's strtod.
fn parse_point(usage: *Usage, flag: []const u8, text: [:0]const u8) error{Usage}!f64 {
    if (!is_decimal(text)) return usage.fail("{s} needs finite decimal numbers, got {f}", .{ flag, shown(text) });
    const value = strtod(text.ptr, null);
    if (!std.math.isFinite(value)) // +-inf: the decimal is beyond the float range
        return usage.fail("{s} value {f} is out of range", .{ flag, shown(text) });
    return value;
}

/// The tags of an enum's values, ", " between them (for an error line).
fn joined(comptime values: anytype) []const u8 {
    comptime var text: []const u8 = "";
    inline for (values, 0..) |value, k| text = text ++ (if (k > 0) ", " else "") ++ @tagName(value);
    return text;
}

/// The levels --level names; the graph workload has no baselines.
fn parse_level(usage: *Usage, text: []const u8, workload: Workload) error{Usage}![]const Level {
    const named: []const Level = if (workload == .softplus) &ALL_LEVELS else &LEVELS;
    if (std.mem.eql(u8, text, "all")) return &LEVELS;
    for (named, 0..) |level, k| {
        if (std.mem.eql(u8, text, @tagName(level))) return named[k..][0..1];
    }
    const names = if (workload == .softplus) comptime joined(ALL_LEVELS) else comptime joined(LEVELS);
    return usage.fail("--level must be one of {s} or all, got {f}", .{ names, shown(text) });
}

fn parse_workload(usage: *Usage, text: []const u8) error{Usage}!Workload {
    for (WORKLOADS) |workload| {
        if (std.mem.eql(u8, text, @tagName(workload))) return workload;
    }
    return usage.fail("--workload must be one of {s}, got {f}", .{ comptime joined(WORKLOADS), shown(text) });
}

fn is_flag(arg: []const u8) bool {
    for (FLAGS) |flag| if (std.mem.eql(u8, arg, flag)) return true;
    return false;
}

fn is_seen(seen: []const []const u8, flag: []const u8) bool {
    for (seen) |other| if (std.mem.eql(u8, other, flag)) return true;
    return false;
}

/// Options from the arguments after the program name.
pub fn parse(usage: *Usage, args: []const [:0]const u8, cpus: usize) error{Usage}!Options {
    if (args.len == 1 and std.mem.eql(u8, args[0], "--help")) return .{ .mode = .help, .threads = cpus };
    if (args.len == 1 and std.mem.eql(u8, args[0], "--version")) return .{ .mode = .version, .threads = cpus };
    var opts: Options = .{ .mode = .run, .threads = cpus };
    var seen: [FLAGS.len][]const u8 = undefined; // each flag at most once, in order
    var n_seen: usize = 0;
    var level: []const u8 = "all";
    var i: usize = 0;
    while (i < args.len) {
        const flag: []const u8 = args[i];
        if (std.mem.eql(u8, flag, "--help") or std.mem.eql(u8, flag, "--version"))
            return usage.fail("{s} takes no other arguments", .{flag});
        if (!is_flag(flag)) return usage.fail("unknown argument {f} (try --help)", .{shown(flag)});
        if (is_seen(seen[0..n_seen], flag)) return usage.fail("{s} given twice", .{flag});
        seen[n_seen] = flag;
        n_seen += 1;
        const arity: usize = if (std.mem.eql(u8, flag, "--json")) 0 else if (std.mem.eql(u8, flag, "--eval")) 2 else 1;
        if (i + arity >= args.len)
            return usage.fail("{s} needs {s}", .{ flag, if (arity == 2) "two values" else "a value" });
        const value: [:0]const u8 = if (arity > 0) args[i + 1] else "";
        if (std.mem.eql(u8, flag, "--json")) {
            opts.json = true;
        } else if (std.mem.eql(u8, flag, "--workload")) {
            opts.workload = try parse_workload(usage, value);
        } else if (std.mem.eql(u8, flag, "--level")) {
            level = value; // checked below, once the workload is known
        } else if (std.mem.eql(u8, flag, "--ops")) {
            opts.ops = @intCast(try parse_uint(usage, flag, value, 1, MAX_GRAPH_OPS));
        } else if (std.mem.eql(u8, flag, "--iters")) {
            opts.iters = try parse_uint(usage, flag, value, 1, MAX_ITERS);
        } else if (std.mem.eql(u8, flag, "--seed")) {
            opts.seed = try parse_uint(usage, flag, value, 0, std.math.maxInt(u64));
        } else if (std.mem.eql(u8, flag, "--threads")) {
            opts.threads = @intCast(try parse_uint(usage, flag, value, 1, MAX_THREADS));
        } else { // --eval X Y
            opts.mode = .eval;
            opts.x = try parse_point(usage, flag, value);
            opts.y = try parse_point(usage, flag, args[i + 2]);
        }
        i += 1 + arity;
    }
    if (opts.mode == .eval) {
        for (seen[0..n_seen]) |other| {
            if (!std.mem.eql(u8, other, "--eval") and !std.mem.eql(u8, other, "--json"))
                return usage.fail("--eval takes no {s}", .{other});
        }
        return opts;
    }
    if (is_seen(seen[0..n_seen], "--ops") and opts.workload != .graph)
        return usage.fail("--ops belongs to the graph workload (add --workload graph)", .{});
    opts.levels = try parse_level(usage, level, opts.workload);
    if (opts.workload == .graph and !is_seen(seen[0..n_seen], "--iters"))
        opts.iters = DEFAULT_GRAPH_ITERS;
    return opts;
}
