// Graph level v1 (pool): v0's node objects and links, but the nodes of the first sample
// are kept and remade for every later one, so the loop allocates nothing.
const std = @import("std");
const Allocator = std.mem.Allocator;
const GraphSums = @import("recipe.zig").GraphSums;
const NodeGraph = @import("nodes.zig").NodeGraph;
const record_nodes = @import("objects.zig").record_nodes;

pub fn run_graph_v1(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    var g = NodeGraph.init(gpa);
    defer g.deinit();
    var total: GraphSums = .{};
    var s: u64 = 0;
    while (s < n) : (s += 1) {
        try record_nodes(&g, seed, s, m, true);
        g.backward();
        total = total.add(g.sums());
    }
    return total;
}
