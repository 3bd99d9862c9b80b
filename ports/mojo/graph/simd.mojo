# Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
# Each var holds GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes
# WIDTH at a time (graph/lanes), and exp/log1p are libmvec's at the target's width
# (core/vmath).

from core.rng import draw
from core.vmath import F64Ptr, WIDTH, V, ld, st, alloc_lanes, free_lanes, exp_lanes, log1p_lanes, exp_neg_abs_lanes
from graph.recipe import (GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, GraphBuilder,
                          n_nodes, graph_input, record_ops, graph_alloc, graph_free)
from graph.tape import GraphOp, GraphOpPtr
from graph.lanes import (sum4_chunk, mul_chunk, softplus_chunk, softmax_shift_chunk, softmax_norm_chunk,
                         acc_chunk, acc_mul_chunk, acc_sigmoid_chunk, softmax_backward_chunk)

# Lanes per var, a multiple of every vector width (the Codon program's choice,
# docs/findings/graph-where-the-time-goes.md).
comptime GRAPH_BATCH = 16


struct GraphBatchTape(GraphBuilder, Movable):
    var val: F64Ptr  # var i's lanes at [i * GRAPH_BATCH, (i + 1) * GRAPH_BATCH), on a cache line
    var grad: F64Ptr
    var ops: GraphOpPtr
    var saved: F64Ptr  # each SOFTPLUS's exp(-|a|) lanes, at its slot
    var n_vars: Int
    var n_ops: Int
    var n_saved: Int

    def __init__(out self, m: Int):
        self.val = alloc_lanes(n_nodes(m) * GRAPH_BATCH)
        self.grad = alloc_lanes(n_nodes(m) * GRAPH_BATCH)
        self.ops = graph_alloc[GraphOp](0, m)
        self.saved = alloc_lanes((m // 4 + 1) * GRAPH_BATCH)
        self.n_vars = 0
        self.n_ops = 0
        self.n_saved = 0

    def __deinit__(deinit self):
        free_lanes(self.val)
        free_lanes(self.grad)
        graph_free(self.ops)
        free_lanes(self.saved)

    @always_inline
    def reset(mut self):
        self.n_vars = 0
        self.n_ops = 0
        self.n_saved = 0

    @always_inline
    def size(self) -> Int:
        return self.n_vars

    @always_inline
    def vals(self, i: Int) -> F64Ptr:
        return self.val.unsafe_offset(i * GRAPH_BATCH)

    @always_inline
    def grads(self, i: Int) -> F64Ptr:
        return self.grad.unsafe_offset(i * GRAPH_BATCH)

    @always_inline
    def leaf(mut self) -> Int:
        """A new var; the caller fills its lanes. Returns its id."""
        self.n_vars += 1
        return self.n_vars - 1

    @always_inline
    def push(mut self, kind: Int, a: Int, b: Int, c: Int, d: Int) -> Int:
        """Record op `kind` on inputs a..d; returns its (first) output's id, for the caller to fill."""
        var out = self.leaf()
        self.ops[unsafe_offset=self.n_ops] = GraphOp(Int32(kind), Int32(a), Int32(b), Int32(c), Int32(d),
                                                     Int32(out))
        self.n_ops += 1
        return out

    @always_inline
    def push_softplus(mut self, a: Int):
        var slot = self.n_saved
        self.n_saved += 1
        var out = self.push(GRAPH_SOFTPLUS, a, slot, 0, 0)
        var p = self.vals(a)
        var e = self.saved.unsafe_offset(slot * GRAPH_BATCH)
        var o = self.vals(out)
        exp_neg_abs_lanes[GRAPH_BATCH](p, e)
        log1p_lanes[GRAPH_BATCH](e, o)
        comptime for j in range(0, GRAPH_BATCH, WIDTH):
            softplus_chunk(o.unsafe_offset(j), p.unsafe_offset(j))

    @always_inline
    def push_sum4(mut self, a: Int, b: Int, c: Int, d: Int):
        var o = self.vals(self.push(GRAPH_SUM4, a, b, c, d))
        var va = self.vals(a)
        var vb = self.vals(b)
        var vc = self.vals(c)
        var vd = self.vals(d)
        comptime for j in range(0, GRAPH_BATCH, WIDTH):
            sum4_chunk(o.unsafe_offset(j), va.unsafe_offset(j), vb.unsafe_offset(j), vc.unsafe_offset(j),
                       vd.unsafe_offset(j))

    @always_inline
    def push_prod(mut self, a: Int, b: Int):
        var o = self.vals(self.push(GRAPH_PROD, a, b, 0, 0))
        var va = self.vals(a)
        var vb = self.vals(b)
        comptime for j in range(0, GRAPH_BATCH, WIDTH):
            mul_chunk(o.unsafe_offset(j), va.unsafe_offset(j), vb.unsafe_offset(j))

    @always_inline
    def push_softmax4(mut self, a: Int, b: Int, c: Int, d: Int):
        var out = self.push(GRAPH_SOFTMAX4, a, b, c, d)
        _ = self.leaf()
        _ = self.leaf()
        _ = self.leaf()
        # The four outputs are consecutive vars: their 4 * GRAPH_BATCH lanes take one exp call.
        var o = self.vals(out)
        var va = self.vals(a)
        var vb = self.vals(b)
        var vc = self.vals(c)
        var vd = self.vals(d)
        comptime for j in range(0, GRAPH_BATCH, WIDTH):
            softmax_shift_chunk(o.unsafe_offset(j), va.unsafe_offset(j), vb.unsafe_offset(j),
                                vc.unsafe_offset(j), vd.unsafe_offset(j), GRAPH_BATCH)
        exp_lanes[4 * GRAPH_BATCH](o, o)
        comptime for j in range(0, GRAPH_BATCH, WIDTH):
            softmax_norm_chunk(o.unsafe_offset(j), GRAPH_BATCH)

    def backward(mut self):
        """Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3)."""
        for j in range(0, self.n_vars * GRAPH_BATCH, WIDTH):
            st(self.grad, j, V(1.0))
        for k in range(self.n_ops - 1, -1, -1):
            var op = self.ops[unsafe_offset=k]
            var g = self.grads(Int(op.out))
            var ga = self.grads(Int(op.a))
            var va = self.vals(Int(op.a))
            if op.kind == GRAPH_SOFTPLUS:
                var e = self.saved.unsafe_offset(Int(op.b) * GRAPH_BATCH)
                comptime for j in range(0, GRAPH_BATCH, WIDTH):
                    acc_sigmoid_chunk(ga.unsafe_offset(j), va.unsafe_offset(j), e.unsafe_offset(j),
                                      g.unsafe_offset(j))
            elif op.kind == GRAPH_SUM4:
                var gb = self.grads(Int(op.b))
                var gc = self.grads(Int(op.c))
                var gd = self.grads(Int(op.d))
                comptime for j in range(0, GRAPH_BATCH, WIDTH):
                    acc_chunk(ga.unsafe_offset(j), g.unsafe_offset(j))
                    acc_chunk(gb.unsafe_offset(j), g.unsafe_offset(j))
                    acc_chunk(gc.unsafe_offset(j), g.unsafe_offset(j))
                    acc_chunk(gd.unsafe_offset(j), g.unsafe_offset(j))
            elif op.kind == GRAPH_PROD:
                var gb = self.grads(Int(op.b))
                var vb = self.vals(Int(op.b))
                comptime for j in range(0, GRAPH_BATCH, WIDTH):
                    acc_mul_chunk(ga.unsafe_offset(j), vb.unsafe_offset(j), g.unsafe_offset(j))
                comptime for j in range(0, GRAPH_BATCH, WIDTH):
                    acc_mul_chunk(gb.unsafe_offset(j), va.unsafe_offset(j), g.unsafe_offset(j))
            else:  # SOFTMAX4
                var o = self.vals(Int(op.out))
                var gb = self.grads(Int(op.b))
                var gc = self.grads(Int(op.c))
                var gd = self.grads(Int(op.d))
                comptime for j in range(0, GRAPH_BATCH, WIDTH):
                    softmax_backward_chunk(o.unsafe_offset(j), g.unsafe_offset(j), GRAPH_BATCH,
                                           ga.unsafe_offset(j), gb.unsafe_offset(j), gc.unsafe_offset(j),
                                           gd.unsafe_offset(j))


def fill_graph_inputs(mut tape: GraphBatchTape, seed: UInt64, first: Int, lanes: Int):
    """Samples first .. first+lanes-1's inputs into the 100 input vars; unused lanes get 0."""
    tape.reset()
    for i in range(N_INPUTS):
        var v = tape.vals(tape.leaf())
        for j in range(lanes):
            v[unsafe_offset=j] = graph_input(seed, first + j, i)
        for j in range(lanes, GRAPH_BATCH):
            v[unsafe_offset=j] = 0.0


struct GraphLaneSums(Movable):
    """Per-lane running checksums, so that a batch is added with vector adds."""
    var loss: F64Ptr
    var grad_in: F64Ptr
    var grad_all: F64Ptr
    var tmp: F64Ptr  # one batch's loss, grad_in, grad_all, and the weights 1..100 (lane-wise)

    def __init__(out self):
        self.loss = alloc_lanes(GRAPH_BATCH)
        self.grad_in = alloc_lanes(GRAPH_BATCH)
        self.grad_all = alloc_lanes(GRAPH_BATCH)
        self.tmp = alloc_lanes(4 * GRAPH_BATCH)
        for j in range(GRAPH_BATCH):
            self.loss[unsafe_offset=j] = 0.0
            self.grad_in[unsafe_offset=j] = 0.0
            self.grad_all[unsafe_offset=j] = 0.0

    def __deinit__(deinit self):
        free_lanes(self.loss)
        free_lanes(self.grad_in)
        free_lanes(self.grad_all)
        free_lanes(self.tmp)

    def add(mut self, tape: GraphBatchTape, lanes: Int):
        """Each lane's sample checksums (G3, nodes in index order), added for the used lanes."""
        var loss = self.tmp
        var grad_in = self.tmp.unsafe_offset(GRAPH_BATCH)
        var grad_all = self.tmp.unsafe_offset(2 * GRAPH_BATCH)
        var weight = self.tmp.unsafe_offset(3 * GRAPH_BATCH)
        for j in range(0, GRAPH_BATCH, WIDTH):
            st(loss, j, V(0.0))
            st(grad_in, j, V(0.0))
            st(grad_all, j, V(0.0))
        for i in range(tape.n_vars):
            var v = tape.vals(i)
            var g = tape.grads(i)
            comptime for j in range(0, GRAPH_BATCH, WIDTH):
                acc_chunk(loss.unsafe_offset(j), v.unsafe_offset(j))
                acc_chunk(grad_all.unsafe_offset(j), g.unsafe_offset(j))
        for i in range(N_INPUTS):
            var g = tape.grads(i)
            for j in range(0, GRAPH_BATCH, WIDTH):
                st(weight, j, V(Float64(i + 1)))
            comptime for j in range(0, GRAPH_BATCH, WIDTH):
                acc_mul_chunk(grad_in.unsafe_offset(j), weight.unsafe_offset(j), g.unsafe_offset(j))
        for j in range(lanes):
            self.loss[unsafe_offset=j] += loss[unsafe_offset=j]
            self.grad_in[unsafe_offset=j] += grad_in[unsafe_offset=j]
            self.grad_all[unsafe_offset=j] += grad_all[unsafe_offset=j]

    def total(self) -> GraphSums:
        """The lanes added up in lane order."""
        var s = GraphSums(0.0, 0.0, 0.0)
        for j in range(GRAPH_BATCH):
            s = s + GraphSums(self.loss[unsafe_offset=j], self.grad_in[unsafe_offset=j],
                              self.grad_all[unsafe_offset=j])
        return s


@always_inline
def n_graph_batches(n: Int) -> Int:
    return (n + GRAPH_BATCH - 1) // GRAPH_BATCH


def run_graph_batches(seed: UInt64, m: Int, n: Int, first_batch: Int, end_batch: Int) -> GraphSums:
    """Batches [first_batch, end_batch) of the n samples through one batch tape. No caller passes
    an empty range (v4's team has at most one thread a batch: core/threads); one would allocate
    nothing."""
    if first_batch >= end_batch:
        return GraphSums(0.0, 0.0, 0.0)
    var tape = GraphBatchTape(m)
    var acc = GraphLaneSums()
    for batch in range(first_batch, end_batch):
        var first = batch * GRAPH_BATCH
        var lanes = min(n - first, GRAPH_BATCH)
        fill_graph_inputs(tape, seed, first, lanes)
        record_ops(tape, m)
        tape.backward()
        acc.add(tape, lanes)
    return acc.total()


def run_graph_v3(seed: UInt64, m: Int, n: Int) -> GraphSums:
    return run_graph_batches(seed, m, n, 0, n_graph_batches(n))
