// The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
// level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
// scalar forward math of an op, and the per-sample checksums.
const draw = @import("../core/rng.zig").draw;
const unit = @import("../core/rng.zig").unit;
const expf64 = @import("../core/ops.zig").expf64;

/// The graph workload's op kinds, defined here once for every graph level (its own type keeps
/// them apart from the softplus workload's Kind). Op k has kind k % 4, in this order (softplus,
/// sum4, prod, softmax4); a node no op made (an input) is a leaf.
pub const GraphKind = enum(i8) { leaf = -1, softplus = 0, sum4 = 1, prod = 2, softmax4 = 3 };

pub const N_INPUTS: usize = 100;

/// The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3).
pub const GraphSums = struct {
    loss: f64 = 0.0,
    grad_in: f64 = 0.0,
    grad_all: f64 = 0.0,

    pub fn add(self: GraphSums, o: GraphSums) GraphSums {
        return .{ .loss = self.loss + o.loss, .grad_in = self.grad_in + o.grad_in, .grad_all = self.grad_all + o.grad_all };
    }
};

/// Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4.
pub fn n_nodes(m: usize) usize {
    return N_INPUTS + m + 3 * (m / 4);
}

/// Input i of sample s, in [-1, 1) (G1).
pub fn graph_input(seed: u64, s: u64, i: usize) f64 {
    return 2.0 * unit(draw(seed, N_INPUTS * s + @as(u64, i) + 1)) - 1.0;
}

/// The error set of the tapes' pushes: empty, their arrays are allocated once, before recording.
pub const NoError = error{};

/// Op of kind `kind` onto g, its inputs counted back from g's size (G2); inline, so that a
/// kind known where it is called takes no branch.
inline fn record_op(g: anytype, kind: GraphKind) !void {
    const n = g.size();
    switch (kind) {
        .softplus => try g.push_softplus(n - 10),
        .sum4 => try g.push_sum4(n - 30, n - 25, n - 20, n - 15),
        .prod => try g.push_prod(n - 20, n - 10),
        .softmax4 => try g.push_softmax4(n - 4, n - 3, n - 2, n - 1),
        .leaf => unreachable,
    }
}

/// The M ops of G2, in order, onto g: any level's graph builder, which has size() (the nodes so
/// far) and push_softplus, push_sum4, push_prod, push_softmax4 taking node ids. Fails as its
/// pushes do: with error.OutOfMemory for the node graph of v0/v1, never for the tapes (NoError).
/// Op k's kind is k % 4, so the ops go on a block of the four kinds at a time, then the first
/// M % 4 of one more block: no branch on the kind per op.
pub fn record_ops(g: anytype, m: usize) !void {
    for (0..m / 4) |_| {
        try record_op(g, .softplus);
        try record_op(g, .sum4);
        try record_op(g, .prod);
        try record_op(g, .softmax4);
    }
    for (0..m % 4) |k| try record_op(g, @as(GraphKind, @fromBackingInt(@intCast(k))));
}

/// Python's max(a, b): b if b > a, else a.
fn max2(a: f64, b: f64) f64 {
    return if (b > a) b else a;
}

/// out_j = exp(in_j - max) / (((e_0 + e_1) + e_2) + e_3).
pub fn softmax4(a: f64, b: f64, c: f64, d: f64) [4]f64 {
    const m = max2(max2(a, b), max2(c, d));
    const e0 = expf64(a - m);
    const e1 = expf64(b - m);
    const e2 = expf64(c - m);
    const e3 = expf64(d - m);
    const total = ((e0 + e1) + e2) + e3;
    return .{ e0 / total, e1 / total, e2 / total, e3 / total };
}

/// SOFTMAX4's backward term: sum of o_j * g[out_j], left to right.
pub fn softmax4_avg(o0: f64, o1: f64, o2: f64, o3: f64, g0: f64, g1: f64, g2: f64, g3: f64) f64 {
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3;
}
