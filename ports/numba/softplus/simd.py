# Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
# lanes (structure of arrays), each op is a loop over its lanes that LLVM vectorizes,
# and exp/log1p are glibc's vector versions (core/vmath). The ops and their order are v2's.
from collections import namedtuple

import numpy as np
from numba import njit

from core.rng import sample
from core.ops import Sums, sigmoid_e
from core.vmath import exp_neg_abs_lanes, log1p_lanes, alloc_lanes, alloc_lane_arrays
from .nodes import SUM, PROD, SOFTPLUS
from .tape import MAX_VARS, MAX_OPS

BATCH = 256  # lanes per var, a multiple of WIDTH (the C port's and Codon's choice)

# val[i], grad[i]: var i's BATCH lanes (rows of two 2-D arrays); op and count as in v2's Tape.
BatchTape = namedtuple("BatchTape", "val grad op count")


@njit(cache=True)
def new_batch_tape():
    return BatchTape(alloc_lanes(MAX_VARS * BATCH).reshape((MAX_VARS, BATCH)),
                     alloc_lanes(MAX_VARS * BATCH).reshape((MAX_VARS, BATCH)),
                     np.zeros((MAX_OPS, 4), np.int64), np.zeros(2, np.int64))


@njit(cache=True, inline="always")
def batch_reset(t):
    t.count[0] = 0
    t.count[1] = 0


@njit(cache=True, inline="always")
def batch_leaf(t):
    """A new var; the caller fills its lanes. Returns its id."""
    i = t.count[0]
    t.count[0] = i + 1
    return i


@njit(cache=True, inline="always")
def batch_push(t, kind, a, b):
    """Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill."""
    out = batch_leaf(t)
    k = t.count[1]
    t.op[k, 0] = kind
    t.op[k, 1] = a
    t.op[k, 2] = b
    t.op[k, 3] = out
    t.count[1] = k + 1
    return out


@njit(cache=True, inline="always")
def batch_push_sum(t, a, b):
    out = batch_push(t, SUM, a, b)
    o, u, v = t.val[out], t.val[a], t.val[b]
    for j in range(BATCH):
        o[j] = u[j] + v[j]
    return out


@njit(cache=True, inline="always")
def batch_push_prod(t, a, b):
    out = batch_push(t, PROD, a, b)
    o, u, v = t.val[out], t.val[a], t.val[b]
    for j in range(BATCH):
        o[j] = u[j] * v[j]
    return out


@njit(cache=True, inline="always")
def batch_push_softplus(t, a):
    # As in v2, exp(-|p|) gets a var of its own, named as the op's second input.
    e = batch_leaf(t)
    p, ve = t.val[a], t.val[e]
    exp_neg_abs_lanes(p, 0, ve, 0, BATCH)
    out = batch_push(t, SOFTPLUS, a, e)
    o = t.val[out]
    log1p_lanes(ve, 0, o, 0, BATCH)
    for j in range(BATCH):
        o[j] = p[j] + o[j] if p[j] > 0.0 else o[j]  # softplus_e, lane-wise
    return out


@njit(cache=True, inline="always")
def batch_backward(t, out):
    """Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule. Each
    input gets its own loop, so that an op whose two inputs are one var stays right. The
    ops' loops index the 2-D arrays: a row view (t.grad[a]) is a new array whose reference
    count Numba raises and drops, five views an op
    (docs/findings/port-numba.md#the-backward-without-row-views)."""
    for i in range(t.count[0]):
        t.grad[i, :] = 0.0
    t.grad[out, :] = 1.0
    grad, val = t.grad, t.val
    for k in range(t.count[1] - 1, -1, -1):
        kind, a, b, op_out = t.op[k, 0], t.op[k, 1], t.op[k, 2], t.op[k, 3]
        if kind == SUM:
            for j in range(BATCH):
                grad[a, j] += grad[op_out, j]
            for j in range(BATCH):
                grad[b, j] += grad[op_out, j]
        elif kind == PROD:
            for j in range(BATCH):
                grad[a, j] += val[b, j] * grad[op_out, j]
            for j in range(BATCH):
                grad[b, j] += val[a, j] * grad[op_out, j]
        else:  # SOFTPLUS: b holds exp(-|a|)
            for j in range(BATCH):
                grad[a, j] += sigmoid_e(val[a, j], val[b, j]) * grad[op_out, j]


@njit(cache=True, inline="always")
def fill_inputs(x, y, seed, first, lanes):
    """Samples first .. first+lanes-1 into the lanes of x and y; unused lanes get 0."""
    for j in range(lanes):
        x[j], y[j] = sample(seed, first + j)
    for j in range(lanes, BATCH):
        x[j] = 0.0
        y[j] = 0.0


# Per-lane running sums (rows f, dx, dy of alloc_lane_arrays(3, BATCH)), so that accumulating a
# batch is a vector add.

@njit(cache=True, inline="always")
def lane_sums_add(acc, f, dx, dy, lanes):
    for j in range(lanes):
        acc[0, j] += f[j]
        acc[1, j] += dx[j]
        acc[2, j] += dy[j]


@njit(cache=True)
def lane_sums_total(acc):
    """The lanes added up in lane order."""
    sf, sdx, sdy = 0.0, 0.0, 0.0
    for j in range(BATCH):
        sf += acc[0, j]
        sdx += acc[1, j]
        sdy += acc[2, j]
    return Sums(sf, sdx, sdy)


@njit(cache=True)
def n_batches(n):
    return (n + BATCH - 1) // BATCH


@njit(cache=True)
def run_batches(seed, n, first_batch, end_batch):
    """Batches [first_batch, end_batch) of the n samples through one batch tape."""
    t = new_batch_tape()
    acc = alloc_lane_arrays(3, BATCH)
    for batch in range(first_batch, end_batch):
        first = batch * BATCH
        lanes = min(n - first, BATCH)
        batch_reset(t)
        x, y = batch_leaf(t), batch_leaf(t)
        fill_inputs(t.val[x], t.val[y], seed, first, lanes)
        s = batch_push_sum(t, x, y)
        p = batch_push_prod(t, s, x)
        f = batch_push_softplus(t, p)
        batch_backward(t, f)
        lane_sums_add(acc, t.val[f], t.grad[x], t.grad[y], lanes)
    return lane_sums_total(acc)


@njit(cache=True)
def run_v3(seed, n):
    return run_batches(seed, n, 0, n_batches(n))
