# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per OpenMP thread (Cython's prange; at most one a batch, core/threads), each with its own
# batch tape and lane sums, added in thread order.
from cython.parallel cimport prange
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.vmath cimport alloc_or_die
from core.threads cimport team_size
from graph.recipe cimport GraphSums, graph_sums_add, as_tuple, n_nodes
from graph.simd cimport run_graph_batches, n_graph_batches
from graph.lanes cimport GRAPH_BATCH


def run_graph_v4(uint64_t seed, int m, int64_t n, int threads):
    cdef int64_t nb = n_graph_batches(n)
    cdef int team = team_size(threads, nb)
    cdef GraphSums* partial = <GraphSums*>alloc_or_die(0, team * sizeof(GraphSums))
    cdef int t
    for t in prange(team, nogil=True, num_threads=team, schedule="static", chunksize=1):
        partial[t] = run_graph_batches(seed, m, n, t * nb // team, (t + 1) * nb // team)
    cdef GraphSums total = GraphSums(0.0, 0.0, 0.0)
    for t in range(team):
        total = graph_sums_add(total, partial[t])
    free(partial)
    return as_tuple(total)


def tapes_bytes(level, int m, int64_t n, int threads):
    """The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and
    grad doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each
    thread of the team, team_size). The ops and saved lanes come on top; v0 and v1's node objects
    are counted as tape entries (docs/contract-graph.md)."""
    cdef int64_t lanes = GRAPH_BATCH if level in ("v3", "v4") else 1
    cdef int64_t tapes = team_size(threads, n_graph_batches(n)) if level == "v4" else 1
    return tapes * lanes * n_nodes(m) * 16
