# The node objects of graph levels v0 and v1 (graph/nodes.pyx): every node a heap object
# holding its value, its grad and references to its input nodes, each value computed once
# when the node is made. The graph keeps its nodes in creation order, which is all
# backward needs: it walks them in reverse. v0 drops the nodes after every sample, v1
# keeps them as a pool.
cimport cython
from graph.recipe cimport GraphSums


# final: methods called directly; no_gc: the nodes form no cycles (a node's inputs are
# older nodes), so the cyclic collector need not track 17,600 objects a sample.
@cython.final
@cython.no_gc
cdef class GraphNode:
    cdef double val
    cdef double grad
    cdef int kind      # GRAPH_LEAF, or the kind of the op that made it (all four of a SOFTMAX4's)
    cdef double saved  # SOFTPLUS: exp(-|a.val|), for backward's sigmoid
    cdef GraphNode a   # inputs, as many as the kind has (None for the others)
    cdef GraphNode b
    cdef GraphNode c
    cdef GraphNode d


@cython.final
cdef class NodeGraph:
    cdef list nodes    # in creation order; nodes[made:] None
    cdef int made      # nodes alive in the list (the C port's len)
    cdef int count
    cdef bint pool     # v1: the nodes made once, by make_pool, and remade by every sample

    # the pushes return 0, or -1 with an exception raised (out of memory)
    cdef int make_pool(self, int room) except -1
    cdef void reset(self) noexcept
    cdef int size(self) noexcept
    cdef inline GraphNode at(self, int i)
    cdef GraphNode make(self)
    cdef inline GraphNode take(self, int kind, double val, double saved, GraphNode a, GraphNode b,
                        GraphNode c, GraphNode d)
    cdef int leaf(self, double val) except -1
    cdef int push_softplus(self, int i) except -1
    cdef int push_sum4(self, int i, int j, int k, int l) except -1
    cdef int push_prod(self, int i, int j) except -1
    cdef int push_softmax4(self, int i, int j, int k, int l) except -1
    cdef void backward(self) noexcept
    cdef GraphSums sums(self) noexcept
