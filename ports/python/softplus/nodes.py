# The pointer-linked graph of levels v0 and v1, the seed's first design: each node
# knows its inputs, computes its value when asked (recomputing its whole subgraph
# every time), and pushes gradients to its inputs by recursion.
from core.ops import softplus, sigmoid

# The softplus workload's op kinds, defined here once for every level (the tapes of
# v2-v5 record SUM, PROD and SOFTPLUS).
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
        """The node's value, recomputed from the leaves on every call. A leaf's is read here;
        the other kinds recurse (the compiled programs inline this test at every call)."""
        if self.kind == LEAF:
            return self.leaf_val
        return self.op_value()

    def op_value(self):
        """value() of a node that is not a leaf."""
        if self.kind == SUM:
            return self.a.value() + self.b.value()
        if self.kind == PROD:
            return self.a.value() * self.b.value()
        return softplus(self.a.value())

    def backward(self, g):
        """Add g to this node's grad and recurse into its inputs (chain rule)."""
        self.grad += g
        if self.kind != LEAF:
            self.op_backward(g)

    def op_backward(self, g):
        """backward()'s recursion into a node's inputs, for a node that is not a leaf."""
        if self.kind == SUM:
            self.a.backward(g)
            self.b.backward(g)
        elif self.kind == PROD:
            self.a.backward(self.b.value() * g)
            self.b.backward(self.a.value() * g)
        elif self.kind == SOFTPLUS:
            self.a.backward(sigmoid(self.a.value()) * g)
