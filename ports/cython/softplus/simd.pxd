# Level v3's batch tape and lane sums (softplus/simd.pyx), declared for v4 (threads)
# and the fused-simd baseline, which share them.
from libc.stdint cimport uint64_t, int64_t
from core.rng cimport sample
from core.ops cimport Sums, sums_add
from core.vmath cimport lanes
from softplus.tape cimport Op, MAX_VARS, MAX_OPS

cdef enum:
    BATCH = 256  # lanes per var, a multiple of WIDTH (the C port's and the Codon program's)


cdef struct BatchTape:
    # made by alloc_or_die(ALIGN, ...): val and grad start on cache lines
    double val[MAX_VARS * BATCH]   # var i's lanes at [i * BATCH, (i + 1) * BATCH)
    double grad[MAX_VARS * BATCH]
    Op ops[MAX_OPS]
    int n_vars
    int n_ops


cdef struct LaneSums:
    # per-lane running sums, so that accumulating a batch is a vector add
    double f[BATCH]
    double dx[BATCH]
    double dy[BATCH]


cdef inline void fill_inputs(lanes x, lanes y, uint64_t seed, int64_t first, int count) noexcept nogil:
    """Samples first .. first+count-1 into the lanes of x and y; unused lanes get 0."""
    cdef int j
    for j in range(count):
        sample(seed, first + j, &x[j], &y[j])
    for j in range(count, BATCH):
        x[j] = 0.0
        y[j] = 0.0


cdef inline void lane_sums_init(LaneSums* acc) noexcept nogil:
    cdef int j
    for j in range(BATCH):
        acc.f[j] = 0.0
        acc.dx[j] = 0.0
        acc.dy[j] = 0.0


cdef inline void lane_sums_add(LaneSums* acc, const double* f, const double* dx, const double* dy,
                               int count) noexcept nogil:
    add_lanes(acc.f, f, count)
    add_lanes(acc.dx, dx, count)
    add_lanes(acc.dy, dy, count)


cdef inline void add_lanes(lanes acc, const double* v, int count) noexcept nogil:
    """acc[j] += v[j] for j < count."""
    cdef int j
    for j in range(count):
        acc[j] += v[j]


cdef inline Sums lane_sums_total(const LaneSums* acc) noexcept nogil:
    """The lanes added up in lane order."""
    cdef Sums s = Sums(0.0, 0.0, 0.0)
    cdef int j
    for j in range(BATCH):
        s = sums_add(s, Sums(acc.f[j], acc.dx[j], acc.dy[j]))
    return s


cdef inline int64_t n_batches(int64_t n) noexcept nogil:
    return (n + BATCH - 1) // BATCH


cdef Sums run_batches(uint64_t seed, int64_t n, int64_t first_batch, int64_t end_batch) noexcept nogil
