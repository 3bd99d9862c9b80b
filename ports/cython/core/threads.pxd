# The team of threads of the v4 levels, shared by both workloads (the Codon program's
# core/threads; here each level's prange is the team).
from libc.stdint cimport int64_t


cdef inline int team_size(int threads, int64_t nb) noexcept nogil:
    # The threads a v4 level runs for --threads T over nb batches: min(T, nb). With T > nb each
    # of the T ranges holds one batch or none, so one range a batch runs the same batches in the
    # same order and adds the same sums (an empty range's are zeros): the same digits, and no
    # thread is started that would have nothing to do.
    return threads if threads < nb else <int>nb
