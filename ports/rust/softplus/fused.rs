// Baseline `fused` (not a level): the same math written out by hand with no tape or
// graph, the floor that the v2 tape can approach.
use crate::core::rng::sample;
use crate::core::ops::{Sums, exp_neg_abs, softplus_e, sigmoid_e};

pub fn run_fused(seed: u64, n: u64) -> Sums {
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (x, y) = sample(seed, i);
        let s = x + y;
        let p = s * x;
        let e = exp_neg_abs(p);
        let g = sigmoid_e(p, e);
        sum_f += softplus_e(p, e);
        sum_dx += s * g + x * g;
        sum_dy += x * g;
    }
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}

// Baseline `fused-simd` (not a level): the same over batches of BATCH samples with
// v3's vector math and lane sums, no tape: the floor for v3 and v4.
use super::simd::{BATCH, Lanes, fill_inputs, LaneSums, n_batches};
use crate::core::vmath::{exp_neg_abs_lanes, log1p_lanes};

pub fn run_fused_simd(seed: u64, n: u64) -> Sums {
    let (mut x, mut y, mut p, mut e, mut l) = (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO, Lanes::ZERO, Lanes::ZERO);
    let (mut f, mut dx, mut dy) = (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO);
    let mut acc = LaneSums::new();
    for batch in 0..n_batches(n) {
        let first = batch * BATCH as u64;
        let lanes = (n - first).min(BATCH as u64) as usize;
        fill_inputs(&mut x, &mut y, seed, first, lanes);
        for j in 0..BATCH {
            p[j] = (x[j] + y[j]) * x[j];
        }
        exp_neg_abs_lanes(&p, &mut e);
        log1p_lanes(&e, &mut l);
        for j in 0..BATCH {
            let s = x[j] + y[j];
            let g = sigmoid_e(p[j], e[j]);
            f[j] = if p[j] > 0.0 { p[j] + l[j] } else { l[j] };
            dx[j] = s * g + x[j] * g;
            dy[j] = x[j] * g;
        }
        acc.add(&f, &dx, &dy, lanes);
    }
    acc.total()
}
