# The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
# level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
# scalar forward math of an op, and the per-sample checksums.
import math
from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.extending import overload_method

from core.rng import draw, unit

# The graph workload's op kinds, defined here once for every graph level; GRAPH_ keeps them
# apart from the softplus workload's kinds, which share three names, two with other values.
GRAPH_LEAF = -1  # a node no op made: an input (of graph v0 and v1, not in this port)
GRAPH_SOFTPLUS = 0  # op k has kind k % 4, in this order
GRAPH_SUM4 = 1
GRAPH_PROD = 2
GRAPH_SOFTMAX4 = 3

N_INPUTS = 100

# The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3).
GraphSums = namedtuple("GraphSums", "loss grad_in grad_all")


@njit(cache=True)
def graph_sums_add(a, o):
    return GraphSums(a.loss + o.loss, a.grad_in + o.grad_in, a.grad_all + o.grad_all)


@njit(cache=True)
def n_nodes(m):
    """Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4."""
    return N_INPUTS + m + 3 * (m // 4)


@njit(cache=True)
def graph_input(seed, s, i):
    """Input i of sample s, in [-1, 1) (G1); seed uint64, s and i int64."""
    return 2.0 * unit(draw(seed, np.uint64(N_INPUTS * s + i + 1))) - 1.0


# builder_methods' table: method name -> {named tuple class: its @njit function}.
BUILDER_METHODS = {}


def builder_methods(cls, **methods):
    """Make each function in `methods` a method of the named tuple `cls` inside compiled code
    (g.push_softplus(i) calls push_softplus(g, i)), so that record_ops, like the Codon
    program's, takes any level's graph builder. One overload per method name serves every
    class (Numba tries a second overload of the same name only once the first has failed)."""
    for name, fn in methods.items():
        if name not in BUILDER_METHODS:
            BUILDER_METHODS[name] = {}
            overload_method(types.BaseNamedTuple, name, inline="always")(builder_method(name, fn))
        BUILDER_METHODS[name][cls] = fn


def builder_method(name, fn):
    """The typer of method `name`, for the arity of its functions (all take g and node ids)."""
    arity = fn.py_func.__code__.co_argcount - 1
    table = BUILDER_METHODS[name]
    if arity == 0:
        def typer(g):
            f = table.get(getattr(g, "instance_class", None))
            return None if f is None else (lambda g: f(g))
    elif arity == 1:
        def typer(g, a):
            f = table.get(getattr(g, "instance_class", None))
            return None if f is None else (lambda g, a: f(g, a))
    elif arity == 2:
        def typer(g, a, b):
            f = table.get(getattr(g, "instance_class", None))
            return None if f is None else (lambda g, a, b: f(g, a, b))
    else:
        def typer(g, a, b, c, d):
            f = table.get(getattr(g, "instance_class", None))
            return None if f is None else (lambda g, a, b, c, d: f(g, a, b, c, d))
    return typer


@njit(cache=True, inline="always")
def record_op(g, kind):
    """Op of kind `kind` onto g, its inputs counted back from g's size (G2); inlined, so that a kind
    known where it is called takes no branch."""
    n = g.size()
    if kind == GRAPH_SOFTPLUS:
        g.push_softplus(n - 10)
    elif kind == GRAPH_SUM4:
        g.push_sum4(n - 30, n - 25, n - 20, n - 15)
    elif kind == GRAPH_PROD:
        g.push_prod(n - 20, n - 10)
    else:
        g.push_softmax4(n - 4, n - 3, n - 2, n - 1)


@njit(cache=True)
def record_ops(g, m):
    """The M ops of G2, in order, onto g: any level's graph builder, which has size() (the
    nodes so far) and push_softplus, push_sum4, push_prod, push_softmax4 taking node ids.
    Op k's kind is k % 4, so they go on a block of the four kinds at a time, then the first
    M % 4 of one more block, as in the Codon program (where no op branches on its kind)."""
    for _ in range(m // 4):
        record_op(g, GRAPH_SOFTPLUS)
        record_op(g, GRAPH_SUM4)
        record_op(g, GRAPH_PROD)
        record_op(g, GRAPH_SOFTMAX4)
    for kind in range(m % 4):
        record_op(g, kind)


@njit(cache=True)
def max2(a, b):
    """Python's max(a, b): b if b > a, else a (the signed zeros as Python orders them)."""
    return b if b > a else a


@njit(cache=True, error_model="numpy")
def softmax4(a, b, c, d):
    """out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3."""
    m = max2(max2(a, b), max2(c, d))
    e0, e1, e2, e3 = math.exp(a - m), math.exp(b - m), math.exp(c - m), math.exp(d - m)
    total = ((e0 + e1) + e2) + e3
    return e0 / total, e1 / total, e2 / total, e3 / total


@njit(cache=True)
def softmax4_avg(o0, o1, o2, o3, g0, g1, g2, g3):
    """SOFTMAX4's backward term: sum of o_j * g[out_j], left to right."""
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3
