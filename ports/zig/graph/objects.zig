// Graph level v0 (objects): every node a fresh heap object per sample (from `gpa`, the C
// library's malloc/free, as the softplus v0; destroyed when the next sample starts), linked
// to its inputs by pointers; backward walks the nodes in reverse creation order.
const std = @import("std");
const Allocator = std.mem.Allocator;
const N_INPUTS = @import("recipe.zig").N_INPUTS;
const GraphSums = @import("recipe.zig").GraphSums;
const graph_input = @import("recipe.zig").graph_input;
const record_ops = @import("recipe.zig").record_ops;
const NodeGraph = @import("nodes.zig").NodeGraph;

/// Sample s's forward pass: its inputs, then the M ops (onto new nodes, or a pool's, v1).
pub fn record_nodes(g: anytype, seed: u64, s: u64, m: usize) Allocator.Error!void {
    g.reset();
    for (0..N_INPUTS) |i| try g.leaf(graph_input(seed, s, i));
    try record_ops(g, m);
}

pub fn run_graph_v0(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    var g = NodeGraph(false).init(gpa);
    defer g.deinit();
    var total: GraphSums = .{};
    var s: u64 = 0;
    while (s < n) : (s += 1) {
        try record_nodes(&g, seed, s, m);
        g.backward();
        total = total.add(g.sums());
    }
    return total;
}
