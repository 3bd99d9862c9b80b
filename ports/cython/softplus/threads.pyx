# Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
# OpenMP thread (Cython's prange; at most one a batch, core/threads), each with its own
# batch tape and lane sums; the partial sums are added in thread order, so a given T always
# gives the same digits.
from cython.parallel cimport prange
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.ops cimport Sums, sums_add, as_tuple
from core.vmath cimport alloc_or_die
from core.threads cimport team_size
from softplus.simd cimport run_batches, n_batches


cdef Sums run(uint64_t seed, int64_t n, int threads) noexcept nogil:
    cdef int64_t nb = n_batches(n)
    cdef int team = team_size(threads, nb)
    cdef Sums* partial = <Sums*>alloc_or_die(0, team * sizeof(Sums))
    cdef int t
    for t in prange(team, num_threads=team, schedule="static", chunksize=1):
        partial[t] = run_batches(seed, n, t * nb // team, (t + 1) * nb // team)
    cdef Sums total = Sums(0.0, 0.0, 0.0)
    for t in range(team):
        total = sums_add(total, partial[t])
    free(partial)
    return total


def run_v4(uint64_t seed, int64_t n, int threads):
    cdef Sums total
    with nogil:
        total = run(seed, n, threads)
    return as_tuple(total)
