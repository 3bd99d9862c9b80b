# Baseline `fused` (not a level): the same math written out by hand with no tape or
# graph, the floor that the v2 tape can approach; and `fused-simd`, the same over
# batches of BATCH samples with v3's vector math and lane sums, no tape: the floor for
# v3 and v4.
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.rng cimport sample
from core.ops cimport Sums, as_tuple, exp_neg_abs, softplus_e, sigmoid_e
from core.vmath cimport lanes, alloc_or_die, ALIGN, exp_neg_abs_lanes, log1p_lanes
from softplus.simd cimport (BATCH, LaneSums, fill_inputs, lane_sums_init, lane_sums_add, lane_sums_total,
                            n_batches)


cdef Sums fused(uint64_t seed, int64_t n) noexcept nogil:
    cdef Sums total = Sums(0.0, 0.0, 0.0)
    cdef double x, y, s, p, e, g
    cdef int64_t i
    for i in range(n):
        sample(seed, i, &x, &y)
        s = x + y
        p = s * x
        e = exp_neg_abs(p)
        g = sigmoid_e(p, e)
        total.f += softplus_e(p, e)
        total.dx += s * g + x * g
        total.dy += x * g
    return total


def run_fused(uint64_t seed, int64_t n):
    return as_tuple(fused(seed, n))


cdef inline void shift_lanes(lanes p, const double* x, const double* y) noexcept nogil:
    """p = (x + y) * x, lane-wise."""
    cdef int j
    for j in range(BATCH):
        p[j] = (x[j] + y[j]) * x[j]


cdef inline void formula_lanes(lanes f, lanes dx, lanes dy, const double* x, const double* y,
                               const double* p, const double* e, const double* l) noexcept nogil:
    """f, df/dx, df/dy lane-wise, from p, e = exp(-|p|) and l = log1p(e)."""
    cdef int j
    cdef double s, g
    for j in range(BATCH):
        s = x[j] + y[j]
        g = sigmoid_e(p[j], e[j])
        f[j] = p[j] + l[j] if p[j] > 0.0 else l[j]
        dx[j] = s * g + x[j] * g
        dy[j] = x[j] * g


cdef Sums fused_simd(uint64_t seed, int64_t n) noexcept nogil:
    # the eight lane arrays in one block, each on a cache line
    cdef double* block = <double*>alloc_or_die(ALIGN, 8 * BATCH * sizeof(double))
    cdef double* x = block
    cdef double* y = block + BATCH
    cdef double* p = block + 2 * BATCH
    cdef double* e = block + 3 * BATCH
    cdef double* l = block + 4 * BATCH
    cdef double* f = block + 5 * BATCH
    cdef double* dx = block + 6 * BATCH
    cdef double* dy = block + 7 * BATCH
    cdef LaneSums* acc = <LaneSums*>alloc_or_die(ALIGN, sizeof(LaneSums))
    cdef int64_t batch, first
    cdef int count
    lane_sums_init(acc)
    for batch in range(n_batches(n)):
        first = batch * BATCH
        count = <int>(n - first) if n - first < BATCH else BATCH
        fill_inputs(x, y, seed, first, count)
        shift_lanes(p, x, y)
        exp_neg_abs_lanes(p, e, BATCH)
        log1p_lanes(e, l, BATCH)
        formula_lanes(f, dx, dy, x, y, p, e, l)
        lane_sums_add(acc, f, dx, dy, count)
    cdef Sums total = lane_sums_total(acc)
    free(block)
    free(acc)
    return total


def run_fused_simd(uint64_t seed, int64_t n):
    return as_tuple(fused_simd(seed, n))
