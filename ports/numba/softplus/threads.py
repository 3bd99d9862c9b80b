# Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
# prange iteration (Numba's parallel loop over its thread pool; at most one a batch,
# core/threads), each with its own batch tape and lane sums; the partial sums are added in
# thread order, so a given T always gives the same digits. Numba runs the ranges on
# min(T, batches, the pool's threads) threads (autograd.py's on_team sets the count).
import numpy as np
from numba import njit, prange

from core.ops import Sums
from core.threads import team_size
from .simd import run_batches, n_batches


@njit(cache=True, parallel=True)
def run_v4(seed, n, threads):
    nb = n_batches(n)
    team = team_size(threads, nb)
    partial = np.zeros((team, 3))
    for t in prange(team):
        s = run_batches(seed, n, t * nb // team, (t + 1) * nb // team)
        partial[t, 0] = s.f
        partial[t, 1] = s.dx
        partial[t, 2] = s.dy
    sf, sdx, sdy = 0.0, 0.0, 0.0
    for t in range(team):
        sf += partial[t, 0]
        sdx += partial[t, 1]
        sdy += partial[t, 2]
    return Sums(sf, sdx, sdy)
