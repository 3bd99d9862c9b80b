# Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
# Each var holds GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes
# that LLVM vectorizes, and exp/log1p are libmvec's at the target's width (core/vmath).
from collections import namedtuple

import numpy as np
from numba import njit

from core.ops import sigmoid_e
from core.vmath import exp_lanes, exp_neg_abs_lanes, log1p_lanes
from .recipe import (SOFTPLUS, SUM4, PROD, SOFTMAX4, N_INPUTS, GraphSums, graph_sums_add, n_nodes,
                     graph_input, record_ops, max2, builder_methods)

# Lanes per var, a multiple of every vector width (the C port's and Codon's choice).
GRAPH_BATCH = 16
B = GRAPH_BATCH

# val, grad: var i's lanes at [i * B, (i + 1) * B) of flat arrays; op as in v2's GraphTape;
# saved: each SOFTPLUS's exp(-|a|) lanes at its slot; count = (n_vars, n_ops, n_saved).
GraphBatchTape = namedtuple("GraphBatchTape", "val grad op saved count")


@njit(cache=True)
def graph_batch_new(m):
    return GraphBatchTape(np.zeros(n_nodes(m) * B), np.zeros(n_nodes(m) * B), np.zeros((m, 6), np.int64),
                          np.zeros((m // 4 + 1) * B), np.zeros(3, np.int64))


@njit(cache=True, inline="always")
def graph_batch_reset(t):
    t.count[0] = 0
    t.count[1] = 0
    t.count[2] = 0


@njit(cache=True, inline="always")
def graph_batch_size(t):
    return t.count[0]


@njit(cache=True, inline="always")
def lanes_of(a, i):
    """Var (or slot) i's B lanes of a flat lane array, as a view."""
    return a[i * B:(i + 1) * B]


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
    op = t.op
    op[k, 0] = kind
    op[k, 1] = a
    op[k, 2] = b
    op[k, 3] = c
    op[k, 4] = d
    op[k, 5] = out
    t.count[1] = k + 1
    return out


@njit(cache=True, inline="always")
def graph_batch_push_softplus(t, a):
    slot = t.count[2]
    t.count[2] = slot + 1
    out = graph_batch_push(t, SOFTPLUS, a, slot, 0, 0)
    p, e, o = lanes_of(t.val, a), lanes_of(t.saved, slot), lanes_of(t.val, out)
    exp_neg_abs_lanes(p, e, B)
    log1p_lanes(e, o, B)
    for j in range(B):
        o[j] = p[j] + o[j] if p[j] > 0.0 else o[j]  # softplus_e, lane-wise


@njit(cache=True, inline="always")
def graph_batch_push_sum4(t, a, b, c, d):
    o = lanes_of(t.val, graph_batch_push(t, SUM4, a, b, c, d))
    va, vb, vc, vd = lanes_of(t.val, a), lanes_of(t.val, b), lanes_of(t.val, c), lanes_of(t.val, d)
    for j in range(B):
        o[j] = ((va[j] + vb[j]) + vc[j]) + vd[j]


@njit(cache=True, inline="always")
def graph_batch_push_prod(t, a, b):
    o = lanes_of(t.val, graph_batch_push(t, PROD, a, b, 0, 0))
    va, vb = lanes_of(t.val, a), lanes_of(t.val, b)
    for j in range(B):
        o[j] = va[j] * vb[j]


@njit(cache=True, inline="always")
def graph_batch_push_softmax4(t, a, b, c, d):
    out = graph_batch_push(t, SOFTMAX4, a, b, c, d)
    graph_batch_leaf(t)
    graph_batch_leaf(t)
    graph_batch_leaf(t)
    # The four outputs are consecutive vars: their 4 * B lanes take one exp call.
    o = t.val[out * B:(out + 4) * B]
    va, vb, vc, vd = lanes_of(t.val, a), lanes_of(t.val, b), lanes_of(t.val, c), lanes_of(t.val, d)
    for j in range(B):
        m = max2(max2(va[j], vb[j]), max2(vc[j], vd[j]))
        o[j] = va[j] - m
        o[B + j] = vb[j] - m
        o[2 * B + j] = vc[j] - m
        o[3 * B + j] = vd[j] - m
    exp_lanes(o, o, 4 * B)
    for j in range(B):
        total = ((o[j] + o[B + j]) + o[2 * B + j]) + o[3 * B + j]
        o[j] = o[j] / total
        o[B + j] = o[B + j] / total
        o[2 * B + j] = o[2 * B + j] / total
        o[3 * B + j] = o[3 * B + j] / total


builder_methods(GraphBatchTape, size=graph_batch_size, push_softplus=graph_batch_push_softplus,
                push_sum4=graph_batch_push_sum4, push_prod=graph_batch_push_prod,
                push_softmax4=graph_batch_push_softmax4)


@njit(cache=True)
def graph_batch_backward(t):
    """Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3)."""
    val, grad, op = t.val, t.grad, t.op
    for j in range(t.count[0] * B):
        grad[j] = 1.0
    for k in range(t.count[1] - 1, -1, -1):
        kind, a, out = op[k, 0], op[k, 1], op[k, 5]
        g, ga, va = lanes_of(grad, out), lanes_of(grad, a), lanes_of(val, a)
        if kind == SOFTPLUS:
            e = lanes_of(t.saved, op[k, 2])
            for j in range(B):
                ga[j] += sigmoid_e(va[j], e[j]) * g[j]
        elif kind == SUM4:
            for q in range(1, 5):
                gq = lanes_of(grad, op[k, q])
                for j in range(B):
                    gq[j] += g[j]
        elif kind == PROD:
            gb, vb = lanes_of(grad, op[k, 2]), lanes_of(val, op[k, 2])
            for j in range(B):
                ga[j] += vb[j] * g[j]
            for j in range(B):
                gb[j] += va[j] * g[j]
        else:  # SOFTMAX4
            graph_batch_softmax4_backward(t, a, op[k, 2], op[k, 3], op[k, 4], out)


@njit(cache=True, inline="always")
def graph_batch_softmax4_backward(t, a, b, c, d, out):
    o = t.val[out * B:(out + 4) * B]
    g = t.grad[out * B:(out + 4) * B]
    ga, gb, gc, gd = lanes_of(t.grad, a), lanes_of(t.grad, b), lanes_of(t.grad, c), lanes_of(t.grad, d)
    for j in range(B):
        avg = ((o[j] * g[j] + o[B + j] * g[B + j]) + o[2 * B + j] * g[2 * B + j]) + o[3 * B + j] * g[3 * B + j]
        ga[j] += o[j] * (g[j] - avg)
        gb[j] += o[B + j] * (g[B + j] - avg)
        gc[j] += o[2 * B + j] * (g[2 * B + j] - avg)
        gd[j] += o[3 * B + j] * (g[3 * B + j] - avg)


@njit(cache=True)
def fill_graph_inputs(t, seed, first, lanes):
    """Samples first .. first+lanes-1's inputs into the 100 input vars; unused lanes get 0."""
    graph_batch_reset(t)
    for i in range(N_INPUTS):
        v = lanes_of(t.val, graph_batch_leaf(t))
        for j in range(lanes):
            v[j] = graph_input(seed, first + j, i)
        for j in range(lanes, B):
            v[j] = 0.0


@njit(cache=True)
def graph_lane_sums_add(acc, t, lanes):
    """Each lane's sample checksums (G3, nodes in index order), added for the used lanes;
    acc's rows are loss, grad_in, grad_all."""
    loss, grad_in, grad_all = np.zeros(B), np.zeros(B), np.zeros(B)
    for i in range(t.count[0]):
        v, g = lanes_of(t.val, i), lanes_of(t.grad, i)
        for j in range(B):
            loss[j] += v[j]
            grad_all[j] += g[j]
    for i in range(N_INPUTS):
        g = lanes_of(t.grad, i)
        for j in range(B):
            grad_in[j] += float(i + 1) * g[j]
    for j in range(lanes):
        acc[0, j] += loss[j]
        acc[1, j] += grad_in[j]
        acc[2, j] += grad_all[j]


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
    """Batches [first_batch, end_batch) of the n samples through one batch tape."""
    t = graph_batch_new(m)
    acc = np.zeros((3, B))
    for batch in range(first_batch, end_batch):
        first = batch * B
        lanes = min(n - first, B)
        fill_graph_inputs(t, seed, first, lanes)
        record_ops(t, m)
        graph_batch_backward(t)
        graph_lane_sums_add(acc, t, lanes)
    return graph_lane_sums_total(acc)


@njit(cache=True)
def run_graph_v3(seed, m, n):
    return run_graph_batches(seed, m, n, 0, n_graph_batches(n))
