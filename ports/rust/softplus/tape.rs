// Level v2 (tape), the seed's NaiveTape: contiguous fixed-size arrays of vars
// {val, grad} and ops {kind, input ids, output id}, addressed by index. Each op
// computes its result once when pushed; backward walks the ops in reverse.
use crate::core::rng::sample;
use crate::core::ops::{Sums, exp_neg_abs, softplus_e, sigmoid_e};
use super::nodes::Kind;

pub const MAX_VARS: usize = 6; // x, y, s, p, exp(-|p|), f
pub const MAX_OPS: usize = 3; // SUM, PROD, SOFTPLUS

#[derive(Clone, Copy)]
struct Var {
    val: f64,
    grad: f64,
}

#[derive(Clone, Copy)]
pub struct Op {
    pub kind: Kind,
    pub a: usize, // input ids; SOFTPLUS's b is the var that saves exp(-|a|)
    pub b: usize,
    pub out: usize, // output id
}

pub const NO_OP: Op = Op { kind: Kind::Leaf, a: 0, b: 0, out: 0 };

struct Tape {
    vars: Box<[Var; MAX_VARS]>,
    ops: Box<[Op; MAX_OPS]>,
    n_vars: usize,
    n_ops: usize,
}

impl Tape {
    #[inline]
    fn new() -> Tape {
        Tape {
            vars: Box::new([Var { val: 0.0, grad: 0.0 }; MAX_VARS]),
            ops: Box::new([NO_OP; MAX_OPS]),
            n_vars: 0,
            n_ops: 0,
        }
    }

    #[inline]
    fn reset(&mut self) {
        self.n_vars = 0;
        self.n_ops = 0;
    }

    #[inline]
    fn val(&self, i: usize) -> f64 {
        self.vars[i].val
    }

    #[inline]
    fn grad(&self, i: usize) -> f64 {
        self.vars[i].grad
    }

    #[inline]
    fn add_grad(&mut self, i: usize, g: f64) {
        self.vars[i].grad += g;
    }

    /// A new input var; returns its id.
    #[inline]
    fn leaf(&mut self, val: f64) -> usize {
        self.vars[self.n_vars] = Var { val, grad: 0.0 };
        self.n_vars += 1;
        self.n_vars - 1
    }

    /// Record op `kind` on inputs a, b with result `val`; returns the result's id.
    #[inline]
    fn push(&mut self, kind: Kind, a: usize, b: usize, val: f64) -> usize {
        let out = self.leaf(val);
        self.ops[self.n_ops] = Op { kind, a, b, out };
        self.n_ops += 1;
        out
    }

    #[inline]
    fn push_sum(&mut self, a: usize, b: usize) -> usize {
        let val = self.val(a) + self.val(b);
        self.push(Kind::Sum, a, b, val)
    }

    #[inline]
    fn push_prod(&mut self, a: usize, b: usize) -> usize {
        let val = self.val(a) * self.val(b);
        self.push(Kind::Prod, a, b, val)
    }

    #[inline]
    fn push_softplus(&mut self, a: usize) -> usize {
        // exp(-|p|) is saved in a var of its own, so that backward reuses it (each
        // result computed once); the op names it as its second input.
        let p = self.val(a);
        let e = self.leaf(exp_neg_abs(p));
        let val = softplus_e(p, self.val(e));
        self.push(Kind::Softplus, a, e, val)
    }

    /// Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule.
    #[inline(always)] // as Codon's @inline
    fn backward(&mut self, out: usize) {
        for i in 0..self.n_vars {
            self.vars[i].grad = 0.0;
        }
        self.add_grad(out, 1.0);
        for k in (0..self.n_ops).rev() {
            let op = self.ops[k];
            let g = self.grad(op.out);
            match op.kind {
                Kind::Sum => {
                    self.add_grad(op.a, g);
                    self.add_grad(op.b, g);
                }
                Kind::Prod => {
                    let (va, vb) = (self.val(op.a), self.val(op.b));
                    self.add_grad(op.a, vb * g);
                    self.add_grad(op.b, va * g);
                }
                _ => {
                    // SOFTPLUS
                    let s = sigmoid_e(self.val(op.a), self.val(op.b));
                    self.add_grad(op.a, s * g);
                }
            }
        }
    }
}

/// One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f.
#[inline(always)] // as Codon's @inline
fn record(tape: &mut Tape, xv: f64, yv: f64) -> (usize, usize, usize) {
    tape.reset();
    let x = tape.leaf(xv);
    let y = tape.leaf(yv);
    let s = tape.push_sum(x, y);
    let p = tape.push_prod(s, x);
    let f = tape.push_softplus(p);
    (x, y, f)
}

pub fn run_v2(seed: u64, n: u64) -> Sums {
    let mut tape = Tape::new();
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (xv, yv) = sample(seed, i);
        let (x, y, f) = record(&mut tape, xv, yv);
        tape.backward(f);
        sum_f += tape.val(f);
        sum_dx += tape.grad(x);
        sum_dy += tape.grad(y);
    }
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}

/// f, df/dx, df/dy at one point, through the v2 tape (for --eval).
pub fn eval_point(xv: f64, yv: f64) -> (f64, f64, f64) {
    let mut tape = Tape::new();
    let (x, y, f) = record(&mut tape, xv, yv);
    tape.backward(f);
    (tape.val(f), tape.grad(x), tape.grad(y))
}
