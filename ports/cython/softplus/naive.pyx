# Level v0 (naive): fresh heap nodes every iteration, linked by references; values are
# recomputed on demand and backward recurses through the graph. The nodes are Node
# objects made anew for every sample and freed when the next sample drops them.
from libc.stdint cimport uint64_t, int64_t
from core.rng cimport sample
from core.ops cimport Sums, as_tuple
from softplus.nodes cimport Node, node_new, LEAF, SUM, PROD, SOFTPLUS


cdef Sums run(uint64_t seed, int64_t n):
    cdef Sums total = Sums(0.0, 0.0, 0.0)
    cdef double xv, yv
    cdef Node x, y, s, p, f
    cdef int64_t i
    for i in range(n):
        sample(seed, i, &xv, &yv)
        x = node_new(LEAF, xv, None, None)
        y = node_new(LEAF, yv, None, None)
        s = node_new(SUM, 0.0, x, y)
        p = node_new(PROD, 0.0, s, x)
        f = node_new(SOFTPLUS, 0.0, p, None)
        f.backward(1.0)
        total.f += f.value()
        total.dx += x.grad
        total.dy += y.grad
    return total


def run_v0(uint64_t seed, int64_t n):
    return as_tuple(run(seed, n))
