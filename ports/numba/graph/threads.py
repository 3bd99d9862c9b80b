# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per prange iteration, each with its own batch tape and lane sums, added in thread order.
import numpy as np
from numba import njit, prange

from .recipe import GraphSums, n_nodes
from .simd import run_graph_batches, n_graph_batches, GRAPH_BATCH


@njit(cache=True, parallel=True)
def run_graph_v4(seed, m, n, threads):
    nb = n_graph_batches(n)
    partial = np.zeros((threads, 3))
    for t in prange(threads):
        s = run_graph_batches(seed, m, n, t * nb // threads, (t + 1) * nb // threads)
        partial[t, 0] = s.loss
        partial[t, 1] = s.grad_in
        partial[t, 2] = s.grad_all
    loss, grad_in, grad_all = 0.0, 0.0, 0.0
    for t in range(threads):
        loss += partial[t, 0]
        grad_in += partial[t, 1]
        grad_all += partial[t, 2]
    return GraphSums(loss, grad_in, grad_all)


def tapes_bytes(level, m, n, threads):
    """The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and
    grad doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each
    thread with a batch; the others allocate nothing, run_graph_batches). The ops and saved lanes
    come on top (docs/contract-graph.md). Plain Python: cli.driver calls it before any level."""
    lanes = GRAPH_BATCH if level in ("v3", "v4") else 1
    tapes = min(threads, n_graph_batches(n)) if level == "v4" else 1
    return tapes * lanes * n_nodes(m) * 16
