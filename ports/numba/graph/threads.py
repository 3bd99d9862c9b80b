# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per prange iteration (at most one a batch, core/threads), each with its own batch tape and
# lane sums, added in thread order.
import numpy as np
from numba import njit, prange

from core.threads import team_size
from .recipe import GraphSums, n_nodes
from .simd import run_graph_batches, n_graph_batches, GRAPH_BATCH


@njit(cache=True, parallel=True)
def run_graph_v4(seed, m, n, threads):
    nb = n_graph_batches(n)
    team = team_size(threads, nb)
    partial = np.zeros((team, 3))
    for t in prange(team):
        s = run_graph_batches(seed, m, n, t * nb // team, (t + 1) * nb // team)
        partial[t, 0] = s.loss
        partial[t, 1] = s.grad_in
        partial[t, 2] = s.grad_all
    loss, grad_in, grad_all = 0.0, 0.0, 0.0
    for t in range(team):
        loss += partial[t, 0]
        grad_in += partial[t, 1]
        grad_all += partial[t, 2]
    return GraphSums(loss, grad_in, grad_all)


def tapes_bytes(level, m, n, threads):
    """The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and
    grad doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each
    thread of the team, team_size). The ops and saved lanes come on top (docs/contract-graph.md).
    Plain Python (its team_size compiled): cli.driver calls it before any level."""
    lanes = GRAPH_BATCH if level in ("v3", "v4") else 1
    tapes = team_size(threads, n_graph_batches(n)) if level == "v4" else 1
    return tapes * lanes * n_nodes(m) * 16
