# Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
# every sample as a dynamic autograd does: lists of vars {val, grad} (two lists of floats)
# and ops {kind, up to 4 input ids, first output id}, addressed by index; each result
# computed once when pushed; backward is an index loop over the ops in reverse.
from core.ops import exp_neg_abs, softplus_e, sigmoid_e
from .recipe import (GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, n_nodes, graph_input,
                     record_ops, softmax4, softmax4_avg)

# A GraphOp is a plain tuple (kind, a, b, c, d, out), as the softplus tape's op is: a .. d
# the input ids (SOFTPLUS's b is its slot in `saved`, exp(-|a|)), out the (first) output
# id (SOFTMAX4's four are out .. out+3).


class GraphTape:
    def __init__(self, m):
        self.val = [0.0] * n_nodes(m)
        self.grad = [0.0] * n_nodes(m)
        self.ops = [(0, 0, 0, 0, 0, 0)] * m
        self.saved = [0.0] * (m // 4 + 1)  # each SOFTPLUS's exp(-|a|), kept for backward's sigmoid
        self.reset()

    def reset(self):
        self.n_vars, self.n_ops, self.n_saved = 0, 0, 0

    def size(self):
        return self.n_vars

    def leaf(self, v):
        """A new var holding v; returns its id."""
        self.val[self.n_vars] = v
        self.n_vars += 1
        return self.n_vars - 1

    def push(self, kind, a, b, c, d, v):
        """Record op `kind` on inputs a..d with (first) result v; returns the result's id."""
        out = self.leaf(v)
        self.ops[self.n_ops] = (kind, a, b, c, d, out)
        self.n_ops += 1
        return out

    def push_softplus(self, a):
        p = self.val[a]
        e = exp_neg_abs(p)
        slot = self.n_saved
        self.saved[slot] = e
        self.n_saved += 1
        return self.push(GRAPH_SOFTPLUS, a, slot, 0, 0, softplus_e(p, e))

    def push_sum4(self, a, b, c, d):
        v = self.val
        return self.push(GRAPH_SUM4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d])

    def push_prod(self, a, b):
        return self.push(GRAPH_PROD, a, b, 0, 0, self.val[a] * self.val[b])

    def push_softmax4(self, a, b, c, d):
        v = self.val
        o0, o1, o2, o3 = softmax4(v[a], v[b], v[c], v[d])
        out = self.push(GRAPH_SOFTMAX4, a, b, c, d, o0)
        self.leaf(o1)
        self.leaf(o2)
        self.leaf(o3)
        return out

    def backward(self):
        """Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then
        each op's local rule, ops in reverse (G3)."""
        v, g = self.val, self.grad
        for i in range(self.n_vars):
            g[i] = 1.0
        for k in range(self.n_ops - 1, -1, -1):
            kind, a, b, c, d, out = self.ops[k]
            go = g[out]
            if kind == GRAPH_SOFTPLUS:
                g[a] += sigmoid_e(v[a], self.saved[b]) * go
            elif kind == GRAPH_SUM4:
                g[a] += go
                g[b] += go
                g[c] += go
                g[d] += go
            elif kind == GRAPH_PROD:
                g[a] += v[b] * go
                g[b] += v[a] * go
            else:  # SOFTMAX4
                o = out
                avg = softmax4_avg(v[o], v[o + 1], v[o + 2], v[o + 3], g[o], g[o + 1], g[o + 2], g[o + 3])
                g[a] += v[o] * (g[o] - avg)
                g[b] += v[o + 1] * (g[o + 1] - avg)
                g[c] += v[o + 2] * (g[o + 2] - avg)
                g[d] += v[o + 3] * (g[o + 3] - avg)

    def sums(self):
        """This sample's loss, grad_in and grad_all (G3), each added in index order."""
        loss, grad_in, grad_all = 0.0, 0.0, 0.0
        for i in range(self.n_vars):
            loss += self.val[i]
        for i in range(N_INPUTS):
            grad_in += float(i + 1) * self.grad[i]
        for i in range(self.n_vars):
            grad_all += self.grad[i]
        return GraphSums(loss, grad_in, grad_all)


def record_graph(tape, seed, s, m):
    """Sample s's forward pass: its inputs, then the M ops."""
    tape.reset()
    for i in range(N_INPUTS):
        tape.leaf(graph_input(seed, s, i))
    record_ops(tape, m)


def run_graph_v2(seed, m, n):
    tape = GraphTape(m)
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_graph(tape, seed, s, m)
        tape.backward()
        total = total + tape.sums()
    return total


def tapes_bytes(level, m, n, threads):
    """The least memory a graph level's tape takes at M ops (cli.driver's check_memory): a node's
    val and grad doubles, 16 bytes, in the one tape of every level this port has (the Codon
    program's graph/threads tapes_bytes at one lane and one tape; v0 and v1's node objects are
    counted as tape entries, docs/contract-graph.md). The ops and saved values come on top."""
    return n_nodes(m) * 16
