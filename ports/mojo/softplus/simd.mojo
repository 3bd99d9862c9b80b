# Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
# lanes (structure of arrays), each op is a loop over its lanes in
# SIMD[DType.float64, WIDTH] (core/vmath's ld and st), and exp/log1p are glibc's
# vector versions. The ops and their order are v2's.

from core.ops import Sums
from core.rng import sample, draw_lanes, signed_unit_lanes
from core.vmath import (F64Ptr, WIDTH, V, ld, st, alloc_lanes, free_lanes, exp_neg_abs_lanes,
                        log1p_lanes)
from softplus.nodes import SUM, PROD, SOFTPLUS
from softplus.tape import MAX_VARS, MAX_OPS, Op

comptime BATCH = 256  # lanes per var, a multiple of WIDTH (the Codon program's choice)


@always_inline
def sigmoid_lanes(p: V, e: V) -> V:
    """sigmoid_e, lane-wise."""
    return p.ge(0.0).select(1.0 / (1.0 + e), e / (1.0 + e))


struct BatchTape(Movable):
    var val: F64Ptr  # var i's lanes at [i * BATCH, (i + 1) * BATCH), on a cache line
    var grad: F64Ptr
    var ops: Array[Op, MAX_OPS]
    var n_vars: Int
    var n_ops: Int

    def __init__(out self):
        self.val = alloc_lanes(MAX_VARS * BATCH)
        self.grad = alloc_lanes(MAX_VARS * BATCH)
        self.ops = Array[Op, MAX_OPS](uninitialized=True)
        self.n_vars = 0
        self.n_ops = 0

    def __deinit__(deinit self):
        free_lanes(self.val)
        free_lanes(self.grad)

    @always_inline
    def reset(mut self):
        self.n_vars = 0
        self.n_ops = 0

    @always_inline
    def vals(self, i: Int) -> F64Ptr:
        return self.val.unsafe_offset(i * BATCH)

    @always_inline
    def grads(self, i: Int) -> F64Ptr:
        return self.grad.unsafe_offset(i * BATCH)

    @always_inline
    def leaf(mut self) -> Int:
        """A new var; the caller fills its lanes. Returns its id."""
        self.n_vars += 1
        return self.n_vars - 1

    @always_inline
    def push(mut self, kind: Int, a: Int, b: Int) -> Int:
        """Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill."""
        var out = self.leaf()
        self.ops[self.n_ops] = Op(kind, a, b, out)
        self.n_ops += 1
        return out

    @always_inline
    def push_sum(mut self, a: Int, b: Int) -> Int:
        var out = self.push(SUM, a, b)
        var o = self.vals(out)
        var u = self.vals(a)
        var v = self.vals(b)
        for j in range(0, BATCH, WIDTH):
            st(o, j, ld(u, j) + ld(v, j))
        return out

    @always_inline
    def push_prod(mut self, a: Int, b: Int) -> Int:
        var out = self.push(PROD, a, b)
        var o = self.vals(out)
        var u = self.vals(a)
        var v = self.vals(b)
        for j in range(0, BATCH, WIDTH):
            st(o, j, ld(u, j) * ld(v, j))
        return out

    @always_inline
    def push_softplus(mut self, a: Int) -> Int:
        # As in v2, exp(-|p|) gets a var of its own, named as the op's second input.
        var e = self.leaf()
        var p = self.vals(a)
        var ve = self.vals(e)
        exp_neg_abs_lanes[BATCH](p, ve)
        var out = self.push(SOFTPLUS, a, e)
        var o = self.vals(out)
        log1p_lanes[BATCH](ve, o)
        for j in range(0, BATCH, WIDTH):
            var pj = ld(p, j)
            var oj = ld(o, j)
            st(o, j, pj.gt(0.0).select(pj + oj, oj))  # softplus_e, lane-wise
        return out

    @always_inline
    def backward(mut self, root: Int):
        """Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule. Each
        input gets its own loop, so that an op whose two inputs are one var stays right."""
        for j in range(0, self.n_vars * BATCH, WIDTH):
            st(self.grad, j, V(0.0))
        var gout = self.grads(root)
        for j in range(0, BATCH, WIDTH):
            st(gout, j, V(1.0))
        for k in range(self.n_ops - 1, -1, -1):
            var op = self.ops[k]
            var g = self.grads(op.out)
            var ga = self.grads(op.a)
            var gb = self.grads(op.b)
            var va = self.vals(op.a)
            var vb = self.vals(op.b)
            if op.kind == SUM:
                for j in range(0, BATCH, WIDTH):
                    st(ga, j, ld(ga, j) + ld(g, j))
                for j in range(0, BATCH, WIDTH):
                    st(gb, j, ld(gb, j) + ld(g, j))
            elif op.kind == PROD:
                for j in range(0, BATCH, WIDTH):
                    st(ga, j, ld(ga, j) + ld(vb, j) * ld(g, j))
                for j in range(0, BATCH, WIDTH):
                    st(gb, j, ld(gb, j) + ld(va, j) * ld(g, j))
            else:  # SOFTPLUS: b holds exp(-|a|)
                for j in range(0, BATCH, WIDTH):
                    st(ga, j, ld(ga, j) + sigmoid_lanes(ld(va, j), ld(vb, j)) * ld(g, j))


@always_inline
def fill_inputs(x: F64Ptr, y: F64Ptr, seed: UInt64, first: Int, lanes: Int):
    """Samples first .. first+lanes-1 into the lanes of x and y; unused lanes get 0."""
    if lanes == BATCH:  # x_i is draw 2i + 1, y_i draw 2i + 2: WIDTH lanes at a time
        var step = SIMD[DType.uint64, WIDTH](0)
        for l in range(WIDTH):
            step[l] = UInt64(2 * l)
        for j in range(0, BATCH, WIDTH):
            var k = SIMD[DType.uint64, WIDTH](UInt64(2 * (first + j))) + step
            st(x, j, signed_unit_lanes(draw_lanes(seed, k + 1)))
            st(y, j, signed_unit_lanes(draw_lanes(seed, k + 2)))
        return
    for j in range(lanes):
        var xv, yv = sample(seed, first + j)
        x[unsafe_offset=j] = xv
        y[unsafe_offset=j] = yv
    for j in range(lanes, BATCH):
        x[unsafe_offset=j] = 0.0
        y[unsafe_offset=j] = 0.0


struct LaneSums(Movable):
    """Per-lane running sums, so that accumulating a batch is a vector add."""
    var f: F64Ptr
    var dx: F64Ptr
    var dy: F64Ptr

    def __init__(out self):
        self.f = alloc_lanes(BATCH)
        self.dx = alloc_lanes(BATCH)
        self.dy = alloc_lanes(BATCH)
        for j in range(0, BATCH, WIDTH):
            st(self.f, j, V(0.0))
            st(self.dx, j, V(0.0))
            st(self.dy, j, V(0.0))

    def __deinit__(deinit self):
        free_lanes(self.f)
        free_lanes(self.dx)
        free_lanes(self.dy)

    @always_inline
    def add(mut self, f: F64Ptr, dx: F64Ptr, dy: F64Ptr, lanes: Int):
        if lanes == BATCH:
            for j in range(0, BATCH, WIDTH):
                st(self.f, j, ld(self.f, j) + ld(f, j))
                st(self.dx, j, ld(self.dx, j) + ld(dx, j))
                st(self.dy, j, ld(self.dy, j) + ld(dy, j))
        else:
            for j in range(lanes):
                self.f[unsafe_offset=j] += f[unsafe_offset=j]
                self.dx[unsafe_offset=j] += dx[unsafe_offset=j]
                self.dy[unsafe_offset=j] += dy[unsafe_offset=j]

    def total(self) -> Sums:
        """The lanes added up in lane order."""
        var s = Sums(0.0, 0.0, 0.0)
        for j in range(BATCH):
            s = s + Sums(self.f[unsafe_offset=j], self.dx[unsafe_offset=j], self.dy[unsafe_offset=j])
        return s


@always_inline
def n_batches(n: Int) -> Int:
    return (n + BATCH - 1) // BATCH


def run_batches(seed: UInt64, n: Int, first_batch: Int, end_batch: Int) -> Sums:
    """Batches [first_batch, end_batch) of the n samples through one batch tape."""
    var tape = BatchTape()
    var acc = LaneSums()
    for batch in range(first_batch, end_batch):
        var first = batch * BATCH
        var lanes = min(n - first, BATCH)
        tape.reset()
        var x = tape.leaf()
        var y = tape.leaf()
        fill_inputs(tape.vals(x), tape.vals(y), seed, first, lanes)
        var s = tape.push_sum(x, y)
        var p = tape.push_prod(s, x)
        var f = tape.push_softplus(p)
        tape.backward(f)
        acc.add(tape.vals(f), tape.grads(x), tape.grads(y), lanes)
    return acc.total()


def run_v3(seed: UInt64, n: Int) -> Sums:
    return run_batches(seed, n, 0, n_batches(n))
