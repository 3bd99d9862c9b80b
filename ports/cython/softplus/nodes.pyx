# The node type of levels v0 and v1 (softplus/nodes.pxd declares it).
cimport cython
from core.ops cimport softplus, sigmoid


@cython.final
@cython.no_gc   # as declared in the .pxd, where Cython does not apply it
@cython.freelist(8)  # the last 8 freed nodes' memory kept for the next ones (as glibc's tcache keeps 7 for C)
cdef class Node:
    cdef double op_value(self) noexcept:
        """value() of a node that is not a leaf."""
        if self.kind == SUM:
            return self.a.value() + self.b.value()
        if self.kind == PROD:
            return self.a.value() * self.b.value()
        return softplus(self.a.value())

    cdef void op_backward(self, double g) noexcept:
        """backward()'s recursion into a node's inputs, for a node that is not a leaf."""
        if self.kind == SUM:
            self.a.backward(g)
            self.b.backward(g)
        elif self.kind == PROD:
            self.a.backward(self.b.value() * g)
            self.b.backward(self.a.value() * g)
        elif self.kind == SOFTPLUS:
            self.a.backward(sigmoid(self.a.value()) * g)
