# Graph level v0 (objects): every node a fresh heap object per sample (a GraphNode,
# dropped when the next sample starts), linked to its inputs by references; backward walks
# the nodes in reverse creation order.
from libc.stdint cimport uint64_t, int64_t
from graph.recipe cimport (GraphSums, graph_sums_add, as_tuple, graph_input, op_inputs, N_INPUTS,
                           GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4)
from graph.nodes cimport NodeGraph


cdef inline int record_op(NodeGraph g, int kind) except -1:
    """An op of kind `kind` onto the graph."""
    cdef int ins[4]
    op_inputs(kind, g.size(), ins)
    if kind == GRAPH_SOFTPLUS:
        g.push_softplus(ins[0])
    elif kind == GRAPH_SUM4:
        g.push_sum4(ins[0], ins[1], ins[2], ins[3])
    elif kind == GRAPH_PROD:
        g.push_prod(ins[0], ins[1])
    else:
        g.push_softmax4(ins[0], ins[1], ins[2], ins[3])
    return 0


cdef int record_nodes(NodeGraph g, uint64_t seed, int64_t s, int m) except -1:
    """Sample s's forward pass: its inputs, then the M ops (onto new nodes, or a pool's, v1), a
    block of the four kinds at a time."""
    cdef int i, block, kind
    g.reset()
    for i in range(N_INPUTS):
        g.leaf(graph_input(seed, s, i))
    for block in range(m // 4):
        record_op(g, GRAPH_SOFTPLUS)
        record_op(g, GRAPH_SUM4)
        record_op(g, GRAPH_PROD)
        record_op(g, GRAPH_SOFTMAX4)
    for kind in range(m % 4):
        record_op(g, kind)
    return 0


def run_graph_v0(uint64_t seed, int m, int64_t n):
    cdef NodeGraph g = NodeGraph()
    cdef GraphSums total = GraphSums(0.0, 0.0, 0.0)
    cdef int64_t s
    for s in range(n):
        record_nodes(g, seed, s, m)
        g.backward()
        total = graph_sums_add(total, g.sums())
    return as_tuple(total)
