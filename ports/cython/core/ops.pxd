# The scalar math of contract §2, shared by every level and baseline, so that the
# levels differ only in how they organise the graph, never in the arithmetic.
from libc.math cimport exp, log1p, fabs


cdef struct Sums:
    # The checksums of a run: plain sums over the samples, in index order.
    double f
    double dx
    double dy


cdef inline Sums sums_add(Sums a, Sums b) noexcept nogil:
    return Sums(a.f + b.f, a.dx + b.dx, a.dy + b.dy)


# Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
# overflow). The *_e forms take e ready-made, so that a caller computing both shares
# one exp; the results are bit for bit those of the contract's formulas.

cdef inline double exp_neg_abs(double p) noexcept nogil:
    return exp(-fabs(p))


cdef inline double softplus_e(double p, double e) noexcept nogil:
    """log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p))."""
    return p + log1p(e) if p > 0.0 else log1p(e)


cdef inline double sigmoid_e(double p, double e) noexcept nogil:
    """d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)): the
    numerator chosen, then one division (written as two quotients, gcc divides twice in
    every vector lane, once for each, and blends)."""
    return (1.0 if p >= 0.0 else e) / (1.0 + e)


cdef inline double softplus(double p) noexcept nogil:
    return softplus_e(p, exp_neg_abs(p))


cdef inline double sigmoid(double p) noexcept nogil:
    return sigmoid_e(p, exp_neg_abs(p))


cdef inline tuple as_tuple(Sums s):
    """The checksums for the launcher, which prints them (sum_f, sum_dx, sum_dy)."""
    return (s.f, s.dx, s.dy)
