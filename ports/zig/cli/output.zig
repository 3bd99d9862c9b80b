// Output of contract §5, numbers formatted as the Codon program formats them: by the C
// library's strfromd (C locale, not variadic).
const std = @import("std");
const Sums = @import("../core/ops.zig").Sums;
const GraphSums = @import("../graph/recipe.zig").GraphSums;
const Point3 = @import("../softplus/tape.zig").Point3;
const Level = @import("args.zig").Level;

extern "c" fn strfromd(buf: [*]u8, n: usize, format: [*:0]const u8, v: f64) c_int;

const IMPL = "zig";

/// v formatted by a printf-style spec such as "%.17g", by the C library (C locale), into buf.
fn fmt(buf: *[64]u8, v: f64, spec: [*:0]const u8) []const u8 {
    const n: usize = @intCast(strfromd(buf, buf.len, spec, v));
    return buf[0..@min(n, buf.len - 1)];
}

/// 17 significant digits: enough to round-trip any double.
fn g17(buf: *[64]u8, v: f64) []const u8 {
    return fmt(buf, v, "%.17g");
}

pub const Result = struct {
    level: Level,
    iters: u64,
    seed: u64,
    threads: usize,
    seconds: f64,
    cpu_seconds: f64, // the CPU time of the same region (contract §5)
    sums: Sums,

    fn ns_per_iter(self: Result) f64 {
        return self.seconds * 1e9 / @as(f64, @floatFromInt(self.iters));
    }
};

pub const GraphResult = struct {
    level: Level,
    ops: usize,
    iters: u64,
    seed: u64,
    threads: usize,
    seconds: f64,
    cpu_seconds: f64,
    sums: GraphSums,

    fn ns_per_iter(self: GraphResult) f64 {
        return self.seconds * 1e9 / @as(f64, @floatFromInt(self.iters));
    }

    fn ns_per_op(self: GraphResult) f64 {
        return self.ns_per_iter() / @as(f64, @floatFromInt(self.ops));
    }
};

const Column = struct { name: []const u8, width: i32 };
const COLUMNS = [_]Column{
    .{ .name = "impl", .width = 6 },     .{ .name = "level", .width = 11 },    .{ .name = "threads", .width = -7 },
    .{ .name = "iters", .width = -14 },  .{ .name = "seconds", .width = -10 }, .{ .name = "ns/iter", .width = -10 },
    .{ .name = "vs v0", .width = -8 },   .{ .name = "sum_f", .width = -25 },   .{ .name = "sum_dx", .width = -25 },
    .{ .name = "sum_dy", .width = -25 },
};
const GRAPH_COLUMNS = [_]Column{
    .{ .name = "impl", .width = 6 },       .{ .name = "level", .width = 11 },        .{ .name = "threads", .width = -7 },
    .{ .name = "ops", .width = -8 },       .{ .name = "iters", .width = -14 },       .{ .name = "seconds", .width = -10 },
    .{ .name = "ns/iter", .width = -14 },  .{ .name = "ns/op", .width = -10 },       .{ .name = "vs v0", .width = -8 },
    .{ .name = "sum_loss", .width = -25 }, .{ .name = "sum_grad_in", .width = -25 }, .{ .name = "sum_grad_all", .width = -25 },
};

/// Cells padded to the columns' widths (negative: right-aligned), two spaces apart, trailing
/// spaces removed, then a newline.
fn row(w: *std.Io.Writer, comptime columns: []const Column, cells: [columns.len][]const u8) std.Io.Writer.Error!void {
    var buf: [512]u8 = undefined;
    var line = std.Io.Writer.fixed(&buf);
    for (cells, columns, 0..) |cell, col, k| {
        if (k > 0) try line.writeAll("  ");
        const width: usize = @abs(col.width);
        const pad = width -| cell.len;
        if (col.width < 0) try line.splatByteAll(' ', pad);
        try line.writeAll(cell);
        if (col.width > 0) try line.splatByteAll(' ', pad);
    }
    try w.writeAll(std.mem.trimEnd(u8, line.buffered(), " "));
    try w.writeByte('\n');
}

/// The columns' names as a row.
fn header(w: *std.Io.Writer, comptime columns: []const Column) std.Io.Writer.Error!void {
    var cells: [columns.len][]const u8 = undefined;
    for (&cells, columns) |*cell, col| cell.* = col.name;
    try row(w, columns, cells);
}

pub fn text_header(w: *std.Io.Writer) std.Io.Writer.Error!void {
    try header(w, &COLUMNS);
}

pub fn graph_text_header(w: *std.Io.Writer) std.Io.Writer.Error!void {
    try header(w, &GRAPH_COLUMNS);
}

/// v0's time over this one, "-" when v0 was not run before it; in buf.
fn speedup(buf: *[64]u8, v0_seconds: f64, seconds: f64) []const u8 {
    if (!(v0_seconds > 0.0 and seconds > 0.0)) return "-";
    const ratio = fmt(buf, v0_seconds / seconds, "%.1f");
    buf[ratio.len] = 'x';
    return buf[0 .. ratio.len + 1];
}

/// One result as a table row; `vs v0` is v0's time over this one (0: no v0 run).
pub fn text_line(w: *std.Io.Writer, r: Result, v0_seconds: f64) std.Io.Writer.Error!void {
    var b: [9][64]u8 = undefined;
    const threads = std.fmt.bufPrint(&b[1], "{d}", .{r.threads}) catch unreachable;
    const iters = std.fmt.bufPrint(&b[2], "{d}", .{r.iters}) catch unreachable;
    try row(w, &COLUMNS, .{ IMPL, @tagName(r.level), threads, iters, fmt(&b[3], r.seconds, "%.3f"), fmt(&b[4], r.ns_per_iter(), "%.2f"), speedup(&b[0], v0_seconds, r.seconds), g17(&b[5], r.sums.f), g17(&b[6], r.sums.dx), g17(&b[7], r.sums.dy) });
}

pub fn graph_text_line(w: *std.Io.Writer, r: GraphResult, v0_seconds: f64) std.Io.Writer.Error!void {
    var b: [11][64]u8 = undefined;
    const threads = std.fmt.bufPrint(&b[1], "{d}", .{r.threads}) catch unreachable;
    const ops = std.fmt.bufPrint(&b[2], "{d}", .{r.ops}) catch unreachable;
    const iters = std.fmt.bufPrint(&b[3], "{d}", .{r.iters}) catch unreachable;
    try row(w, &GRAPH_COLUMNS, .{ IMPL, @tagName(r.level), threads, ops, iters, fmt(&b[4], r.seconds, "%.3f"), fmt(&b[5], r.ns_per_iter(), "%.1f"), fmt(&b[6], r.ns_per_op(), "%.2f"), speedup(&b[0], v0_seconds, r.seconds), g17(&b[7], r.sums.loss), g17(&b[8], r.sums.grad_in), g17(&b[9], r.sums.grad_all) });
}

pub fn json_line(w: *std.Io.Writer, r: Result) std.Io.Writer.Error!void {
    var b: [6][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"workload\": \"softplus\", \"level\": \"{s}\", \"iters\": {d}, \"seed\": {d}, \"threads\": {d}, " ++
        "\"seconds\": {s}, \"cpu_seconds\": {s}, \"ns_per_iter\": {s}, \"sum_f\": {s}, \"sum_dx\": {s}, \"sum_dy\": {s}}}\n", .{
        IMPL,                 @tagName(r.level),     r.iters,                   r.seed,
        r.threads,            g17(&b[0], r.seconds), g17(&b[1], r.cpu_seconds), g17(&b[2], r.ns_per_iter()),
        g17(&b[3], r.sums.f), g17(&b[4], r.sums.dx), g17(&b[5], r.sums.dy),
    });
}

pub fn graph_json_line(w: *std.Io.Writer, r: GraphResult) std.Io.Writer.Error!void {
    var b: [7][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"workload\": \"graph\", \"level\": \"{s}\", \"ops\": {d}, \"iters\": {d}, \"seed\": {d}, " ++
        "\"threads\": {d}, \"seconds\": {s}, \"cpu_seconds\": {s}, \"ns_per_iter\": {s}, \"ns_per_op\": {s}, " ++
        "\"sum_loss\": {s}, \"sum_grad_in\": {s}, \"sum_grad_all\": {s}}}\n", .{
        IMPL,                        @tagName(r.level),         r.ops,                   r.iters,
        r.seed,                      r.threads,                 g17(&b[0], r.seconds),   g17(&b[1], r.cpu_seconds),
        g17(&b[2], r.ns_per_iter()), g17(&b[3], r.ns_per_op()), g17(&b[4], r.sums.loss), g17(&b[5], r.sums.grad_in),
        g17(&b[6], r.sums.grad_all),
    });
}

pub fn eval_text(w: *std.Io.Writer, x: f64, y: f64, p: Point3) std.Io.Writer.Error!void {
    var b: [5][64]u8 = undefined;
    try w.print("x {s}  y {s}  f {s}  dfdx {s}  dfdy {s}\n", .{ g17(&b[0], x), g17(&b[1], y), g17(&b[2], p.f), g17(&b[3], p.dfdx), g17(&b[4], p.dfdy) });
}

pub fn eval_json(w: *std.Io.Writer, x: f64, y: f64, p: Point3) std.Io.Writer.Error!void {
    var b: [5][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"x\": {s}, \"y\": {s}, \"f\": {s}, \"dfdx\": {s}, \"dfdy\": {s}}}\n", .{ IMPL, g17(&b[0], x), g17(&b[1], y), g17(&b[2], p.f), g17(&b[3], p.dfdx), g17(&b[4], p.dfdy) });
}
