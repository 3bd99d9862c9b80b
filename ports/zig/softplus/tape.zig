// Level v2 (tape), the seed's NaiveTape: contiguous fixed-size arrays of vars
// {val, grad} and ops {kind, input ids, output id}, addressed by index. Each op
// computes its result once when pushed; backward walks the ops in reverse.
const sample = @import("../core/rng.zig").sample;
const Sums = @import("../core/ops.zig").Sums;
const exp_neg_abs = @import("../core/ops.zig").exp_neg_abs;
const softplus_e = @import("../core/ops.zig").softplus_e;
const sigmoid_e = @import("../core/ops.zig").sigmoid_e;
const Kind = @import("nodes.zig").Kind;

pub const MAX_VARS = 6; // x, y, s, p, exp(-|p|), f
pub const MAX_OPS = 3; // sum, prod, softplus

const Var = struct { val: f64, grad: f64 };

pub const Op = struct {
    kind: Kind,
    a: usize, // input ids; softplus's b is the var that saves exp(-|a|)
    b: usize,
    out: usize, // output id
};

/// The seed's NaiveTape: fixed arrays of vars and ops addressed by index; each op computes its
/// result once when pushed; backward walks the ops in reverse.
const Tape = struct {
    vars: [MAX_VARS]Var = undefined,
    ops: [MAX_OPS]Op = undefined,
    n_vars: usize = 0,
    n_ops: usize = 0,

    fn reset(self: *Tape) void {
        self.n_vars = 0;
        self.n_ops = 0;
    }

    fn val(self: *const Tape, i: usize) f64 {
        return self.vars[i].val;
    }

    fn grad(self: *const Tape, i: usize) f64 {
        return self.vars[i].grad;
    }

    fn add_grad(self: *Tape, i: usize, g: f64) void {
        self.vars[i].grad += g;
    }

    /// A new input var; returns its id.
    fn leaf(self: *Tape, v: f64) usize {
        self.vars[self.n_vars] = .{ .val = v, .grad = 0.0 };
        self.n_vars += 1;
        return self.n_vars - 1;
    }

    /// Record op `kind` on inputs a, b with result `v`; returns the result's id.
    fn push(self: *Tape, kind: Kind, a: usize, b: usize, v: f64) usize {
        const out = self.leaf(v);
        self.ops[self.n_ops] = .{ .kind = kind, .a = a, .b = b, .out = out };
        self.n_ops += 1;
        return out;
    }

    fn push_sum(self: *Tape, a: usize, b: usize) usize {
        return self.push(.sum, a, b, self.val(a) + self.val(b));
    }

    fn push_prod(self: *Tape, a: usize, b: usize) usize {
        return self.push(.prod, a, b, self.val(a) * self.val(b));
    }

    fn push_softplus(self: *Tape, a: usize) usize {
        // exp(-|p|) is saved in a var of its own, so that backward reuses it (each result
        // computed once); the op names it as its second input.
        const p = self.val(a);
        const e = self.leaf(exp_neg_abs(p));
        return self.push(.softplus, a, e, softplus_e(p, self.val(e)));
    }

    /// Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule.
    inline fn backward(self: *Tape, out: usize) void {
        for (self.vars[0..self.n_vars]) |*v| v.grad = 0.0;
        self.add_grad(out, 1.0);
        var k = self.n_ops;
        while (k > 0) {
            k -= 1;
            const op = self.ops[k];
            const g = self.grad(op.out);
            switch (op.kind) {
                .sum => {
                    self.add_grad(op.a, g);
                    self.add_grad(op.b, g);
                },
                .prod => {
                    self.add_grad(op.a, self.val(op.b) * g);
                    self.add_grad(op.b, self.val(op.a) * g);
                },
                .softplus => self.add_grad(op.a, sigmoid_e(self.val(op.a), self.val(op.b)) * g),
                .leaf => {},
            }
        }
    }
};

const Ids = struct { x: usize, y: usize, f: usize };

/// One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f.
inline fn record(tape: *Tape, xv: f64, yv: f64) Ids {
    tape.reset();
    const x = tape.leaf(xv);
    const y = tape.leaf(yv);
    const s = tape.push_sum(x, y);
    const p = tape.push_prod(s, x);
    const f = tape.push_softplus(p);
    return .{ .x = x, .y = y, .f = f };
}

pub fn run_v2(seed: u64, n: u64) Sums {
    var tape: Tape = .{};
    var sum_f: f64 = 0.0;
    var sum_dx: f64 = 0.0;
    var sum_dy: f64 = 0.0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        const xy = sample(seed, i);
        const ids = record(&tape, xy.x, xy.y);
        tape.backward(ids.f);
        sum_f += tape.val(ids.f);
        sum_dx += tape.grad(ids.x);
        sum_dy += tape.grad(ids.y);
    }
    return .{ .f = sum_f, .dx = sum_dx, .dy = sum_dy };
}

pub const Point3 = struct { f: f64, dfdx: f64, dfdy: f64 };

/// f, df/dx, df/dy at one point, through the v2 tape (for --eval).
pub fn eval_point(xv: f64, yv: f64) Point3 {
    var tape: Tape = .{};
    const ids = record(&tape, xv, yv);
    tape.backward(ids.f);
    return .{ .f = tape.val(ids.f), .dfdx = tape.grad(ids.x), .dfdy = tape.grad(ids.y) };
}
