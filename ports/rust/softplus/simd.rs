// Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
// lanes (structure of arrays), each op is a loop over its lanes that LLVM vectorizes,
// and exp/log1p are glibc's vector versions. The ops and their order are v2's.
use crate::core::rng::sample;
use crate::core::ops::{Sums, sigmoid_e};
use crate::core::vmath::{ALIGN, AlignedLanes, WIDTH, exp_neg_abs_lanes, log1p_lanes};
use super::nodes::Kind;
use super::tape::{MAX_VARS, MAX_OPS, Op, NO_OP};

/// Lanes per var: 256, as in the Codon program (why: docs/findings/graph-where-the-time-goes.md).
pub const BATCH: usize = 256;
const _: () = assert!(BATCH % WIDTH == 0, "BATCH must be a multiple of WIDTH");

/// A softplus var's BATCH lanes.
pub type Lanes = AlignedLanes<BATCH>;

const _: () = assert!(std::mem::align_of::<Lanes>() == ALIGN);

/// The v2 tape with BATCH lanes per var: val and grad are MAX_VARS x BATCH arrays,
/// var i's lanes at [i * BATCH, (i + 1) * BATCH); ops as in v2.
struct BatchTape {
    val: Box<[Lanes; MAX_VARS]>,
    grad: Box<[Lanes; MAX_VARS]>,
    ops: Box<[Op; MAX_OPS]>,
    n_vars: usize,
    n_ops: usize,
}

impl BatchTape {
    fn new() -> BatchTape {
        BatchTape {
            val: Box::new([Lanes::ZERO; MAX_VARS]),
            grad: Box::new([Lanes::ZERO; MAX_VARS]),
            ops: Box::new([NO_OP; MAX_OPS]),
            n_vars: 0,
            n_ops: 0,
        }
    }

    fn reset(&mut self) {
        self.n_vars = 0;
        self.n_ops = 0;
    }

    fn vals(&self, i: usize) -> &Lanes {
        &self.val[i]
    }

    fn grads(&self, i: usize) -> &Lanes {
        &self.grad[i]
    }

    /// The lanes of vars i < j, both writable (how the caller fills two leaves).
    fn vals_mut2(&mut self, i: usize, j: usize) -> (&mut Lanes, &mut Lanes) {
        let (below, rest) = self.val.split_at_mut(j);
        (&mut below[i], &mut rest[0])
    }

    /// The vals below `out` (an op's inputs) and out's lanes, borrowed together: an
    /// op's inputs always precede its output, so the split keeps the borrows apart.
    fn inputs_and_out(&mut self, out: usize) -> (&[Lanes], &mut Lanes) {
        let (inputs, rest) = self.val.split_at_mut(out);
        (inputs, &mut rest[0])
    }

    /// A new var; the caller fills its lanes. Returns its id.
    fn leaf(&mut self) -> usize {
        self.n_vars += 1;
        self.n_vars - 1
    }

    /// Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill.
    fn push(&mut self, kind: Kind, a: usize, b: usize) -> usize {
        let out = self.leaf();
        self.ops[self.n_ops] = Op { kind, a, b, out };
        self.n_ops += 1;
        out
    }

    fn push_sum(&mut self, a: usize, b: usize) -> usize {
        let out = self.push(Kind::Sum, a, b);
        let (v, o) = self.inputs_and_out(out);
        let (u, w) = (&v[a], &v[b]);
        for j in 0..BATCH {
            o[j] = u[j] + w[j];
        }
        out
    }

    fn push_prod(&mut self, a: usize, b: usize) -> usize {
        let out = self.push(Kind::Prod, a, b);
        let (v, o) = self.inputs_and_out(out);
        let (u, w) = (&v[a], &v[b]);
        for j in 0..BATCH {
            o[j] = u[j] * w[j];
        }
        out
    }

    fn push_softplus(&mut self, a: usize) -> usize {
        // As in v2, exp(-|p|) gets a var of its own, named as the op's second input.
        let e = self.leaf();
        let (v, ve) = self.inputs_and_out(e);
        exp_neg_abs_lanes(&v[a], ve);
        let out = self.push(Kind::Softplus, a, e);
        let (v, o) = self.inputs_and_out(out);
        let (p, ve) = (&v[a], &v[e]);
        log1p_lanes(ve, o);
        for j in 0..BATCH {
            o[j] = if p[j] > 0.0 { p[j] + o[j] } else { o[j] }; // softplus_e, lane-wise
        }
        out
    }

    /// Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule.
    #[inline]
    fn backward(&mut self, out: usize) {
        for row in self.grad[..self.n_vars].iter_mut() {
            *row = Lanes::ZERO;
        }
        self.grad[out] = AlignedLanes([1.0; BATCH]);
        for k in (0..self.n_ops).rev() {
            let op = self.ops[k];
            // The inputs precede the output: split the grads there, so that g and
            // the inputs' grads can be borrowed together.
            let (grads, rest) = self.grad.split_at_mut(op.out);
            let g = &rest[0];
            let (va, vb) = (&self.val[op.a], &self.val[op.b]);
            match op.kind {
                Kind::Sum => {
                    let ga = &mut grads[op.a];
                    for j in 0..BATCH {
                        ga[j] += g[j];
                    }
                    let gb = &mut grads[op.b];
                    for j in 0..BATCH {
                        gb[j] += g[j];
                    }
                }
                Kind::Prod => {
                    let ga = &mut grads[op.a];
                    for j in 0..BATCH {
                        ga[j] += vb[j] * g[j];
                    }
                    let gb = &mut grads[op.b];
                    for j in 0..BATCH {
                        gb[j] += va[j] * g[j];
                    }
                }
                _ => {
                    // SOFTPLUS: b holds exp(-|a|)
                    let ga = &mut grads[op.a];
                    for j in 0..BATCH {
                        ga[j] += sigmoid_e(va[j], vb[j]) * g[j];
                    }
                }
            }
        }
    }
}

/// Samples first .. first+lanes-1 into the lanes of x and y; unused lanes get 0.
pub fn fill_inputs(x: &mut Lanes, y: &mut Lanes, seed: u64, first: u64, lanes: usize) {
    for j in 0..lanes {
        (x[j], y[j]) = sample(seed, first + j as u64);
    }
    for j in lanes..BATCH {
        (x[j], y[j]) = (0.0, 0.0);
    }
}

/// Per-lane running sums, so that accumulating a batch is a vector add.
pub struct LaneSums {
    f: Lanes,
    dx: Lanes,
    dy: Lanes,
}

impl LaneSums {
    pub fn new() -> LaneSums {
        LaneSums { f: Lanes::ZERO, dx: Lanes::ZERO, dy: Lanes::ZERO }
    }

    #[inline]
    pub fn add(&mut self, f: &Lanes, dx: &Lanes, dy: &Lanes, lanes: usize) {
        for j in 0..lanes {
            self.f[j] += f[j];
            self.dx[j] += dx[j];
            self.dy[j] += dy[j];
        }
    }

    /// The lanes added up in lane order.
    pub fn total(&self) -> Sums {
        let mut s = Sums { f: 0.0, dx: 0.0, dy: 0.0 };
        for j in 0..BATCH {
            s = s + Sums { f: self.f[j], dx: self.dx[j], dy: self.dy[j] };
        }
        s
    }
}

pub fn n_batches(n: u64) -> u64 {
    n.div_ceil(BATCH as u64)
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape.
pub fn run_batches(seed: u64, n: u64, first_batch: u64, end_batch: u64) -> Sums {
    let mut tape = BatchTape::new();
    let mut acc = LaneSums::new();
    for batch in first_batch..end_batch {
        let first = batch * BATCH as u64;
        let lanes = (n - first).min(BATCH as u64) as usize;
        tape.reset();
        let (x, y) = (tape.leaf(), tape.leaf());
        let (xs, ys) = tape.vals_mut2(x, y);
        fill_inputs(xs, ys, seed, first, lanes);
        let s = tape.push_sum(x, y);
        let p = tape.push_prod(s, x);
        let f = tape.push_softplus(p);
        tape.backward(f);
        acc.add(tape.vals(f), tape.grads(x), tape.grads(y), lanes);
    }
    acc.total()
}

pub fn run_v3(seed: u64, n: u64) -> Sums {
    run_batches(seed, n, 0, n_batches(n))
}
