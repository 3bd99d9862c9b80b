// Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
// lanes (structure of arrays), each op is a loop over its lanes, WIDTH at a time in
// @Vector(WIDTH, f64), and exp/log1p are glibc's vector versions. The ops and their
// order are v2's.
const std = @import("std");
const WIDTH = @import("../core/target.zig").WIDTH;
const GAMMA = @import("../core/rng.zig").GAMMA;
const MIX1 = @import("../core/rng.zig").MIX1;
const MIX2 = @import("../core/rng.zig").MIX2;
const UNIT = @import("../core/rng.zig").UNIT;
const sample = @import("../core/rng.zig").sample;
const Sums = @import("../core/ops.zig").Sums;
const ALIGN = @import("../core/vmath.zig").ALIGN;
const V = @import("../core/vmath.zig").V;
const ld = @import("../core/vmath.zig").ld;
const st = @import("../core/vmath.zig").st;
const exp_neg_abs_lanes = @import("../core/vmath.zig").exp_neg_abs_lanes;
const log1p_lanes = @import("../core/vmath.zig").log1p_lanes;
const Kind = @import("nodes.zig").Kind;
const MAX_VARS = @import("tape.zig").MAX_VARS;
const MAX_OPS = @import("tape.zig").MAX_OPS;
const Op = @import("tape.zig").Op;

// Lanes per batch: 256 as in the Codon program.
// A multiple of every WIDTH.
pub const BATCH = 256;
comptime {
    std.debug.assert(BATCH % WIDTH == 0);
}
pub const Lanes = [BATCH]f64;

/// The v2 tape over BATCH samples: var i's lanes are val[i*BATCH ..][0..BATCH] (structure of
/// arrays); every op is a loop over all its lanes, exp and log1p through libmvec.
const BatchTape = struct {
    val: [MAX_VARS * BATCH]f64 align(ALIGN) = undefined,
    grad: [MAX_VARS * BATCH]f64 align(ALIGN) = undefined,
    ops: [MAX_OPS]Op = undefined,
    n_vars: usize = 0,
    n_ops: usize = 0,

    fn reset(self: *BatchTape) void {
        self.n_vars = 0;
        self.n_ops = 0;
    }

    fn vals(self: *BatchTape, i: usize) *Lanes {
        return self.val[i * BATCH ..][0..BATCH];
    }

    fn grads(self: *BatchTape, i: usize) *Lanes {
        return self.grad[i * BATCH ..][0..BATCH];
    }

    /// A new var; the caller fills its lanes. Returns its id.
    fn leaf(self: *BatchTape) usize {
        self.n_vars += 1;
        return self.n_vars - 1;
    }

    /// Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill.
    fn push(self: *BatchTape, kind: Kind, a: usize, b: usize) usize {
        const out = self.leaf();
        self.ops[self.n_ops] = .{ .kind = kind, .a = a, .b = b, .out = out };
        self.n_ops += 1;
        return out;
    }

    fn push_sum(self: *BatchTape, a: usize, b: usize) usize {
        const out = self.push(.sum, a, b);
        const o = self.vals(out);
        const u = self.vals(a);
        const v = self.vals(b);
        var j: usize = 0;
        while (j < BATCH) : (j += WIDTH) st(o, j, ld(u, j) + ld(v, j));
        return out;
    }

    fn push_prod(self: *BatchTape, a: usize, b: usize) usize {
        const out = self.push(.prod, a, b);
        const o = self.vals(out);
        const u = self.vals(a);
        const v = self.vals(b);
        var j: usize = 0;
        while (j < BATCH) : (j += WIDTH) st(o, j, ld(u, j) * ld(v, j));
        return out;
    }

    fn push_softplus(self: *BatchTape, a: usize) usize {
        // As in v2, exp(-|p|) gets a var of its own, named as the op's second input.
        const e = self.leaf();
        const p = self.vals(a);
        const ve = self.vals(e);
        exp_neg_abs_lanes(BATCH, p, ve);
        const out = self.push(.softplus, a, e);
        const o = self.vals(out);
        log1p_lanes(BATCH, ve, o);
        const zero: V = @splat(0.0);
        var j: usize = 0;
        while (j < BATCH) : (j += WIDTH) { // softplus_e, lane-wise
            const pj = ld(p, j);
            st(o, j, @select(f64, pj > zero, pj + ld(o, j), ld(o, j)));
        }
        return out;
    }

    /// Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule.
    fn backward(self: *BatchTape, out: usize) void {
        @memset(self.grad[0 .. self.n_vars * BATCH], 0.0);
        @memset(self.grads(out), 1.0);
        const zero: V = @splat(0.0);
        const one: V = @splat(1.0);
        var k = self.n_ops;
        while (k > 0) {
            k -= 1;
            const op = self.ops[k];
            const g = self.grads(op.out);
            const ga = self.grads(op.a);
            const gb = self.grads(op.b);
            const va = self.vals(op.a);
            const vb = self.vals(op.b);
            var j: usize = 0;
            switch (op.kind) {
                .sum => while (j < BATCH) : (j += WIDTH) {
                    st(ga, j, ld(ga, j) + ld(g, j));
                    st(gb, j, ld(gb, j) + ld(g, j));
                },
                .prod => while (j < BATCH) : (j += WIDTH) {
                    st(ga, j, ld(ga, j) + ld(vb, j) * ld(g, j));
                    st(gb, j, ld(gb, j) + ld(va, j) * ld(g, j));
                },
                .softplus => while (j < BATCH) : (j += WIDTH) { // b holds exp(-|a|)
                    const p = ld(va, j);
                    const e = ld(vb, j);
                    const sig = @select(f64, p >= zero, one / (one + e), e / (one + e)); // sigmoid_e
                    st(ga, j, ld(ga, j) + sig * ld(g, j));
                },
                .leaf => {},
            }
        }
    }
};

// The rng of contract §1 on WIDTH samples at once: LLVM leaves a loop over `sample` scalar (gcc
// vectorizes the C port's; the Codon program writes it in explicit vectors, core/rng.signed_units),
// so it is written WIDTH samples at a time here. The same integer arithmetic and the same exact
// conversions, so the same bits as `sample`.
const U = @Vector(WIDTH, u64);

/// splitmix64 of each lane.
fn splitmix64_lanes(z0: U) U {
    var z = z0;
    z = (z ^ (z >> @splat(30))) *% @as(U, @splat(MIX1));
    z = (z ^ (z >> @splat(27))) *% @as(U, @splat(MIX2));
    return z ^ (z >> @splat(31));
}

/// draw(seed, k) of each lane's k.
fn draw_lanes(seed: u64, k: U) U {
    return splitmix64_lanes(@as(U, @splat(seed)) +% k *% @as(U, @splat(GAMMA)));
}

/// unit(z) of each lane (the top 53 bits fit an i64, whose conversion is exact).
fn unit_lanes(z: U) V {
    const top: @Vector(WIDTH, i64) = @intCast(z >> @splat(11));
    return @as(V, @floatFromInt(top)) * @as(V, @splat(UNIT));
}

const PointLanes = struct { x: V, y: V };

/// Samples i .. i+WIDTH-1, sample i+k in lane k.
fn sample_lanes(seed: u64, i: u64) PointLanes {
    const two_i = (@as(U, @splat(i)) + std.simd.iota(u64, WIDTH)) * @as(U, @splat(2));
    const two: V = @splat(2.0);
    const one: V = @splat(1.0);
    const x = two * unit_lanes(draw_lanes(seed, two_i + @as(U, @splat(1)))) - one;
    const y = two * unit_lanes(draw_lanes(seed, two_i + @as(U, @splat(2)))) - one;
    return .{ .x = x, .y = y };
}

/// Samples first .. first+lanes-1 into the lanes of x and y; unused lanes get 0.
pub fn fill_inputs(x: *Lanes, y: *Lanes, seed: u64, first: u64, lanes: usize) void {
    if (lanes == BATCH) { // a full batch: whole vectors
        var j: usize = 0;
        while (j < BATCH) : (j += WIDTH) {
            const xy = sample_lanes(seed, first + j);
            st(x, j, xy.x);
            st(y, j, xy.y);
        }
        return;
    }
    for (x[0..lanes], y[0..lanes], 0..) |*xj, *yj, j| { // the last, partial batch
        const xy = sample(seed, first + j);
        xj.* = xy.x;
        yj.* = xy.y;
    }
    @memset(x[lanes..], 0.0);
    @memset(y[lanes..], 0.0);
}

/// Per-lane running sums, so that accumulating a batch is a vector add.
pub const LaneSums = struct {
    f: Lanes align(ALIGN) = @splat(0.0),
    dx: Lanes align(ALIGN) = @splat(0.0),
    dy: Lanes align(ALIGN) = @splat(0.0),

    pub fn add(self: *LaneSums, f: *const Lanes, dx: *const Lanes, dy: *const Lanes, lanes: usize) void {
        if (lanes == BATCH) { // a full batch: whole vectors
            var j: usize = 0;
            while (j < BATCH) : (j += WIDTH) {
                st(&self.f, j, ld(&self.f, j) + ld(f, j));
                st(&self.dx, j, ld(&self.dx, j) + ld(dx, j));
                st(&self.dy, j, ld(&self.dy, j) + ld(dy, j));
            }
        } else { // the last, partial batch: its unused lanes are left out
            for (0..lanes) |j| {
                self.f[j] += f[j];
                self.dx[j] += dx[j];
                self.dy[j] += dy[j];
            }
        }
    }

    /// The lanes added up in lane order.
    pub fn total(self: *const LaneSums) Sums {
        var s: Sums = .{};
        for (self.f, self.dx, self.dy) |f, dx, dy| s = s.add(.{ .f = f, .dx = dx, .dy = dy });
        return s;
    }
};

pub fn n_batches(n: u64) u64 {
    return (n + BATCH - 1) / BATCH;
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape.
pub fn run_batches(seed: u64, n: u64, first_batch: u64, end_batch: u64) Sums {
    var tape: BatchTape = .{};
    var acc: LaneSums = .{};
    var batch = first_batch;
    while (batch < end_batch) : (batch += 1) {
        const first = batch * BATCH;
        const lanes: usize = @intCast(@min(BATCH, n - first));
        tape.reset();
        const x = tape.leaf();
        const y = tape.leaf();
        fill_inputs(tape.vals(x), tape.vals(y), seed, first, lanes);
        const s = tape.push_sum(x, y);
        const p = tape.push_prod(s, x);
        const f = tape.push_softplus(p);
        tape.backward(f);
        acc.add(tape.vals(f), tape.grads(x), tape.grads(y), lanes);
    }
    return acc.total();
}

pub fn run_v3(seed: u64, n: u64) Sums {
    return run_batches(seed, n, 0, n_batches(n));
}
