# The team of threads of the v4 levels, shared by both workloads (the Codon program's
# core/threads; here each level's prange is the team, on Numba's thread pool).
from numba import njit


@njit(cache=True)
def team_size(threads, nb):
    """The threads a v4 level runs for --threads T over nb batches, min(T, nb): the same
    ranges and digits, no idle thread (docs/contract.md §6, v4's team)."""
    return min(threads, nb)
