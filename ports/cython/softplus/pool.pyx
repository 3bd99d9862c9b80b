# Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
# and relinked every iteration, so the loop allocates nothing. Values are still
# recomputed on demand (the seed's v1).
cimport cython
from libc.stdint cimport uint64_t, int64_t
from core.rng cimport sample
from core.ops cimport Sums, as_tuple
from softplus.nodes cimport Node, node_new, node_set, LEAF, SUM, PROD, SOFTPLUS

cdef enum:
    POOL_SIZE = 5  # x, y, s, p, f


@cython.final
cdef class Pool:
    cdef list nodes
    cdef int used

    def __cinit__(self, int size):
        self.nodes = [node_new(LEAF, 0.0, None, None) for _ in range(size)]
        self.used = 0

    cdef inline void reset(self) noexcept:
        self.used = 0

    cdef inline Node take(self, int kind, double leaf_val, Node a, Node b):
        """The next free node, remade as (kind, leaf_val, a, b)."""
        cdef Node node = <Node>self.nodes[self.used]
        self.used += 1
        node_set(node, kind, leaf_val, a, b)
        return node


cdef Sums run(uint64_t seed, int64_t n):
    cdef Pool pool = Pool(POOL_SIZE)
    cdef Sums total = Sums(0.0, 0.0, 0.0)
    cdef double xv, yv
    cdef Node x, y, s, p, f
    cdef int64_t i
    for i in range(n):
        sample(seed, i, &xv, &yv)
        pool.reset()
        x = pool.take(LEAF, xv, None, None)
        y = pool.take(LEAF, yv, None, None)
        s = pool.take(SUM, 0.0, x, y)
        p = pool.take(PROD, 0.0, s, x)
        f = pool.take(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        total.f += f.value()
        total.dx += x.grad
        total.dy += y.grad
    return total


def run_v1(uint64_t seed, int64_t n):
    return as_tuple(run(seed, n))
