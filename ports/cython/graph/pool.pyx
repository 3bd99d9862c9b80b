# Graph level v1 (pool): v0's node objects and links, but from a pool of a sample's nodes
# made once, before the first sample, and remade for every sample, so the loop allocates
# nothing.
from libc.stdint cimport uint64_t, int64_t
from graph.recipe cimport GraphSums, graph_sums_add, as_tuple, n_nodes
from graph.nodes cimport NodeGraph
from graph.objects cimport record_nodes


def run_graph_v1(uint64_t seed, int m, int64_t n):
    cdef NodeGraph g = NodeGraph()
    cdef GraphSums total = GraphSums(0.0, 0.0, 0.0)
    cdef int64_t s
    g.make_pool(n_nodes(m))
    for s in range(n):
        record_nodes(g, seed, s, m)
        g.backward()
        total = graph_sums_add(total, g.sums())
    return as_tuple(total)
