# Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
# lanes (structure of arrays), each op is a loop over its lanes that gcc vectorizes,
# and exp/log1p are glibc's vector versions (core/vmath.pxd). The ops and their order
# are v2's. Each lane loop is a function whose output is a `lanes` pointer (restrict),
# so that gcc vectorizes it without a run-time overlap check.
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport free
from core.ops cimport Sums, as_tuple, sigmoid_e
from core.vmath cimport lanes, alloc_or_die, ALIGN, exp_neg_abs_lanes, log1p_lanes
from softplus.nodes cimport SUM, PROD, SOFTPLUS


cdef inline void batch_reset(BatchTape* t) noexcept nogil:
    t.n_vars = 0
    t.n_ops = 0


cdef inline double* batch_vals(BatchTape* t, int i) noexcept nogil:
    return t.val + i * BATCH


cdef inline double* batch_grads(BatchTape* t, int i) noexcept nogil:
    return t.grad + i * BATCH


cdef inline int batch_leaf(BatchTape* t) noexcept nogil:
    """A new var; the caller fills its lanes. Returns its id."""
    t.n_vars += 1
    return t.n_vars - 1


cdef inline int batch_push(BatchTape* t, int kind, int a, int b) noexcept nogil:
    """Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill."""
    cdef int out = batch_leaf(t)
    t.ops[t.n_ops] = Op(kind, a, b, out)
    t.n_ops += 1
    return out


cdef inline void sum_lanes(lanes o, const double* u, const double* v) noexcept nogil:
    cdef int j
    for j in range(BATCH):
        o[j] = u[j] + v[j]


cdef inline void prod_lanes(lanes o, const double* u, const double* v) noexcept nogil:
    cdef int j
    for j in range(BATCH):
        o[j] = u[j] * v[j]


cdef inline void softplus_lanes(lanes o, const double* p) noexcept nogil:
    """o holds log1p(exp(-|p|)); softplus_e, lane-wise."""
    cdef int j
    for j in range(BATCH):
        o[j] = p[j] + o[j] if p[j] > 0.0 else o[j]


cdef inline void acc_lanes(lanes ga, const double* g) noexcept nogil:
    cdef int j
    for j in range(BATCH):
        ga[j] += g[j]


cdef inline void acc_mul_lanes(lanes ga, const double* v, const double* g) noexcept nogil:
    cdef int j
    for j in range(BATCH):
        ga[j] += v[j] * g[j]


cdef inline void acc_sigmoid_lanes(lanes ga, const double* p, const double* e, const double* g) noexcept nogil:
    cdef int j
    for j in range(BATCH):
        ga[j] += sigmoid_e(p[j], e[j]) * g[j]


cdef inline int batch_push_sum(BatchTape* t, int a, int b) noexcept nogil:
    cdef int out = batch_push(t, SUM, a, b)
    sum_lanes(batch_vals(t, out), batch_vals(t, a), batch_vals(t, b))
    return out


cdef inline int batch_push_prod(BatchTape* t, int a, int b) noexcept nogil:
    cdef int out = batch_push(t, PROD, a, b)
    prod_lanes(batch_vals(t, out), batch_vals(t, a), batch_vals(t, b))
    return out


cdef inline int batch_push_softplus(BatchTape* t, int a) noexcept nogil:
    # As in v2, exp(-|p|) gets a var of its own, named as the op's second input.
    cdef int e = batch_leaf(t)
    exp_neg_abs_lanes(batch_vals(t, a), batch_vals(t, e), BATCH)
    cdef int out = batch_push(t, SOFTPLUS, a, e)
    log1p_lanes(batch_vals(t, e), batch_vals(t, out), BATCH)
    softplus_lanes(batch_vals(t, out), batch_vals(t, a))
    return out


cdef inline void batch_backward(BatchTape* t, int out) noexcept nogil:
    """Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule. Each
    input gets its own loop, so that an op whose two inputs are one var stays right."""
    cdef int j, k
    cdef Op op
    cdef double* g
    for j in range(t.n_vars * BATCH):
        t.grad[j] = 0.0
    g = batch_grads(t, out)
    for j in range(BATCH):
        g[j] = 1.0
    for k in range(t.n_ops - 1, -1, -1):
        op = t.ops[k]
        g = batch_grads(t, op.out)
        if op.kind == SUM:
            acc_lanes(batch_grads(t, op.a), g)
            acc_lanes(batch_grads(t, op.b), g)
        elif op.kind == PROD:
            acc_mul_lanes(batch_grads(t, op.a), batch_vals(t, op.b), g)
            acc_mul_lanes(batch_grads(t, op.b), batch_vals(t, op.a), g)
        else:  # SOFTPLUS: b holds exp(-|a|)
            acc_sigmoid_lanes(batch_grads(t, op.a), batch_vals(t, op.a), batch_vals(t, op.b), g)


cdef Sums run_batches(uint64_t seed, int64_t n, int64_t first_batch, int64_t end_batch) noexcept nogil:
    """Batches [first_batch, end_batch) of the n samples through one batch tape."""
    cdef BatchTape* tape = <BatchTape*>alloc_or_die(ALIGN, (sizeof(BatchTape) + ALIGN - 1) // ALIGN * ALIGN)
    cdef LaneSums* acc = <LaneSums*>alloc_or_die(ALIGN, sizeof(LaneSums))
    cdef int64_t batch, first
    cdef int count, x, y, s, p, f
    lane_sums_init(acc)
    for batch in range(first_batch, end_batch):
        first = batch * BATCH
        count = <int>(n - first) if n - first < BATCH else BATCH
        batch_reset(tape)
        x = batch_leaf(tape)
        y = batch_leaf(tape)
        fill_inputs(batch_vals(tape, x), batch_vals(tape, y), seed, first, count)
        s = batch_push_sum(tape, x, y)
        p = batch_push_prod(tape, s, x)
        f = batch_push_softplus(tape, p)
        batch_backward(tape, f)
        lane_sums_add(acc, batch_vals(tape, f), batch_grads(tape, x), batch_grads(tape, y), count)
    cdef Sums total = lane_sums_total(acc)
    free(tape)
    free(acc)
    return total


def run_v3(uint64_t seed, int64_t n):
    return as_tuple(run_batches(seed, n, 0, n_batches(n)))
