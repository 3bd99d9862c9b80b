// Graph level v1 (pool): v0's node objects and links, but from a pool of a sample's nodes
// made once, before the first sample, and remade for every sample, so the loop allocates
// nothing.
const std = @import("std");
const Allocator = std.mem.Allocator;
const GraphSums = @import("recipe.zig").GraphSums;
const n_nodes = @import("recipe.zig").n_nodes;
const NodeGraph = @import("nodes.zig").NodeGraph;
const record_nodes = @import("objects.zig").record_nodes;

pub fn run_graph_v1(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    var g = try NodeGraph(true).initPool(gpa, n_nodes(m));
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
