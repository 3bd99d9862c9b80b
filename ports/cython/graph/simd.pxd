# Graph level v3's batches (graph/simd.pyx), declared for v4 (threads).
from libc.stdint cimport uint64_t, int64_t
from graph.recipe cimport GraphSums
from graph.lanes cimport GRAPH_BATCH


cdef inline int64_t n_graph_batches(int64_t n) noexcept nogil:
    return (n + GRAPH_BATCH - 1) // GRAPH_BATCH


cdef GraphSums run_graph_batches(uint64_t seed, int m, int64_t n, int64_t first_batch, int64_t end_batch) noexcept nogil
