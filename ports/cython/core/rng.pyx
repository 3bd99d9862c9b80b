# The input stream (core/rng.pxd) for Python: the same C functions every level inlines,
# so that a test can hold them against the CPython port's stream (ports/python/core/rng.py).
from libc.stdint cimport uint64_t, int64_t


def py_draw(uint64_t seed, int64_t k):
    """draw(seed, k), as every level computes it."""
    return draw(seed, k)


def py_sample(uint64_t seed, int64_t i):
    """Sample i's (x_i, y_i)."""
    cdef double x, y
    sample(seed, i, &x, &y)
    return x, y
