// Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
// per std.Thread (core/threads, as softplus v4; at most one a batch), each with its own
// batch tape and lane sums, added in thread order.
const std = @import("std");
const Allocator = std.mem.Allocator;
const in_threads = @import("../core/threads.zig").in_threads;
const team_size = @import("../core/threads.zig").team_size;
const GraphSums = @import("recipe.zig").GraphSums;
const n_nodes = @import("recipe.zig").n_nodes;
const GRAPH_BATCH = @import("simd.zig").GRAPH_BATCH;
const n_graph_batches = @import("simd.zig").n_graph_batches;
const run_graph_batches = @import("simd.zig").run_graph_batches;
const MAX_THREADS = @import("../cli/args.zig").MAX_THREADS;
const Level = @import("../cli/args.zig").Level;

/// What a graph v4 range needs besides its batches (the Codon program's lambda captures them).
const GraphV4Work = struct {
    gpa: Allocator,
    seed: u64,
    m: usize,
    n: u64,

    fn run(self: GraphV4Work, first_batch: u64, end_batch: u64) Allocator.Error!GraphSums {
        return run_graph_batches(self.gpa, self.seed, self.m, self.n, first_batch, end_batch);
    }
};

pub fn run_graph_v4(gpa: Allocator, seed: u64, m: usize, n: u64, threads: usize) Allocator.Error!GraphSums {
    var partial: [MAX_THREADS]Allocator.Error!GraphSums = @splat(GraphSums{});
    // Small stacks: a thread's tape is on the heap; it needs its lane sums (under 1 KiB).
    const nb = n_graph_batches(n);
    const team = team_size(threads, nb);
    in_threads(Allocator.Error!GraphSums, GraphV4Work, GraphV4Work.run, .{ .gpa = gpa, .seed = seed, .m = m, .n = n }, nb, partial[0..team], 1 << 20);
    var total: GraphSums = .{};
    for (partial[0..team]) |sums| total = total.add(try sums);
    return total;
}

/// The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and grad
/// doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each thread
/// of the team, team_size). The ops and saved lanes come on top; v0 and v1's node objects are
/// counted as tape entries (docs/contract-graph.md).
pub fn tapes_bytes(level: Level, m: usize, n: u64, threads: usize) u64 {
    const lanes: u64 = if (level == .v3 or level == .v4) GRAPH_BATCH else 1;
    const tapes: u64 = if (level == .v4) team_size(threads, n_graph_batches(n)) else 1;
    return tapes * lanes * @as(u64, n_nodes(m)) * 16;
}
