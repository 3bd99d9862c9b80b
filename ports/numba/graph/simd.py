# Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
# Each var holds GRAPH_BATCH lanes (structure of arrays), each op works on its lanes WIDTH at
# a time in explicit vectors (graph/lanes), and exp/log1p are libmvec's at the target's
# width (core/vmath).
from collections import namedtuple

import numpy as np
from numba import njit

from core.target import WIDTH
from core.vmath import exp_lanes, exp_neg_abs_lanes, log1p_lanes, alloc_lanes, alloc_lane_arrays
from .lanes import (sum4_chunk, mul_chunk, softplus_chunk, softmax_shift_chunk, softmax_norm_chunk,
                    acc_chunk, acc_mul_chunk, acc_sigmoid_chunk, softmax_backward_chunk)
from .recipe import (GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, graph_sums_add,
                     n_nodes, graph_input, record_ops, builder_methods)
from .tape import put_op, uid, U1, U2, U3, U4, U5

# Lanes per var, a multiple of every vector width (the C port's and Codon's choice).
GRAPH_BATCH = 16
B = GRAPH_BATCH

# val, grad: var i's lanes at [i * B, (i + 1) * B) of flat arrays; op as in v2's GraphTape (op k's
# six fields at 6k); saved: each SOFTPLUS's exp(-|a|) lanes at its slot; count = (n_vars, n_ops,
# n_saved).
GraphBatchTape = namedtuple("GraphBatchTape", "val grad op saved count")


@njit(cache=True)
def graph_batch_new(m):
    return GraphBatchTape(alloc_lanes(n_nodes(m) * B), alloc_lanes(n_nodes(m) * B), np.zeros(6 * m, np.uint32),
                          alloc_lanes((m // 4 + 1) * B), np.zeros(3, np.int64))


@njit(cache=True, inline="always")
def graph_batch_reset(t):
    t.count[0] = 0
    t.count[1] = 0
    t.count[2] = 0


@njit(cache=True, inline="always")
def graph_batch_size(t):
    return t.count[0]


@njit(cache=True, inline="always")
def graph_batch_leaf(t):
    """A new var; the caller fills its lanes. Returns its id."""
    i = t.count[0]
    t.count[0] = i + 1
    return i


@njit(cache=True, inline="always")
def graph_batch_push(t, kind, a, b, c, d):
    """Record op `kind` on inputs a..d; returns its (first) output's id, for the caller to fill."""
    out = graph_batch_leaf(t)
    k = t.count[1]
    put_op(t.op, k, kind, a, b, c, d, out)
    t.count[1] = k + 1
    return out


# Each op works on its vars' lanes WIDTH at a time; var i's lanes start at lane i * B.

@njit(cache=True, inline="always")
def graph_batch_push_softplus(t, a):
    slot = t.count[2]
    t.count[2] = slot + 1
    out = graph_batch_push(t, GRAPH_SOFTPLUS, a, slot, 0, 0)
    exp_neg_abs_lanes(t.val, a * B, t.saved, slot * B, B)
    log1p_lanes(t.saved, slot * B, t.val, out * B, B)
    for j in range(0, B, WIDTH):
        softplus_chunk(t.val, out * B + j, a * B + j)  # softplus_e, lane-wise


@njit(cache=True, inline="always")
def graph_batch_push_sum4(t, a, b, c, d):
    o = graph_batch_push(t, GRAPH_SUM4, a, b, c, d)
    for j in range(0, B, WIDTH):
        sum4_chunk(t.val, o * B + j, a * B + j, b * B + j, c * B + j, d * B + j)


@njit(cache=True, inline="always")
def graph_batch_push_prod(t, a, b):
    o = graph_batch_push(t, GRAPH_PROD, a, b, 0, 0)
    for j in range(0, B, WIDTH):
        mul_chunk(t.val, o * B + j, a * B + j, b * B + j)


@njit(cache=True, inline="always")
def graph_batch_push_softmax4(t, a, b, c, d):
    out = graph_batch_push(t, GRAPH_SOFTMAX4, a, b, c, d)
    graph_batch_leaf(t)
    graph_batch_leaf(t)
    graph_batch_leaf(t)
    # The four outputs are consecutive vars: their 4 * B lanes take one exp call.
    for j in range(0, B, WIDTH):
        softmax_shift_chunk(t.val, out * B + j, a * B + j, b * B + j, c * B + j, d * B + j, B)
    exp_lanes(t.val, out * B, t.val, out * B, 4 * B)
    for j in range(0, B, WIDTH):
        softmax_norm_chunk(t.val, out * B + j, B)


builder_methods(GraphBatchTape, size=graph_batch_size, push_softplus=graph_batch_push_softplus,
                push_sum4=graph_batch_push_sum4, push_prod=graph_batch_push_prod,
                push_softmax4=graph_batch_push_softmax4)


@njit(cache=True)
def graph_batch_backward(t):
    """Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3)."""
    val, grad, saved, op = t.val, t.grad, t.saved, t.op
    for j in range(t.count[0] * B):
        grad[j] = 1.0
    for k in range(t.count[1] - 1, -1, -1):
        r = uid(6 * k)
        kind, a, g = op[r], op[r + U1] * B, op[r + U5] * B
        if kind == GRAPH_SOFTPLUS:
            e = op[r + U2] * B
            for j in range(0, B, WIDTH):
                acc_sigmoid_chunk(grad, val, saved, a + j, a + j, e + j, g + j)
        elif kind == GRAPH_SUM4:
            b, c, d = op[r + U2] * B, op[r + U3] * B, op[r + U4] * B
            for j in range(0, B, WIDTH):
                acc_chunk(grad, a + j, grad, g + j)
                acc_chunk(grad, b + j, grad, g + j)
                acc_chunk(grad, c + j, grad, g + j)
                acc_chunk(grad, d + j, grad, g + j)
        elif kind == GRAPH_PROD:
            b = op[r + U2] * B
            for j in range(0, B, WIDTH):
                acc_mul_chunk(grad, a + j, val, b + j, grad, g + j)
            for j in range(0, B, WIDTH):
                acc_mul_chunk(grad, b + j, val, a + j, grad, g + j)
        else:  # SOFTMAX4
            b, c, d = op[r + U2] * B, op[r + U3] * B, op[r + U4] * B
            for j in range(0, B, WIDTH):
                softmax_backward_chunk(grad, val, g + j, B, a + j, b + j, c + j, d + j)


@njit(cache=True)
def fill_graph_inputs(t, seed, first, lanes):
    """Samples first .. first+lanes-1's inputs into the 100 input vars; unused lanes get 0."""
    graph_batch_reset(t)
    val = t.val
    for i in range(N_INPUTS):
        v = graph_batch_leaf(t) * B
        for j in range(lanes):
            val[v + j] = graph_input(seed, first + j, i)
        for j in range(lanes, B):
            val[v + j] = 0.0


# Per-lane running checksums, so that a batch is added with vector adds: acc's rows are loss,
# grad_in and grad_all; tmp holds one batch's, and the weights, kept from batch to batch.

@njit(cache=True)
def graph_lane_sums_new():
    return alloc_lane_arrays(3, B), alloc_lanes(4 * B)


@njit(cache=True)
def graph_lane_sums_add(acc, tmp, t, lanes):
    """Each lane's sample checksums (G3, nodes in index order), added for the used lanes."""
    loss, grad_in, grad_all, weighted = 0, B, 2 * B, 3 * B
    for j in range(3 * B):
        tmp[j] = 0.0
    for i in range(t.count[0]):
        for j in range(0, B, WIDTH):
            acc_chunk(tmp, loss + j, t.val, i * B + j)
            acc_chunk(tmp, grad_all + j, t.grad, i * B + j)
    for i in range(N_INPUTS):
        for j in range(B):
            tmp[weighted + j] = float(i + 1)
        for j in range(0, B, WIDTH):
            acc_mul_chunk(tmp, grad_in + j, tmp, weighted + j, t.grad, i * B + j)
    for j in range(lanes):
        acc[0, j] += tmp[loss + j]
        acc[1, j] += tmp[grad_in + j]
        acc[2, j] += tmp[grad_all + j]


@njit(cache=True)
def graph_lane_sums_total(acc):
    """The lanes added up in lane order."""
    s = GraphSums(0.0, 0.0, 0.0)
    for j in range(B):
        s = graph_sums_add(s, GraphSums(acc[0, j], acc[1, j], acc[2, j]))
    return s


@njit(cache=True)
def n_graph_batches(n):
    return (n + B - 1) // B


@njit(cache=True)
def run_graph_batches(seed, m, n, first_batch, end_batch):
    """Batches [first_batch, end_batch) of the n samples through one batch tape. An empty range
    allocates nothing: a tape of 10^6 ops is 450 MB."""
    if first_batch >= end_batch:
        return GraphSums(0.0, 0.0, 0.0)
    t = graph_batch_new(m)
    acc, tmp = graph_lane_sums_new()
    for batch in range(first_batch, end_batch):
        first = batch * B
        lanes = min(n - first, B)
        fill_graph_inputs(t, seed, first, lanes)
        record_ops(t, m)
        graph_batch_backward(t)
        graph_lane_sums_add(acc, tmp, t, lanes)
    return graph_lane_sums_total(acc)


@njit(cache=True)
def run_graph_v3(seed, m, n):
    return run_graph_batches(seed, m, n, 0, n_graph_batches(n))
