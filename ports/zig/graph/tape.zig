// Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
// every sample as a dynamic autograd does: contiguous arrays of vars {val, grad} and ops
// {kind, up to 4 input ids, first output id}, addressed by index; each result computed
// once when pushed; backward is an index loop over the ops in reverse.
const std = @import("std");
const Allocator = std.mem.Allocator;
const exp_neg_abs = @import("../core/ops.zig").exp_neg_abs;
const softplus_e = @import("../core/ops.zig").softplus_e;
const sigmoid_e = @import("../core/ops.zig").sigmoid_e;
const GraphKind = @import("recipe.zig").GraphKind;
const N_INPUTS = @import("recipe.zig").N_INPUTS;
const GraphSums = @import("recipe.zig").GraphSums;
const n_nodes = @import("recipe.zig").n_nodes;
const graph_input = @import("recipe.zig").graph_input;
const NoError = @import("recipe.zig").NoError;
const record_ops = @import("recipe.zig").record_ops;
const softmax4 = @import("recipe.zig").softmax4;
const softmax4_avg = @import("recipe.zig").softmax4_avg;

/// 24 bytes: ids in 32 bits, as every port keeps them (the largest tape, --ops 1,000,000, has
/// 1,750,100 vars); they widen to usize where they index.
pub const GraphOp = struct {
    kind: GraphKind,
    a: u32, // input ids; SOFTPLUS's b is its slot in `saved` (exp(-|a|))
    b: u32,
    c: u32,
    d: u32,
    out: u32, // the (first) output id; SOFTMAX4's four are out .. out+3
};
comptime {
    std.debug.assert(@sizeOf(GraphOp) == 24);
}

const GraphTape = struct {
    val: []f64,
    grad: []f64,
    ops: []GraphOp,
    saved: []f64, // each SOFTPLUS's exp(-|a|), kept for backward's sigmoid
    n_vars: usize = 0,
    n_ops: usize = 0,
    n_saved: usize = 0,

    fn init(gpa: Allocator, m: usize) Allocator.Error!GraphTape {
        const val = try gpa.alloc(f64, n_nodes(m));
        errdefer gpa.free(val);
        const grad = try gpa.alloc(f64, n_nodes(m));
        errdefer gpa.free(grad);
        const ops = try gpa.alloc(GraphOp, m);
        errdefer gpa.free(ops);
        const saved = try gpa.alloc(f64, m / 4 + 1);
        return .{ .val = val, .grad = grad, .ops = ops, .saved = saved };
    }

    fn deinit(self: *GraphTape, gpa: Allocator) void {
        gpa.free(self.val);
        gpa.free(self.grad);
        gpa.free(self.ops);
        gpa.free(self.saved);
    }

    fn reset(self: *GraphTape) void {
        self.n_vars = 0;
        self.n_ops = 0;
        self.n_saved = 0;
    }

    pub fn size(self: *const GraphTape) usize {
        return self.n_vars;
    }

    /// A new var holding v; returns its id.
    fn leaf(self: *GraphTape, v: f64) usize {
        self.val[self.n_vars] = v;
        self.n_vars += 1;
        return self.n_vars - 1;
    }

    /// Record op `kind` on inputs a..d with (first) result v; returns the result's id.
    fn push(self: *GraphTape, kind: GraphKind, a: usize, b: usize, c: usize, d: usize, v: f64) usize {
        const out = self.leaf(v);
        self.ops[self.n_ops] = .{ .kind = kind, .a = @intCast(a), .b = @intCast(b), .c = @intCast(c), .d = @intCast(d), .out = @intCast(out) };
        self.n_ops += 1;
        return out;
    }

    pub fn push_softplus(self: *GraphTape, a: usize) NoError!void {
        const p = self.val[a];
        const e = exp_neg_abs(p);
        const slot = self.n_saved;
        self.saved[slot] = e;
        self.n_saved += 1;
        _ = self.push(.softplus, a, slot, 0, 0, softplus_e(p, e));
    }

    pub fn push_sum4(self: *GraphTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
        const v = self.val;
        _ = self.push(.sum4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d]);
    }

    pub fn push_prod(self: *GraphTape, a: usize, b: usize) NoError!void {
        _ = self.push(.prod, a, b, 0, 0, self.val[a] * self.val[b]);
    }

    pub fn push_softmax4(self: *GraphTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
        const v = self.val;
        const o = softmax4(v[a], v[b], v[c], v[d]);
        _ = self.push(.softmax4, a, b, c, d, o[0]);
        _ = self.leaf(o[1]);
        _ = self.leaf(o[2]);
        _ = self.leaf(o[3]);
    }

    /// Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then each op's
    /// local rule, ops in reverse (G3).
    fn backward(self: *GraphTape) void {
        const v = self.val;
        const g = self.grad;
        @memset(g[0..self.n_vars], 1.0);
        var k = self.n_ops;
        while (k > 0) {
            k -= 1;
            const op = self.ops[k];
            const go = g[op.out];
            switch (op.kind) {
                .softplus => g[op.a] += sigmoid_e(v[op.a], self.saved[op.b]) * go,
                .sum4 => {
                    g[op.a] += go;
                    g[op.b] += go;
                    g[op.c] += go;
                    g[op.d] += go;
                },
                .prod => {
                    g[op.a] += v[op.b] * go;
                    g[op.b] += v[op.a] * go;
                },
                .softmax4 => {
                    const o = op.out;
                    const avg = softmax4_avg(v[o], v[o + 1], v[o + 2], v[o + 3], g[o], g[o + 1], g[o + 2], g[o + 3]);
                    g[op.a] += v[o] * (g[o] - avg);
                    g[op.b] += v[o + 1] * (g[o + 1] - avg);
                    g[op.c] += v[o + 2] * (g[o + 2] - avg);
                    g[op.d] += v[o + 3] * (g[o + 3] - avg);
                },
                .leaf => unreachable, // no op has it
            }
        }
    }

    /// This sample's loss, grad_in and grad_all (G3), each added in index order.
    fn sums(self: *const GraphTape) GraphSums {
        var loss: f64 = 0.0;
        var grad_in: f64 = 0.0;
        var grad_all: f64 = 0.0;
        for (self.val[0..self.n_vars]) |v| loss += v;
        for (self.grad[0..N_INPUTS], 0..) |g, i| grad_in += @as(f64, @floatFromInt(i + 1)) * g;
        for (self.grad[0..self.n_vars]) |g| grad_all += g;
        return .{ .loss = loss, .grad_in = grad_in, .grad_all = grad_all };
    }
};

/// Sample s's forward pass: its inputs, then the M ops.
fn record_graph(tape: *GraphTape, seed: u64, s: u64, m: usize) void {
    tape.reset();
    for (0..N_INPUTS) |i| _ = tape.leaf(graph_input(seed, s, i));
    record_ops(tape, m) catch |err| switch (err) {};
}

pub fn run_graph_v2(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    var tape = try GraphTape.init(gpa, m);
    defer tape.deinit(gpa);
    var total: GraphSums = .{};
    var s: u64 = 0;
    while (s < n) : (s += 1) {
        record_graph(&tape, seed, s, m);
        tape.backward();
        total = total.add(tape.sums());
    }
    return total;
}
