# Level v2 (tape), the seed's NaiveTape: contiguous fixed-size arrays of vars
# {val, grad} and ops {kind, input ids, output id}, addressed by index. Each op
# computes its result once when pushed; backward walks the ops in reverse.

from core.ops import Sums, exp_neg_abs, softplus_e, sigmoid_e
from core.rng import sample
from softplus.nodes import SUM, PROD, SOFTPLUS

comptime MAX_VARS = 6  # x, y, s, p, exp(-|p|), f
comptime MAX_OPS = 3  # SUM, PROD, SOFTPLUS


@fieldwise_init
struct Var(ImplicitlyCopyable, Movable):
    var val: Float64
    var grad: Float64


@fieldwise_init
struct Op(ImplicitlyCopyable, Movable):
    var kind: Int
    var a: Int  # input ids; SOFTPLUS's b is the var that saves exp(-|a|)
    var b: Int
    var out: Int  # output id


struct Tape(Movable):
    var vars: Array[Var, MAX_VARS]
    var ops: Array[Op, MAX_OPS]
    var n_vars: Int
    var n_ops: Int

    def __init__(out self):
        self.vars = Array[Var, MAX_VARS](uninitialized=True)
        self.ops = Array[Op, MAX_OPS](uninitialized=True)
        self.n_vars = 0
        self.n_ops = 0

    @always_inline
    def reset(mut self):
        self.n_vars = 0
        self.n_ops = 0

    @always_inline
    def val(self, i: Int) -> Float64:
        return self.vars[i].val

    @always_inline
    def grad(self, i: Int) -> Float64:
        return self.vars[i].grad

    @always_inline
    def add_grad(mut self, i: Int, g: Float64):
        self.vars[i].grad += g

    @always_inline
    def leaf(mut self, val: Float64) -> Int:
        """A new input var; returns its id."""
        self.vars[self.n_vars] = Var(val, 0.0)
        self.n_vars += 1
        return self.n_vars - 1

    @always_inline
    def push(mut self, kind: Int, a: Int, b: Int, val: Float64) -> Int:
        """Record op `kind` on inputs a, b with result `val`; returns the result's id."""
        var out = self.leaf(val)
        self.ops[self.n_ops] = Op(kind, a, b, out)
        self.n_ops += 1
        return out

    @always_inline
    def push_sum(mut self, a: Int, b: Int) -> Int:
        return self.push(SUM, a, b, self.val(a) + self.val(b))

    @always_inline
    def push_prod(mut self, a: Int, b: Int) -> Int:
        return self.push(PROD, a, b, self.val(a) * self.val(b))

    @always_inline
    def push_softplus(mut self, a: Int) -> Int:
        # exp(-|p|) is saved in a var of its own, so that backward reuses it (each result
        # computed once); the op names it as its second input.
        var p = self.val(a)
        var e = self.leaf(exp_neg_abs(p))
        return self.push(SOFTPLUS, a, e, softplus_e(p, self.val(e)))

    @always_inline
    def backward(mut self, root: Int):
        """Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule.
        Both loops are unrolled over the tape's capacity (comptime for) and stop at its count:
        written as range loops, LLVM kept them loops, with a counter and a branch an
        iteration."""
        comptime for i in range(MAX_VARS):
            if i < self.n_vars:
                self.vars[i].grad = 0.0
        self.add_grad(root, 1.0)
        comptime for kk in range(MAX_OPS):
            var k = self.n_ops - 1 - kk
            if k < 0:
                break
            var op = self.ops[k]
            var g = self.grad(op.out)
            if op.kind == SUM:
                self.add_grad(op.a, g)
                self.add_grad(op.b, g)
            elif op.kind == PROD:
                self.add_grad(op.a, self.val(op.b) * g)
                self.add_grad(op.b, self.val(op.a) * g)
            else:  # SOFTPLUS
                self.add_grad(op.a, sigmoid_e(self.val(op.a), self.val(op.b)) * g)


@always_inline
def record(mut tape: Tape, xv: Float64, yv: Float64) -> Tuple[Int, Int, Int]:
    """One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of f, x and y."""
    tape.reset()
    var x = tape.leaf(xv)
    var y = tape.leaf(yv)
    var s = tape.push_sum(x, y)
    var p = tape.push_prod(s, x)
    return (tape.push_softplus(p), x, y)


def run_v2(seed: UInt64, n: Int) -> Sums:
    var tape = Tape()
    var sum_f = 0.0
    var sum_dx = 0.0
    var sum_dy = 0.0
    for i in range(n):
        var xv, yv = sample(seed, i)
        var f, x, y = record(tape, xv, yv)
        tape.backward(f)
        sum_f += tape.val(f)
        sum_dx += tape.grad(x)
        sum_dy += tape.grad(y)
    return Sums(sum_f, sum_dx, sum_dy)


def eval_point(xv: Float64, yv: Float64) -> Tuple[Float64, Float64, Float64]:
    """f, df/dx, df/dy at one point, through the v2 tape (for --eval)."""
    var tape = Tape()
    var out, x, y = record(tape, xv, yv)
    tape.backward(out)
    return (tape.val(out), tape.grad(x), tape.grad(y))
