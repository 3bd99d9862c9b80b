#!/usr/bin/env python3
"""autograd: forward/backward passes through a reverse-mode autograd, level by level, on
two workloads: softplus, f(x, y) = softplus((x + y) * x) (docs/contract.md), and graph, a
tape of M ops over 100 inputs (docs/contract-graph.md).

The CPython port of the Codon program: the same source, run by the plain interpreter
(standard library only), in the Codon modules' order: rng, ops, graph (v0 naive, v1
pool), tape (v2), fused, then the graph workload's recipe, nodes, objects (v0), pool (v1)
and tape (v2), then cli, report, main; cli and report are in cli.py beside it, shared
with the peers. It has levels v0, v1, v2 of both workloads and softplus's fused baseline;
v3, v4 and fused-simd need vector math and threads that run in parallel, which plain
CPython does not have, so they are reported as not implemented.

    python3 ports/python/autograd.py --level v2 --iters 100000
    python3 ports/python/autograd.py --workload graph --level v2 --iters 20
"""
import math
import os
import signal
import sys
import time
from typing import NamedTuple

from cli import (EVAL, HELP, VERSION, GraphResult, Result, UsageError, emit, eval_json, eval_text,
                 graph_json_line, graph_text_header, graph_text_line, json_line, parse, text_header, text_line)

# ---- rng: the input stream of contract §1 ----------------------------------------
# Counter-based splitmix64, written out so that every language draws the same numbers
# (never a standard-library RNG). Python ints never wrap, so each product is reduced
# mod 2^64 by hand.

GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
MASK = (1 << 64) - 1
UNIT = 1.0 / 9007199254740992.0  # 2^-53


def splitmix64(z):
    """The splitmix64 finalizer: a bijective scramble of one 64-bit word."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def draw(seed, k):
    """The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`."""
    return splitmix64((seed + k * GAMMA) & MASK)


def unit(z):
    """The top 53 bits of z as a float in [0, 1)."""
    return (z >> 11) * UNIT


def sample(seed, i):
    """Sample i: (x_i, y_i), both in [-1, 1)."""
    x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0
    y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0
    return x, y


# ---- ops: the scalar math of contract §2, shared by every level --------------------


class Sums(NamedTuple):
    """The checksums of a run: plain sums over the samples, in index order."""
    f: float
    dx: float
    dy: float

    def __add__(self, o):
        return Sums(self.f + o.f, self.dx + o.dx, self.dy + o.dy)


# Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
# overflow). The *_e forms take e ready-made, so that a caller computing both shares
# one exp; the results are bit for bit those of the contract's formulas.

def exp_neg_abs(p):
    return math.exp(-abs(p))


def softplus_e(p, e):
    """log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p))."""
    return p + math.log1p(e) if p > 0.0 else math.log1p(e)


def sigmoid_e(p, e):
    """d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p))."""
    return 1.0 / (1.0 + e) if p >= 0.0 else e / (1.0 + e)


def softplus(p):
    return softplus_e(p, exp_neg_abs(p))


def sigmoid(p):
    return sigmoid_e(p, exp_neg_abs(p))


# ---- graph: the pointer-linked nodes of levels v0 and v1 ---------------------------
# The seed's first design: each node knows its inputs, computes its value when asked
# (recomputing its whole subgraph every time), and pushes gradients to its inputs by
# recursion.

LEAF = 0
SUM = 1
PROD = 2
SOFTPLUS = 3


class Node:
    __slots__ = ("kind", "leaf_val", "grad", "a", "b")

    def __init__(self, kind, leaf_val, a, b):
        self.set(kind, leaf_val, a, b)

    def set(self, kind, leaf_val, a, b):
        """(Re)make this node: used by the constructor and by the v1 pool."""
        self.kind = kind
        self.leaf_val = leaf_val  # the value of a LEAF; unused by the other kinds
        self.grad = 0.0
        self.a = a                # inputs: None for a LEAF, `a` only for SOFTPLUS
        self.b = b

    def value(self):
        """The node's value, recomputed from the leaves on every call."""
        if self.kind == SUM:
            return self.a.value() + self.b.value()
        if self.kind == PROD:
            return self.a.value() * self.b.value()
        if self.kind == SOFTPLUS:
            return softplus(self.a.value())
        return self.leaf_val

    def backward(self, g):
        """Add g to this node's grad and recurse into its inputs (chain rule)."""
        self.grad += g
        if self.kind == SUM:
            self.a.backward(g)
            self.b.backward(g)
        elif self.kind == PROD:
            self.a.backward(self.b.value() * g)
            self.b.backward(self.a.value() * g)
        elif self.kind == SOFTPLUS:
            self.a.backward(sigmoid(self.a.value()) * g)


# ---- naive: level v0 ---------------------------------------------------------------
# Fresh heap nodes every iteration, linked by references (freed by reference counting
# when the next iteration rebinds the names); values recomputed on demand.

def run_v0(seed, n):
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x = Node(LEAF, xv, None, None)
        y = Node(LEAF, yv, None, None)
        s = Node(SUM, 0.0, x, y)
        p = Node(PROD, 0.0, s, x)
        f = Node(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        sum_f += f.value()
        sum_dx += x.grad
        sum_dy += y.grad
    return Sums(sum_f, sum_dx, sum_dy)


# ---- pool: level v1 ----------------------------------------------------------------
# The v0 graph, but its nodes come from a fixed pool allocated once and relinked every
# iteration, so the loop creates no nodes. Values are still recomputed on demand (the
# seed's v1).

POOL_SIZE = 5  # x, y, s, p, f


class Pool:
    def __init__(self, size):
        self.nodes = [Node(LEAF, 0.0, None, None) for _ in range(size)]
        self.used = 0

    def reset(self):
        self.used = 0

    def take(self, kind, leaf_val, a, b):
        """The next free node, remade as (kind, leaf_val, a, b)."""
        node = self.nodes[self.used]
        self.used += 1
        node.set(kind, leaf_val, a, b)
        return node


def run_v1(seed, n):
    pool = Pool(POOL_SIZE)
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        pool.reset()
        x = pool.take(LEAF, xv, None, None)
        y = pool.take(LEAF, yv, None, None)
        s = pool.take(SUM, 0.0, x, y)
        p = pool.take(PROD, 0.0, s, x)
        f = pool.take(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        sum_f += f.value()
        sum_dx += x.grad
        sum_dy += y.grad
    return Sums(sum_f, sum_dx, sum_dy)


# ---- tape: level v2, the seed's NaiveTape ------------------------------------------
# Fixed-size lists of vars {val, grad} and ops {kind, input ids, output id}, addressed
# by index. Each op computes its result once when pushed; backward walks the ops in
# reverse.

MAX_VARS = 6  # x, y, s, p, exp(-|p|), f
MAX_OPS = 3   # SUM, PROD, SOFTPLUS


class Var:
    __slots__ = ("val", "grad")

    def __init__(self, val, grad):
        self.val = val
        self.grad = grad


# An op is a plain tuple (kind, a, b, out): a and b are the input ids (SOFTPLUS's b is
# the var that saves exp(-|a|)), out the output id. (A NamedTuple reads the same but
# its constructor is a Python-level call: 10% of v2's time.)


class Tape:
    def __init__(self):
        self.vars = [Var(0.0, 0.0) for _ in range(MAX_VARS)]
        self.ops = [(0, 0, 0, 0)] * MAX_OPS
        self.n_vars = 0
        self.n_ops = 0

    def reset(self):
        self.n_vars = 0
        self.n_ops = 0

    def val(self, i):
        return self.vars[i].val

    def grad(self, i):
        return self.vars[i].grad

    def add_grad(self, i, g):
        self.vars[i].grad += g

    def leaf(self, val):
        """A new input var; returns its id."""
        var = self.vars[self.n_vars]
        var.val = val
        var.grad = 0.0
        self.n_vars += 1
        return self.n_vars - 1

    def push(self, kind, a, b, val):
        """Record op `kind` on inputs a, b with result `val`; returns the result's id."""
        out = self.leaf(val)
        self.ops[self.n_ops] = (kind, a, b, out)
        self.n_ops += 1
        return out

    def push_sum(self, a, b):
        return self.push(SUM, a, b, self.val(a) + self.val(b))

    def push_prod(self, a, b):
        return self.push(PROD, a, b, self.val(a) * self.val(b))

    def push_softplus(self, a):
        # exp(-|p|) is saved in a var of its own, so that backward reuses it (each
        # result computed once); the op names it as its second input.
        p = self.val(a)
        e = self.leaf(exp_neg_abs(p))
        return self.push(SOFTPLUS, a, e, softplus_e(p, self.val(e)))

    def backward(self, out):
        """Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule."""
        for i in range(self.n_vars):
            self.vars[i].grad = 0.0
        self.add_grad(out, 1.0)
        for k in range(self.n_ops - 1, -1, -1):
            kind, a, b, op_out = self.ops[k]
            g = self.grad(op_out)
            if kind == SUM:
                self.add_grad(a, g)
                self.add_grad(b, g)
            elif kind == PROD:
                self.add_grad(a, self.val(b) * g)
                self.add_grad(b, self.val(a) * g)
            else:  # SOFTPLUS
                self.add_grad(a, sigmoid_e(self.val(a), self.val(b)) * g)


def record(tape, xv, yv):
    """One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f."""
    tape.reset()
    x = tape.leaf(xv)
    y = tape.leaf(yv)
    s = tape.push_sum(x, y)
    p = tape.push_prod(s, x)
    f = tape.push_softplus(p)
    return x, y, f


def run_v2(seed, n):
    tape = Tape()
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x, y, f = record(tape, xv, yv)
        tape.backward(f)
        sum_f += tape.val(f)
        sum_dx += tape.grad(x)
        sum_dy += tape.grad(y)
    return Sums(sum_f, sum_dx, sum_dy)


def eval_point(xv, yv):
    """f, df/dx, df/dy at one point, through the v2 tape (for --eval)."""
    tape = Tape()
    x, y, f = record(tape, xv, yv)
    tape.backward(f)
    return tape.val(f), tape.grad(x), tape.grad(y)


# ---- fused: baseline (not a level) -------------------------------------------------
# The same math written out by hand with no tape or graph, the floor that the v2 tape
# can approach.

def run_fused(seed, n):
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        x, y = sample(seed, i)
        s = x + y
        p = s * x
        e = exp_neg_abs(p)
        g = sigmoid_e(p, e)
        sum_f += softplus_e(p, e)
        sum_dx += s * g + x * g
        sum_dy += x * g
    return Sums(sum_f, sum_dx, sum_dy)


# ---- graph recipe: the graph workload's recipe (contract-graph G1-G3) --------------
# Shared by every graph level: a sample's 100 inputs, the kind and input offsets of each
# of the M ops, the scalar forward math of an op, and the per-sample checksums. The two
# kinds whose names the softplus levels above already use (SOFTPLUS, PROD, and LEAF
# below) take a GRAPH_ prefix here, as in the C port: one file holds both workloads.

GRAPH_SOFTPLUS = 0  # op k has kind k % 4, in this order
SUM4 = 1
GRAPH_PROD = 2
SOFTMAX4 = 3

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


def record_ops(g, m):
    """The M ops of G2, in order, onto g: any level's graph builder, which has size() (the
    nodes so far) and push_softplus, push_sum4, push_prod, push_softmax4 taking node ids."""
    for k in range(m):
        n = g.size()
        kind = k % 4
        if kind == GRAPH_SOFTPLUS:
            g.push_softplus(n - 10)
        elif kind == SUM4:
            g.push_sum4(n - 30, n - 25, n - 20, n - 15)
        elif kind == GRAPH_PROD:
            g.push_prod(n - 20, n - 10)
        else:
            g.push_softmax4(n - 4, n - 3, n - 2, n - 1)


def softmax4(a, b, c, d):
    """out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3."""
    m = max(max(a, b), max(c, d))
    e0, e1, e2, e3 = math.exp(a - m), math.exp(b - m), math.exp(c - m), math.exp(d - m)
    total = ((e0 + e1) + e2) + e3
    return e0 / total, e1 / total, e2 / total, e3 / total


def softmax4_avg(o0, o1, o2, o3, g0, g1, g2, g3):
    """SOFTMAX4's backward term: sum of o_j * g[out_j], left to right."""
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3


# ---- graph nodes: the node objects of graph levels v0 and v1 ------------------------
# Every node a heap object holding its value, its grad and references to its input
# nodes, each value computed once when the node is made. The graph keeps its nodes in
# creation order, which is all backward needs: it walks them in reverse. v0 drops the
# nodes after every sample, v1 keeps them as a pool.

GRAPH_LEAF = -1


class GraphNode:
    __slots__ = ("val", "grad", "kind", "saved", "a", "b", "c", "d")

    def __init__(self, kind, val, saved, a, b, c, d):
        self.set(kind, val, saved, a, b, c, d)

    def set(self, kind, val, saved, a, b, c, d):
        """(Re)make this node; its grad starts at 1.0, d loss / d val (the loss sums every node)."""
        self.kind, self.val, self.saved, self.grad = kind, val, saved, 1.0
        # kind: GRAPH_LEAF, or the kind of the op that made it (all four of a SOFTMAX4's);
        # saved: GRAPH_SOFTPLUS's exp(-|a.val|), for backward's sigmoid;
        # a .. d: the input nodes, as many as the kind has, the rest None.
        self.a, self.b, self.c, self.d = a, b, c, d


class NodeGraph:
    def __init__(self):
        self.nodes = []   # in creation order; nodes[count:] are a pool's spares
        self.count = 0

    def reset(self, keep):
        """Start a sample: with keep (v1) the nodes are reused, else (v0) dropped, freed by
        reference counting."""
        if not keep:
            self.nodes = []
        self.count = 0

    def size(self):
        return self.count

    def at(self, i):
        return self.nodes[i]

    def take(self, kind, val, saved, a, b, c, d):
        """The next node, made as given: a new heap object, or a kept one remade."""
        if self.count == len(self.nodes):
            self.nodes.append(GraphNode(kind, val, saved, a, b, c, d))
        else:
            self.nodes[self.count].set(kind, val, saved, a, b, c, d)
        self.count += 1
        return self.nodes[self.count - 1]

    def leaf(self, val):
        self.take(GRAPH_LEAF, val, 0.0, None, None, None, None)

    def push_softplus(self, i):
        a = self.at(i)
        e = exp_neg_abs(a.val)
        self.take(GRAPH_SOFTPLUS, softplus_e(a.val, e), e, a, None, None, None)

    def push_sum4(self, i, j, k, l):
        a, b, c, d = self.at(i), self.at(j), self.at(k), self.at(l)
        self.take(SUM4, ((a.val + b.val) + c.val) + d.val, 0.0, a, b, c, d)

    def push_prod(self, i, j):
        a, b = self.at(i), self.at(j)
        self.take(GRAPH_PROD, a.val * b.val, 0.0, a, b, None, None)

    def push_softmax4(self, i, j, k, l):
        a, b, c, d = self.at(i), self.at(j), self.at(k), self.at(l)
        o0, o1, o2, o3 = softmax4(a.val, b.val, c.val, d.val)
        for o in (o0, o1, o2, o3):
            self.take(SOFTMAX4, o, 0.0, a, b, c, d)

    def backward(self):
        """The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
        SOFTMAX4's four outputs are handled together, at the last of them."""
        i = self.count - 1
        while i >= N_INPUTS:
            node = self.nodes[i]
            g = node.grad
            if node.kind == GRAPH_SOFTPLUS:
                node.a.grad += sigmoid_e(node.a.val, node.saved) * g
            elif node.kind == SUM4:
                node.a.grad += g
                node.b.grad += g
                node.c.grad += g
                node.d.grad += g
            elif node.kind == GRAPH_PROD:
                node.a.grad += node.b.val * g
                node.b.grad += node.a.val * g
            else:  # SOFTMAX4: nodes i-3 .. i are its outputs
                o0, o1, o2, o3 = self.nodes[i - 3], self.nodes[i - 2], self.nodes[i - 1], node
                avg = softmax4_avg(o0.val, o1.val, o2.val, o3.val, o0.grad, o1.grad, o2.grad, o3.grad)
                node.a.grad += o0.val * (o0.grad - avg)
                node.b.grad += o1.val * (o1.grad - avg)
                node.c.grad += o2.val * (o2.grad - avg)
                node.d.grad += o3.val * (o3.grad - avg)
                i -= 3
            i -= 1

    def sums(self):
        """This sample's loss, grad_in and grad_all (G3), each added in creation order."""
        loss, grad_in, grad_all = 0.0, 0.0, 0.0
        for i in range(self.count):
            loss += self.nodes[i].val
        for i in range(N_INPUTS):
            grad_in += float(i + 1) * self.nodes[i].grad
        for i in range(self.count):
            grad_all += self.nodes[i].grad
        return GraphSums(loss, grad_in, grad_all)


# ---- graph objects: graph level v0 --------------------------------------------------
# Every node a fresh heap object per sample (a Python object, freed by reference counting
# when the next sample drops the list), linked to its inputs by reference; backward walks
# the nodes in reverse creation order.

def record_nodes(g, seed, s, m, keep):
    """Sample s's forward pass: its inputs, then the M ops (keep: reuse the nodes, v1)."""
    g.reset(keep)
    for i in range(N_INPUTS):
        g.leaf(graph_input(seed, s, i))
    record_ops(g, m)


def run_graph_v0(seed, m, n):
    g = NodeGraph()
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m, False)
        g.backward()
        total = total + g.sums()
    return total


# ---- graph pool: graph level v1 -----------------------------------------------------
# v0's node objects and links, but the nodes of the first sample are kept and remade for
# every later one, so the loop creates no nodes.

def run_graph_v1(seed, m, n):
    g = NodeGraph()
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m, True)
        g.backward()
        total = total + g.sums()
    return total


# ---- graph tape: graph level v2 -----------------------------------------------------
# The softplus workload's tape grown to M ops, recorded anew for every sample as a dynamic
# autograd does: lists of vars {val, grad} (two lists of floats) and ops {kind, up to 4
# input ids, first output id}, addressed by index; each result computed once when pushed;
# backward is an index loop over the ops in reverse.

# A GraphOp is a plain tuple (kind, a, b, c, d, out), as the softplus tape's op is: a .. d
# the input ids (GRAPH_SOFTPLUS's b is its slot in `saved`, exp(-|a|)), out the (first)
# output id (SOFTMAX4's four are out .. out+3).


class GraphTape:
    def __init__(self, m):
        self.val = [0.0] * n_nodes(m)
        self.grad = [0.0] * n_nodes(m)
        self.ops = [(0, 0, 0, 0, 0, 0)] * m
        self.saved = [0.0] * (m // 4 + 1)  # each GRAPH_SOFTPLUS's exp(-|a|), kept for backward's sigmoid
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
        return self.push(SUM4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d])

    def push_prod(self, a, b):
        return self.push(GRAPH_PROD, a, b, 0, 0, self.val[a] * self.val[b])

    def push_softmax4(self, a, b, c, d):
        v = self.val
        o0, o1, o2, o3 = softmax4(v[a], v[b], v[c], v[d])
        out = self.push(SOFTMAX4, a, b, c, d, o0)
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
            elif kind == SUM4:
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


# ---- graph simd (v3) and graph threads (v4) ----------------------------------------
# Not in this port, for the softplus v3 and v4's reason: a batch tape's lane loops need
# vector math, and v4 threads that run in parallel, which plain CPython does not have.
# (GraphBatchTape, GRAPH_BATCH, fill_graph_inputs, GraphLaneSums, n_graph_batches,
# run_graph_batches, run_graph_v3 and run_graph_v4 in the Codon program.)


# ---- cli: the command line of contract §4 and graph G6, parsed strictly ------------
# In cli.py beside this file (the Codon program's cli/args.codon), shared with the peers
# (peers/common.py) so that every Python program parses alike: every bad input becomes
# a UsageError whose message is one line, so that main can print `error: ...` and exit 2
# before anything reaches stdout.

# Each workload this port has, and its levels: no vector math or parallel threads here.
HAVE = {"softplus": ["v0", "v1", "v2", "fused"], "graph": ["v0", "v1", "v2"]}


# ---- report: the output of contract §5-§6 and graph G6 ----------------------------
# In cli.py too (the Codon program's cli/output.codon): printf-style formatting, which
# Python does exactly as C's printf does; `emit` prints a line, or ends the program with
# one `error:` line and exit status 1 when stdout cannot be written.

IMPL = "python"


# ---- main: command line, dispatch to the levels, output ----------------------------

VERSION_TEXT = "autograd (python) 0.1.0"
HELP_TEXT = """usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
                [--threads T] [--json]
       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
                [--seed S] [--threads T] [--json]
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes through a reverse-mode autograd at each
optimization level and prints the time and the checksums. Workloads:
  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
            sums of f, df/dx and df/dy over the samples
  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
            loss = the sum of every node; checksums are the sums of the loss,
            of the inputs' weighted gradients and of every node's gradient

  --workload W softplus or graph (default softplus)
  --level L    v0 naive, v1 pool, v2 tape, all (v0..v2, the default), or the
               softplus baseline fused (v3, v4 and fused-simd: not in this
               CPython port)
  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)
  --iters N    samples, 1..10^12 (default 10000000; graph 10000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape"""


def cpus_available():
    """CPUs in this process's affinity mask (what taskset or a container allows)."""
    return max(len(os.sched_getaffinity(0)), 1)


def run_level(level, seed, n, threads):
    if level == "v0":
        return run_v0(seed, n)
    if level == "v1":
        return run_v1(seed, n)
    if level == "v2":
        return run_v2(seed, n)
    return run_fused(seed, n)


def run_graph_level(level, seed, m, n, threads):
    if level == "v0":
        return run_graph_v0(seed, m, n)
    if level == "v1":
        return run_graph_v1(seed, m, n)
    return run_graph_v2(seed, m, n)


def run_graph(opts):
    """The graph workload (docs/contract-graph.md): each level, timed, one line each."""
    if not opts.json:
        emit(graph_text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        start = time.monotonic_ns()
        sums = run_graph_level(level, opts.seed, opts.ops, opts.iters, threads)
        seconds = (time.monotonic_ns() - start) / 1e9
        r = GraphResult(IMPL, level, opts.ops, opts.iters, opts.seed, threads, seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(graph_json_line(r) if opts.json else graph_text_line(r, v0_seconds))


def run(opts):
    if not opts.json:
        emit(text_header())
    v0_seconds = 0.0
    for level in opts.levels:
        threads = opts.threads if level == "v4" else 1
        start = time.monotonic_ns()
        sums = run_level(level, opts.seed, opts.iters, threads)
        seconds = (time.monotonic_ns() - start) / 1e9
        r = Result(IMPL, level, opts.iters, opts.seed, threads, seconds, sums)
        if level == "v0":
            v0_seconds = seconds
        emit(json_line(r) if opts.json else text_line(r, v0_seconds))


def evaluate(opts):
    f, dfdx, dfdy = eval_point(opts.x, opts.y)
    p = (opts.x + opts.y) * opts.x
    if not math.isfinite(p):
        raise UsageError("(X + Y) * X overflows at this point")
    for v in (f, dfdx, dfdy):
        if not math.isfinite(v):
            raise UsageError("the result overflows at this point")
    emit(eval_json(IMPL, opts.x, opts.y, f, dfdx, dfdy) if opts.json else eval_text(opts.x, opts.y, f, dfdx, dfdy))


def main():
    # Die quietly like a C program when stdout is a closed pipe (`| head`), rather
    # than with a BrokenPipeError trace.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        # parse refuses a workload or level this port lacks (HAVE), as bad input.
        opts = parse(sys.argv[1:], cpus_available(), HAVE)
        if opts.mode == HELP:
            emit(HELP_TEXT)
        elif opts.mode == VERSION:
            emit(VERSION_TEXT)
        elif opts.mode == EVAL:
            evaluate(opts)
        elif opts.workload == "graph":
            run_graph(opts)
        else:
            run(opts)
    except UsageError as e:
        sys.stderr.write("error: " + e.message + "\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
