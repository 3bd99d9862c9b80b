# Level v2 (tape), the seed's NaiveTape: fixed-size arrays of vars {val, grad} and
# ops {kind, input ids, output id}, addressed by index. Each op computes its result
# once when pushed; backward walks the ops in reverse.
#
# Codon's Tape class is a named tuple of arrays here, its methods @njit functions taking the
# tape first (Numba's jitclass cannot be cached on disk: ports/numba/README.md); its counters n_vars and
# n_ops are the two slots of `count`. The arrays are fixed-size, on the stack of the function
# that makes the tape (stack_array), as the Codon program's and the C port's are: NumPy arrays
# from the heap cost reference-count calls in every iteration and keep LLVM from holding the
# tape in registers (ports/numba/README.md).
from collections import namedtuple

from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from core.rng import sample
from core.ops import Sums, exp_neg_abs, softplus_e, sigmoid_e
from .nodes import SUM, PROD, SOFTPLUS

MAX_VARS = 6  # x, y, s, p, exp(-|p|), f
MAX_OPS = 3   # SUM, PROD, SOFTPLUS

# vars: val[i], grad[i]; ops: op[4k .. 4k+3] = (kind, a, b, out), a and b the input ids
# (SOFTPLUS's b is the var that saves exp(-|a|)), out the output id; count = (n_vars, n_ops).
Tape = namedtuple("Tape", "val grad op count")


def stack_array(count, dtype):
    """An intrinsic () -> a 1-D array of `count` elements of `dtype` (a Numba type) on the stack
    of the function it is inlined into (an alloca in its entry block): no heap, no reference
    count. It lives as long as that call, so only an inline="always" function may make one
    for its caller."""
    arrty = types.Array(dtype, 1, "C")

    @intrinsic
    def make(typingctx):
        def codegen(context, builder, signature, args):
            lty = context.get_value_type(dtype)
            itemsize = context.get_constant(types.intp, context.get_abi_sizeof(lty))
            ary = context.make_array(arrty)(context, builder)
            context.populate_array(ary, data=cgutils.alloca_once(builder, lty, size=count),
                                   shape=cgutils.pack_array(builder, [context.get_constant(types.intp, count)]),
                                   strides=cgutils.pack_array(builder, [itemsize]), itemsize=itemsize,
                                   meminfo=None)
            return ary._getvalue()
        return arrty(), codegen
    return make


var_array = stack_array(MAX_VARS, types.float64)
op_array = stack_array(4 * MAX_OPS, types.int64)
count_array = stack_array(2, types.int64)


@njit(cache=True, inline="always")
def new_tape():
    """A tape on the caller's stack (its arrays' contents start undefined: reset and leaf set
    every slot before it is read)."""
    return Tape(var_array(), var_array(), op_array(), count_array())


@njit(cache=True, inline="always")
def reset(t):
    t.count[0] = 0
    t.count[1] = 0


@njit(cache=True, inline="always")
def leaf(t, val):
    """A new input var; returns its id."""
    i = t.count[0]
    t.val[i] = val
    t.grad[i] = 0.0
    t.count[0] = i + 1
    return i


@njit(cache=True, inline="always")
def push(t, kind, a, b, val):
    """Record op `kind` on inputs a, b with result `val`; returns the result's id."""
    out = leaf(t, val)
    k = t.count[1]
    t.op[4 * k] = kind
    t.op[4 * k + 1] = a
    t.op[4 * k + 2] = b
    t.op[4 * k + 3] = out
    t.count[1] = k + 1
    return out


@njit(cache=True, inline="always")
def push_sum(t, a, b):
    return push(t, SUM, a, b, t.val[a] + t.val[b])


@njit(cache=True, inline="always")
def push_prod(t, a, b):
    return push(t, PROD, a, b, t.val[a] * t.val[b])


@njit(cache=True, inline="always")
def push_softplus(t, a):
    # exp(-|p|) is saved in a var of its own, so that backward reuses it (each
    # result computed once); the op names it as its second input.
    p = t.val[a]
    e = leaf(t, exp_neg_abs(p))
    return push(t, SOFTPLUS, a, e, softplus_e(p, t.val[e]))


@njit(cache=True, inline="always")
def backward(t, out):
    """Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule."""
    val, grad = t.val, t.grad
    for i in range(t.count[0]):
        grad[i] = 0.0
    grad[out] += 1.0
    for k in range(t.count[1] - 1, -1, -1):
        kind, a, b, op_out = t.op[4 * k], t.op[4 * k + 1], t.op[4 * k + 2], t.op[4 * k + 3]
        g = grad[op_out]
        if kind == SUM:
            grad[a] += g
            grad[b] += g
        elif kind == PROD:
            grad[a] += val[b] * g
            grad[b] += val[a] * g
        else:  # SOFTPLUS
            grad[a] += sigmoid_e(val[a], val[b]) * g


@njit(cache=True, inline="always")
def record(t, xv, yv):
    """One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f."""
    reset(t)
    x = leaf(t, xv)
    y = leaf(t, yv)
    s = push_sum(t, x, y)
    p = push_prod(t, s, x)
    f = push_softplus(t, p)
    return x, y, f


@njit(cache=True)
def run_v2(seed, n):
    t = new_tape()
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x, y, f = record(t, xv, yv)
        backward(t, f)
        sum_f += t.val[f]
        sum_dx += t.grad[x]
        sum_dy += t.grad[y]
    return Sums(sum_f, sum_dx, sum_dy)


@njit(cache=True)
def eval_point(xv, yv):
    """f, df/dx, df/dy at one point, through the v2 tape (for --eval)."""
    t = new_tape()
    x, y, f = record(t, xv, yv)
    backward(t, f)
    return t.val[f], t.grad[x], t.grad[y]
