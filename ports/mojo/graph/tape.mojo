# Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
# every sample as a dynamic autograd does: contiguous arrays of vars {val, grad} and ops
# {kind, up to 4 input ids, first output id}, addressed by index; each result computed
# once when pushed; backward is an index loop over the ops in reverse.

from std.memory import Pointer
from core.ops import exp_neg_abs, softplus_e, sigmoid_e
from core.vmath import F64Ptr
from graph.recipe import (GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, GraphBuilder,
                          n_nodes, graph_input, record_ops, softmax4, softmax4_avg, graph_alloc, graph_free)


@fieldwise_init
struct GraphOp(ImplicitlyCopyable, Movable):
    var kind: Int32
    var a: Int32  # input ids; SOFTPLUS's b is its slot in `saved` (exp(-|a|))
    var b: Int32
    var c: Int32
    var d: Int32
    var out: Int32  # the (first) output id; SOFTMAX4's four are out .. out+3


comptime GraphOpPtr = Pointer[GraphOp, MutUntrackedOrigin]


struct GraphTape(GraphBuilder, Movable):
    var val: F64Ptr
    var grad: F64Ptr
    var ops: GraphOpPtr
    var saved: F64Ptr  # each SOFTPLUS's exp(-|a|), kept for backward's sigmoid
    var n_vars: Int
    var n_ops: Int
    var n_saved: Int

    def __init__(out self, m: Int):
        self.val = graph_alloc[Float64](0, n_nodes(m))
        self.grad = graph_alloc[Float64](0, n_nodes(m))
        self.ops = graph_alloc[GraphOp](0, m)
        self.saved = graph_alloc[Float64](0, m // 4 + 1)
        self.n_vars = 0
        self.n_ops = 0
        self.n_saved = 0

    def __deinit__(deinit self):
        graph_free(self.val)
        graph_free(self.grad)
        graph_free(self.ops)
        graph_free(self.saved)

    @always_inline
    def reset(mut self):
        self.n_vars = 0
        self.n_ops = 0
        self.n_saved = 0

    @always_inline
    def size(self) -> Int:
        return self.n_vars

    @always_inline
    def v(self, i: Int) -> Float64:
        return self.val[unsafe_offset=i]

    @always_inline
    def leaf(mut self, v: Float64) -> Int:
        """A new var holding v; returns its id."""
        self.val[unsafe_offset=self.n_vars] = v
        self.n_vars += 1
        return self.n_vars - 1

    @always_inline
    def push(mut self, kind: Int, a: Int, b: Int, c: Int, d: Int, v: Float64) -> Int:
        """Record op `kind` on inputs a..d with (first) result v; returns the result's id."""
        var out = self.leaf(v)
        self.ops[unsafe_offset=self.n_ops] = GraphOp(Int32(kind), Int32(a), Int32(b), Int32(c), Int32(d),
                                                     Int32(out))
        self.n_ops += 1
        return out

    @always_inline
    def push_softplus(mut self, a: Int):
        var p = self.v(a)
        var e = exp_neg_abs(p)
        var slot = self.n_saved
        self.saved[unsafe_offset=slot] = e
        self.n_saved += 1
        _ = self.push(GRAPH_SOFTPLUS, a, slot, 0, 0, softplus_e(p, e))

    @always_inline
    def push_sum4(mut self, a: Int, b: Int, c: Int, d: Int):
        _ = self.push(GRAPH_SUM4, a, b, c, d, ((self.v(a) + self.v(b)) + self.v(c)) + self.v(d))

    @always_inline
    def push_prod(mut self, a: Int, b: Int):
        _ = self.push(GRAPH_PROD, a, b, 0, 0, self.v(a) * self.v(b))

    @always_inline
    def push_softmax4(mut self, a: Int, b: Int, c: Int, d: Int):
        var o = softmax4(self.v(a), self.v(b), self.v(c), self.v(d))
        _ = self.push(GRAPH_SOFTMAX4, a, b, c, d, o[0])
        _ = self.leaf(o[1])
        _ = self.leaf(o[2])
        _ = self.leaf(o[3])

    def backward(mut self):
        """Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then each
        op's local rule, ops in reverse (G3)."""
        var v = self.val
        var g = self.grad
        for i in range(self.n_vars):
            g[unsafe_offset=i] = 1.0
        for k in range(self.n_ops - 1, -1, -1):
            var op = self.ops[unsafe_offset=k]
            var a = Int(op.a)
            var b = Int(op.b)
            var go = g[unsafe_offset=Int(op.out)]
            if op.kind == GRAPH_SOFTPLUS:
                g[unsafe_offset=a] += sigmoid_e(v[unsafe_offset=a], self.saved[unsafe_offset=b]) * go
            elif op.kind == GRAPH_SUM4:
                g[unsafe_offset=a] += go
                g[unsafe_offset=b] += go
                g[unsafe_offset=Int(op.c)] += go
                g[unsafe_offset=Int(op.d)] += go
            elif op.kind == GRAPH_PROD:
                g[unsafe_offset=a] += v[unsafe_offset=b] * go
                g[unsafe_offset=b] += v[unsafe_offset=a] * go
            else:  # SOFTMAX4
                var o = Int(op.out)
                var c = Int(op.c)
                var d = Int(op.d)
                var avg = softmax4_avg(v[unsafe_offset=o], v[unsafe_offset=o + 1], v[unsafe_offset=o + 2],
                                       v[unsafe_offset=o + 3], g[unsafe_offset=o], g[unsafe_offset=o + 1],
                                       g[unsafe_offset=o + 2], g[unsafe_offset=o + 3])
                g[unsafe_offset=a] += v[unsafe_offset=o] * (g[unsafe_offset=o] - avg)
                g[unsafe_offset=b] += v[unsafe_offset=o + 1] * (g[unsafe_offset=o + 1] - avg)
                g[unsafe_offset=c] += v[unsafe_offset=o + 2] * (g[unsafe_offset=o + 2] - avg)
                g[unsafe_offset=d] += v[unsafe_offset=o + 3] * (g[unsafe_offset=o + 3] - avg)

    def sums(self) -> GraphSums:
        """This sample's loss, grad_in and grad_all (G3), each added in index order."""
        var loss = 0.0
        var grad_in = 0.0
        var grad_all = 0.0
        for i in range(self.n_vars):
            loss += self.val[unsafe_offset=i]
        for i in range(N_INPUTS):
            grad_in += Float64(i + 1) * self.grad[unsafe_offset=i]
        for i in range(self.n_vars):
            grad_all += self.grad[unsafe_offset=i]
        return GraphSums(loss, grad_in, grad_all)


def record_graph(mut tape: GraphTape, seed: UInt64, s: Int, m: Int):
    """Sample s's forward pass: its inputs, then the M ops."""
    tape.reset()
    for i in range(N_INPUTS):
        _ = tape.leaf(graph_input(seed, s, i))
    record_ops(tape, m)


def run_graph_v2(seed: UInt64, m: Int, n: Int) -> GraphSums:
    var tape = GraphTape(m)
    var total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_graph(tape, seed, s, m)
        tape.backward()
        total = total + tape.sums()
    return total
