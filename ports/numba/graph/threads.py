# Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
# per prange iteration, each with its own batch tape and lane sums, added in thread order.
import numpy as np
from numba import njit, prange

from .recipe import GraphSums
from .simd import run_graph_batches, n_graph_batches


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
