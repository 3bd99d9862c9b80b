// autograd (Zig port): millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
// through a reverse-mode autograd, level by level (docs/contract.md), and the graph workload: a
// tape of M ops over 100 inputs (docs/contract-graph.md). One file that mirrors the Codon
// program's modules (rng, ops, graph, naive, pool, tape, fused, vmath, simd, threads, fused-simd,
// then the graph workload's recipe, nodes, objects, pool, tape, simd, threads, then cli, report,
// autograd) section by section, with the same names, so that the two can be diffed.
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
// (the vars are slices of one array at run-time offsets). ld and st take any array of lanes (a
// pointer to Lanes, or to the graph workload's GraphLanes).
fn ld(l: anytype, j: usize) V {
    return l[j..][0..WIDTH].*;
}

fn st(l: anytype, j: usize, v: V) void {
    l[j..][0..WIDTH].* = v;
}

// The three lane functions take n, the lanes (comptime: BATCH for the softplus levels, a graph
// var's GRAPH_BATCH or a SOFTMAX4's four vars for the graph), a multiple of WIDTH.

/// out[j] = exp(src[j]) for j < n (src may be out).
fn exp_lanes(comptime n: usize, src: *const [n]f64, out: *[n]f64) void {
    comptime std.debug.assert(n % WIDTH == 0);
    var j: usize = 0;
    while (j < n) : (j += WIDTH) out[j..][0..WIDTH].* = vexp(src[j..][0..WIDTH].*);
}

/// out[j] = exp(-|p[j]|) for j < n.
fn exp_neg_abs_lanes(comptime n: usize, p: *const [n]f64, out: *[n]f64) void {
    comptime std.debug.assert(n % WIDTH == 0);
    var j: usize = 0;
    while (j < n) : (j += WIDTH) out[j..][0..WIDTH].* = -@abs(@as(V, p[j..][0..WIDTH].*));
    exp_lanes(n, out, out);
}

/// out[j] = log1p(src[j]) for j < n (src may be out).
fn log1p_lanes(comptime n: usize, src: *const [n]f64, out: *[n]f64) void {
    comptime std.debug.assert(n % WIDTH == 0);
    var j: usize = 0;
    while (j < n) : (j += WIDTH) out[j..][0..WIDTH].* = vlog1p(src[j..][0..WIDTH].*);
}

/// Room for n doubles starting on a cache line, so that no vector load straddles two (the graph
/// tapes' lanes; the softplus levels' fixed arrays say align(ALIGN) instead).
fn alloc_lanes(gpa: Allocator, n: usize) Allocator.Error![]align(ALIGN) f64 {
    return gpa.alignedAlloc(f64, .fromByteUnits(ALIGN), n);
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
        exp_neg_abs_lanes(BATCH, &p, &e);
        log1p_lanes(BATCH, &e, &l);
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

// ---- graph recipe: the graph workload's shared parts ------------------------------------------

// The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph level: a
// sample's 100 inputs, the kind and input offsets of each of the M ops, the scalar forward math of
// an op, and the per-sample checksums.

/// Op k has kind k % 4, in this order (SOFTPLUS, SUM4, PROD, SOFTMAX4); a node no op made (an
/// input) is a leaf.
const GraphKind = enum(i8) { leaf = -1, softplus = 0, sum4 = 1, prod = 2, softmax4 = 3 };

const N_INPUTS: usize = 100;

/// The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3).
const GraphSums = struct {
    loss: f64 = 0.0,
    grad_in: f64 = 0.0,
    grad_all: f64 = 0.0,

    fn add(self: GraphSums, o: GraphSums) GraphSums {
        return .{ .loss = self.loss + o.loss, .grad_in = self.grad_in + o.grad_in, .grad_all = self.grad_all + o.grad_all };
    }
};

/// Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4.
fn n_nodes(m: usize) usize {
    return N_INPUTS + m + 3 * (m / 4);
}

/// Input i of sample s, in [-1, 1) (G1).
fn graph_input(seed: u64, s: u64, i: usize) f64 {
    return 2.0 * unit(draw(seed, N_INPUTS * s + @as(u64, i) + 1)) - 1.0;
}

/// The error set of the tapes' pushes: empty, their arrays are allocated once, before recording.
const NoError = error{};

/// The M ops of G2, in order, onto g: any level's graph builder, which has size() (the nodes so
/// far) and push_softplus, push_sum4, push_prod, push_softmax4 taking node ids. Fails as its
/// pushes do: with error.OutOfMemory for the node graph of v0/v1, never for the tapes (NoError).
fn record_ops(g: anytype, m: usize) !void {
    for (0..m) |k| {
        const n = g.size();
        switch (@as(GraphKind, @fromBackingInt(@intCast(k % 4)))) {
            .softplus => try g.push_softplus(n - 10),
            .sum4 => try g.push_sum4(n - 30, n - 25, n - 20, n - 15),
            .prod => try g.push_prod(n - 20, n - 10),
            .softmax4 => try g.push_softmax4(n - 4, n - 3, n - 2, n - 1),
            .leaf => unreachable,
        }
    }
}

/// Python's max(a, b): b if b > a, else a.
fn max2(a: f64, b: f64) f64 {
    return if (b > a) b else a;
}

/// out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3.
fn softmax4(a: f64, b: f64, c: f64, d: f64) [4]f64 {
    const m = max2(max2(a, b), max2(c, d));
    const e0 = expf64(a - m);
    const e1 = expf64(b - m);
    const e2 = expf64(c - m);
    const e3 = expf64(d - m);
    const total = ((e0 + e1) + e2) + e3;
    return .{ e0 / total, e1 / total, e2 / total, e3 / total };
}

/// SOFTMAX4's backward term: sum of o_j * g[out_j], left to right.
fn softmax4_avg(o0: f64, o1: f64, o2: f64, o3: f64, g0: f64, g1: f64, g2: f64, g3: f64) f64 {
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3;
}

// max2 and sigmoid_e on WIDTH lanes, for graph v3's lane loops (the Codon program's loops call
// the scalar ones, and its LLVM vectorizes them).

fn max2_lanes(a: V, b: V) V {
    return @select(f64, b > a, b, a);
}

fn sigmoid_e_lanes(p: V, e: V) V {
    const one: V = @splat(1.0);
    return @select(f64, p >= @as(V, @splat(0.0)), one / (one + e), e / (one + e));
}

// ---- graph nodes: the node objects of graph v0 and v1 -----------------------------------------

// Every node a heap object holding its value, its grad and pointers to its input nodes, each value
// computed once when the node is made. The graph keeps its nodes in creation order, which is all
// backward needs: it walks them in reverse. v0 destroys the nodes after every sample, v1 keeps
// them as a pool.

const GraphNode = struct {
    val: f64,
    grad: f64,
    kind: GraphKind, // leaf, or the kind of the op that made it (all four of a SOFTMAX4's)
    saved: f64, // SOFTPLUS: exp(-|a.val|), for backward's sigmoid
    a: ?*GraphNode, // inputs, as many as the kind has
    b: ?*GraphNode,
    c: ?*GraphNode,
    d: ?*GraphNode,

    /// A fresh node on the heap: one allocator call.
    fn create(gpa: Allocator, kind: GraphKind, val: f64, saved: f64, a: ?*GraphNode, b: ?*GraphNode, c: ?*GraphNode, d: ?*GraphNode) Allocator.Error!*GraphNode {
        const node = try gpa.create(GraphNode);
        node.set(kind, val, saved, a, b, c, d);
        return node;
    }

    /// (Re)make this node; its grad starts at 1.0, d loss / d val (the loss sums every node).
    fn set(self: *GraphNode, kind: GraphKind, val: f64, saved: f64, a: ?*GraphNode, b: ?*GraphNode, c: ?*GraphNode, d: ?*GraphNode) void {
        self.* = .{ .kind = kind, .val = val, .saved = saved, .grad = 1.0, .a = a, .b = b, .c = c, .d = d };
    }
};

const NodeGraph = struct {
    gpa: Allocator, // the nodes' heap
    nodes: std.ArrayList(*GraphNode) = .empty, // in creation order; nodes[count..] are a pool's spares
    count: usize = 0,

    fn init(gpa: Allocator) NodeGraph {
        return .{ .gpa = gpa };
    }

    fn deinit(self: *NodeGraph) void {
        self.drop();
        self.nodes.deinit(self.gpa);
    }

    /// Every node back to the heap. The list of pointers keeps its room: freeing and regrowing
    /// it every sample, as the Codon program drops its list, made v0 about 2x slower here (at
    /// 10,000 ops the list is past malloc's mmap threshold: fresh pages every sample, and its
    /// large requests make malloc consolidate the freed nodes).
    fn drop(self: *NodeGraph) void {
        for (self.nodes.items) |node| self.gpa.destroy(node);
        self.nodes.clearRetainingCapacity();
    }

    /// Start a sample: with keep (v1) the nodes are reused, else (v0) destroyed.
    fn reset(self: *NodeGraph, keep: bool) void {
        if (!keep) self.drop();
        self.count = 0;
    }

    fn size(self: *const NodeGraph) usize {
        return self.count;
    }

    fn at(self: *const NodeGraph, i: usize) *GraphNode {
        return self.nodes.items[i];
    }

    /// The next node, made as given: a new heap object, or a kept one remade.
    fn take(self: *NodeGraph, kind: GraphKind, val: f64, saved: f64, a: ?*GraphNode, b: ?*GraphNode, c: ?*GraphNode, d: ?*GraphNode) Allocator.Error!*GraphNode {
        if (self.count == self.nodes.items.len) {
            try self.nodes.ensureUnusedCapacity(self.gpa, 1); // first, so that a made node is never lost
            self.nodes.appendAssumeCapacity(try GraphNode.create(self.gpa, kind, val, saved, a, b, c, d));
        } else {
            self.nodes.items[self.count].set(kind, val, saved, a, b, c, d);
        }
        self.count += 1;
        return self.nodes.items[self.count - 1];
    }

    fn leaf(self: *NodeGraph, val: f64) Allocator.Error!void {
        _ = try self.take(.leaf, val, 0.0, null, null, null, null);
    }

    fn push_softplus(self: *NodeGraph, i: usize) Allocator.Error!void {
        const a = self.at(i);
        const e = exp_neg_abs(a.val);
        _ = try self.take(.softplus, softplus_e(a.val, e), e, a, null, null, null);
    }

    fn push_sum4(self: *NodeGraph, i: usize, j: usize, k: usize, l: usize) Allocator.Error!void {
        const a = self.at(i);
        const b = self.at(j);
        const c = self.at(k);
        const d = self.at(l);
        _ = try self.take(.sum4, ((a.val + b.val) + c.val) + d.val, 0.0, a, b, c, d);
    }

    fn push_prod(self: *NodeGraph, i: usize, j: usize) Allocator.Error!void {
        const a = self.at(i);
        const b = self.at(j);
        _ = try self.take(.prod, a.val * b.val, 0.0, a, b, null, null);
    }

    fn push_softmax4(self: *NodeGraph, i: usize, j: usize, k: usize, l: usize) Allocator.Error!void {
        const a = self.at(i);
        const b = self.at(j);
        const c = self.at(k);
        const d = self.at(l);
        for (softmax4(a.val, b.val, c.val, d.val)) |o| {
            _ = try self.take(.softmax4, o, 0.0, a, b, c, d);
        }
    }

    /// The nodes in reverse creation order, each pushing its grad to its inputs (G3); a SOFTMAX4's
    /// four outputs are handled together, at the last of them.
    fn backward(self: *NodeGraph) void {
        var i = self.count - 1;
        while (i >= N_INPUTS) {
            const node = self.nodes.items[i];
            const g = node.grad;
            switch (node.kind) {
                .softplus => node.a.?.grad += sigmoid_e(node.a.?.val, node.saved) * g,
                .sum4 => {
                    node.a.?.grad += g;
                    node.b.?.grad += g;
                    node.c.?.grad += g;
                    node.d.?.grad += g;
                },
                .prod => {
                    node.a.?.grad += node.b.?.val * g;
                    node.b.?.grad += node.a.?.val * g;
                },
                .softmax4 => { // nodes i-3 .. i are its outputs
                    const o0 = self.nodes.items[i - 3];
                    const o1 = self.nodes.items[i - 2];
                    const o2 = self.nodes.items[i - 1];
                    const o3 = node;
                    const avg = softmax4_avg(o0.val, o1.val, o2.val, o3.val, o0.grad, o1.grad, o2.grad, o3.grad);
                    node.a.?.grad += o0.val * (o0.grad - avg);
                    node.b.?.grad += o1.val * (o1.grad - avg);
                    node.c.?.grad += o2.val * (o2.grad - avg);
                    node.d.?.grad += o3.val * (o3.grad - avg);
                    i -= 3;
                },
                .leaf => unreachable, // the nodes past the inputs are all made by ops
            }
            i -= 1;
        }
    }

    /// This sample's loss, grad_in and grad_all (G3), each added in creation order.
    fn sums(self: *const NodeGraph) GraphSums {
        var loss: f64 = 0.0;
        var grad_in: f64 = 0.0;
        var grad_all: f64 = 0.0;
        for (self.nodes.items[0..self.count]) |node| loss += node.val;
        for (self.nodes.items[0..N_INPUTS], 0..) |node, i| grad_in += @as(f64, @floatFromInt(i + 1)) * node.grad;
        for (self.nodes.items[0..self.count]) |node| grad_all += node.grad;
        return .{ .loss = loss, .grad_in = grad_in, .grad_all = grad_all };
    }
};

// ---- graph objects: graph level v0 ------------------------------------------------------------

// Every node a fresh heap object per sample from `gpa` (the C library's malloc/free, as the
// softplus v0), linked to its inputs by pointers and destroyed when the next sample starts;
// backward walks the nodes in reverse creation order.

/// Sample s's forward pass: its inputs, then the M ops (keep: reuse the nodes, v1).
fn record_nodes(g: *NodeGraph, seed: u64, s: u64, m: usize, keep: bool) Allocator.Error!void {
    g.reset(keep);
    for (0..N_INPUTS) |i| try g.leaf(graph_input(seed, s, i));
    try record_ops(g, m);
}

fn run_graph_v0(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    var g = NodeGraph.init(gpa);
    defer g.deinit();
    var total: GraphSums = .{};
    var s: u64 = 0;
    while (s < n) : (s += 1) {
        try record_nodes(&g, seed, s, m, false);
        g.backward();
        total = total.add(g.sums());
    }
    return total;
}

// ---- graph pool: graph level v1 ---------------------------------------------------------------

// v0's node objects and links, but the nodes of the first sample are kept and remade for every
// later one, so the loop allocates nothing.

fn run_graph_v1(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
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

// ---- graph tape: graph level v2 ---------------------------------------------------------------

// The softplus workload's tape grown to M ops, recorded anew for every sample as a dynamic
// autograd does: contiguous arrays of vars {val, grad} and ops {kind, up to 4 input ids, first
// output id}, addressed by index; each result computed once when pushed; backward is an index
// loop over the ops in reverse.

const GraphOp = struct {
    kind: GraphKind,
    a: usize, // input ids; SOFTPLUS's b is its slot in `saved` (exp(-|a|))
    b: usize,
    c: usize,
    d: usize,
    out: usize, // the (first) output id; SOFTMAX4's four are out .. out+3
};

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

    fn size(self: *const GraphTape) usize {
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
        self.ops[self.n_ops] = .{ .kind = kind, .a = a, .b = b, .c = c, .d = d, .out = out };
        self.n_ops += 1;
        return out;
    }

    fn push_softplus(self: *GraphTape, a: usize) NoError!void {
        const p = self.val[a];
        const e = exp_neg_abs(p);
        const slot = self.n_saved;
        self.saved[slot] = e;
        self.n_saved += 1;
        _ = self.push(.softplus, a, slot, 0, 0, softplus_e(p, e));
    }

    fn push_sum4(self: *GraphTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
        const v = self.val;
        _ = self.push(.sum4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d]);
    }

    fn push_prod(self: *GraphTape, a: usize, b: usize) NoError!void {
        _ = self.push(.prod, a, b, 0, 0, self.val[a] * self.val[b]);
    }

    fn push_softmax4(self: *GraphTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
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

fn run_graph_v2(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
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

// ---- graph simd: graph level v3 ---------------------------------------------------------------

// The v2 graph tape recorded once per batch of GRAPH_BATCH samples. Each var holds GRAPH_BATCH
// lanes (structure of arrays), each op is a loop over its lanes, and exp/log1p are libmvec's at
// the target's width (vmath).

// Lanes per var, a multiple of every vector width. A batch's vals and grads take
// n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB at 16 lanes and 10,000 ops, past L2, in L3.
const GRAPH_BATCH = 16;
comptime {
    std.debug.assert(GRAPH_BATCH % WIDTH == 0);
    std.debug.assert(GRAPH_BATCH * @sizeOf(f64) % ALIGN == 0); // so every var's lanes start on a cache line
}

/// A graph var's lanes, on a cache line.
const GraphLanes = [GRAPH_BATCH]f64;
const GraphLanesPtr = *align(ALIGN) GraphLanes;

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

    fn size(self: *const GraphBatchTape) usize {
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
        self.ops[self.n_ops] = .{ .kind = kind, .a = a, .b = b, .c = c, .d = d, .out = out };
        self.n_ops += 1;
        return out;
    }

    fn push_softplus(self: *GraphBatchTape, a: usize) NoError!void {
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

    fn push_sum4(self: *GraphBatchTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
        const o = self.vals(self.push(.sum4, a, b, c, d));
        const va = self.vals(a);
        const vb = self.vals(b);
        const vc = self.vals(c);
        const vd = self.vals(d);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) st(o, j, ((ld(va, j) + ld(vb, j)) + ld(vc, j)) + ld(vd, j));
    }

    fn push_prod(self: *GraphBatchTape, a: usize, b: usize) NoError!void {
        const o = self.vals(self.push(.prod, a, b, 0, 0));
        const va = self.vals(a);
        const vb = self.vals(b);
        var j: usize = 0;
        while (j < GRAPH_BATCH) : (j += WIDTH) st(o, j, ld(va, j) * ld(vb, j));
    }

    fn push_softmax4(self: *GraphBatchTape, a: usize, b: usize, c: usize, d: usize) NoError!void {
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

fn n_graph_batches(n: u64) u64 {
    return (n + GRAPH_BATCH - 1) / GRAPH_BATCH;
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape.
fn run_graph_batches(gpa: Allocator, seed: u64, m: usize, n: u64, first_batch: u64, end_batch: u64) Allocator.Error!GraphSums {
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

fn run_graph_v3(gpa: Allocator, seed: u64, m: usize, n: u64) Allocator.Error!GraphSums {
    return run_graph_batches(gpa, seed, m, n, 0, n_graph_batches(n));
}

// ---- graph threads: graph level v4 ------------------------------------------------------------

fn graph_v4_worker(gpa: Allocator, seed: u64, m: usize, n: u64, first_batch: u64, end_batch: u64, out: *Allocator.Error!GraphSums) void {
    out.* = run_graph_batches(gpa, seed, m, n, first_batch, end_batch);
}

/// Graph v3 with the batches split into T contiguous ranges as the softplus v4 splits them, one
/// per std.Thread, each with its own batch tape and lane sums; the partial sums are added in
/// thread order. The calling thread is thread 0; a thread that cannot be started has its range
/// run here instead (same result).
fn run_graph_v4(gpa: Allocator, seed: u64, m: usize, n: u64, threads: usize) Allocator.Error!GraphSums {
    const nb = n_graph_batches(n);
    const t_count: u64 = threads;
    var partial: [MAX_THREADS]Allocator.Error!GraphSums = @splat(GraphSums{});
    var handles: [MAX_THREADS]?std.Thread = @splat(null);
    for (1..threads) |t| {
        // Small stacks: a thread's tape is on the heap; it needs its lane sums (under 1 KiB).
        handles[t] = std.Thread.spawn(.{ .stack_size = 1 << 20 }, graph_v4_worker, .{ gpa, seed, m, n, t * nb / t_count, (t + 1) * nb / t_count, &partial[t] }) catch null;
    }
    partial[0] = run_graph_batches(gpa, seed, m, n, 0, nb / t_count);
    for (1..threads) |t| {
        if (handles[t]) |h| {
            h.join();
        } else {
            partial[t] = run_graph_batches(gpa, seed, m, n, t * nb / t_count, (t + 1) * nb / t_count);
        }
    }
    var total: GraphSums = .{};
    for (partial[0..threads]) |sums| total = total.add(try sums);
    return total;
}

// ---- cli: the command line of contract §4 (and of the graph workload, contract-graph G6) ------

const Level = enum { v0, v1, v2, v3, v4, fused, @"fused-simd" };
const LEVELS = [_]Level{ .v0, .v1, .v2, .v3, .v4 }; // run by --level all, in this order
const BASELINES = [_]Level{ .fused, .@"fused-simd" }; // run only when named (softplus workload)
const ALL_LEVELS = LEVELS ++ BASELINES;
const Workload = enum { softplus, graph };
const WORKLOADS = [_]Workload{ .softplus, .graph }; // --workload, the first the default
const MAX_ITERS: u64 = 1_000_000_000_000;
const MAX_GRAPH_OPS: u64 = 1_000_000; // the Codon program's MAX_OPS (a name the softplus tape has here)
const DEFAULT_ITERS: u64 = 10_000_000; // softplus samples
const DEFAULT_GRAPH_ITERS: u64 = 10_000; // graph samples (Rogozhnikov's 10,000 passes)
const DEFAULT_OPS: usize = 10_000;
const DEFAULT_SEED: u64 = 42;

const Mode = enum { run, eval, help, version };

const Options = struct {
    mode: Mode,
    workload: Workload = WORKLOADS[0],
    levels: []const Level = &LEVELS,
    ops: usize = DEFAULT_OPS,
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

/// The tags of an enum's values, ", " between them (for an error line).
fn joined(comptime values: anytype) []const u8 {
    comptime var text: []const u8 = "";
    inline for (values, 0..) |value, k| text = text ++ (if (k > 0) ", " else "") ++ @tagName(value);
    return text;
}

/// The levels --level names; the graph workload has no baselines.
fn parse_level(usage: *Usage, text: []const u8, workload: Workload) error{Usage}![]const Level {
    const named: []const Level = if (workload == .softplus) &ALL_LEVELS else &LEVELS;
    if (std.mem.eql(u8, text, "all")) return &LEVELS;
    for (named, 0..) |level, k| {
        if (std.mem.eql(u8, text, @tagName(level))) return named[k..][0..1];
    }
    const names = if (workload == .softplus) comptime joined(ALL_LEVELS) else comptime joined(LEVELS);
    return usage.fail("--level must be one of {s} or all, got {f}", .{ names, shown(text) });
}

fn parse_workload(usage: *Usage, text: []const u8) error{Usage}!Workload {
    for (WORKLOADS) |workload| {
        if (std.mem.eql(u8, text, @tagName(workload))) return workload;
    }
    return usage.fail("--workload must be one of {s}, got {f}", .{ comptime joined(WORKLOADS), shown(text) });
}

const FLAGS = [_][]const u8{ "--workload", "--level", "--ops", "--iters", "--seed", "--threads", "--json", "--eval" };

fn is_flag(arg: []const u8) bool {
    for (FLAGS) |flag| if (std.mem.eql(u8, arg, flag)) return true;
    return false;
}

fn is_seen(seen: []const []const u8, flag: []const u8) bool {
    for (seen) |other| if (std.mem.eql(u8, other, flag)) return true;
    return false;
}

/// Options from the arguments after the program name.
fn parse(usage: *Usage, args: []const [:0]const u8, cpus: usize) error{Usage}!Options {
    if (args.len == 1 and std.mem.eql(u8, args[0], "--help")) return .{ .mode = .help, .threads = cpus };
    if (args.len == 1 and std.mem.eql(u8, args[0], "--version")) return .{ .mode = .version, .threads = cpus };
    var opts: Options = .{ .mode = .run, .threads = cpus };
    var seen: [FLAGS.len][]const u8 = undefined; // each flag at most once, in order
    var n_seen: usize = 0;
    var level: []const u8 = "all";
    var i: usize = 0;
    while (i < args.len) {
        const flag: []const u8 = args[i];
        if (std.mem.eql(u8, flag, "--help") or std.mem.eql(u8, flag, "--version"))
            return usage.fail("{s} takes no other arguments", .{flag});
        if (!is_flag(flag)) return usage.fail("unknown argument {f} (try --help)", .{shown(flag)});
        if (is_seen(seen[0..n_seen], flag)) return usage.fail("{s} given twice", .{flag});
        seen[n_seen] = flag;
        n_seen += 1;
        const arity: usize = if (std.mem.eql(u8, flag, "--json")) 0 else if (std.mem.eql(u8, flag, "--eval")) 2 else 1;
        if (i + arity >= args.len)
            return usage.fail("{s} needs {s}", .{ flag, if (arity == 2) "two values" else "a value" });
        const value: [:0]const u8 = if (arity > 0) args[i + 1] else "";
        if (std.mem.eql(u8, flag, "--json")) {
            opts.json = true;
        } else if (std.mem.eql(u8, flag, "--workload")) {
            opts.workload = try parse_workload(usage, value);
        } else if (std.mem.eql(u8, flag, "--level")) {
            level = value; // checked below, once the workload is known
        } else if (std.mem.eql(u8, flag, "--ops")) {
            opts.ops = @intCast(try parse_uint(usage, flag, value, 1, MAX_GRAPH_OPS));
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
        return opts;
    }
    if (is_seen(seen[0..n_seen], "--ops") and opts.workload != .graph)
        return usage.fail("--ops belongs to the graph workload (add --workload graph)", .{});
    opts.levels = try parse_level(usage, level, opts.workload);
    if (opts.workload == .graph and !is_seen(seen[0..n_seen], "--iters"))
        opts.iters = DEFAULT_GRAPH_ITERS;
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

const GraphResult = struct {
    level: Level,
    ops: usize,
    iters: u64,
    seed: u64,
    threads: usize,
    seconds: f64,
    sums: GraphSums,

    fn ns_per_iter(self: GraphResult) f64 {
        return self.seconds * 1e9 / @as(f64, @floatFromInt(self.iters));
    }

    fn ns_per_op(self: GraphResult) f64 {
        return self.ns_per_iter() / @as(f64, @floatFromInt(self.ops));
    }
};

const Column = struct { name: []const u8, width: i32 };
const COLUMNS = [_]Column{
    .{ .name = "impl", .width = 6 },     .{ .name = "level", .width = 11 },    .{ .name = "threads", .width = -7 },
    .{ .name = "iters", .width = -14 },  .{ .name = "seconds", .width = -10 }, .{ .name = "ns/iter", .width = -10 },
    .{ .name = "vs v0", .width = -8 },   .{ .name = "sum_f", .width = -25 },   .{ .name = "sum_dx", .width = -25 },
    .{ .name = "sum_dy", .width = -25 },
};
const GRAPH_COLUMNS = [_]Column{
    .{ .name = "impl", .width = 6 },       .{ .name = "level", .width = 11 },        .{ .name = "threads", .width = -7 },
    .{ .name = "ops", .width = -8 },       .{ .name = "iters", .width = -14 },       .{ .name = "seconds", .width = -10 },
    .{ .name = "ns/iter", .width = -14 },  .{ .name = "ns/op", .width = -10 },       .{ .name = "vs v0", .width = -8 },
    .{ .name = "sum_loss", .width = -25 }, .{ .name = "sum_grad_in", .width = -25 }, .{ .name = "sum_grad_all", .width = -25 },
};

/// Cells padded to the columns' widths (negative: right-aligned), two spaces apart, trailing
/// spaces removed, then a newline.
fn row(w: *std.Io.Writer, comptime columns: []const Column, cells: [columns.len][]const u8) std.Io.Writer.Error!void {
    var buf: [512]u8 = undefined;
    var line = std.Io.Writer.fixed(&buf);
    for (cells, columns, 0..) |cell, col, k| {
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

/// The columns' names as a row.
fn header(w: *std.Io.Writer, comptime columns: []const Column) std.Io.Writer.Error!void {
    var cells: [columns.len][]const u8 = undefined;
    for (&cells, columns) |*cell, col| cell.* = col.name;
    try row(w, columns, cells);
}

fn text_header(w: *std.Io.Writer) std.Io.Writer.Error!void {
    try header(w, &COLUMNS);
}

fn graph_text_header(w: *std.Io.Writer) std.Io.Writer.Error!void {
    try header(w, &GRAPH_COLUMNS);
}

/// v0's time over this one, "-" when v0 was not run before it; in buf.
fn speedup(buf: *[64]u8, v0_seconds: f64, seconds: f64) []const u8 {
    if (!(v0_seconds > 0.0 and seconds > 0.0)) return "-";
    const ratio = fmt(buf, v0_seconds / seconds, "%.1f");
    buf[ratio.len] = 'x';
    return buf[0 .. ratio.len + 1];
}

/// One result as a table row; `vs v0` is v0's time over this one (0: no v0 run).
fn text_line(w: *std.Io.Writer, r: Result, v0_seconds: f64) std.Io.Writer.Error!void {
    var b: [9][64]u8 = undefined;
    const threads = std.fmt.bufPrint(&b[1], "{d}", .{r.threads}) catch unreachable;
    const iters = std.fmt.bufPrint(&b[2], "{d}", .{r.iters}) catch unreachable;
    try row(w, &COLUMNS, .{ IMPL, @tagName(r.level), threads, iters, fmt(&b[3], r.seconds, "%.3f"), fmt(&b[4], r.ns_per_iter(), "%.2f"), speedup(&b[0], v0_seconds, r.seconds), g17(&b[5], r.sums.f), g17(&b[6], r.sums.dx), g17(&b[7], r.sums.dy) });
}

fn graph_text_line(w: *std.Io.Writer, r: GraphResult, v0_seconds: f64) std.Io.Writer.Error!void {
    var b: [11][64]u8 = undefined;
    const threads = std.fmt.bufPrint(&b[1], "{d}", .{r.threads}) catch unreachable;
    const ops = std.fmt.bufPrint(&b[2], "{d}", .{r.ops}) catch unreachable;
    const iters = std.fmt.bufPrint(&b[3], "{d}", .{r.iters}) catch unreachable;
    try row(w, &GRAPH_COLUMNS, .{ IMPL, @tagName(r.level), threads, ops, iters, fmt(&b[4], r.seconds, "%.3f"), fmt(&b[5], r.ns_per_iter(), "%.1f"), fmt(&b[6], r.ns_per_op(), "%.2f"), speedup(&b[0], v0_seconds, r.seconds), g17(&b[7], r.sums.loss), g17(&b[8], r.sums.grad_in), g17(&b[9], r.sums.grad_all) });
}

fn json_line(w: *std.Io.Writer, r: Result) std.Io.Writer.Error!void {
    var b: [5][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"workload\": \"softplus\", \"level\": \"{s}\", \"iters\": {d}, \"seed\": {d}, \"threads\": {d}, " ++
        "\"seconds\": {s}, \"ns_per_iter\": {s}, \"sum_f\": {s}, \"sum_dx\": {s}, \"sum_dy\": {s}}}\n", .{
        IMPL,                  @tagName(r.level),     r.iters,                     r.seed,
        r.threads,             g17(&b[0], r.seconds), g17(&b[1], r.ns_per_iter()), g17(&b[2], r.sums.f),
        g17(&b[3], r.sums.dx), g17(&b[4], r.sums.dy),
    });
}

fn graph_json_line(w: *std.Io.Writer, r: GraphResult) std.Io.Writer.Error!void {
    var b: [6][64]u8 = undefined;
    try w.print("{{\"impl\": \"{s}\", \"workload\": \"graph\", \"level\": \"{s}\", \"ops\": {d}, \"iters\": {d}, \"seed\": {d}, " ++
        "\"threads\": {d}, \"seconds\": {s}, \"ns_per_iter\": {s}, \"ns_per_op\": {s}, " ++
        "\"sum_loss\": {s}, \"sum_grad_in\": {s}, \"sum_grad_all\": {s}}}\n", .{
        IMPL,                      @tagName(r.level),       r.ops,                      r.iters,
        r.seed,                    r.threads,               g17(&b[0], r.seconds),      g17(&b[1], r.ns_per_iter()),
        g17(&b[2], r.ns_per_op()), g17(&b[3], r.sums.loss), g17(&b[4], r.sums.grad_in), g17(&b[5], r.sums.grad_all),
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
    \\       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
    \\                [--seed S] [--threads T] [--json]
    \\       autograd --eval X Y [--json]
    \\       autograd --help | --version
    \\
    \\Runs N forward/backward passes through a reverse-mode autograd at each
    \\optimization level and prints the time and the checksums. Workloads:
    \\  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
    \\            sums of f, df/dx and df/dy over the samples
    \\  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
    \\            loss = the sum of every node; checksums are the sums of the loss,
    \\            of the inputs' weighted gradients and of every node's gradient
    \\
    \\  --workload W softplus or graph (default softplus)
    \\  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
    \\               the default), or a softplus baseline: fused, fused-simd
    \\  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)
    \\  --iters N    samples, 1..10^12 (default 10000000; graph 10000)
    \\  --seed S     input stream seed, 0..2^64-1 (default 42)
    \\  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
    \\  --json       one JSON object per line instead of the table
    \\  --eval X Y   f and its gradient at one point, through the softplus v2 tape
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

fn run_graph_level(gpa: Allocator, level: Level, seed: u64, m: usize, n: u64, threads: usize) Allocator.Error!GraphSums {
    return switch (level) {
        .v0 => try run_graph_v0(gpa, seed, m, n),
        .v1 => try run_graph_v1(gpa, seed, m, n),
        .v2 => try run_graph_v2(gpa, seed, m, n),
        .v3 => try run_graph_v3(gpa, seed, m, n),
        else => try run_graph_v4(gpa, seed, m, n, threads),
    };
}

const RunError = Allocator.Error || std.Io.Writer.Error;

/// The graph workload (docs/contract-graph.md): each level, timed, one line each.
fn run_graph(io: std.Io, gpa: Allocator, out: *std.Io.Writer, opts: Options) RunError!void {
    if (!opts.json) {
        try graph_text_header(out);
        try out.flush();
    }
    var v0_seconds: f64 = 0.0;
    for (opts.levels) |level| {
        const threads: usize = if (level == .v4) opts.threads else 1;
        const start = std.Io.Clock.awake.now(io);
        const sums = try run_graph_level(gpa, level, opts.seed, opts.ops, opts.iters, threads);
        const ns = start.durationTo(std.Io.Clock.awake.now(io)).nanoseconds;
        const seconds = @as(f64, @floatFromInt(ns)) / 1e9;
        const r: GraphResult = .{ .level = level, .ops = opts.ops, .iters = opts.iters, .seed = opts.seed, .threads = threads, .seconds = seconds, .sums = sums };
        if (level == .v0) v0_seconds = seconds;
        if (opts.json) try graph_json_line(out, r) else try graph_text_line(out, r, v0_seconds);
        try out.flush(); // each row as soon as its level finishes
    }
}

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
        // v0's nodes (and the graph tapes) come from the C library's malloc/free
        // (std.heap.c_allocator), the allocator the C port's v0 uses, rather than init.gpa (which
        // is c_allocator only in release builds).
        .run => (switch (opts.workload) {
            .graph => run_graph(io, std.heap.c_allocator, out, opts),
            .softplus => run(io, std.heap.c_allocator, out, opts),
        }) catch |err| switch (err) {
            error.OutOfMemory => return fail_exit(io, "out of memory", 1),
            error.WriteFailed => return fail_exit(io, write_failed, 1),
        },
    }
    out.flush() catch return fail_exit(io, write_failed, 1);
    return 0;
}
