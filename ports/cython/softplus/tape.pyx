# Level v2 (tape), the seed's NaiveTape: contiguous fixed-size arrays of vars
# {val, grad} and ops {kind, input ids, output id}, addressed by index (a C struct,
# softplus/tape.pxd). Each op computes its result once when pushed; backward walks the
# ops in reverse.
from libc.stdint cimport uint64_t, int64_t
from core.rng cimport sample
from core.ops cimport Sums, as_tuple, exp_neg_abs, softplus_e, sigmoid_e
from softplus.nodes cimport SUM, PROD, SOFTPLUS


cdef inline void tape_reset(Tape* t) noexcept nogil:
    t.n_vars = 0
    t.n_ops = 0


cdef inline double tape_val(const Tape* t, int i) noexcept nogil:
    return t.vars[i].val


cdef inline double tape_grad(const Tape* t, int i) noexcept nogil:
    return t.vars[i].grad


cdef inline void tape_add_grad(Tape* t, int i, double g) noexcept nogil:
    t.vars[i].grad += g


cdef inline int tape_leaf(Tape* t, double val) noexcept nogil:
    """A new input var; returns its id."""
    t.vars[t.n_vars] = Var(val, 0.0)
    t.n_vars += 1
    return t.n_vars - 1


cdef inline int tape_push(Tape* t, int kind, int a, int b, double val) noexcept nogil:
    """Record op `kind` on inputs a, b with result `val`; returns the result's id."""
    cdef int out = tape_leaf(t, val)
    t.ops[t.n_ops] = Op(kind, a, b, out)
    t.n_ops += 1
    return out


cdef inline int tape_push_sum(Tape* t, int a, int b) noexcept nogil:
    return tape_push(t, SUM, a, b, tape_val(t, a) + tape_val(t, b))


cdef inline int tape_push_prod(Tape* t, int a, int b) noexcept nogil:
    return tape_push(t, PROD, a, b, tape_val(t, a) * tape_val(t, b))


cdef inline int tape_push_softplus(Tape* t, int a) noexcept nogil:
    # exp(-|p|) is saved in a var of its own, so that backward reuses it (each result
    # computed once); the op names it as its second input.
    cdef double p = tape_val(t, a)
    cdef int e = tape_leaf(t, exp_neg_abs(p))
    return tape_push(t, SOFTPLUS, a, e, softplus_e(p, tape_val(t, e)))


cdef inline void tape_backward(Tape* t, int out) noexcept nogil:
    """Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule."""
    cdef int i, k
    cdef Op op
    cdef double g
    for i in range(t.n_vars):
        t.vars[i].grad = 0.0
    tape_add_grad(t, out, 1.0)
    for k in range(t.n_ops - 1, -1, -1):
        op = t.ops[k]
        g = tape_grad(t, op.out)
        if op.kind == SUM:
            tape_add_grad(t, op.a, g)
            tape_add_grad(t, op.b, g)
        elif op.kind == PROD:
            tape_add_grad(t, op.a, tape_val(t, op.b) * g)
            tape_add_grad(t, op.b, tape_val(t, op.a) * g)
        else:  # SOFTPLUS
            tape_add_grad(t, op.a, sigmoid_e(tape_val(t, op.a), tape_val(t, op.b)) * g)


cdef inline int record(Tape* tape, double xv, double yv, int* x, int* y) noexcept nogil:
    """One forward pass of f(x, y) = softplus((x + y) * x); returns the id of f and sets
    those of x and y."""
    tape_reset(tape)
    x[0] = tape_leaf(tape, xv)
    y[0] = tape_leaf(tape, yv)
    cdef int s = tape_push_sum(tape, x[0], y[0])
    cdef int p = tape_push_prod(tape, s, x[0])
    return tape_push_softplus(tape, p)


cdef Sums run(uint64_t seed, int64_t n) noexcept nogil:
    cdef Tape tape
    cdef Sums total = Sums(0.0, 0.0, 0.0)
    cdef double xv, yv
    cdef int x, y, f
    cdef int64_t i
    for i in range(n):
        sample(seed, i, &xv, &yv)
        f = record(&tape, xv, yv, &x, &y)
        tape_backward(&tape, f)
        total.f += tape_val(&tape, f)
        total.dx += tape_grad(&tape, x)
        total.dy += tape_grad(&tape, y)
    return total


def run_v2(uint64_t seed, int64_t n):
    return as_tuple(run(seed, n))


def eval_point(double xv, double yv):
    """f, df/dx, df/dy at one point, through the v2 tape (for --eval)."""
    cdef Tape tape
    cdef int x, y
    cdef int out = record(&tape, xv, yv, &x, &y)
    tape_backward(&tape, out)
    return tape_val(&tape, out), tape_grad(&tape, x), tape_grad(&tape, y)
