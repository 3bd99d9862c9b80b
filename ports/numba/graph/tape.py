# Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
# every sample as a dynamic autograd does: arrays of vars {val, grad} and ops {kind, up to
# 4 input ids, first output id}, addressed by index; each result computed once when pushed;
# backward is an index loop over the ops in reverse.
#
# Codon's GraphTape class is a named tuple of NumPy arrays, its methods @njit functions
# taking the tape first, made its methods in compiled code for record_ops (builder_methods);
# its counters n_vars, n_ops, n_saved are the three slots of `count`.
from collections import namedtuple

import numpy as np
from numba import njit

from core.ops import exp_neg_abs, softplus_e, sigmoid_e
from .recipe import (GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, graph_sums_add,
                     n_nodes, graph_input, record_ops, softmax4, softmax4_avg, builder_methods)

# op[6k .. 6k+5] = (kind, a, b, c, d, out) of op k: a .. d the input ids (SOFTPLUS's b is its slot in
# `saved`, exp(-|a|)), out the (first) output id (SOFTMAX4's four are out .. out+3). Unsigned 32-bit,
# as every port's are: Numba tests a signed index for a negative value on every access (to count it
# from the end, as Python does) and skips the test for an unsigned one, so backward's ids, read from
# op, index val and grad with no test; and one flat array, as the softplus tape's, where a 2-D
# array's rows lie its run-time stride apart, a multiply for every op (ports/numba/README.md).
GraphTape = namedtuple("GraphTape", "val grad op saved count")
U1, U2, U3, U4, U5 = (np.uint32(j) for j in range(1, 6))  # offsets that keep an unsigned index unsigned


@njit(cache=True)
def new_graph_tape(m):
    return GraphTape(np.zeros(n_nodes(m)), np.zeros(n_nodes(m)), np.zeros(6 * m, np.uint32),
                     np.zeros(m // 4 + 1), np.zeros(3, np.int64))


@njit(cache=True, inline="always")
def uid(i):
    """i (never negative) as an index Numba does not test: the same bits, unsigned."""
    return np.uint64(i)


@njit(cache=True, inline="always")
def put_op(op, k, kind, a, b, c, d, out):
    """Op k's six fields into op, at 6k (the batch tape's ops too: graph/simd.py)."""
    r = uid(6 * k)
    op[r] = kind
    op[r + U1] = a
    op[r + U2] = b
    op[r + U3] = c
    op[r + U4] = d
    op[r + U5] = out


@njit(cache=True, inline="always")
def get_op(op, k):
    """Op k's (kind, a, b, c, d, out), unsigned."""
    r = uid(6 * k)
    return op[r], op[r + U1], op[r + U2], op[r + U3], op[r + U4], op[r + U5]


@njit(cache=True, inline="always")
def reset(t):
    t.count[0] = 0
    t.count[1] = 0
    t.count[2] = 0


@njit(cache=True, inline="always")
def size(t):
    return t.count[0]


@njit(cache=True, inline="always")
def leaf(t, v):
    """A new var holding v; returns its id."""
    i = t.count[0]
    t.val[i] = v
    t.count[0] = i + 1
    return i


@njit(cache=True, inline="always")
def push(t, kind, a, b, c, d, v):
    """Record op `kind` on inputs a..d with (first) result v; returns the result's id."""
    out = leaf(t, v)
    k = t.count[1]
    put_op(t.op, k, kind, a, b, c, d, out)
    t.count[1] = k + 1
    return out


@njit(cache=True, inline="always")
def push_softplus(t, a):
    p = t.val[a]
    e = exp_neg_abs(p)
    slot = t.count[2]
    t.saved[slot] = e
    t.count[2] = slot + 1
    return push(t, GRAPH_SOFTPLUS, a, slot, 0, 0, softplus_e(p, e))


@njit(cache=True, inline="always")
def push_sum4(t, a, b, c, d):
    v = t.val
    return push(t, GRAPH_SUM4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d])


@njit(cache=True, inline="always")
def push_prod(t, a, b):
    return push(t, GRAPH_PROD, a, b, 0, 0, t.val[a] * t.val[b])


@njit(cache=True, inline="always")
def push_softmax4(t, a, b, c, d):
    v = t.val
    o0, o1, o2, o3 = softmax4(v[a], v[b], v[c], v[d])
    out = push(t, GRAPH_SOFTMAX4, a, b, c, d, o0)
    leaf(t, o1)
    leaf(t, o2)
    leaf(t, o3)
    return out


builder_methods(GraphTape, size=size, push_softplus=push_softplus, push_sum4=push_sum4,
                push_prod=push_prod, push_softmax4=push_softmax4)


@njit(cache=True)
def backward(t):
    """Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then
    each op's local rule, ops in reverse (G3)."""
    v, g, op, saved = t.val, t.grad, t.op, t.saved
    for i in range(t.count[0]):
        g[i] = 1.0
    for k in range(t.count[1] - 1, -1, -1):
        kind, a, b, c, d, out = get_op(op, k)
        go = g[out]
        if kind == GRAPH_SOFTPLUS:
            g[a] += sigmoid_e(v[a], saved[b]) * go
        elif kind == GRAPH_SUM4:
            g[a] += go
            g[b] += go
            g[c] += go
            g[d] += go
        elif kind == GRAPH_PROD:
            g[a] += v[b] * go
            g[b] += v[a] * go
        else:  # SOFTMAX4
            o0, o1, o2, o3 = out, out + U1, out + U2, out + U3
            avg = softmax4_avg(v[o0], v[o1], v[o2], v[o3], g[o0], g[o1], g[o2], g[o3])
            g[a] += v[o0] * (g[o0] - avg)
            g[b] += v[o1] * (g[o1] - avg)
            g[c] += v[o2] * (g[o2] - avg)
            g[d] += v[o3] * (g[o3] - avg)


@njit(cache=True)
def sums(t):
    """This sample's loss, grad_in and grad_all (G3), each added in index order."""
    loss, grad_in, grad_all = 0.0, 0.0, 0.0
    for i in range(t.count[0]):
        loss += t.val[i]
    for i in range(N_INPUTS):
        grad_in += float(i + 1) * t.grad[i]
    for i in range(t.count[0]):
        grad_all += t.grad[i]
    return GraphSums(loss, grad_in, grad_all)


@njit(cache=True)
def record_graph(t, seed, s, m):
    """Sample s's forward pass: its inputs, then the M ops."""
    reset(t)
    for i in range(N_INPUTS):
        leaf(t, graph_input(seed, s, i))
    record_ops(t, m)


@njit(cache=True)
def run_graph_v2(seed, m, n):
    t = new_graph_tape(m)
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_graph(t, seed, s, m)
        backward(t)
        total = graph_sums_add(total, sums(t))
    return total
