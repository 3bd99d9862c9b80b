# The team of threads of the v4 levels, shared by both workloads (the Codon program's
# core/threads; here each level's prange is the team).
from libc.stdint cimport int64_t


cdef inline int team_size(int threads, int64_t nb) noexcept nogil:
    # The threads a v4 level runs for --threads T over nb batches, min(T, nb): the same
    # ranges and digits, no idle thread (docs/contract.md §6, v4's team).
    return threads if threads < nb else <int>nb
