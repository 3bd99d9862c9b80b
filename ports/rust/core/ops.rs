// The scalar math of contract §2, shared by every level and baseline, so that the
// levels differ only in how they organise the graph, never in the arithmetic.
use std::ops::Add;

/// The checksums of a run: plain sums over the samples, in index order.
#[derive(Clone, Copy, Debug)]
pub struct Sums {
    pub f: f64,
    pub dx: f64,
    pub dy: f64,
}

impl Add for Sums {
    type Output = Sums;
    fn add(self, o: Sums) -> Sums {
        Sums { f: self.f + o.f, dx: self.dx + o.dx, dy: self.dy + o.dy }
    }
}

// Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
// overflow). The *_e forms take e ready-made, so that a caller computing both shares
// one exp; the results are bit for bit those of the contract's formulas.

#[inline]
pub fn exp_neg_abs(p: f64) -> f64 {
    (-p.abs()).exp()
}

/// log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p)).
#[inline]
pub fn softplus_e(p: f64, e: f64) -> f64 {
    if p > 0.0 { p + e.ln_1p() } else { e.ln_1p() }
}

/// d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)).
#[inline]
pub fn sigmoid_e(p: f64, e: f64) -> f64 {
    if p >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) }
}

#[inline]
pub fn softplus(p: f64) -> f64 {
    softplus_e(p, exp_neg_abs(p))
}

#[inline]
pub fn sigmoid(p: f64) -> f64 {
    sigmoid_e(p, exp_neg_abs(p))
}
