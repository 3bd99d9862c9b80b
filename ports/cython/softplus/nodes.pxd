# The pointer-linked graph of levels v0 and v1, the seed's first design: each node
# knows its inputs, computes its value when asked (recomputing its whole subgraph
# every time), and pushes gradients to its inputs by recursion.
cimport cython

# The softplus workload's op kinds, defined here once for every level (the tapes of
# v2-v5 record SUM, PROD and SOFTPLUS).
cdef enum:
    LEAF = 0
    SUM = 1
    PROD = 2
    SOFTPLUS = 3


# A heap object (a Python object of a C struct, reference counted). final: its methods
# are called directly, not through a table; no_gc: the nodes form no cycles (inputs are
# made before the nodes that read them), so the cyclic collector need not track them.
@cython.final
@cython.no_gc
cdef class Node:
    cdef int kind
    cdef double leaf_val   # the value of a LEAF; unused by the other kinds
    cdef double grad
    cdef Node a            # inputs: none (None) for a LEAF, `a` only for SOFTPLUS
    cdef Node b

    cdef inline double value(self) noexcept:
        """The node's value, recomputed from the leaves on every call. A leaf's is read where
        it is asked for (9 of a sample's 15 calls are on leaves); the other kinds recurse."""
        if self.kind == LEAF:
            return self.leaf_val
        return self.op_value()

    cdef double op_value(self) noexcept

    cdef inline void backward(self, double g) noexcept:
        """Add g to the node's grad and recurse into its inputs (chain rule)."""
        self.grad += g
        if self.kind != LEAF:
            self.op_backward(g)

    cdef void op_backward(self, double g) noexcept


cdef inline void node_set(Node node, int kind, double leaf_val, Node a, Node b) noexcept:
    """(Re)make a node: used by node_new (v0) and by the v1 pool. A link costs a reference count
    up and one down when it changes; one already right is left as it is."""
    node.kind = kind
    node.leaf_val = leaf_val
    node.grad = 0.0
    if node.a is not a:
        node.a = a
    if node.b is not b:
        node.b = b


cdef inline Node node_new(int kind, double leaf_val, Node a, Node b):
    """A fresh node (the Codon program's Node(...)); freed when the last reference goes."""
    cdef Node node = Node.__new__(Node)
    node_set(node, kind, leaf_val, a, b)
    return node
