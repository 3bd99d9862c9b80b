# The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
# level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
# scalar forward math of an op, and the per-sample checksums.
import math
from typing import NamedTuple

from core.rng import draw, unit

# The graph workload's op kinds, defined here once for every graph level; GRAPH_ keeps them
# apart from the softplus workload's kinds, which share three names, two with other values.
GRAPH_LEAF = -1  # a node no op made: an input
GRAPH_SOFTPLUS = 0  # op k has kind k % 4, in this order
GRAPH_SUM4 = 1
GRAPH_PROD = 2
GRAPH_SOFTMAX4 = 3

N_INPUTS = 100


class GraphSums(NamedTuple):
    """The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3)."""
    loss: float
    grad_in: float
    grad_all: float

    def __add__(self, o):
        return GraphSums(self.loss + o.loss, self.grad_in + o.grad_in, self.grad_all + o.grad_all)


def n_nodes(m):
    """Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4."""
    return N_INPUTS + m + 3 * (m // 4)


def graph_input(seed, s, i):
    """Input i of sample s, in [-1, 1) (G1)."""
    return 2.0 * unit(draw(seed, N_INPUTS * s + i + 1)) - 1.0


def record_op(g, kind):
    """Op of kind `kind` onto g, its inputs counted back from g's size (G2)."""
    n = g.size()
    if kind == GRAPH_SOFTPLUS:
        g.push_softplus(n - 10)
    elif kind == GRAPH_SUM4:
        g.push_sum4(n - 30, n - 25, n - 20, n - 15)
    elif kind == GRAPH_PROD:
        g.push_prod(n - 20, n - 10)
    else:
        g.push_softmax4(n - 4, n - 3, n - 2, n - 1)


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


def softmax4(a, b, c, d):
    """out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3."""
    m = max(max(a, b), max(c, d))
    e0, e1, e2, e3 = math.exp(a - m), math.exp(b - m), math.exp(c - m), math.exp(d - m)
    total = ((e0 + e1) + e2) + e3
    return e0 / total, e1 / total, e2 / total, e3 / total


def softmax4_avg(o0, o1, o2, o3, g0, g1, g2, g3):
    """SOFTMAX4's backward term: sum of o_j * g[out_j], left to right."""
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3
