# The node types of graph levels v0 and v1 (graph/nodes.pxd declares them).
cimport cython
from core.ops cimport exp_neg_abs, softplus_e, sigmoid_e
from graph.recipe cimport (GRAPH_LEAF, GraphSums, N_INPUTS, GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4,
                           softmax4, softmax4_avg)


cdef inline void graph_node_set(GraphNode node, int kind, double val, double saved, GraphNode a,
                                GraphNode b, GraphNode c, GraphNode d) noexcept:
    """(Re)make a node; its grad starts at 1.0, d loss / d val (the loss sums every node). A link
    costs a reference count up and one down when it changes; one already right (a kept node
    remade with the inputs it had) is left as it is."""
    node.kind = kind
    node.val = val
    node.saved = saved
    node.grad = 1.0
    if node.a is not a:
        node.a = a
    if node.b is not b:
        node.b = b
    if node.c is not c:
        node.c = c
    if node.d is not d:
        node.d = d


@cython.final
@cython.no_gc   # as declared in the .pxd, where Cython does not apply it
cdef class GraphNode:
    pass


cdef class NodeGraph:
    def __cinit__(self):
        self.nodes = []
        self.made = 0
        self.count = 0
        self.pool = False

    cdef int make_pool(self, int room) except -1:
        """Make this graph a pool (v1) of `room` nodes, a sample's, made once, before the first
        sample, as the Codon program's NodeGraph[True] is; every sample then remakes them."""
        cdef int i
        for i in range(room):
            self.leaf(0.0)
        self.pool = True
        return 0

    cdef void reset(self) noexcept:
        """Start a sample: a pool's nodes are remade; otherwise (v0) they are dropped, last
        first (so each goes at once: the nodes that read it went before it). The list's
        slots are kept either way."""
        cdef int i
        if not self.pool:
            for i in range(self.made - 1, -1, -1):
                self.nodes[i] = None
            self.made = 0
        self.count = 0

    cdef int size(self) noexcept:
        return self.count

    cdef inline GraphNode at(self, int i):
        return <GraphNode>self.nodes[i]

    cdef inline GraphNode take(self, int kind, double val, double saved, GraphNode a, GraphNode b,
                        GraphNode c, GraphNode d):
        """The next node, made as given: a kept one remade, or a new heap object (make)."""
        cdef GraphNode node = <GraphNode>self.nodes[self.count] if self.count < self.made else self.make()
        graph_node_set(node, kind, val, saved, a, b, c, d)
        self.count += 1
        return node

    cdef GraphNode make(self):
        """A new node in the next slot (v0's every node, a pool's as it is made), apart from take so
        that take's usual case, a kept node, is small enough to inline."""
        cdef GraphNode node = GraphNode.__new__(GraphNode)
        if self.made < len(self.nodes):
            self.nodes[self.made] = node
        else:
            self.nodes.append(node)
        self.made += 1
        return node

    cdef int leaf(self, double val) except -1:
        self.take(GRAPH_LEAF, val, 0.0, None, None, None, None)
        return 0

    cdef int push_softplus(self, int i) except -1:
        cdef GraphNode a = self.at(i)
        cdef double e = exp_neg_abs(a.val)
        self.take(GRAPH_SOFTPLUS, softplus_e(a.val, e), e, a, None, None, None)
        return 0

    cdef int push_sum4(self, int i, int j, int k, int l) except -1:
        cdef GraphNode a = self.at(i), b = self.at(j), c = self.at(k), d = self.at(l)
        self.take(GRAPH_SUM4, ((a.val + b.val) + c.val) + d.val, 0.0, a, b, c, d)
        return 0

    cdef int push_prod(self, int i, int j) except -1:
        cdef GraphNode a = self.at(i), b = self.at(j)
        self.take(GRAPH_PROD, a.val * b.val, 0.0, a, b, None, None)
        return 0

    cdef int push_softmax4(self, int i, int j, int k, int l) except -1:
        cdef GraphNode a = self.at(i), b = self.at(j), c = self.at(k), d = self.at(l)
        cdef double o[4]
        softmax4(a.val, b.val, c.val, d.val, o)
        self.take(GRAPH_SOFTMAX4, o[0], 0.0, a, b, c, d)
        self.take(GRAPH_SOFTMAX4, o[1], 0.0, a, b, c, d)
        self.take(GRAPH_SOFTMAX4, o[2], 0.0, a, b, c, d)
        self.take(GRAPH_SOFTMAX4, o[3], 0.0, a, b, c, d)
        return 0

    cdef void backward(self) noexcept:
        """The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
        SOFTMAX4's four outputs are handled together, at the last of them."""
        cdef int i = self.count - 1
        cdef GraphNode node, o0, o1, o2
        cdef double gr, avg
        while i >= N_INPUTS:
            node = <GraphNode>self.nodes[i]
            gr = node.grad
            if node.kind == GRAPH_SOFTPLUS:
                node.a.grad += sigmoid_e(node.a.val, node.saved) * gr
            elif node.kind == GRAPH_SUM4:
                node.a.grad += gr
                node.b.grad += gr
                node.c.grad += gr
                node.d.grad += gr
            elif node.kind == GRAPH_PROD:
                node.a.grad += node.b.val * gr
                node.b.grad += node.a.val * gr
            else:  # SOFTMAX4: nodes i-3 .. i are its outputs
                o0 = <GraphNode>self.nodes[i - 3]
                o1 = <GraphNode>self.nodes[i - 2]
                o2 = <GraphNode>self.nodes[i - 1]
                avg = softmax4_avg(o0.val, o1.val, o2.val, node.val, o0.grad, o1.grad, o2.grad, node.grad)
                node.a.grad += o0.val * (o0.grad - avg)
                node.b.grad += o1.val * (o1.grad - avg)
                node.c.grad += o2.val * (o2.grad - avg)
                node.d.grad += node.val * (node.grad - avg)
                i -= 3
            i -= 1

    cdef GraphSums sums(self) noexcept:
        """This sample's loss, grad_in and grad_all (G3), each added in creation order."""
        cdef double loss = 0.0, grad_in = 0.0, grad_all = 0.0
        cdef int i
        for i in range(self.count):
            loss += (<GraphNode>self.nodes[i]).val
        for i in range(N_INPUTS):
            grad_in += <double>(i + 1) * (<GraphNode>self.nodes[i]).grad
        for i in range(self.count):
            grad_all += (<GraphNode>self.nodes[i]).grad
        return GraphSums(loss, grad_in, grad_all)
