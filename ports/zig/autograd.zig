// autograd (Zig port): millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
// through a reverse-mode autograd, level by level (docs/contract.md). One file that mirrors the
// Codon program's modules (rng, ops, graph, naive, pool, tape, fused, vmath, simd, threads, cli,
// report, autograd) section by section, with the same names, so that the two can be diffed.
//
// Built with libc (-lc): the contract's numbers come from glibc's exp and log1p (Zig's own
// std.math/compiler_rt versions differ in last bits), v3/v4/fused-simd call glibc's libmvec,
// --eval reads numbers with strtod and numbers are printed by strfromd, as in the Codon program.
const std = @import("std");
const builtin = @import("builtin");
const Allocator = std.mem.Allocator;

// ---- libc -------------------------------------------------------------------------------------

// glibc's exp is reached through its _Float64 alias expf64 (the same function, same address):
// the name `exp` would bind to the copy in Zig's statically linked compiler_rt (the old musl
// exp, which differs from glibc's in the last bit for about 1 in 10 arguments here).
extern "c" fn expf64(x: f64) f64;
extern "c" fn log1p(x: f64) f64; // compiler_rt has none: this is glibc's
extern "c" fn strtod(text: [*:0]const u8, end: ?*[*:0]u8) f64;
extern "c" fn strfromd(buf: [*]u8, n: usize, format: [*:0]const u8, v: f64) c_int;

// glibc's libmvec (vector exp and log1p) is declared in vmath below, at the width of the target.

// ---- rng: the input stream of contract §1 -------------------------------------------------------

const GAMMA: u64 = 0x9E3779B97F4A7C15;
const MIX1: u64 = 0xBF58476D1CE4E5B9;
const MIX2: u64 = 0x94D049BB133111EB;
const UNIT: f64 = 1.0 / 9007199254740992.0; // 2^-53

/// The splitmix64 finalizer: a bijective scramble of one 64-bit word.
fn splitmix64(z0: u64) u64 {
    var z = z0;
    z = (z ^ (z >> 30)) *% MIX1;
    z = (z ^ (z >> 27)) *% MIX2;
    return z ^ (z >> 31);
}

/// The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`.
fn draw(seed: u64, k: u64) u64 {
    return splitmix64(seed +% k *% GAMMA);
}

/// The top 53 bits of z as a float in [0, 1) (through i64, as Codon's float(int(...)) does).
fn unit(z: u64) f64 {
    return @as(f64, @floatFromInt(@as(i64, @intCast(z >> 11)))) * UNIT;
}

const Point = struct { x: f64, y: f64 };

/// Sample i: (x_i, y_i), both in [-1, 1).
fn sample(seed: u64, i: u64) Point {
    const x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0;
    const y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0;
    return .{ .x = x, .y = y };
}

// ---- ops: the scalar math of contract §2 --------------------------------------------------------

/// The checksums of a run: plain sums over the samples, in index order.
const Sums = struct {
    f: f64 = 0.0,
    dx: f64 = 0.0,
    dy: f64 = 0.0,

    fn add(self: Sums, o: Sums) Sums {
        return .{ .f = self.f + o.f, .dx = self.dx + o.dx, .dy = self.dy + o.dy };
    }
};

// Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could overflow).
// The *_e forms take e ready-made, so that a caller computing both shares one exp.

fn exp_neg_abs(p: f64) f64 {
    return expf64(-@abs(p));
}

/// log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p)).
fn softplus_e(p: f64, e: f64) f64 {
    return if (p > 0.0) p + log1p(e) else log1p(e);
}

/// d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)).
fn sigmoid_e(p: f64, e: f64) f64 {
    return if (p >= 0.0) 1.0 / (1.0 + e) else e / (1.0 + e);
}

fn softplus(p: f64) f64 {
    return softplus_e(p, exp_neg_abs(p));
}

fn sigmoid(p: f64) f64 {
    return sigmoid_e(p, exp_neg_abs(p));
}

// ---- graph: the pointer-linked node of v0 and v1 ------------------------------------------------

const Kind = enum(u8) { leaf, sum, prod, softplus };

const Node = struct {
    kind: Kind,
    leaf_val: f64, // the value of a leaf; unused by the other kinds
    grad: f64,
    a: ?*Node, // inputs: none for a leaf, `a` only for softplus
    b: ?*Node,

    /// A fresh node on the heap (v0): one allocator call per node.
    fn create(gpa: Allocator, kind: Kind, leaf_val: f64, a: ?*Node, b: ?*Node) Allocator.Error!*Node {
        const node = try gpa.create(Node);
        node.set(kind, leaf_val, a, b);
        return node;
    }

    /// (Re)make this node: used by create and by the v1 pool.
    fn set(self: *Node, kind: Kind, leaf_val: f64, a: ?*Node, b: ?*Node) void {
        self.* = .{ .kind = kind, .leaf_val = leaf_val, .grad = 0.0, .a = a, .b = b };
    }

    /// The node's value, recomputed from the leaves on every call.
    fn value(self: *const Node) f64 {
        return switch (self.kind) {
            .sum => self.a.?.value() + self.b.?.value(),
            .prod => self.a.?.value() * self.b.?.value(),
            .softplus => softplus(self.a.?.value()),
            .leaf => self.leaf_val,
        };
    }

    /// Add g to this node's grad and recurse into its inputs (chain rule).
    fn backward(self: *Node, g: f64) void {
        self.grad += g;
        switch (self.kind) {
            .sum => {
                self.a.?.backward(g);
                self.b.?.backward(g);
            },
            .prod => {
                self.a.?.backward(self.b.?.value() * g);
                self.b.?.backward(self.a.?.value() * g);
            },
            .softplus => self.a.?.backward(sigmoid(self.a.?.value()) * g),
            .leaf => {},
        }
    }
};

// ---- naive: level v0 ----------------------------------------------------------------------------

/// Fresh heap nodes every iteration from `gpa` (the C library's malloc/free, as in the C port),
/// linked by pointers and freed at the end of the iteration.
fn run_v0(gpa: Allocator, seed: u64, n: u64) Allocator.Error!Sums {
    var sum_f: f64 = 0.0;
    var sum_dx: f64 = 0.0;
    var sum_dy: f64 = 0.0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        const xy = sample(seed, i);
        const x = try Node.create(gpa, .leaf, xy.x, null, null);
        defer gpa.destroy(x);
        const y = try Node.create(gpa, .leaf, xy.y, null, null);
        defer gpa.destroy(y);
        const s = try Node.create(gpa, .sum, 0.0, x, y);
        defer gpa.destroy(s);
        const p = try Node.create(gpa, .prod, 0.0, s, x);
        defer gpa.destroy(p);
        const f = try Node.create(gpa, .softplus, 0.0, p, null);
        defer gpa.destroy(f);
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad;
        sum_dy += y.grad;
    }
    return .{ .f = sum_f, .dx = sum_dx, .dy = sum_dy };
}

// ---- pool: level v1 -----------------------------------------------------------------------------

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

fn run_v1(seed: u64, n: u64) Sums {
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

// ---- tape: level v2 -----------------------------------------------------------------------------

const MAX_VARS = 6; // x, y, s, p, exp(-|p|), f
const MAX_OPS = 3; // sum, prod, softplus

const Var = struct { val: f64, grad: f64 };

const Op = struct {
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

fn run_v2(seed: u64, n: u64) Sums {
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

const Point3 = struct { f: f64, dfdx: f64, dfdy: f64 };

/// f, df/dx, df/dy at one point, through the v2 tape (for --eval).
fn eval_point(xv: f64, yv: f64) Point3 {
    var tape: Tape = .{};
    const ids = record(&tape, xv, yv);
    tape.backward(ids.f);
    return .{ .f = tape.val(ids.f), .dfdx = tape.grad(ids.x), .dfdy = tape.grad(ids.y) };
}

// ---- fused: the scalar baseline -----------------------------------------------------------------

/// Baseline `fused` (not a level): the same math written out by hand with no tape or graph.
fn run_fused(seed: u64, n: u64) Sums {
    var sum_f: f64 = 0.0;
    var sum_dx: f64 = 0.0;
    var sum_dy: f64 = 0.0;
    var i: u64 = 0;
    while (i < n) : (i += 1) {
        const xy = sample(seed, i);
        const x = xy.x;
        const s = x + xy.y;
        const p = s * x;
        const e = exp_neg_abs(p);
        const g = sigmoid_e(p, e);
        sum_f += softplus_e(p, e);
        sum_dx += s * g + x * g;
        sum_dy += x * g;
    }
    return .{ .f = sum_f, .dx = sum_dx, .dy = sum_dy };
}

// ---- vmath: vector exp and log1p for the batched levels ----------------------------------------

// glibc's libmvec at the widest vector the compile target has, chosen at comptime from its CPU
// features, as the Codon program chooses from its build target (core/vmath.codon): 8 doubles
// (AVX-512F, _ZGVeN8v_*), 4 (AVX2, _ZGVdN4v_*), 2 (SSE2, _ZGVbN2v_*), or 1, glibc's scalar
// exp/log1p, on a CPU that is not x86-64, as in the Codon program. Zig's @exp on a
// vector would lower to one scalar call per lane, so the variants are declared and called
// directly; only the one for this target is referenced, so a binary never holds a call its CPU
// lacks, and a scalar build does not link libmvec at all.
const x86_64 = builtin.cpu.arch == .x86_64;

fn target_has(comptime feature: std.Target.x86.Feature) bool {
    return x86_64 and std.Target.x86.featureSetHas(builtin.cpu.features, feature);
}

const WIDTH: usize = if (target_has(.avx512f)) 8 else if (target_has(.avx2)) 4 else if (target_has(.sse2)) 2 else 1;

const VECTOR_NAME = switch (WIDTH) {
    8 => "AVX-512F (libmvec _ZGVeN8v)",
    4 => "AVX2 (libmvec _ZGVdN4v)",
    2 => "SSE2 (libmvec _ZGVbN2v)",
    else => "scalar (glibc exp/log1p)",
};

/// The target's name as the Makefile's CPU= spells it (Zig's x86_64_v3 is x86-64-v3; for
/// -mcpu=native, the host CPU's model, e.g. znver4).
const TARGET = blk: {
    var name: [builtin.cpu.model.name.len]u8 = undefined;
    for (builtin.cpu.model.name, 0..) |c, k| name[k] = if (c == '_') '-' else c;
    const final = name;
    break :blk &final;
};

/// One line naming the build target and the vector width, as --version prints it.
const target_text = std.fmt.comptimePrint("target {s}, vector width {d} doubles: {s}", .{ TARGET, WIDTH, VECTOR_NAME });

const V = @Vector(WIDTH, f64); // one libmvec argument: a zmm, ymm or xmm register (or one f64)
extern "mvec" fn _ZGVeN8v_exp(x: @Vector(8, f64)) callconv(.c) @Vector(8, f64);
extern "mvec" fn _ZGVeN8v_log1p(x: @Vector(8, f64)) callconv(.c) @Vector(8, f64);
extern "mvec" fn _ZGVdN4v_exp(x: @Vector(4, f64)) callconv(.c) @Vector(4, f64);
extern "mvec" fn _ZGVdN4v_log1p(x: @Vector(4, f64)) callconv(.c) @Vector(4, f64);
extern "mvec" fn _ZGVbN2v_exp(x: @Vector(2, f64)) callconv(.c) @Vector(2, f64);
extern "mvec" fn _ZGVbN2v_log1p(x: @Vector(2, f64)) callconv(.c) @Vector(2, f64);

/// exp of WIDTH lanes: one libmvec call (WIDTH is comptime: only its prong is compiled).
fn vexp(x: V) V {
    return switch (WIDTH) {
        8 => _ZGVeN8v_exp(x),
        4 => _ZGVdN4v_exp(x),
        2 => _ZGVbN2v_exp(x),
        else => @splat(expf64(x[0])),
    };
}

/// log1p of WIDTH lanes: one libmvec call.
fn vlog1p(x: V) V {
    return switch (WIDTH) {
        8 => _ZGVeN8v_log1p(x),
        4 => _ZGVdN4v_log1p(x),
        2 => _ZGVbN2v_log1p(x),
        else => @splat(log1p(x[0])),
    };
}

// Lanes per batch: 256 as in the Codon program (64..1024 measured the same within noise here).
// A multiple of every WIDTH.
const BATCH = 256;
comptime {
    std.debug.assert(BATCH % WIDTH == 0);
}

// Lane arrays start on a cache line (64 bytes, a whole number of vectors of any width), so that
// no vector load straddles two: BatchTape's arrays, LaneSums' and fused-simd's locals say
// align(ALIGN) (the Codon program's alloc_lanes does the same by hand).
const ALIGN = 64;
const Lanes = [BATCH]f64;

// The lane loops go WIDTH lanes at a time through @Vector(WIDTH, f64), Zig's portable SIMD type
// (one register of the target's widest kind): written over single f64s, LLVM left them scalar
// (the vars are slices of one array at run-time offsets).
fn ld(l: *const Lanes, j: usize) V {
    return l[j..][0..WIDTH].*;
}

fn st(l: *Lanes, j: usize, v: V) void {
    l[j..][0..WIDTH].* = v;
}

/// out[j] = exp(src[j]) for every lane (src may be out).
fn exp_lanes(src: *const Lanes, out: *Lanes) void {
    var j: usize = 0;
    while (j < BATCH) : (j += WIDTH) st(out, j, vexp(ld(src, j)));
}

/// out[j] = exp(-|p[j]|) for every lane.
fn exp_neg_abs_lanes(p: *const Lanes, out: *Lanes) void {
    var j: usize = 0;
    while (j < BATCH) : (j += WIDTH) st(out, j, -@abs(ld(p, j)));
    exp_lanes(out, out);
}

/// out[j] = log1p(src[j]) for every lane (src may be out).
fn log1p_lanes(src: *const Lanes, out: *Lanes) void {
    var j: usize = 0;
    while (j < BATCH) : (j += WIDTH) st(out, j, vlog1p(ld(src, j)));
}

// ---- simd: level v3 -----------------------------------------------------------------------------

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
        exp_neg_abs_lanes(p, ve);
        const out = self.push(.softplus, a, e);
        const o = self.vals(out);
        log1p_lanes(ve, o);
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

// The rng of contract §1 on WIDTH samples at once: LLVM leaves fill_inputs' loop over `sample`
// scalar (gcc and Codon's LLVM vectorize theirs), and at 8 lanes that loop was about 30% of
// fused-simd's time. The same integer arithmetic and the same exact conversions, so the same
// bits as `sample`.
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
fn fill_inputs(x: *Lanes, y: *Lanes, seed: u64, first: u64, lanes: usize) void {
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
const LaneSums = struct {
    f: Lanes align(ALIGN) = @splat(0.0),
    dx: Lanes align(ALIGN) = @splat(0.0),
    dy: Lanes align(ALIGN) = @splat(0.0),

    fn add(self: *LaneSums, f: *const Lanes, dx: *const Lanes, dy: *const Lanes, lanes: usize) void {
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
    fn total(self: *const LaneSums) Sums {
        var s: Sums = .{};
        for (self.f, self.dx, self.dy) |f, dx, dy| s = s.add(.{ .f = f, .dx = dx, .dy = dy });
        return s;
    }
};

fn n_batches(n: u64) u64 {
    return (n + BATCH - 1) / BATCH;
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape.
fn run_batches(seed: u64, n: u64, first_batch: u64, end_batch: u64) Sums {
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

fn run_v3(seed: u64, n: u64) Sums {
    return run_batches(seed, n, 0, n_batches(n));
}

// ---- threads: level v4 --------------------------------------------------------------------------

const MAX_THREADS = 1024;

fn v4_worker(seed: u64, n: u64, first_batch: u64, end_batch: u64, out: *Sums) void {
    out.* = run_batches(seed, n, first_batch, end_batch);
}

/// v3 with the batches split into T contiguous ranges, one per std.Thread (thread t takes
/// [t*nb/T, (t+1)*nb/T)), each with its own batch tape and lane sums; the partial sums are added
/// in thread order, so a given T always gives the same digits. The calling thread is thread 0;
/// a thread that cannot be started has its range run here instead (same result).
fn run_v4(seed: u64, n: u64, threads: usize) Sums {
    const nb = n_batches(n);
    const t_count: u64 = threads;
    var partial: [MAX_THREADS]Sums = @splat(.{});
    var handles: [MAX_THREADS]?std.Thread = @splat(null);
    for (1..threads) |t| {
        // Small stacks: a thread needs its BatchTape and lane sums (about 40 KiB), and up to 1024
        // of them may run.
        handles[t] = std.Thread.spawn(.{ .stack_size = 1 << 20 }, v4_worker, .{ seed, n, t * nb / t_count, (t + 1) * nb / t_count, &partial[t] }) catch null;
    }
    partial[0] = run_batches(seed, n, 0, nb / t_count);
    for (1..threads) |t| {
        if (handles[t]) |h| {
            h.join();
        } else {
            partial[t] = run_batches(seed, n, t * nb / t_count, (t + 1) * nb / t_count);
        }
    }
    var total: Sums = .{};
    for (partial[0..threads]) |s| total = total.add(s);
    return total;
}

// ---- fused-simd: the vector baseline ------------------------------------------------------------

/// Baseline `fused-simd` (not a level): the same over batches of BATCH samples with v3's vector
/// math and lane sums, no tape: the floor for v3 and v4.
fn run_fused_simd(seed: u64, n: u64) Sums {
    var x: Lanes align(ALIGN) = undefined;
    var y: Lanes align(ALIGN) = undefined;
    var p: Lanes align(ALIGN) = undefined;
    var e: Lanes align(ALIGN) = undefined;
    var l: Lanes align(ALIGN) = undefined;
    var f: Lanes align(ALIGN) = undefined;
    var dx: Lanes align(ALIGN) = undefined;
    var dy: Lanes align(ALIGN) = undefined;
    var acc: LaneSums = .{};
    const zero: V = @splat(0.0);
    const one: V = @splat(1.0);
    var batch: u64 = 0;
    while (batch < n_batches(n)) : (batch += 1) {
        const first = batch * BATCH;
        const lanes: usize = @intCast(@min(BATCH, n - first));
        fill_inputs(&x, &y, seed, first, lanes);
        var j: usize = 0;
        while (j < BATCH) : (j += WIDTH) st(&p, j, (ld(&x, j) + ld(&y, j)) * ld(&x, j));
        exp_neg_abs_lanes(&p, &e);
        log1p_lanes(&e, &l);
        j = 0;
        while (j < BATCH) : (j += WIDTH) {
            const xj = ld(&x, j);
            const s = xj + ld(&y, j);
            const pj = ld(&p, j);
            const ej = ld(&e, j);
            const g = @select(f64, pj >= zero, one / (one + ej), ej / (one + ej)); // sigmoid_e
            st(&f, j, @select(f64, pj > zero, pj + ld(&l, j), ld(&l, j))); // softplus_e
            st(&dx, j, s * g + xj * g);
            st(&dy, j, xj * g);
        }
        acc.add(&f, &dx, &dy, lanes);
    }
    return acc.total();
}

// ---- cli: the command line of contract §4 -------------------------------------------------------

const Level = enum { v0, v1, v2, v3, v4, fused, @"fused-simd" };
const LEVELS = [_]Level{ .v0, .v1, .v2, .v3, .v4 }; // run by --level all, in this order
const BASELINES = [_]Level{ .fused, .@"fused-simd" }; // run only when named
const ALL_LEVELS = LEVELS ++ BASELINES;
const MAX_ITERS: u64 = 1_000_000_000_000;
const DEFAULT_ITERS: u64 = 10_000_000;
const DEFAULT_SEED: u64 = 42;

const Mode = enum { run, eval, help, version };

const Options = struct {
    mode: Mode,
    levels: []const Level = &LEVELS,
    iters: u64 = DEFAULT_ITERS,
    seed: u64 = DEFAULT_SEED,
    threads: usize,
    json: bool = false,
    x: f64 = 0.0,
    y: f64 = 0.0,
};

/// Every bad input becomes error.Usage with a one-line message kept here, so that main can print
/// `error: ...` and exit 2 before anything reaches stdout.
const Usage = struct {
    arena: Allocator,
    message: []const u8 = "",

    fn fail(self: *Usage, comptime format: []const u8, args: anytype) error{Usage} {
        self.message = std.fmt.allocPrint(self.arena, format, args) catch "bad command line (and out of memory)";
        return error.Usage;
    }
};

/// An argument quoted for an error line, bytes outside printable ASCII shown as '?'.
const Shown = struct {
    text: []const u8,

    pub fn format(self: Shown, w: *std.Io.Writer) std.Io.Writer.Error!void {
        try w.writeByte('\'');
        for (self.text) |c| try w.writeByte(if (c >= ' ' and c <= '~') c else '?');
        try w.writeByte('\'');
    }
};

fn shown(arg: []const u8) Shown {
    return .{ .text = arg };
}

/// A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex).
fn parse_uint(usage: *Usage, flag: []const u8, text: []const u8, lo: u64, hi: u64) error{Usage}!u64 {
    const bad = "{s} must be a whole number from {d} to {d}, got {f}";
    if (text.len == 0 or text.len > 20) return usage.fail(bad, .{ flag, lo, hi, shown(text) });
    var value: u64 = 0;
    for (text) |c| {
        if (c < '0' or c > '9') return usage.fail(bad, .{ flag, lo, hi, shown(text) });
        const digit: u64 = c - '0';
        if (value > (hi - digit) / 10) // value * 10 + digit would pass hi (or wrap)
            return usage.fail(bad, .{ flag, lo, hi, shown(text) });
        value = value * 10 + digit;
    }
    if (value < lo) return usage.fail(bad, .{ flag, lo, hi, shown(text) });
    return value;
}

/// [+-] digits [. digits] [e [+-] digits], with at least one mantissa digit.
fn is_decimal(text: []const u8) bool {
    var i: usize = 0;
    const n = text.len;
    if (i < n and (text[i] == '+' or text[i] == '-')) i += 1;
    var digits: usize = 0;
    while (i < n and std.ascii.isDigit(text[i])) : (i += 1) digits += 1;
    if (i < n and text[i] == '.') {
        i += 1;
        while (i < n and std.ascii.isDigit(text[i])) : (i += 1) digits += 1;
    }
    if (digits == 0) return false;
    if (i < n and (text[i] == 'e' or text[i] == 'E')) {
        i += 1;
        if (i < n and (text[i] == '+' or text[i] == '-')) i += 1;
        const start = i;
        while (i < n and std.ascii.isDigit(text[i])) i += 1;
        if (i == start) return false;
    }
    return i == n;
}

/// A finite decimal number (no hex, inf or nan), read by the C library's strtod.
fn parse_point(usage: *Usage, flag: []const u8, text: [:0]const u8) error{Usage}!f64 {
    if (!is_decimal(text)) return usage.fail("{s} needs finite decimal numbers, got {f}", .{ flag, shown(text) });
    const value = strtod(text.ptr, null);
    if (!std.math.isFinite(value)) // +-inf: the decimal is beyond the float range
        return usage.fail("{s} value {f} is out of range", .{ flag, shown(text) });
    return value;
}

fn parse_level(usage: *Usage, text: []const u8) error{Usage}![]const Level {
    if (std.mem.eql(u8, text, "all")) return &LEVELS;
    for (&ALL_LEVELS, 0..) |level, k| {
        if (std.mem.eql(u8, text, @tagName(level))) return ALL_LEVELS[k..][0..1];
    }
    return usage.fail("--level must be one of v0, v1, v2, v3, v4, fused, fused-simd or all, got {f}", .{shown(text)});
}

const FLAGS = [_][]const u8{ "--level", "--iters", "--seed", "--threads", "--json", "--eval" };

fn is_flag(arg: []const u8) bool {
    for (FLAGS) |flag| if (std.mem.eql(u8, arg, flag)) return true;
    return false;
}

/// Options from the arguments after the program name.
fn parse(usage: *Usage, args: []const [:0]const u8, cpus: usize) error{Usage}!Options {
    if (args.len == 1 and std.mem.eql(u8, args[0], "--help")) return .{ .mode = .help, .threads = cpus };
    if (args.len == 1 and std.mem.eql(u8, args[0], "--version")) return .{ .mode = .version, .threads = cpus };
    var opts: Options = .{ .mode = .run, .threads = cpus };
    var seen: [FLAGS.len][]const u8 = undefined; // each flag at most once, in order
    var n_seen: usize = 0;
    var i: usize = 0;
    while (i < args.len) {
        const flag: []const u8 = args[i];
        if (std.mem.eql(u8, flag, "--help") or std.mem.eql(u8, flag, "--version"))
            return usage.fail("{s} takes no other arguments", .{flag});
        if (!is_flag(flag)) return usage.fail("unknown argument {f} (try --help)", .{shown(flag)});
        for (seen[0..n_seen]) |other| {
            if (std.mem.eql(u8, other, flag)) return usage.fail("{s} given twice", .{flag});
        }
        seen[n_seen] = flag;
        n_seen += 1;
        const arity: usize = if (std.mem.eql(u8, flag, "--json")) 0 else if (std.mem.eql(u8, flag, "--eval")) 2 else 1;
        if (i + arity >= args.len)
            return usage.fail("{s} needs {s}", .{ flag, if (arity == 2) "two values" else "a value" });
        const value: [:0]const u8 = if (arity > 0) args[i + 1] else "";
        if (std.mem.eql(u8, flag, "--json")) {
            opts.json = true;
        } else if (std.mem.eql(u8, flag, "--level")) {
            opts.levels = try parse_level(usage, value);
        } else if (std.mem.eql(u8, flag, "--iters")) {
            opts.iters = try parse_uint(usage, flag, value, 1, MAX_ITERS);
        } else if (std.mem.eql(u8, flag, "--seed")) {
            opts.seed = try parse_uint(usage, flag, value, 0, std.math.maxInt(u64));
        } else if (std.mem.eql(u8, flag, "--threads")) {
            opts.threads = @intCast(try parse_uint(usage, flag, value, 1, MAX_THREADS));
        } else { // --eval X Y
            opts.mode = .eval;
            opts.x = try parse_point(usage, flag, value);
            opts.y = try parse_point(usage, flag, args[i + 2]);
        }
        i += 1 + arity;
    }
    if (opts.mode == .eval) {
        for (seen[0..n_seen]) |other| {
            if (!std.mem.eql(u8, other, "--eval") and !std.mem.eql(u8, other, "--json"))
                return usage.fail("--eval takes no {s}", .{other});
        }
    }
    return opts;
}

// ---- report: output of contract §5 --------------------------------------------------------------

const IMPL = "zig";

/// v formatted by a printf-style spec such as "%.17g", by the C library (C locale), into buf.
fn fmt(buf: *[64]u8, v: f64, spec: [*:0]const u8) []const u8 {
    const n: usize = @intCast(strfromd(buf, buf.len, spec, v));
    return buf[0..@min(n, buf.len - 1)];
}

/// 17 significant digits: enough to round-trip any double.
fn g17(buf: *[64]u8, v: f64) []const u8 {
    return fmt(buf, v, "%.17g");
}

const Result = struct {
    level: Level,
    iters: u64,
    seed: u64,
    threads: usize,
    seconds: f64,
    sums: Sums,

    fn ns_per_iter(self: Result) f64 {
        return self.seconds * 1e9 / @as(f64, @floatFromInt(self.iters));
    }
};

const Column = struct { name: []const u8, width: i32 };
const COLUMNS = [_]Column{
    .{ .name = "impl", .width = 6 },     .{ .name = "level", .width = 11 },    .{ .name = "threads", .width = -7 },
    .{ .name = "iters", .width = -14 },  .{ .name = "seconds", .width = -10 }, .{ .name = "ns/iter", .width = -10 },
    .{ .name = "vs v0", .width = -8 },   .{ .name = "sum_f", .width = -25 },   .{ .name = "sum_dx", .width = -25 },
    .{ .name = "sum_dy", .width = -25 },
};

/// Cells padded to COLUMNS' widths (negative: right-aligned), two spaces apart, trailing spaces
/// removed, then a newline.
fn row(w: *std.Io.Writer, cells: [COLUMNS.len][]const u8) std.Io.Writer.Error!void {
    var buf: [512]u8 = undefined;
    var line = std.Io.Writer.fixed(&buf);
    for (cells, COLUMNS, 0..) |cell, col, k| {
        if (k > 0) try line.writeAll("  ");
        const width: usize = @abs(col.width);
        const pad = width -| cell.len;
        if (col.width < 0) try line.splatByteAll(' ', pad);
        try line.writeAll(cell);
        if (col.width > 0) try line.splatByteAll(' ', pad);
    }
    try w.writeAll(std.mem.trimEnd(u8, line.buffered(), " "));
    try w.writeByte('\n');
}

fn text_header(w: *std.Io.Writer) std.Io.Writer.Error!void {
    var cells: [COLUMNS.len][]const u8 = undefined;
    for (&cells, COLUMNS) |*cell, col| cell.* = col.name;
    try row(w, cells);
}

/// One result as a table row; `vs v0` is v0's time over this one (0: no v0 run).
fn text_line(w: *std.Io.Writer, r: Result, v0_seconds: f64) std.Io.Writer.Error!void {
    var b: [9][64]u8 = undefined;
    var speedup: []const u8 = "-";
    if (v0_seconds > 0.0 and r.seconds > 0.0) {
        const ratio = fmt(&b[0], v0_seconds / r.seconds, "%.1f");
        b[0][ratio.len] = 'x';
        speedup = b[0][0 .. ratio.len + 1];
    }
    const threads = std.fmt.bufPrint(&b[1], "{d}", .{r.threads}) catch unreachable;
    const iters = std.fmt.bufPrint(&b[2], "{d}", .{r.iters}) catch unreachable;
    try row(w, .{ IMPL, @tagName(r.level), threads, iters, fmt(&b[3], r.seconds, "%.3f"), fmt(&b[4], r.ns_per_iter(), "%.2f"), speedup, g17(&b[5], r.sums.f), g17(&b[6], r.sums.dx), g17(&b[7], r.sums.dy) });
}

fn json_line(w: *std.Io.Writer, r: Result) std.Io.Writer.Error!void {
    var b: [5][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"level\": \"{s}\", \"iters\": {d}, \"seed\": {d}, \"threads\": {d}, " ++
        "\"seconds\": {s}, \"ns_per_iter\": {s}, \"sum_f\": {s}, \"sum_dx\": {s}, \"sum_dy\": {s}}}\n", .{
        IMPL,                  @tagName(r.level),     r.iters,                     r.seed,
        r.threads,             g17(&b[0], r.seconds), g17(&b[1], r.ns_per_iter()), g17(&b[2], r.sums.f),
        g17(&b[3], r.sums.dx), g17(&b[4], r.sums.dy),
    });
}

fn eval_text(w: *std.Io.Writer, x: f64, y: f64, p: Point3) std.Io.Writer.Error!void {
    var b: [5][64]u8 = undefined;
    try w.print("x {s}  y {s}  f {s}  dfdx {s}  dfdy {s}\n", .{ g17(&b[0], x), g17(&b[1], y), g17(&b[2], p.f), g17(&b[3], p.dfdx), g17(&b[4], p.dfdy) });
}

fn eval_json(w: *std.Io.Writer, x: f64, y: f64, p: Point3) std.Io.Writer.Error!void {
    var b: [5][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"x\": {s}, \"y\": {s}, \"f\": {s}, \"dfdx\": {s}, \"dfdy\": {s}}}\n", .{ IMPL, g17(&b[0], x), g17(&b[1], y), g17(&b[2], p.f), g17(&b[3], p.dfdx), g17(&b[4], p.dfdy) });
}

// ---- autograd: entry, dispatch, output ----------------------------------------------------------

const VERSION_TEXT = "autograd (zig) 0.1.0";
const HELP_TEXT =
    \\usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
    \\                [--threads T] [--json]
    \\       autograd --eval X Y [--json]
    \\       autograd --help | --version
    \\
    \\Runs N forward/backward passes of f(x, y) = softplus((x + y) * x) through a
    \\reverse-mode autograd at each optimization level and prints the time and the
    \\checksums (sums of f, df/dx and df/dy over the samples).
    \\
    \\  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
    \\               the default), or a baseline: fused, fused-simd
    \\  --iters N    samples, 1..10^12 (default 10000000)
    \\  --seed S     input stream seed, 0..2^64-1 (default 42)
    \\  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
    \\  --json       one JSON object per line instead of the table
    \\  --eval X Y   f and its gradient at one point, through the v2 tape
    \\
;

/// CPUs in this process's affinity mask (what taskset or a container allows); std.Thread asks
/// sched_getaffinity with room for 1024 CPUs.
fn cpus_available() usize {
    return @max(std.Thread.getCpuCount() catch 1, 1);
}

fn run_level(gpa: Allocator, level: Level, seed: u64, n: u64, threads: usize) Allocator.Error!Sums {
    return switch (level) {
        .v0 => try run_v0(gpa, seed, n),
        .v1 => run_v1(seed, n),
        .v2 => run_v2(seed, n),
        .v3 => run_v3(seed, n),
        .v4 => run_v4(seed, n, threads),
        .fused => run_fused(seed, n),
        .@"fused-simd" => run_fused_simd(seed, n),
    };
}

const RunError = Allocator.Error || std.Io.Writer.Error;

fn run(io: std.Io, gpa: Allocator, out: *std.Io.Writer, opts: Options) RunError!void {
    if (!opts.json) {
        try text_header(out);
        try out.flush();
    }
    var v0_seconds: f64 = 0.0;
    for (opts.levels) |level| {
        const threads: usize = if (level == .v4) opts.threads else 1;
        const start = std.Io.Clock.awake.now(io);
        const sums = try run_level(gpa, level, opts.seed, opts.iters, threads);
        const ns = start.durationTo(std.Io.Clock.awake.now(io)).nanoseconds;
        const seconds = @as(f64, @floatFromInt(ns)) / 1e9;
        const r: Result = .{ .level = level, .iters = opts.iters, .seed = opts.seed, .threads = threads, .seconds = seconds, .sums = sums };
        if (level == .v0) v0_seconds = seconds;
        if (opts.json) try json_line(out, r) else try text_line(out, r, v0_seconds);
        try out.flush(); // each row as soon as its level finishes
    }
}

fn evaluate(usage: *Usage, out: *std.Io.Writer, opts: Options) (error{Usage} || std.Io.Writer.Error)!void {
    const r = eval_point(opts.x, opts.y);
    const p = (opts.x + opts.y) * opts.x;
    if (!std.math.isFinite(p)) return usage.fail("(X + Y) * X overflows at this point", .{});
    for ([_]f64{ r.f, r.dfdx, r.dfdy }) |v| {
        if (!std.math.isFinite(v)) return usage.fail("the result overflows at this point", .{});
    }
    if (opts.json) try eval_json(out, opts.x, opts.y, r) else try eval_text(out, opts.x, opts.y, r);
    try out.flush();
}

fn fail_exit(io: std.Io, message: []const u8, status: u8) u8 {
    var buf: [4096]u8 = undefined;
    var w = std.Io.File.stderr().writerStreaming(io, &buf);
    w.interface.print("error: {s}\n", .{message}) catch {};
    w.interface.flush() catch {};
    return status;
}

pub fn main(init: std.process.Init) u8 {
    const io = init.io;
    const arena = init.arena.allocator();
    var usage: Usage = .{ .arena = arena };
    const argv = init.minimal.args.vector;
    const args = arena.alloc([:0]const u8, argv.len -| 1) catch return fail_exit(io, "out of memory", 2);
    for (args, 1..) |*arg, k| arg.* = std.mem.span(argv[k]);

    var out_buf: [4096]u8 = undefined;
    var stdout = std.Io.File.stdout().writerStreaming(io, &out_buf);
    const out = &stdout.interface;

    const opts = parse(&usage, args, cpus_available()) catch return fail_exit(io, usage.message, 2);
    // Output that cannot be written (a full disk, /dev/full) ends the program with one line on
    // stderr and exit status 1, not 2: the command line was fine. Every write and flush returns
    // error.WriteFailed then (the buffer hides most failures until the flush).
    const write_failed = "cannot write to standard output";
    switch (opts.mode) {
        .help => out.writeAll(HELP_TEXT) catch return fail_exit(io, write_failed, 1),
        .version => out.writeAll(VERSION_TEXT ++ "\n" ++ target_text ++ "\n") catch return fail_exit(io, write_failed, 1),
        .eval => evaluate(&usage, out, opts) catch |err| switch (err) {
            error.Usage => return fail_exit(io, usage.message, 2),
            error.WriteFailed => return fail_exit(io, write_failed, 1),
        },
        // v0's nodes come from the C library's malloc/free (std.heap.c_allocator), the allocator
        // the C port's v0 uses, rather than init.gpa (which is c_allocator only in release builds).
        .run => run(io, std.heap.c_allocator, out, opts) catch |err| switch (err) {
            error.OutOfMemory => return fail_exit(io, "out of memory", 1),
            error.WriteFailed => return fail_exit(io, write_failed, 1),
        },
    }
    out.flush() catch return fail_exit(io, write_failed, 1);
    return 0;
}
