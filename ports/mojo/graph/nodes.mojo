# The node objects of graph levels v0 and v1: every node a heap object holding its value,
# its grad and pointers to its input nodes, each value computed once when the node is
# made. The graph keeps its nodes in creation order, which is all backward needs: it walks
# them in reverse. v0 frees the nodes after every sample, v1 keeps them as a pool.
# Nodes are malloc'd and linked by raw pointers (Pointer[GraphNode, MutUntrackedOrigin]).

from core.ops import NULL
from std.ffi import external_call
from std.memory import Pointer
from std.sys import size_of
from core.ops import exp_neg_abs, softplus_e, sigmoid_e
from core.vmath import out_of_memory
from graph.recipe import (GRAPH_LEAF, GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums,
                          GraphBuilder, softmax4, softmax4_avg, graph_alloc, graph_free)

comptime GraphNodePtr = Pointer[GraphNode, MutUntrackedOrigin]


struct GraphNode(Copyable, Movable):
    var val: Float64
    var grad: Float64
    var kind: Int  # GRAPH_LEAF, or the kind of the op that made it (all four of a SOFTMAX4's)
    var saved: Float64  # SOFTPLUS: exp(-|a.val|), for backward's sigmoid
    var a: GraphNodePtr  # inputs, as many as the kind has
    var b: GraphNodePtr
    var c: GraphNodePtr
    var d: GraphNodePtr

    @always_inline
    def set(mut self, kind: Int, val: Float64, saved: Float64, a: GraphNodePtr, b: GraphNodePtr,
            c: GraphNodePtr, d: GraphNodePtr):
        """(Re)make a node; its grad starts at 1.0, d loss / d val (the loss sums every node)."""
        self.kind = kind
        self.val = val
        self.saved = saved
        self.grad = 1.0
        self.a = a
        self.b = b
        self.c = c
        self.d = d


@always_inline
def graph_node_new(kind: Int, val: Float64, saved: Float64, a: GraphNodePtr, b: GraphNodePtr,
                   c: GraphNodePtr, d: GraphNodePtr) -> GraphNodePtr:
    """A fresh node from malloc (the Codon program's NodeGraph.make, then set)."""
    var node = graph_alloc[GraphNode](0, 1)
    node[].set(kind, val, saved, a, b, c, d)
    return node


struct NodeGraph(GraphBuilder, Movable):
    var nodes: Pointer[GraphNodePtr, MutUntrackedOrigin]  # in creation order
    var len: Int  # nodes made
    var cap: Int  # room in `nodes`
    var count: Int
    var pool: Bool  # v1: the nodes made once, by the constructor, and remade by every sample

    def __init__(out self):
        self.nodes = Pointer[GraphNodePtr, MutUntrackedOrigin](unsafe_from_address=NULL)
        self.len = 0
        self.cap = 0
        self.count = 0
        self.pool = False

    def __init__(out self, *, pool_room: Int):
        """A pool (v1) of `pool_room` nodes, a sample's, made once, before the first sample, as
        the Codon program's NodeGraph[True] is; every sample then remakes them."""
        self = NodeGraph()
        for _ in range(pool_room):
            self.leaf(0.0)
        self.pool = True

    def __deinit__(deinit self):
        """Free the nodes and the array (the Codon program leaves them to its GC)."""
        for i in range(self.len):
            graph_free(self.nodes[unsafe_offset=i])
        graph_free(self.nodes)

    def reset(mut self):
        """Start a sample: a pool's nodes are remade; otherwise (v0) they are freed. The array
        of pointers is kept either way (only the nodes are the level's point)."""
        if not self.pool:
            for i in range(self.len):
                graph_free(self.nodes[unsafe_offset=i])
            self.len = 0
        self.count = 0

    @always_inline
    def size(self) -> Int:
        return self.count

    @always_inline
    def at(self, i: Int) -> GraphNodePtr:
        return self.nodes[unsafe_offset=i]

    @always_inline
    def take(mut self, kind: Int, val: Float64, saved: Float64, a: GraphNodePtr, b: GraphNodePtr,
             c: GraphNodePtr, d: GraphNodePtr) -> GraphNodePtr:
        """The next node, made as given: a new heap object (v0, and a pool's nodes as they are
        made), or a pool's remade."""
        if self.count == self.len:
            if self.len == self.cap:
                self.cap = 2 * self.cap if self.cap > 0 else 1024
                self.nodes = external_call["realloc", Pointer[GraphNodePtr, MutUntrackedOrigin]](
                    self.nodes, self.cap * size_of[GraphNodePtr]())
                if Int(self.nodes) == 0:
                    out_of_memory()
            self.nodes[unsafe_offset=self.len] = graph_node_new(kind, val, saved, a, b, c, d)
            self.len += 1
        else:
            self.nodes[unsafe_offset=self.count][].set(kind, val, saved, a, b, c, d)
        self.count += 1
        return self.nodes[unsafe_offset=self.count - 1]

    @always_inline
    def leaf(mut self, val: Float64):
        var none = GraphNodePtr(unsafe_from_address=NULL)
        _ = self.take(GRAPH_LEAF, val, 0.0, none, none, none, none)

    @always_inline
    def push_softplus(mut self, i: Int):
        var a = self.at(i)
        var e = exp_neg_abs(a[].val)
        var none = GraphNodePtr(unsafe_from_address=NULL)
        _ = self.take(GRAPH_SOFTPLUS, softplus_e(a[].val, e), e, a, none, none, none)

    @always_inline
    def push_sum4(mut self, i: Int, j: Int, k: Int, l: Int):
        var a = self.at(i)
        var b = self.at(j)
        var c = self.at(k)
        var d = self.at(l)
        _ = self.take(GRAPH_SUM4, ((a[].val + b[].val) + c[].val) + d[].val, 0.0, a, b, c, d)

    @always_inline
    def push_prod(mut self, i: Int, j: Int):
        var a = self.at(i)
        var b = self.at(j)
        var none = GraphNodePtr(unsafe_from_address=NULL)
        _ = self.take(GRAPH_PROD, a[].val * b[].val, 0.0, a, b, none, none)

    @always_inline
    def push_softmax4(mut self, i: Int, j: Int, k: Int, l: Int):
        var a = self.at(i)
        var b = self.at(j)
        var c = self.at(k)
        var d = self.at(l)
        var o = softmax4(a[].val, b[].val, c[].val, d[].val)
        comptime for q in range(4):
            _ = self.take(GRAPH_SOFTMAX4, o[q], 0.0, a, b, c, d)

    def backward(mut self):
        """The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
        SOFTMAX4's four outputs are handled together, at the last of them."""
        var i = self.count - 1
        while i >= N_INPUTS:
            var node = self.nodes[unsafe_offset=i]
            var gr = node[].grad
            var kind = node[].kind
            if kind == GRAPH_SOFTPLUS:
                node[].a[].grad += sigmoid_e(node[].a[].val, node[].saved) * gr
            elif kind == GRAPH_SUM4:
                node[].a[].grad += gr
                node[].b[].grad += gr
                node[].c[].grad += gr
                node[].d[].grad += gr
            elif kind == GRAPH_PROD:
                node[].a[].grad += node[].b[].val * gr
                node[].b[].grad += node[].a[].val * gr
            else:  # SOFTMAX4: nodes i-3 .. i are its outputs
                var o0 = self.nodes[unsafe_offset=i - 3]
                var o1 = self.nodes[unsafe_offset=i - 2]
                var o2 = self.nodes[unsafe_offset=i - 1]
                var o3 = node
                var avg = softmax4_avg(o0[].val, o1[].val, o2[].val, o3[].val,
                                       o0[].grad, o1[].grad, o2[].grad, o3[].grad)
                node[].a[].grad += o0[].val * (o0[].grad - avg)
                node[].b[].grad += o1[].val * (o1[].grad - avg)
                node[].c[].grad += o2[].val * (o2[].grad - avg)
                node[].d[].grad += o3[].val * (o3[].grad - avg)
                i -= 3
            i -= 1

    def sums(self) -> GraphSums:
        """This sample's loss, grad_in and grad_all (G3), each added in creation order."""
        var loss = 0.0
        var grad_in = 0.0
        var grad_all = 0.0
        for i in range(self.count):
            loss += self.nodes[unsafe_offset=i][].val
        for i in range(N_INPUTS):
            grad_in += Float64(i + 1) * self.nodes[unsafe_offset=i][].grad
        for i in range(self.count):
            grad_all += self.nodes[unsafe_offset=i][].grad
        return GraphSums(loss, grad_in, grad_all)
