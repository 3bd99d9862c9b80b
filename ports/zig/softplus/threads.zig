// Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
// std.Thread, each with its own batch tape and lane sums; the partial sums are
// added in thread order, so a given T always gives the same digits.
const std = @import("std");
const Sums = @import("../core/ops.zig").Sums;
const n_batches = @import("simd.zig").n_batches;
const run_batches = @import("simd.zig").run_batches;
const MAX_THREADS = @import("../cli/args.zig").MAX_THREADS;

fn v4_worker(seed: u64, n: u64, first_batch: u64, end_batch: u64, out: *Sums) void {
    out.* = run_batches(seed, n, first_batch, end_batch);
}

/// v3 with the batches split into T contiguous ranges, one per std.Thread (thread t takes
/// [t*nb/T, (t+1)*nb/T)), each with its own batch tape and lane sums; the partial sums are added
/// in thread order, so a given T always gives the same digits. The calling thread is thread 0;
/// a thread that cannot be started has its range run here instead (same result).
pub fn run_v4(seed: u64, n: u64, threads: usize) Sums {
    const nb = n_batches(n);
    const t_count: u64 = threads;
    var partial: [MAX_THREADS]Sums = @splat(.{});
    var handles: [MAX_THREADS]?std.Thread = @splat(null);
    for (1..threads) |t| {
        // Small stacks: a thread needs its BatchTape and lane sums (about 40 KiB), and up to 1024
        // of them may run.
        handles[t] = std.Thread.spawn(.{ .stack_size = 1 << 20 }, v4_worker, .{ seed, n, t * nb / t_count, (t + 1) * nb / t_count, &partial[t] }) catch null;
    }
    partial[0] = run_batches(seed, n, 0, nb / t_count);
    for (1..threads) |t| {
        if (handles[t]) |h| {
            h.join();
        } else {
            partial[t] = run_batches(seed, n, t * nb / t_count, (t + 1) * nb / t_count);
        }
    }
    var total: Sums = .{};
    for (partial[0..threads]) |s| total = total.add(s);
    return total;
}
