# Graph v3's lane arithmetic: each op's loop over a var's GRAPH_BATCH lanes, as a function
# whose every written array is a `lanes` (restrict) pointer. That tells gcc what the C
# port says with `omp simd` and the Codon program with explicit vectors (graph/lanes.codon):
# an op's output lanes never overlap its inputs', so each loop becomes vector code without
# a run-time overlap check. Each lane's operations and their order are the scalar code's
# (and -ffp-contract=off holds), so the digits are the scalar loop's.
from core.ops cimport sigmoid_e
from core.vmath cimport lanes
from graph.recipe cimport max2

cdef enum:
    GRAPH_BATCH = 16  # lanes per var, a multiple of every vector width (graph/simd.pyx)


cdef inline void sum4_lanes(lanes o, const double* a, const double* b, const double* c,
                            const double* d) noexcept nogil:
    cdef int j
    for j in range(GRAPH_BATCH):
        o[j] = ((a[j] + b[j]) + c[j]) + d[j]


cdef inline void mul_lanes(lanes o, const double* a, const double* b) noexcept nogil:
    cdef int j
    for j in range(GRAPH_BATCH):
        o[j] = a[j] * b[j]


cdef inline void softplus_lanes(lanes o, const double* p) noexcept nogil:
    """o holds log1p(exp(-|p|)); softplus = p + o where p > 0, else o."""
    cdef int j
    for j in range(GRAPH_BATCH):
        o[j] = p[j] + o[j] if p[j] > 0.0 else o[j]


cdef inline void softmax_shift_lanes(lanes o0, lanes o1, lanes o2, lanes o3, const double* a,
                                     const double* b, const double* c, const double* d) noexcept nogil:
    """m = max(max(a, b), max(c, d)); o_k = in_k - m."""
    cdef int j
    cdef double m
    for j in range(GRAPH_BATCH):
        m = max2(max2(a[j], b[j]), max2(c[j], d[j]))
        o0[j] = a[j] - m
        o1[j] = b[j] - m
        o2[j] = c[j] - m
        o3[j] = d[j] - m


cdef inline void softmax_norm_lanes(lanes o0, lanes o1, lanes o2, lanes o3) noexcept nogil:
    """o_k = e_k / (((e_0 + e_1) + e_2) + e_3)."""
    cdef int j
    cdef double total
    for j in range(GRAPH_BATCH):
        total = ((o0[j] + o1[j]) + o2[j]) + o3[j]
        o0[j] = o0[j] / total
        o1[j] = o1[j] / total
        o2[j] = o2[j] / total
        o3[j] = o3[j] / total


cdef inline void acc_lanes(lanes dst, const double* src) noexcept nogil:
    """dst += src."""
    cdef int j
    for j in range(GRAPH_BATCH):
        dst[j] += src[j]


cdef inline void acc_mul_lanes(lanes dst, const double* a, const double* b) noexcept nogil:
    """dst += a * b."""
    cdef int j
    for j in range(GRAPH_BATCH):
        dst[j] += a[j] * b[j]


cdef inline void acc_sigmoid_lanes(lanes dst, const double* p, const double* e, const double* g) noexcept nogil:
    """dst += sigmoid_e(p, e) * g."""
    cdef int j
    for j in range(GRAPH_BATCH):
        dst[j] += sigmoid_e(p[j], e[j]) * g[j]


cdef inline void softmax_backward_lanes(const double* o0, const double* o1, const double* o2, const double* o3,
                                        const double* g0, const double* g1, const double* g2, const double* g3,
                                        lanes ga, lanes gb, lanes gc, lanes gd) noexcept nogil:
    """avg = ((o_0 g_0 + o_1 g_1) + o_2 g_2) + o_3 g_3; g[in_k] += o_k (g_k - avg), k in order."""
    cdef int j
    cdef double avg
    for j in range(GRAPH_BATCH):
        avg = ((o0[j] * g0[j] + o1[j] * g1[j]) + o2[j] * g2[j]) + o3[j] * g3[j]
        ga[j] += o0[j] * (g0[j] - avg)
        gb[j] += o1[j] * (g1[j] - avg)
        gc[j] += o2[j] * (g2[j] - avg)
        gd[j] += o3[j] * (g3[j] - avg)


cdef inline void acc2_lanes(lanes x, lanes y, const double* a, const double* b) noexcept nogil:
    """x += a; y += b (a sample's loss and grad_all, var by var)."""
    cdef int j
    for j in range(GRAPH_BATCH):
        x[j] += a[j]
        y[j] += b[j]


cdef inline void acc_scaled_lanes(lanes dst, double w, const double* g) noexcept nogil:
    """dst += w * g (grad_in's weighted gradients)."""
    cdef int j
    for j in range(GRAPH_BATCH):
        dst[j] += w * g[j]
