# The input stream of contract §1: counter-based splitmix64, written out by hand so
# that every language draws the same numbers (never a standard-library RNG). C-level
# functions, inlined into every module that cimports them; core/rng.pyx gives Python
# the same draws, for the test against the CPython port's stream (ports/python/core/rng.py).
from libc.stdint cimport uint64_t, int64_t

cdef extern from *:
    """
    #define AUTOGRAD_GAMMA 0x9E3779B97F4A7C15ULL
    #define AUTOGRAD_MIX1 0xBF58476D1CE4E5B9ULL
    #define AUTOGRAD_MIX2 0x94D049BB133111EBULL
    """
    const uint64_t GAMMA "AUTOGRAD_GAMMA"
    const uint64_t MIX1 "AUTOGRAD_MIX1"
    const uint64_t MIX2 "AUTOGRAD_MIX2"



cdef inline uint64_t splitmix64(uint64_t z) noexcept nogil:
    """The splitmix64 finalizer: a bijective scramble of one 64-bit word."""
    z = (z ^ (z >> 30)) * MIX1
    z = (z ^ (z >> 27)) * MIX2
    return z ^ (z >> 31)


cdef inline uint64_t draw(uint64_t seed, int64_t k) noexcept nogil:
    """The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`."""
    return splitmix64(seed + <uint64_t>k * GAMMA)


cdef inline double unit(uint64_t z) noexcept nogil:
    """The top 53 bits of z as a double in [0, 1); they fit a signed conversion exactly."""
    return <double>(<int64_t>(z >> 11)) * (1.0 / 9007199254740992.0)


cdef inline void sample(uint64_t seed, int64_t i, double* x, double* y) noexcept nogil:
    """Sample i: (x_i, y_i), both in [-1, 1)."""
    x[0] = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0
    y[0] = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0
