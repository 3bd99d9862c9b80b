# The pointer-linked graph of levels v0 and v1, the seed's first design: each node
# knows its inputs, computes its value when asked (recomputing its whole subgraph
# every time), and pushes gradients to its inputs by recursion. A link is a raw
# pointer (Pointer[Node, MutUntrackedOrigin], Mojo 1.2's UnsafePointer); v0's nodes
# come from the C library's malloc and are freed by naive, v1's sit in a pool.

from std.ffi import external_call
from std.memory import Pointer
from std.sys import size_of
from core.ops import softplus, sigmoid
from core.vmath import out_of_memory

# The softplus workload's op kinds, defined here once for every level (the tapes of
# v2-v4 record SUM, PROD and SOFTPLUS).
comptime LEAF = 0
comptime SUM = 1
comptime PROD = 2
comptime SOFTPLUS = 3

comptime NodePtr = Pointer[Node, MutUntrackedOrigin]


struct Node(Copyable, Movable):
    var kind: Int
    var leaf_val: Float64  # the value of a LEAF; unused by the other kinds
    var grad: Float64
    var a: NodePtr  # inputs: none for a LEAF, `a` only for SOFTPLUS
    var b: NodePtr

    @always_inline
    def set(mut self, kind: Int, leaf_val: Float64, a: NodePtr, b: NodePtr):
        """(Re)make a node: used by node_new (v0) and by the v1 pool."""
        self.kind = kind
        self.leaf_val = leaf_val
        self.grad = 0.0
        self.a = a
        self.b = b


@always_inline
def node_new(kind: Int, leaf_val: Float64, a: NodePtr, b: NodePtr, count: Int = 1) -> NodePtr:
    """A fresh node from malloc (the Codon program's Node(...)); naive frees it. (count > 1:
    room for that many, the first made: the v1 pool's block.)"""
    var node = external_call["malloc", NodePtr](count * size_of[Node]())
    if Int(node) == 0:
        out_of_memory()
    node[].set(kind, leaf_val, a, b)
    return node


@always_inline
def value(node: NodePtr) -> Float64:
    """The node's value, recomputed from the leaves on every call. A leaf's is read where
    it is asked for (9 of a sample's 15 calls are on leaves); the other kinds recurse."""
    if node[].kind == LEAF:
        return node[].leaf_val
    return op_value(node)


def op_value(node: NodePtr) -> Float64:
    """value() of a node that is not a leaf."""
    var kind = node[].kind
    if kind == SUM:
        return value(node[].a) + value(node[].b)
    if kind == PROD:
        return value(node[].a) * value(node[].b)
    return softplus(value(node[].a))


@always_inline
def backward(node: NodePtr, g: Float64):
    """Add g to the node's grad and recurse into its inputs (chain rule)."""
    node[].grad += g
    if node[].kind != LEAF:
        op_backward(node, g)


def op_backward(node: NodePtr, g: Float64):
    """backward()'s recursion into a node's inputs, for a node that is not a leaf."""
    var kind = node[].kind
    if kind == SUM:
        backward(node[].a, g)
        backward(node[].b, g)
    elif kind == PROD:
        backward(node[].a, value(node[].b) * g)
        backward(node[].b, value(node[].a) * g)
    elif kind == SOFTPLUS:
        backward(node[].a, sigmoid(value(node[].a)) * g)
