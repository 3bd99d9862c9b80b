# Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
# every sample as a dynamic autograd does: contiguous arrays of vars {val, grad} and ops
# {kind, up to 4 input ids, first output id}, addressed by index; each result computed
# once when pushed; backward is an index loop over the ops in reverse.
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.ops cimport exp_neg_abs, softplus_e, sigmoid_e
from core.vmath cimport alloc_or_die
from graph.recipe cimport (GraphSums, graph_sums_add, as_tuple, n_nodes, graph_input, op_inputs, softmax4,
                           softmax4_avg, N_INPUTS, GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4)


cdef struct GraphTape:
    double* val
    double* grad
    GraphOp* ops
    double* saved  # each SOFTPLUS's exp(-|a|), kept for backward's sigmoid
    int n_vars
    int n_ops
    int n_saved


cdef void graph_tape_init(GraphTape* t, int m) noexcept nogil:
    t.val = <double*>alloc_or_die(0, n_nodes(m) * sizeof(double))
    t.grad = <double*>alloc_or_die(0, n_nodes(m) * sizeof(double))
    t.ops = <GraphOp*>alloc_or_die(0, m * sizeof(GraphOp))
    t.saved = <double*>alloc_or_die(0, (m // 4 + 1) * sizeof(double))
    graph_tape_reset(t)


cdef inline void graph_tape_reset(GraphTape* t) noexcept nogil:
    t.n_vars = 0
    t.n_ops = 0
    t.n_saved = 0


cdef void graph_tape_free(GraphTape* t) noexcept nogil:
    free(t.val)
    free(t.grad)
    free(t.ops)
    free(t.saved)


cdef inline int graph_tape_size(const GraphTape* t) noexcept nogil:
    return t.n_vars


cdef inline int graph_tape_leaf(GraphTape* t, double v) noexcept nogil:
    """A new var holding v; returns its id."""
    t.val[t.n_vars] = v
    t.n_vars += 1
    return t.n_vars - 1


cdef inline int graph_tape_push(GraphTape* t, int kind, int a, int b, int c, int d, double v) noexcept nogil:
    """Record op `kind` on inputs a..d with (first) result v; returns the result's id."""
    cdef int out = graph_tape_leaf(t, v)
    t.ops[t.n_ops] = GraphOp(kind, a, b, c, d, out)
    t.n_ops += 1
    return out


cdef inline int graph_tape_push_softplus(GraphTape* t, int a) noexcept nogil:
    cdef double p = t.val[a]
    cdef double e = exp_neg_abs(p)
    cdef int slot = t.n_saved
    t.saved[slot] = e
    t.n_saved += 1
    return graph_tape_push(t, GRAPH_SOFTPLUS, a, slot, 0, 0, softplus_e(p, e))


cdef inline int graph_tape_push_sum4(GraphTape* t, int a, int b, int c, int d) noexcept nogil:
    cdef const double* v = t.val
    return graph_tape_push(t, GRAPH_SUM4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d])


cdef inline int graph_tape_push_prod(GraphTape* t, int a, int b) noexcept nogil:
    return graph_tape_push(t, GRAPH_PROD, a, b, 0, 0, t.val[a] * t.val[b])


cdef inline int graph_tape_push_softmax4(GraphTape* t, int a, int b, int c, int d) noexcept nogil:
    cdef const double* v = t.val
    cdef double o[4]
    softmax4(v[a], v[b], v[c], v[d], o)
    cdef int out = graph_tape_push(t, GRAPH_SOFTMAX4, a, b, c, d, o[0])
    graph_tape_leaf(t, o[1])
    graph_tape_leaf(t, o[2])
    graph_tape_leaf(t, o[3])
    return out


cdef void graph_tape_backward(GraphTape* t) noexcept nogil:
    """Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then each
    op's local rule, ops in reverse (G3)."""
    cdef const double* v = t.val
    cdef double* g = t.grad
    cdef int i, k, o
    cdef GraphOp op
    cdef double go, avg
    for i in range(t.n_vars):
        g[i] = 1.0
    for k in range(t.n_ops - 1, -1, -1):
        op = t.ops[k]
        go = g[op.out]
        if op.kind == GRAPH_SOFTPLUS:
            g[op.a] += sigmoid_e(v[op.a], t.saved[op.b]) * go
        elif op.kind == GRAPH_SUM4:
            g[op.a] += go
            g[op.b] += go
            g[op.c] += go
            g[op.d] += go
        elif op.kind == GRAPH_PROD:
            g[op.a] += v[op.b] * go
            g[op.b] += v[op.a] * go
        else:  # SOFTMAX4
            o = op.out
            avg = softmax4_avg(v[o], v[o + 1], v[o + 2], v[o + 3], g[o], g[o + 1], g[o + 2], g[o + 3])
            g[op.a] += v[o] * (g[o] - avg)
            g[op.b] += v[o + 1] * (g[o + 1] - avg)
            g[op.c] += v[o + 2] * (g[o + 2] - avg)
            g[op.d] += v[o + 3] * (g[o + 3] - avg)


cdef GraphSums graph_tape_sums(const GraphTape* t) noexcept nogil:
    """This sample's loss, grad_in and grad_all (G3), each added in index order."""
    cdef double loss = 0.0, grad_in = 0.0, grad_all = 0.0
    cdef int i
    for i in range(t.n_vars):
        loss += t.val[i]
    for i in range(N_INPUTS):
        grad_in += <double>(i + 1) * t.grad[i]
    for i in range(t.n_vars):
        grad_all += t.grad[i]
    return GraphSums(loss, grad_in, grad_all)


cdef inline void record_op(GraphTape* tape, int kind) noexcept nogil:
    """An op of kind `kind` onto the tape."""
    cdef int ins[4]
    op_inputs(kind, graph_tape_size(tape), ins)
    if kind == GRAPH_SOFTPLUS:
        graph_tape_push_softplus(tape, ins[0])
    elif kind == GRAPH_SUM4:
        graph_tape_push_sum4(tape, ins[0], ins[1], ins[2], ins[3])
    elif kind == GRAPH_PROD:
        graph_tape_push_prod(tape, ins[0], ins[1])
    else:
        graph_tape_push_softmax4(tape, ins[0], ins[1], ins[2], ins[3])


cdef void record_graph(GraphTape* tape, uint64_t seed, int64_t s, int m) noexcept nogil:
    """Sample s's forward pass: its inputs, then the M ops, a block of the four kinds at a time."""
    cdef int i, block, kind
    graph_tape_reset(tape)
    for i in range(N_INPUTS):
        graph_tape_leaf(tape, graph_input(seed, s, i))
    for block in range(m // 4):
        record_op(tape, GRAPH_SOFTPLUS)
        record_op(tape, GRAPH_SUM4)
        record_op(tape, GRAPH_PROD)
        record_op(tape, GRAPH_SOFTMAX4)
    for kind in range(m % 4):
        record_op(tape, kind)


cdef GraphSums run(uint64_t seed, int m, int64_t n) noexcept nogil:
    cdef GraphTape tape
    graph_tape_init(&tape, m)
    cdef GraphSums total = GraphSums(0.0, 0.0, 0.0)
    cdef int64_t s
    for s in range(n):
        record_graph(&tape, seed, s, m)
        graph_tape_backward(&tape)
        total = graph_sums_add(total, graph_tape_sums(&tape))
    graph_tape_free(&tape)
    return total


def run_graph_v2(uint64_t seed, int m, int64_t n):
    return as_tuple(run(seed, m, n))
