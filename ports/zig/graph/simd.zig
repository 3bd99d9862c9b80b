// Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
// Each var holds GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes,
// WIDTH at a time in @Vector(WIDTH, f64), and exp/log1p are libmvec's at the target's width
// (core/vmath).
const std = @import("std");
const Allocator = std.mem.Allocator;
const WIDTH = @import("../core/target.zig").WIDTH;
const ALIGN = @import("../core/vmath.zig").ALIGN;
const V = @import("../core/vmath.zig").V;
const ld = @import("../core/vmath.zig").ld;
const st = @import("../core/vmath.zig").st;
const exp_lanes = @import("../core/vmath.zig").exp_lanes;
const log1p_lanes = @import("../core/vmath.zig").log1p_lanes;
const exp_neg_abs_lanes = @import("../core/vmath.zig").exp_neg_abs_lanes;
const alloc_lanes = @import("../core/vmath.zig").alloc_lanes;
const GraphKind = @import("recipe.zig").GraphKind;
const N_INPUTS = @import("recipe.zig").N_INPUTS;
const GraphSums = @import("recipe.zig").GraphSums;
const n_nodes = @import("recipe.zig").n_nodes;
const graph_input = @import("recipe.zig").graph_input;
const NoError = @import("recipe.zig").NoError;
const record_ops = @import("recipe.zig").record_ops;
const GraphOp = @import("tape.zig").GraphOp;

// Lanes per var, a multiple of every vector width. A batch's vals and grads take
// n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB at 16 lanes and 10,000 ops. Why 16:
// docs/findings/graph-where-the-time-goes.md.
pub const GRAPH_BATCH = 16;
comptime {
    std.debug.assert(GRAPH_BATCH % WIDTH == 0);
    std.debug.assert(GRAPH_BATCH * @sizeOf(f64) % ALIGN == 0); // so every var's lanes start on a cache line
}

/// A graph var's lanes, on a cache line.
const GraphLanes = [GRAPH_BATCH]f64;
const GraphLanesPtr = *align(ALIGN) GraphLanes;

// max2 and sigmoid_e on WIDTH lanes, for the lane loops below (the Codon program does the
// same in explicit vectors, graph/lanes.codon).

fn max2_lanes(a: V, b: V) V {
    return @select(f64, b > a, b, a);
}

fn sigmoid_e_lanes(p: V, e: V) V {
    const one: V = @splat(1.0);
    return @select(f64, p >= @as(V, @splat(0.0)), one / (one + e), e / (one + e));
}

const GraphBatchTape = struct {
    val: []align(ALIGN) f64, // var i's lanes at [i * GRAPH_BATCH, (i + 1) * GRAPH_BATCH)
    grad: []align(ALIGN) f64,
    ops: []GraphOp,
    saved: []align(ALIGN) f64, // each SOFTPLUS's exp(-|a|) lanes, at its slot
    n_vars: usize = 0,
    n_ops: usize = 0,
    n_saved: usize = 0,

    fn init(gpa: Allocator, m: usize) Allocator.Error!GraphBatchTape {
        const val = try alloc_lanes(gpa, n_nodes(m) * GRAPH_BATCH);
        errdefer gpa.free(val);
        const grad = try alloc_lanes(gpa, n_nodes(m) * GRAPH_BATCH);
        errdefer gpa.free(grad);
        const ops = try gpa.alloc(GraphOp, m);
        errdefer gpa.free(ops);
        const saved = try alloc_lanes(gpa, (m / 4 + 1) * GRAPH_BATCH);
        return .{ .val = val, .grad = grad, .ops = ops, .saved = saved };
    }

    fn deinit(self: *GraphBatchTape, gpa: Allocator) void {
        gpa.free(self.val);
        gpa.free(self.grad);
        gpa.free(self.ops);
        gpa.free(self.saved);
    }

    fn reset(self: *GraphBatchTape) void {
        self.n_vars = 0;
        self.n_ops = 0;
        self.n_saved = 0;
    }

    pub fn size(self: *const GraphBatchTape) usize {
        return self.n_vars;
    }

    fn vals(self: *const GraphBatchTape, i: usize) GraphLanesPtr {
        return @alignCast(self.val[i * GRAPH_BATCH ..][0..GRAPH_BATCH]);
    }

    fn grads(self: *const GraphBatchTape, i: usize) GraphLanesPtr {
        return @alignCast(self.grad[i * GRAPH_BATCH ..][0..GRAPH_BATCH]);
    }

    fn saved_lanes(self: *const GraphBatchTape, slot: usize) GraphLanesPtr {
        return @alignCast(self.saved[slot * GRAPH_BATCH ..][0..GRAPH_BATCH]);
    }

    /// A new var; the caller fills its lanes. Returns its id.
    fn leaf(self: *GraphBatchTape) usize {
        self.n_vars += 1;
        return self.n_vars - 1;
    }

    /// Record op `kind` on inputs a..d; returns its (first) output's id, for the caller to fill.
    fn push(self: *GraphBatchTape, kind: GraphKind, a: usize, b: usize, c: usize, d: usize) usize {
        const out = self.leaf();
        self.ops[self.n_ops] = .{ .kind = kind, .a = @intCast(a), .b = @intCast(b), .c = @intCast(c), .d = @intCast(d), .out = @intCast(out) };
        self.n_ops += 1;
        return out;
    }

    pub fn push_softplus(self: *GraphBatchTape, a: usize) NoError!void {
        const slot = self.n_saved;
        self.n_saved += 1;
        const out = self.push(.softplus, a, slot, 0, 0);
        const p = self.vals(a);
        const e = self.saved_lanes(slot);
        const o = self.vals(out);
        exp_neg_abs_lanes(GRAPH_BATCH, p, e);
        log1p_lanes(GRAPH_BATCH, e, o);
        const zero: V = @splat(0.0);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) { // softplus_e, lane-wise
            const pj = ld(p, j);
            st(o, j, @select(f64, pj > zero, pj + ld(o, j), ld(o, j)));
        }
    }

    pub fn push_sum4(self: *GraphBatchTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
        const o = self.vals(self.push(.sum4, a, b, c, d));
        const va = self.vals(a);
        const vb = self.vals(b);
        const vc = self.vals(c);
        const vd = self.vals(d);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) st(o, j, ((ld(va, j) + ld(vb, j)) + ld(vc, j)) + ld(vd, j));
    }

    pub fn push_prod(self: *GraphBatchTape, a: usize, b: usize) NoError!void {
        const o = self.vals(self.push(.prod, a, b, 0, 0));
        const va = self.vals(a);
        const vb = self.vals(b);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) st(o, j, ld(va, j) * ld(vb, j));
    }

    pub fn push_softmax4(self: *GraphBatchTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
        const out = self.push(.softmax4, a, b, c, d);
        _ = self.leaf();
        _ = self.leaf();
        _ = self.leaf();
        const o0 = self.vals(out);
        const o1 = self.vals(out + 1);
        const o2 = self.vals(out + 2);
        const o3 = self.vals(out + 3);
        const va = self.vals(a);
        const vb = self.vals(b);
        const vc = self.vals(c);
        const vd = self.vals(d);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) {
            const a_j = ld(va, j);
            const b_j = ld(vb, j);
            const c_j = ld(vc, j);
            const d_j = ld(vd, j);
            const m = max2_lanes(max2_lanes(a_j, b_j), max2_lanes(c_j, d_j));
            st(o0, j, a_j - m);
            st(o1, j, b_j - m);
            st(o2, j, c_j - m);
            st(o3, j, d_j - m);
        }
        // The four outputs are consecutive vars: their 4 * GRAPH_BATCH lanes take one exp call.
        const all: *align(ALIGN) [4 * GRAPH_BATCH]f64 = @alignCast(self.val[out * GRAPH_BATCH ..][0 .. 4 * GRAPH_BATCH]);
        exp_lanes(4 * GRAPH_BATCH, all, all);
        j = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) {
            const e0 = ld(o0, j);
            const e1 = ld(o1, j);
            const e2 = ld(o2, j);
            const e3 = ld(o3, j);
            const total = ((e0 + e1) + e2) + e3;
            st(o0, j, e0 / total);
            st(o1, j, e1 / total);
            st(o2, j, e2 / total);
            st(o3, j, e3 / total);
        }
    }

    /// Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3).
    fn backward(self: *GraphBatchTape) void {
        @memset(self.grad[0 .. self.n_vars * GRAPH_BATCH], 1.0);
        var k = self.n_ops;
        while (k > 0) {
            k -= 1;
            const op = self.ops[k];
            const g = self.grads(op.out);
            const ga = self.grads(op.a);
            const va = self.vals(op.a);
            var j: usize = 0;
            switch (op.kind) {
                .softplus => {
                    const e = self.saved_lanes(op.b);
                    while (j < GRAPH_BATCH) : (j += WIDTH) st(ga, j, ld(ga, j) + sigmoid_e_lanes(ld(va, j), ld(e, j)) * ld(g, j));
                },
                .sum4 => for ([_]usize{ op.a, op.b, op.c, op.d }) |q| {
                    const gq = self.grads(q);
                    j = 0;
                    while (j < GRAPH_BATCH) : (j += WIDTH) st(gq, j, ld(gq, j) + ld(g, j));
                },
                .prod => {
                    const gb = self.grads(op.b);
                    const vb = self.vals(op.b);
                    while (j < GRAPH_BATCH) : (j += WIDTH) st(ga, j, ld(ga, j) + ld(vb, j) * ld(g, j));
                    j = 0;
                    while (j < GRAPH_BATCH) : (j += WIDTH) st(gb, j, ld(gb, j) + ld(va, j) * ld(g, j));
                },
                .softmax4 => self.softmax4_backward(op),
                .leaf => unreachable, // no op has it
            }
        }
    }

    fn softmax4_backward(self: *GraphBatchTape, op: GraphOp) void {
        const o0 = self.vals(op.out);
        const o1 = self.vals(op.out + 1);
        const o2 = self.vals(op.out + 2);
        const o3 = self.vals(op.out + 3);
        const g0 = self.grads(op.out);
        const g1 = self.grads(op.out + 1);
        const g2 = self.grads(op.out + 2);
        const g3 = self.grads(op.out + 3);
        const ga = self.grads(op.a);
        const gb = self.grads(op.b);
        const gc = self.grads(op.c);
        const gd = self.grads(op.d);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) {
            const avg = ((ld(o0, j) * ld(g0, j) + ld(o1, j) * ld(g1, j)) + ld(o2, j) * ld(g2, j)) + ld(o3, j) * ld(g3, j);
            st(ga, j, ld(ga, j) + ld(o0, j) * (ld(g0, j) - avg));
            st(gb, j, ld(gb, j) + ld(o1, j) * (ld(g1, j) - avg));
            st(gc, j, ld(gc, j) + ld(o2, j) * (ld(g2, j) - avg));
            st(gd, j, ld(gd, j) + ld(o3, j) * (ld(g3, j) - avg));
        }
    }
};

/// Samples first .. first+lanes-1's inputs into the 100 input vars; unused lanes get 0.
fn fill_graph_inputs(tape: *GraphBatchTape, seed: u64, first: u64, lanes: usize) void {
    tape.reset();
    for (0..N_INPUTS) |i| {
        const v = tape.vals(tape.leaf());
        for (v[0..lanes], 0..) |*vj, j| vj.* = graph_input(seed, first + j, i);
        @memset(v[lanes..], 0.0);
    }
}

/// Per-lane running checksums, so that a batch is added with vector adds.
const GraphLaneSums = struct {
    loss: GraphLanes align(ALIGN) = @splat(0.0),
    grad_in: GraphLanes align(ALIGN) = @splat(0.0),
    grad_all: GraphLanes align(ALIGN) = @splat(0.0),

    /// Each lane's sample checksums (G3, nodes in index order), added for the used lanes.
    fn add(self: *GraphLaneSums, tape: *const GraphBatchTape, lanes: usize) void {
        var loss: GraphLanes align(ALIGN) = @splat(0.0);
        var grad_in: GraphLanes align(ALIGN) = @splat(0.0);
        var grad_all: GraphLanes align(ALIGN) = @splat(0.0);
        for (0..tape.n_vars) |i| {
            const v = tape.vals(i);
            const g = tape.grads(i);
            var j: usize = 0;
            while (j < GRAPH_BATCH) : (j += WIDTH) {
                st(&loss, j, ld(&loss, j) + ld(v, j));
                st(&grad_all, j, ld(&grad_all, j) + ld(g, j));
            }
        }
        for (0..N_INPUTS) |i| {
            const g = tape.grads(i);
            const weight: V = @splat(@floatFromInt(i + 1));
            var j: usize = 0;
            while (j < GRAPH_BATCH) : (j += WIDTH) st(&grad_in, j, ld(&grad_in, j) + weight * ld(g, j));
        }
        for (0..lanes) |j| {
            self.loss[j] += loss[j];
            self.grad_in[j] += grad_in[j];
            self.grad_all[j] += grad_all[j];
        }
    }

    /// The lanes added up in lane order.
    fn total(self: *const GraphLaneSums) GraphSums {
        var s: GraphSums = .{};
        for (self.loss, self.grad_in, self.grad_all) |loss, grad_in, grad_all| {
            s = s.add(.{ .loss = loss, .grad_in = grad_in, .grad_all = grad_all });
        }
        return s;
    }
};

pub fn n_graph_batches(n: u64) u64 {
    return (n + GRAPH_BATCH - 1) / GRAPH_BATCH;
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape. No caller passes an
/// empty range (v4's team has at most one thread a batch: core/threads); one would allocate nothing.
pub fn run_graph_batches(gpa: Allocator, seed: u64, m: usize, n: u64, first_batch: u64, end_batch: u64) Allocator.Error!GraphSums {
    if (first_batch >= end_batch) return .{};
    var tape = try GraphBatchTape.init(gpa, m);
    defer tape.deinit(gpa);
    var acc: GraphLaneSums = .{};
    var batch = first_batch;
    while (batch < end_batch) : (batch += 1) {
        const first = batch * GRAPH_BATCH;
        const lanes: usize = @intCast(@min(GRAPH_BATCH, n - first));
        fill_graph_inputs(&tape, seed, first, lanes);
        record_ops(&tape, m) catch |err| switch (err) {};
        tape.backward();
        acc.add(&tape, lanes);
    }
    return acc.total();
}

pub fn run_graph_v3(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    return run_graph_batches(gpa, seed, m, n, 0, n_graph_batches(n));
}
