# Baselines `fused` and `fused-simd` (not levels): the same math written out by hand with no
# tape or graph, scalar (the floor that the v2 tape can approach) and over batches with v3's
# vector math and lane sums (the floor for v3 and v4).
from numba import njit

from core.rng import sample
from core.ops import Sums, exp_neg_abs, softplus_e, sigmoid_e
from core.vmath import exp_neg_abs_lanes, log1p_lanes, alloc_lane_arrays
from .simd import BATCH, fill_inputs, lane_sums_add, lane_sums_total, n_batches


@njit(cache=True)
def run_fused(seed, n):
    sum_f, sum_dx, sum_dy = 0.0, 0.0, 0.0
    for i in range(n):
        x, y = sample(seed, i)
        s = x + y
        p = s * x
        e = exp_neg_abs(p)
        g = sigmoid_e(p, e)
        sum_f += softplus_e(p, e)
        sum_dx += s * g + x * g
        sum_dy += x * g
    return Sums(sum_f, sum_dx, sum_dy)


@njit(cache=True)
def run_fused_simd(seed, n):
    rows = alloc_lane_arrays(8, BATCH)
    x, y, p, e = rows[0, :BATCH], rows[1, :BATCH], rows[2, :BATCH], rows[3, :BATCH]
    l, f, dx, dy = rows[4, :BATCH], rows[5, :BATCH], rows[6, :BATCH], rows[7, :BATCH]
    acc = alloc_lane_arrays(3, BATCH)
    for batch in range(n_batches(n)):
        first = batch * BATCH
        lanes = min(n - first, BATCH)
        fill_inputs(x, y, seed, first, lanes)
        for j in range(BATCH):
            p[j] = (x[j] + y[j]) * x[j]
        exp_neg_abs_lanes(p, 0, e, 0, BATCH)
        log1p_lanes(e, 0, l, 0, BATCH)
        for j in range(BATCH):
            s = x[j] + y[j]
            g = sigmoid_e(p[j], e[j])
            f[j] = p[j] + l[j] if p[j] > 0.0 else l[j]
            dx[j] = s * g + x[j] * g
            dy[j] = x[j] * g
        lane_sums_add(acc, f, dx, dy, lanes)
    return lane_sums_total(acc)
