// Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
// per std.Thread, each with its own batch tape and lane sums, added in thread order.
const std = @import("std");
const Allocator = std.mem.Allocator;
const GraphSums = @import("recipe.zig").GraphSums;
const n_nodes = @import("recipe.zig").n_nodes;
const GRAPH_BATCH = @import("simd.zig").GRAPH_BATCH;
const n_graph_batches = @import("simd.zig").n_graph_batches;
const run_graph_batches = @import("simd.zig").run_graph_batches;
const MAX_THREADS = @import("../cli/args.zig").MAX_THREADS;
const Level = @import("../cli/args.zig").Level;

fn graph_v4_worker(gpa: Allocator, seed: u64, m: usize, n: u64, first_batch: u64, end_batch: u64, out: *Allocator.Error!GraphSums) void {
    out.* = run_graph_batches(gpa, seed, m, n, first_batch, end_batch);
}

/// Graph v3 with the batches split into T contiguous ranges as the softplus v4 splits them, one
/// per std.Thread, each with its own batch tape and lane sums; the partial sums are added in
/// thread order. The calling thread is thread 0; a thread that cannot be started has its range
/// run here instead (same result).
pub fn run_graph_v4(gpa: Allocator, seed: u64, m: usize, n: u64, threads: usize) Allocator.Error!GraphSums {
    const nb = n_graph_batches(n);
    const t_count: u64 = threads;
    var partial: [MAX_THREADS]Allocator.Error!GraphSums = @splat(GraphSums{});
    var handles: [MAX_THREADS]?std.Thread = @splat(null);
    for (1..threads) |t| {
        // Small stacks: a thread's tape is on the heap; it needs its lane sums (under 1 KiB).
        handles[t] = std.Thread.spawn(.{ .stack_size = 1 << 20 }, graph_v4_worker, .{ gpa, seed, m, n, t * nb / t_count, (t + 1) * nb / t_count, &partial[t] }) catch null;
    }
    partial[0] = run_graph_batches(gpa, seed, m, n, 0, nb / t_count);
    for (1..threads) |t| {
        if (handles[t]) |h| {
            h.join();
        } else {
            partial[t] = run_graph_batches(gpa, seed, m, n, t * nb / t_count, (t + 1) * nb / t_count);
        }
    }
    var total: GraphSums = .{};
    for (partial[0..threads]) |sums| total = total.add(try sums);
    return total;
}

/// The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and grad
/// doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each thread
/// with a batch; the others allocate nothing, run_graph_batches). The ops and saved lanes come on
/// top; v0 and v1's node objects are counted as tape entries (docs/contract-graph.md).
pub fn tapes_bytes(level: Level, m: usize, n: u64, threads: usize) u64 {
    const lanes: u64 = if (level == .v3 or level == .v4) GRAPH_BATCH else 1;
    const tapes: u64 = if (level == .v4) @min(@as(u64, threads), n_graph_batches(n)) else 1;
    return tapes * lanes * @as(u64, n_nodes(m)) * 16;
}
