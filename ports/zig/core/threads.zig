// The team of threads of the v4 levels, shared by both workloads: T contiguous ranges of
// the batches, one per std.Thread, each range's result kept apart so that the level adds
// them in thread order, and a given T always gives the same digits.
const std = @import("std");
const MAX_THREADS = @import("../cli/args.zig").MAX_THREADS;

/// The threads a v4 level runs for --threads T over nb batches, min(T, nb): the same
/// ranges and digits, no idle thread (docs/contract.md §6, v4's team).
pub fn team_size(threads: usize, nb: u64) usize {
    return @intCast(@min(@as(u64, threads), nb));
}

/// The Codon program's in_threads: work(ctx, first, end) for range t = [t*nb/T, (t+1)*nb/T)
/// into partial[t], T = partial.len; the calling thread is thread 0, the others are std.Threads
/// of stack_size bytes. A thread that cannot be started has its range run here instead (same
/// result).
pub fn in_threads(comptime S: type, comptime Ctx: type, comptime work: fn (Ctx, u64, u64) S, ctx: Ctx, nb: u64, partial: []S, stack_size: usize) void {
    const Worker = struct {
        fn run(c: Ctx, first: u64, end: u64, out: *S) void {
            out.* = work(c, first, end);
        }
    };
    const t_count: u64 = partial.len;
    var handles: [MAX_THREADS]?std.Thread = @splat(null);
    for (1..partial.len) |t| {
        handles[t] = std.Thread.spawn(.{ .stack_size = stack_size }, Worker.run, .{ ctx, t * nb / t_count, (t + 1) * nb / t_count, &partial[t] }) catch null;
    }
    partial[0] = work(ctx, 0, nb / t_count);
    for (1..partial.len) |t| {
        if (handles[t]) |h| {
            h.join();
        } else {
            partial[t] = work(ctx, t * nb / t_count, (t + 1) * nb / t_count);
        }
    }
}
