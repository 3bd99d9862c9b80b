// Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
// std.Thread (core/threads; at most one a batch), each with its own batch tape and lane
// sums; the partial sums are added in thread order, so a given T always gives the same
// digits.
const Sums = @import("../core/ops.zig").Sums;
const in_threads = @import("../core/threads.zig").in_threads;
const team_size = @import("../core/threads.zig").team_size;
const n_batches = @import("simd.zig").n_batches;
const run_batches = @import("simd.zig").run_batches;
const MAX_THREADS = @import("../cli/args.zig").MAX_THREADS;

/// What a v4 range needs besides its batches (the Codon program's lambda captures them).
const V4Work = struct {
    seed: u64,
    n: u64,

    fn run(self: V4Work, first_batch: u64, end_batch: u64) Sums {
        return run_batches(self.seed, self.n, first_batch, end_batch);
    }
};

pub fn run_v4(seed: u64, n: u64, threads: usize) Sums {
    var partial: [MAX_THREADS]Sums = @splat(.{});
    // Small stacks: a thread needs its BatchTape and lane sums (24 KiB and 6 KiB, about
    // 30 KiB), and up to 1024 of them may run.
    const nb = n_batches(n);
    const team = team_size(threads, nb);
    in_threads(Sums, V4Work, V4Work.run, .{ .seed = seed, .n = n }, nb, partial[0..team], 1 << 20);
    var total: Sums = .{};
    for (partial[0..team]) |s| total = total.add(s);
    return total;
}
