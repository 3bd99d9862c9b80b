# The node objects of graph levels v0 and v1: every node a heap object holding its value,
# its grad and references to its input nodes, each value computed once when the node is
# made. The graph keeps its nodes in creation order, which is all backward needs: it walks
# them in reverse. v0 drops the nodes after every sample, v1 keeps them as a pool.
from core.ops import exp_neg_abs, softplus_e, sigmoid_e
from .recipe import (GRAPH_LEAF, GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, softmax4,
                     softmax4_avg)


class GraphNode:
    __slots__ = ("val", "grad", "kind", "saved", "a", "b", "c", "d")

    def __init__(self, kind, val, saved, a, b, c, d):
        self.set(kind, val, saved, a, b, c, d)

    def set(self, kind, val, saved, a, b, c, d):
        """(Re)make this node; its grad starts at 1.0, d loss / d val (the loss sums every node)."""
        self.kind, self.val, self.saved, self.grad = kind, val, saved, 1.0
        # kind: GRAPH_LEAF, or the kind of the op that made it (all four of a SOFTMAX4's);
        # saved: SOFTPLUS's exp(-|a.val|), for backward's sigmoid;
        # a .. d: the input nodes, as many as the kind has, the rest None.
        self.a, self.b, self.c, self.d = a, b, c, d


class NodeGraph:
    def __init__(self, pool_room=None):
        """A graph; with pool_room, a pool (v1) of that many nodes, a sample's, made once, before
        the first sample, as the Codon program's NodeGraph[True] is, and remade by every sample."""
        self.nodes = []   # in creation order
        self.count = 0
        self.pool = False
        if pool_room is not None:
            for _ in range(pool_room):
                self.leaf(0.0)
            self.pool = True

    def reset(self):
        """Start a sample: a pool's nodes are remade; otherwise (v0) they are dropped, freed by
        reference counting."""
        if not self.pool:
            self.nodes = []
        self.count = 0

    def size(self):
        return self.count

    def at(self, i):
        return self.nodes[i]

    def take(self, kind, val, saved, a, b, c, d):
        """The next node, made as given: a new heap object (v0, and a pool's nodes as they are
        made), or a pool's remade."""
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
        self.take(GRAPH_SUM4, ((a.val + b.val) + c.val) + d.val, 0.0, a, b, c, d)

    def push_prod(self, i, j):
        a, b = self.at(i), self.at(j)
        self.take(GRAPH_PROD, a.val * b.val, 0.0, a, b, None, None)

    def push_softmax4(self, i, j, k, l):
        a, b, c, d = self.at(i), self.at(j), self.at(k), self.at(l)
        o0, o1, o2, o3 = softmax4(a.val, b.val, c.val, d.val)
        for o in (o0, o1, o2, o3):
            self.take(GRAPH_SOFTMAX4, o, 0.0, a, b, c, d)

    def backward(self):
        """The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
        SOFTMAX4's four outputs are handled together, at the last of them."""
        i = self.count - 1
        while i >= N_INPUTS:
            node = self.nodes[i]
            g = node.grad
            if node.kind == GRAPH_SOFTPLUS:
                node.a.grad += sigmoid_e(node.a.val, node.saved) * g
            elif node.kind == GRAPH_SUM4:
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
