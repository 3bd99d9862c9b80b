// Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
// and relinked every iteration, so the loop allocates nothing. Values are still
// recomputed on demand (the seed's v1).
const sample = @import("../core/rng.zig").sample;
const Sums = @import("../core/ops.zig").Sums;
const Kind = @import("nodes.zig").Kind;
const Node = @import("nodes.zig").Node;

const POOL_SIZE = 5; // x, y, s, p, f

/// The v0 graph's nodes from a fixed array made once and relinked every iteration.
const Pool = struct {
    nodes: [POOL_SIZE]Node = undefined,
    used: usize = 0,

    fn reset(self: *Pool) void {
        self.used = 0;
    }

    /// The next free node, remade as (kind, leaf_val, a, b).
    fn take(self: *Pool, kind: Kind, leaf_val: f64, a: ?*Node, b: ?*Node) *Node {
        const node = &self.nodes[self.used];
        self.used += 1;
        node.set(kind, leaf_val, a, b);
        return node;
    }
};

pub fn run_v1(seed: u64, n: u64) Sums {
    var pool: Pool = .{};
    var sum_f: f64 = 0.0;
    var sum_dx: f64 = 0.0;
    var sum_dy: f64 = 0.0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        const xy = sample(seed, i);
        pool.reset();
        const x = pool.take(.leaf, xy.x, null, null);
        const y = pool.take(.leaf, xy.y, null, null);
        const s = pool.take(.sum, 0.0, x, y);
        const p = pool.take(.prod, 0.0, s, x);
        const f = pool.take(.softplus, 0.0, p, null);
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad;
        sum_dy += y.grad;
    }
    return .{ .f = sum_f, .dx = sum_dx, .dy = sum_dy };
}
