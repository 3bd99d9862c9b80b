# Level v2 (tape), the seed's NaiveTape: fixed-size lists of vars {val, grad} and
# ops {kind, input ids, output id}, addressed by index. Each op computes its result
# once when pushed; backward walks the ops in reverse.
from core.rng import sample
from core.ops import Sums, exp_neg_abs, softplus_e, sigmoid_e
from .nodes import SUM, PROD, SOFTPLUS

MAX_VARS = 6  # x, y, s, p, exp(-|p|), f
MAX_OPS = 3   # SUM, PROD, SOFTPLUS


class Var:
    __slots__ = ("val", "grad")

    def __init__(self, val, grad):
        self.val = val
        self.grad = grad


# An op is a plain tuple (kind, a, b, out): a and b are the input ids (SOFTPLUS's b is
# the var that saves exp(-|a|)), out the output id. (A NamedTuple reads the same but
# its constructor is a Python-level call for every op.)


class Tape:
    def __init__(self):
        self.vars = [Var(0.0, 0.0) for _ in range(MAX_VARS)]
        self.ops = [(0, 0, 0, 0)] * MAX_OPS
        self.n_vars = 0
        self.n_ops = 0

    def reset(self):
        self.n_vars = 0
        self.n_ops = 0

    def val(self, i):
        return self.vars[i].val

    def grad(self, i):
        return self.vars[i].grad

    def add_grad(self, i, g):
        self.vars[i].grad += g

    def leaf(self, val):
        """A new input var; returns its id."""
        var = self.vars[self.n_vars]
        var.val = val
        var.grad = 0.0
        self.n_vars += 1
        return self.n_vars - 1

    def push(self, kind, a, b, val):
        """Record op `kind` on inputs a, b with result `val`; returns the result's id."""
        out = self.leaf(val)
        self.ops[self.n_ops] = (kind, a, b, out)
        self.n_ops += 1
        return out

    def push_sum(self, a, b):
        return self.push(SUM, a, b, self.val(a) + self.val(b))

    def push_prod(self, a, b):
        return self.push(PROD, a, b, self.val(a) * self.val(b))

    def push_softplus(self, a):
        # exp(-|p|) is saved in a var of its own, so that backward reuses it (each
        # result computed once); the op names it as its second input.
        p = self.val(a)
        e = self.leaf(exp_neg_abs(p))
        return self.push(SOFTPLUS, a, e, softplus_e(p, self.val(e)))

    def backward(self, out):
        """Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule."""
        for i in range(self.n_vars):
            self.vars[i].grad = 0.0
        self.add_grad(out, 1.0)
        for k in range(self.n_ops - 1, -1, -1):
            kind, a, b, op_out = self.ops[k]
            g = self.grad(op_out)
            if kind == SUM:
                self.add_grad(a, g)
                self.add_grad(b, g)
            elif kind == PROD:
                self.add_grad(a, self.val(b) * g)
                self.add_grad(b, self.val(a) * g)
            else:  # SOFTPLUS
                self.add_grad(a, sigmoid_e(self.val(a), self.val(b)) * g)


def record(tape, xv, yv):
    """One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f."""
    tape.reset()
    x = tape.leaf(xv)
    y = tape.leaf(yv)
    s = tape.push_sum(x, y)
    p = tape.push_prod(s, x)
    f = tape.push_softplus(p)
    return x, y, f


def run_v2(seed, n):
    tape = Tape()
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        xv, yv = sample(seed, i)
        x, y, f = record(tape, xv, yv)
        tape.backward(f)
        sum_f += tape.val(f)
        sum_dx += tape.grad(x)
        sum_dy += tape.grad(y)
    return Sums(sum_f, sum_dx, sum_dy)


def eval_point(xv, yv):
    """f, df/dx, df/dy at one point, through the v2 tape (for --eval)."""
    tape = Tape()
    x, y, f = record(tape, xv, yv)
    tape.backward(f)
    return tape.val(f), tape.grad(x), tape.grad(y)
