// autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
// through a reverse-mode autograd, level by level (docs/contract.md). This file is
// the entry: command line, dispatch to the levels, output.
//
// The Zig port: one file per Codon module, in the Codon program's folders and with its
// basenames (ports/zig/README.md), joined by @import into one compilation unit. Built with
// libc (-lc): the contract's numbers come from glibc's exp and log1p (Zig's own
// std.math/compiler_rt versions differ in last bits), v3/v4/fused-simd call glibc's libmvec,
// --eval reads numbers with strtod and numbers are printed by strfromd, as in the Codon program.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Sums = @import("core/ops.zig").Sums;
const target_text = @import("core/vmath.zig").target_text;
const run_v0 = @import("softplus/naive.zig").run_v0;
const run_v1 = @import("softplus/pool.zig").run_v1;
const run_v2 = @import("softplus/tape.zig").run_v2;
const eval_point = @import("softplus/tape.zig").eval_point;
const run_v3 = @import("softplus/simd.zig").run_v3;
const run_v4 = @import("softplus/threads.zig").run_v4;
const run_fused = @import("softplus/fused.zig").run_fused;
const run_fused_simd = @import("softplus/fused.zig").run_fused_simd;
const GraphSums = @import("graph/recipe.zig").GraphSums;
const run_graph_v0 = @import("graph/objects.zig").run_graph_v0;
const run_graph_v1 = @import("graph/pool.zig").run_graph_v1;
const run_graph_v2 = @import("graph/tape.zig").run_graph_v2;
const run_graph_v3 = @import("graph/simd.zig").run_graph_v3;
const run_graph_v4 = @import("graph/threads.zig").run_graph_v4;
const tapes_bytes = @import("graph/threads.zig").tapes_bytes;
const Level = @import("cli/args.zig").Level;
const Options = @import("cli/args.zig").Options;
const Usage = @import("cli/args.zig").Usage;
const parse = @import("cli/args.zig").parse;
const MAX_THREADS = @import("cli/args.zig").MAX_THREADS;
const MAX_GRAPH_OPS = @import("cli/args.zig").MAX_GRAPH_OPS;
const DEFAULT_ITERS = @import("cli/args.zig").DEFAULT_ITERS;
const DEFAULT_GRAPH_ITERS = @import("cli/args.zig").DEFAULT_GRAPH_ITERS;
const DEFAULT_OPS = @import("cli/args.zig").DEFAULT_OPS;
const DEFAULT_SEED = @import("cli/args.zig").DEFAULT_SEED;
const Result = @import("cli/output.zig").Result;
const GraphResult = @import("cli/output.zig").GraphResult;
const text_header = @import("cli/output.zig").text_header;
const graph_text_header = @import("cli/output.zig").graph_text_header;
const text_line = @import("cli/output.zig").text_line;
const graph_text_line = @import("cli/output.zig").graph_text_line;
const json_line = @import("cli/output.zig").json_line;
const graph_json_line = @import("cli/output.zig").graph_json_line;
const eval_text = @import("cli/output.zig").eval_text;
const eval_json = @import("cli/output.zig").eval_json;

const VERSION_TEXT = "autograd (zig) 0.1.0";
// The --help text, its bounds and defaults cli/args.zig's.
const HELP_TEXT = std.fmt.comptimePrint(
    \\usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
    \\                [--threads T] [--json]
    \\       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
    \\                [--seed S] [--threads T] [--json]
    \\       autograd --eval X Y [--json]
    \\       autograd --help | --version
    \\
    \\Runs N forward/backward passes through a reverse-mode autograd at each
    \\optimization level and prints the time and the checksums. Workloads:
    \\  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
    \\            sums of f, df/dx and df/dy over the samples
    \\  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
    \\            loss = the sum of every node; checksums are the sums of the loss,
    \\            of the inputs' weighted gradients and of every node's gradient
    \\
    \\  --workload W softplus or graph (default softplus)
    \\  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
    \\               the default), or a softplus baseline: fused, fused-simd
    \\  --ops M      graph ops, 1..{[MAX_GRAPH_OPS]d} (default {[DEFAULT_OPS]d}; graph workload only)
    \\  --iters N    samples, 1..10^12 (default {[DEFAULT_ITERS]d}; graph {[DEFAULT_GRAPH_ITERS]d})
    \\  --seed S     input stream seed, 0..2^64-1 (default {[DEFAULT_SEED]d})
    \\  --threads T  threads for v4, 1..{[MAX_THREADS]d} (default: the CPUs this process may use)
    \\  --json       one JSON object per line instead of the table
    \\  --eval X Y   f and its gradient at one point, through the softplus v2 tape
    \\
, .{
    .MAX_GRAPH_OPS = MAX_GRAPH_OPS,
    .DEFAULT_OPS = DEFAULT_OPS,
    .DEFAULT_ITERS = DEFAULT_ITERS,
    .DEFAULT_GRAPH_ITERS = DEFAULT_GRAPH_ITERS,
    .DEFAULT_SEED = DEFAULT_SEED,
    .MAX_THREADS = MAX_THREADS,
});

/// CPUs in this process's affinity mask (what taskset or a container allows); std.Thread asks
/// sched_getaffinity with room for 1024 CPUs.
fn cpus_available() usize {
    return @max(std.Thread.getCpuCount() catch 1, 1);
}

fn run_level(gpa: Allocator, level: Level, seed: u64, n: u64, threads: usize) Allocator.Error!Sums {
    return switch (level) {
        .v0 => try run_v0(gpa, seed, n),
        .v1 => run_v1(seed, n),
        .v2 => run_v2(seed, n),
        .v3 => run_v3(seed, n),
        .v4 => run_v4(seed, n, threads),
        .fused => run_fused(seed, n),
        .@"fused-simd" => run_fused_simd(seed, n),
    };
}

fn run_graph_level(gpa: Allocator, level: Level, seed: u64, m: usize, n: u64, threads: usize) Allocator.Error!GraphSums {
    return switch (level) {
        .v0 => try run_graph_v0(gpa, seed, m, n),
        .v1 => try run_graph_v1(gpa, seed, m, n),
        .v2 => try run_graph_v2(gpa, seed, m, n),
        .v3 => try run_graph_v3(gpa, seed, m, n),
        else => try run_graph_v4(gpa, seed, m, n, threads),
    };
}

const RunError = Allocator.Error || std.Io.Writer.Error;

/// The CPU clock now (contract §5): the process's for v4, whose threads all count, this
/// thread's for every other level (other processes' and threads' time does not count). std.Io's
/// cpu clocks are libc's clock_gettime with CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID.
/// Read just inside the wall clock's reads, so that a short single-threaded run's CPU time does
/// not gain the reads' own cost (and the first read's page faults) over its wall time.
fn cpu_clock(io: std.Io, level: Level) std.Io.Timestamp {
    const clock: std.Io.Clock = if (level == .v4) .cpu_process else .cpu_thread;
    return clock.now(io);
}

extern "c" fn sysconf(name: c_int) c_long;
const SC_PAGESIZE: c_int = 30; // sysconf's names on Linux (glibc and musl)
const SC_PHYS_PAGES: c_int = 85;
const MIB: u64 = 1 << 20;

/// Refuses a graph run whose tapes cannot fit in this machine's memory (docs/contract-graph.md),
/// before any is allocated: the most any requested level's tapes take (tapes_bytes) against the
/// physical memory. A machine whose sysconf cannot tell is not refused.
fn check_memory(usage: *Usage, opts: Options) error{Usage}!void {
    var need: u64 = 0;
    for (opts.levels) |level| need = @max(need, tapes_bytes(level, opts.ops, opts.iters, opts.threads));
    const pages = sysconf(SC_PHYS_PAGES);
    const page_size = sysconf(SC_PAGESIZE);
    if (pages <= 0 or page_size <= 0) return;
    const have = @as(u64, @intCast(pages)) * @as(u64, @intCast(page_size));
    if (need > have) return usage.fail("the tapes of --ops {d} need at least {d} MiB, more than this machine's memory ({d} MiB)", .{ opts.ops, (need + MIB - 1) / MIB, have / MIB });
}

/// Each level of opts, timed, one output line each: both workloads' loop. W is the workload's
/// part (the Codon program's header and lambdas): the clocks time W.run_one(gpa, opts, level,
/// threads) alone; W.line(out, opts, level, threads, seconds, cpu_seconds, sums, v0_seconds)
/// writes the level's output line (v0's seconds for the speed-up column).
fn run_levels(comptime W: type, io: std.Io, gpa: Allocator, out: *std.Io.Writer, opts: Options) RunError!void {
    if (!opts.json) {
        try W.header(out);
        try out.flush();
    }
    var v0_seconds: f64 = 0.0;
    for (opts.levels) |level| {
        const threads: usize = if (level == .v4) opts.threads else 1;
        const start = std.Io.Clock.awake.now(io);
        const cpu_start = cpu_clock(io, level);
        const sums = try W.run_one(gpa, opts, level, threads);
        const cpu_ns = cpu_start.durationTo(cpu_clock(io, level)).nanoseconds;
        const ns = start.durationTo(std.Io.Clock.awake.now(io)).nanoseconds;
        const seconds = @as(f64, @floatFromInt(ns)) / 1e9;
        const cpu_seconds = @as(f64, @floatFromInt(cpu_ns)) / 1e9;
        if (level == .v0) v0_seconds = seconds;
        try W.line(out, opts, level, threads, seconds, cpu_seconds, sums, v0_seconds);
        try out.flush(); // each row as soon as its level finishes
    }
}

/// The graph workload's part of run_levels.
const GraphLevels = struct {
    const header = graph_text_header;

    fn run_one(gpa: Allocator, opts: Options, level: Level, threads: usize) Allocator.Error!GraphSums {
        return run_graph_level(gpa, level, opts.seed, opts.ops, opts.iters, threads);
    }

    fn line(out: *std.Io.Writer, opts: Options, level: Level, threads: usize, seconds: f64, cpu_seconds: f64, sums: GraphSums, v0_seconds: f64) std.Io.Writer.Error!void {
        const r: GraphResult = .{ .level = level, .ops = opts.ops, .iters = opts.iters, .seed = opts.seed, .threads = threads, .seconds = seconds, .cpu_seconds = cpu_seconds, .sums = sums };
        if (opts.json) try graph_json_line(out, r) else try graph_text_line(out, r, v0_seconds);
    }
};

/// The graph workload (docs/contract-graph.md): each level, timed, one line each.
fn run_graph(io: std.Io, gpa: Allocator, out: *std.Io.Writer, opts: Options) RunError!void {
    return run_levels(GraphLevels, io, gpa, out, opts);
}

/// The softplus workload's part of run_levels.
const SoftplusLevels = struct {
    const header = text_header;

    fn run_one(gpa: Allocator, opts: Options, level: Level, threads: usize) Allocator.Error!Sums {
        return run_level(gpa, level, opts.seed, opts.iters, threads);
    }

    fn line(out: *std.Io.Writer, opts: Options, level: Level, threads: usize, seconds: f64, cpu_seconds: f64, sums: Sums, v0_seconds: f64) std.Io.Writer.Error!void {
        const r: Result = .{ .level = level, .iters = opts.iters, .seed = opts.seed, .threads = threads, .seconds = seconds, .cpu_seconds = cpu_seconds, .sums = sums };
        if (opts.json) try json_line(out, r) else try text_line(out, r, v0_seconds);
    }
};

fn run(io: std.Io, gpa: Allocator, out: *std.Io.Writer, opts: Options) RunError!void {
    return run_levels(SoftplusLevels, io, gpa, out, opts);
}

fn evaluate(usage: *Usage, out: *std.Io.Writer, opts: Options) (error{Usage} || std.Io.Writer.Error)!void {
    const r = eval_point(opts.x, opts.y);
    const p = (opts.x + opts.y) * opts.x;
    if (!std.math.isFinite(p)) return usage.fail("(X + Y) * X overflows at this point", .{});
    for ([_]f64{ r.f, r.dfdx, r.dfdy }) |v| {
        if (!std.math.isFinite(v)) return usage.fail("the result overflows at this point", .{});
    }
    if (opts.json) try eval_json(out, opts.x, opts.y, r) else try eval_text(out, opts.x, opts.y, r);
    try out.flush();
}

fn fail_exit(io: std.Io, message: []const u8, status: u8) u8 {
    var buf: [4096]u8 = undefined;
    var w = std.Io.File.stderr().writerStreaming(io, &buf);
    w.interface.print("error: {s}\n", .{message}) catch {};
    w.interface.flush() catch {};
    return status;
}

pub fn main(init: std.process.Init) u8 {
    const io = init.io;
    const arena = init.arena.allocator();
    var usage: Usage = .{ .arena = arena };
    const argv = init.minimal.args.vector;
    const args = arena.alloc([:0]const u8, argv.len -| 1) catch return fail_exit(io, "out of memory", 2);
    for (args, 1..) |*arg, k| arg.* = std.mem.span(argv[k]);

    var out_buf: [4096]u8 = undefined;
    var stdout = std.Io.File.stdout().writerStreaming(io, &out_buf);
    const out = &stdout.interface;

    const opts = parse(&usage, args, cpus_available()) catch return fail_exit(io, usage.message, 2);
    // Output that cannot be written (a full disk, /dev/full) ends the program with one line on
    // stderr and exit status 1, not 2: the command line was fine. Every write and flush returns
    // error.WriteFailed then (the buffer hides most failures until the flush).
    const write_failed = "cannot write to standard output";
    if (opts.mode == .run and opts.workload == .graph) check_memory(&usage, opts) catch return fail_exit(io, usage.message, 2);
    switch (opts.mode) {
        .help => out.writeAll(HELP_TEXT) catch return fail_exit(io, write_failed, 1),
        .version => out.writeAll(VERSION_TEXT ++ "\n" ++ target_text ++ "\n") catch return fail_exit(io, write_failed, 1),
        .eval => evaluate(&usage, out, opts) catch |err| switch (err) {
            error.Usage => return fail_exit(io, usage.message, 2),
            error.WriteFailed => return fail_exit(io, write_failed, 1),
        },
        // v0's nodes (and the graph tapes) come from the C library's malloc/free
        // (std.heap.c_allocator), the allocator the C port's v0 uses, rather than init.gpa (which
        // is c_allocator only in release builds).
        .run => (switch (opts.workload) {
            .graph => run_graph(io, std.heap.c_allocator, out, opts),
            .softplus => run(io, std.heap.c_allocator, out, opts),
        }) catch |err| switch (err) {
            error.OutOfMemory => return fail_exit(io, "out of memory", 1),
            error.WriteFailed => return fail_exit(io, write_failed, 1),
        },
    }
    out.flush() catch return fail_exit(io, write_failed, 1);
    return 0;
}
