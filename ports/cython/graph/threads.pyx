# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per OpenMP thread (Cython's prange), each with its own batch tape and lane sums, added in
# thread order.
from cython.parallel cimport prange
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.vmath cimport alloc_or_die
from graph.recipe cimport GraphSums, graph_sums_add, as_tuple
from graph.simd cimport run_graph_batches, n_graph_batches


def run_graph_v4(uint64_t seed, int m, int64_t n, int threads):
    cdef int64_t nb = n_graph_batches(n)
    cdef GraphSums* partial = <GraphSums*>alloc_or_die(0, threads * sizeof(GraphSums))
    cdef int t
    for t in prange(threads, nogil=True, num_threads=threads, schedule="static", chunksize=1):
        partial[t] = run_graph_batches(seed, m, n, t * nb // threads, (t + 1) * nb // threads)
    cdef GraphSums total = GraphSums(0.0, 0.0, 0.0)
    for t in range(threads):
        total = graph_sums_add(total, partial[t])
    free(partial)
    return as_tuple(total)
