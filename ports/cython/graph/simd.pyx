# Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
# Each var holds GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes
# (graph/lanes.pxd) that gcc vectorizes, and exp/log1p are libmvec's at the target's width
# (core/vmath.pxd). A batch's vals and grads take n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB
# at 16 lanes and 10,000 ops, past L2, in L3 (the Codon program's choice,
# docs/findings/graph-where-the-time-goes.md).
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.vmath cimport alloc_or_die, ALIGN, exp_neg_abs_lanes, log1p_lanes, exp_lanes_in_place
from graph.recipe cimport (GraphSums, graph_sums_add, as_tuple, n_nodes, graph_input, op_inputs, N_INPUTS,
                           GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4)
from graph.tape cimport GraphOp
from graph.lanes cimport (GRAPH_BATCH, sum4_lanes, mul_lanes, softplus_lanes, softmax_shift_lanes,
                          softmax_norm_lanes, acc_lanes, acc_mul_lanes, acc_sigmoid_lanes,
                          softmax_backward_lanes, acc2_lanes, acc_scaled_lanes)


cdef struct GraphBatchTape:
    double* val    # var i's lanes at [i * GRAPH_BATCH, (i + 1) * GRAPH_BATCH), on a cache line
    double* grad
    GraphOp* ops
    double* saved  # each SOFTPLUS's exp(-|a|) lanes, at its slot
    int n_vars
    int n_ops
    int n_saved


cdef void graph_batch_init(GraphBatchTape* t, int m) noexcept nogil:
    """The lane arrays on cache lines (n * GRAPH_BATCH doubles is a whole number of them)."""
    t.val = <double*>alloc_or_die(ALIGN, n_nodes(m) * GRAPH_BATCH * sizeof(double))
    t.grad = <double*>alloc_or_die(ALIGN, n_nodes(m) * GRAPH_BATCH * sizeof(double))
    t.ops = <GraphOp*>alloc_or_die(0, m * sizeof(GraphOp))
    t.saved = <double*>alloc_or_die(ALIGN, (m // 4 + 1) * GRAPH_BATCH * sizeof(double))
    graph_batch_reset(t)


cdef inline void graph_batch_reset(GraphBatchTape* t) noexcept nogil:
    t.n_vars = 0
    t.n_ops = 0
    t.n_saved = 0


cdef void graph_batch_free(GraphBatchTape* t) noexcept nogil:
    free(t.val)
    free(t.grad)
    free(t.ops)
    free(t.saved)


cdef inline int graph_batch_size(const GraphBatchTape* t) noexcept nogil:
    return t.n_vars


cdef inline double* graph_batch_vals(const GraphBatchTape* t, int i) noexcept nogil:
    return t.val + <size_t>i * GRAPH_BATCH


cdef inline double* graph_batch_grads(const GraphBatchTape* t, int i) noexcept nogil:
    return t.grad + <size_t>i * GRAPH_BATCH


cdef inline int graph_batch_leaf(GraphBatchTape* t) noexcept nogil:
    """A new var; the caller fills its lanes. Returns its id."""
    t.n_vars += 1
    return t.n_vars - 1


cdef inline int graph_batch_push(GraphBatchTape* t, int kind, int a, int b, int c, int d) noexcept nogil:
    """Record op `kind` on inputs a..d; returns its (first) output's id, for the caller to fill."""
    cdef int out = graph_batch_leaf(t)
    t.ops[t.n_ops] = GraphOp(kind, a, b, c, d, out)
    t.n_ops += 1
    return out


cdef inline void graph_batch_push_softplus(GraphBatchTape* t, int a) noexcept nogil:
    cdef int slot = t.n_saved
    t.n_saved += 1
    cdef int out = graph_batch_push(t, GRAPH_SOFTPLUS, a, slot, 0, 0)
    cdef double* e = t.saved + <size_t>slot * GRAPH_BATCH
    exp_neg_abs_lanes(graph_batch_vals(t, a), e, GRAPH_BATCH)
    log1p_lanes(e, graph_batch_vals(t, out), GRAPH_BATCH)
    softplus_lanes(graph_batch_vals(t, out), graph_batch_vals(t, a))


cdef inline void graph_batch_push_sum4(GraphBatchTape* t, int a, int b, int c, int d) noexcept nogil:
    sum4_lanes(graph_batch_vals(t, graph_batch_push(t, GRAPH_SUM4, a, b, c, d)), graph_batch_vals(t, a),
               graph_batch_vals(t, b), graph_batch_vals(t, c), graph_batch_vals(t, d))


cdef inline void graph_batch_push_prod(GraphBatchTape* t, int a, int b) noexcept nogil:
    mul_lanes(graph_batch_vals(t, graph_batch_push(t, GRAPH_PROD, a, b, 0, 0)), graph_batch_vals(t, a),
              graph_batch_vals(t, b))


cdef inline void graph_batch_push_softmax4(GraphBatchTape* t, int a, int b, int c, int d) noexcept nogil:
    cdef int out = graph_batch_push(t, GRAPH_SOFTMAX4, a, b, c, d)
    graph_batch_leaf(t)
    graph_batch_leaf(t)
    graph_batch_leaf(t)
    # The four outputs are consecutive vars: their 4 * GRAPH_BATCH lanes take one exp loop.
    cdef double* o = graph_batch_vals(t, out)
    softmax_shift_lanes(o, o + GRAPH_BATCH, o + 2 * GRAPH_BATCH, o + 3 * GRAPH_BATCH, graph_batch_vals(t, a),
                        graph_batch_vals(t, b), graph_batch_vals(t, c), graph_batch_vals(t, d))
    exp_lanes_in_place(o, 4 * GRAPH_BATCH)
    softmax_norm_lanes(o, o + GRAPH_BATCH, o + 2 * GRAPH_BATCH, o + 3 * GRAPH_BATCH)


cdef void graph_batch_backward(GraphBatchTape* t) noexcept nogil:
    """Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3)."""
    cdef size_t j
    cdef int k
    cdef GraphOp op
    cdef const double* g
    cdef const double* o
    for j in range(<size_t>t.n_vars * GRAPH_BATCH):
        t.grad[j] = 1.0
    for k in range(t.n_ops - 1, -1, -1):
        op = t.ops[k]
        g = graph_batch_grads(t, op.out)
        if op.kind == GRAPH_SOFTPLUS:
            acc_sigmoid_lanes(graph_batch_grads(t, op.a), graph_batch_vals(t, op.a),
                              t.saved + <size_t>op.b * GRAPH_BATCH, g)
        elif op.kind == GRAPH_SUM4:
            acc_lanes(graph_batch_grads(t, op.a), g)
            acc_lanes(graph_batch_grads(t, op.b), g)
            acc_lanes(graph_batch_grads(t, op.c), g)
            acc_lanes(graph_batch_grads(t, op.d), g)
        elif op.kind == GRAPH_PROD:
            acc_mul_lanes(graph_batch_grads(t, op.a), graph_batch_vals(t, op.b), g)
            acc_mul_lanes(graph_batch_grads(t, op.b), graph_batch_vals(t, op.a), g)
        else:  # SOFTMAX4
            o = graph_batch_vals(t, op.out)
            softmax_backward_lanes(o, o + GRAPH_BATCH, o + 2 * GRAPH_BATCH, o + 3 * GRAPH_BATCH,
                                   g, g + GRAPH_BATCH, g + 2 * GRAPH_BATCH, g + 3 * GRAPH_BATCH,
                                   graph_batch_grads(t, op.a), graph_batch_grads(t, op.b),
                                   graph_batch_grads(t, op.c), graph_batch_grads(t, op.d))


cdef void fill_graph_inputs(GraphBatchTape* tape, uint64_t seed, int64_t first, int count) noexcept nogil:
    """Samples first .. first+count-1's inputs into the 100 input vars; unused lanes get 0."""
    cdef int i, j
    cdef double* v
    graph_batch_reset(tape)
    for i in range(N_INPUTS):
        v = graph_batch_vals(tape, graph_batch_leaf(tape))
        for j in range(count):
            v[j] = graph_input(seed, first + j, i)
        for j in range(count, GRAPH_BATCH):
            v[j] = 0.0


cdef inline void record_op(GraphBatchTape* tape, int kind) noexcept nogil:
    """An op of kind `kind` onto the batch tape."""
    cdef int ins[4]
    op_inputs(kind, graph_batch_size(tape), ins)
    if kind == GRAPH_SOFTPLUS:
        graph_batch_push_softplus(tape, ins[0])
    elif kind == GRAPH_SUM4:
        graph_batch_push_sum4(tape, ins[0], ins[1], ins[2], ins[3])
    elif kind == GRAPH_PROD:
        graph_batch_push_prod(tape, ins[0], ins[1])
    else:
        graph_batch_push_softmax4(tape, ins[0], ins[1], ins[2], ins[3])


cdef void record_batch(GraphBatchTape* tape, int m) noexcept nogil:
    """The M ops onto the batch tape (its inputs filled), a block of the four kinds at a time."""
    cdef int block, kind
    for block in range(m // 4):
        record_op(tape, GRAPH_SOFTPLUS)
        record_op(tape, GRAPH_SUM4)
        record_op(tape, GRAPH_PROD)
        record_op(tape, GRAPH_SOFTMAX4)
    for kind in range(m % 4):
        record_op(tape, kind)


cdef struct GraphLaneSums:
    # per-lane running checksums, so that a batch is added with vector adds
    double loss[GRAPH_BATCH]
    double grad_in[GRAPH_BATCH]
    double grad_all[GRAPH_BATCH]


cdef void graph_lane_sums_init(GraphLaneSums* acc) noexcept nogil:
    cdef int j
    for j in range(GRAPH_BATCH):
        acc.loss[j] = 0.0
        acc.grad_in[j] = 0.0
        acc.grad_all[j] = 0.0


cdef void graph_lane_sums_add(GraphLaneSums* acc, GraphLaneSums* sample, const GraphBatchTape* tape,
                              int count) noexcept nogil:
    """Each lane's sample checksums (G3, nodes in index order; in `sample`, scratch), added to
    acc for the used lanes."""
    cdef int i, j
    graph_lane_sums_init(sample)
    for i in range(tape.n_vars):
        acc2_lanes(sample.loss, sample.grad_all, graph_batch_vals(tape, i), graph_batch_grads(tape, i))
    for i in range(N_INPUTS):
        acc_scaled_lanes(sample.grad_in, <double>(i + 1), graph_batch_grads(tape, i))
    for j in range(count):
        acc.loss[j] += sample.loss[j]
        acc.grad_in[j] += sample.grad_in[j]
        acc.grad_all[j] += sample.grad_all[j]


cdef GraphSums graph_lane_sums_total(const GraphLaneSums* acc) noexcept nogil:
    """The lanes added up in lane order."""
    cdef GraphSums s = GraphSums(0.0, 0.0, 0.0)
    cdef int j
    for j in range(GRAPH_BATCH):
        s = graph_sums_add(s, GraphSums(acc.loss[j], acc.grad_in[j], acc.grad_all[j]))
    return s


cdef GraphSums run_graph_batches(uint64_t seed, int m, int64_t n, int64_t first_batch, int64_t end_batch) noexcept nogil:
    """Batches [first_batch, end_batch) of the n samples through one batch tape. An empty range
    allocates nothing: a tape of 10^6 ops is 450 MB."""
    if first_batch >= end_batch:
        return GraphSums(0.0, 0.0, 0.0)
    cdef GraphBatchTape tape
    graph_batch_init(&tape, m)
    # acc and the scratch sums of one batch, each on a cache line
    cdef GraphLaneSums* acc = <GraphLaneSums*>alloc_or_die(ALIGN, 2 * sizeof(GraphLaneSums))
    cdef int64_t batch, first
    cdef int count
    graph_lane_sums_init(acc)
    for batch in range(first_batch, end_batch):
        first = batch * GRAPH_BATCH
        count = <int>(n - first) if n - first < GRAPH_BATCH else GRAPH_BATCH
        fill_graph_inputs(&tape, seed, first, count)
        record_batch(&tape, m)
        graph_batch_backward(&tape)
        graph_lane_sums_add(acc, acc + 1, &tape, count)
    graph_batch_free(&tape)
    cdef GraphSums total = graph_lane_sums_total(acc)
    free(acc)
    return total


def run_graph_v3(uint64_t seed, int m, int64_t n):
    return as_tuple(run_graph_batches(seed, m, n, 0, n_graph_batches(n)))
