# Graph level v1 (pool): v0's node objects and links, but the nodes of the first sample
# are kept and remade for every later one, so the loop allocates nothing.
from libc.stdint cimport uint64_t, int64_t
from graph.recipe cimport GraphSums, graph_sums_add, as_tuple
from graph.nodes cimport NodeGraph
from graph.objects cimport record_nodes


def run_graph_v1(uint64_t seed, int m, int64_t n):
    cdef NodeGraph g = NodeGraph()
    cdef GraphSums total = GraphSums(0.0, 0.0, 0.0)
    cdef int64_t s
    for s in range(n):
        record_nodes(g, seed, s, m, True)
        g.backward()
        total = graph_sums_add(total, g.sums())
    return as_tuple(total)
