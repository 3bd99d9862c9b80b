# The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
# level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
# scalar forward math of an op, and the per-sample checksums. C-level functions, inlined
# into each level's module.
from libc.stdint cimport uint64_t, int64_t
from libc.math cimport exp
from core.rng cimport draw, unit

# The graph workload's op kinds, defined here once for every graph level; GRAPH_ keeps them
# apart from the softplus workload's kinds, which share three names, two with other values.
cdef enum:
    GRAPH_LEAF = -1  # a node no op made: an input
    GRAPH_SOFTPLUS = 0  # op k has kind k % 4, in this order
    GRAPH_SUM4 = 1
    GRAPH_PROD = 2
    GRAPH_SOFTMAX4 = 3
    N_INPUTS = 100


cdef struct GraphSums:
    # The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3).
    double loss
    double grad_in
    double grad_all


cdef inline GraphSums graph_sums_add(GraphSums a, GraphSums o) noexcept nogil:
    return GraphSums(a.loss + o.loss, a.grad_in + o.grad_in, a.grad_all + o.grad_all)


cdef inline tuple as_tuple(GraphSums s):
    """The checksums for the launcher, which prints them (sum_loss, sum_grad_in, sum_grad_all)."""
    return (s.loss, s.grad_in, s.grad_all)


cdef inline int n_nodes(int m) noexcept nogil:
    """Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4."""
    return N_INPUTS + m + 3 * (m // 4)


cdef inline double graph_input(uint64_t seed, int64_t s, int i) noexcept nogil:
    """Input i of sample s, in [-1, 1) (G1)."""
    return 2.0 * unit(draw(seed, N_INPUTS * s + i + 1)) - 1.0


cdef inline void op_inputs(int kind, int n, int* ins) noexcept nogil:
    """The input ids of an op of kind `kind` recorded when n nodes exist, into ins[0..3] (as
    many as the kind has; G2). Op k's kind is k % 4: every level's record loop (record_nodes,
    record_graph, record_batch) goes a block of the four kinds at a time, through its
    record_op, then the first M % 4 of one more block, so that no op branches on its kind."""
    if kind == GRAPH_SOFTPLUS:
        ins[0] = n - 10
    elif kind == GRAPH_SUM4:
        ins[0] = n - 30
        ins[1] = n - 25
        ins[2] = n - 20
        ins[3] = n - 15
    elif kind == GRAPH_PROD:
        ins[0] = n - 20
        ins[1] = n - 10
    else:
        ins[0] = n - 4
        ins[1] = n - 3
        ins[2] = n - 2
        ins[3] = n - 1


cdef inline double max2(double a, double b) noexcept nogil:
    """Python's max(a, b): b if b > a, else a."""
    return b if b > a else a


cdef inline void softmax4(double a, double b, double c, double d, double* out) noexcept nogil:
    """out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3."""
    cdef double m = max2(max2(a, b), max2(c, d))
    cdef double e0 = exp(a - m), e1 = exp(b - m), e2 = exp(c - m), e3 = exp(d - m)
    cdef double total = ((e0 + e1) + e2) + e3
    out[0] = e0 / total
    out[1] = e1 / total
    out[2] = e2 / total
    out[3] = e3 / total


cdef inline double softmax4_avg(double o0, double o1, double o2, double o3,
                                double g0, double g1, double g2, double g3) noexcept nogil:
    """SOFTMAX4's backward term: sum of o_j * g[out_j], left to right."""
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3
