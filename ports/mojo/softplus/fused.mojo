# Baseline `fused` (not a level): the same math written out by hand with no tape or
# graph, the floor that the v2 tape can approach; and `fused-simd`, the same over
# batches of BATCH samples with v3's vector math and lane sums, no tape: the floor for
# v3 and v4.

from core.ops import Sums, exp_neg_abs, sigmoid_e, softplus_e
from core.rng import sample
from core.vmath import F64Ptr, WIDTH, V, ld, st, alloc_lanes, free_lanes, exp_neg_abs_lanes, log1p_lanes
from softplus.simd import BATCH, LaneSums, fill_inputs, n_batches, sigmoid_lanes


def run_fused(seed: UInt64, n: Int) -> Sums:
    var sum_f = 0.0
    var sum_dx = 0.0
    var sum_dy = 0.0
    for i in range(n):
        var x, y = sample(seed, i)
        var s = x + y
        var p = s * x
        var e = exp_neg_abs(p)
        var g = sigmoid_e(p, e)
        sum_f += softplus_e(p, e)
        sum_dx += s * g + x * g
        sum_dy += x * g
    return Sums(sum_f, sum_dx, sum_dy)


def run_fused_simd(seed: UInt64, n: Int) -> Sums:
    var buf = alloc_lanes(8 * BATCH)
    var x = buf
    var y = buf.unsafe_offset(BATCH)
    var p = buf.unsafe_offset(2 * BATCH)
    var e = buf.unsafe_offset(3 * BATCH)
    var l = buf.unsafe_offset(4 * BATCH)
    var f = buf.unsafe_offset(5 * BATCH)
    var dx = buf.unsafe_offset(6 * BATCH)
    var dy = buf.unsafe_offset(7 * BATCH)
    var acc = LaneSums()
    for batch in range(n_batches(n)):
        var first = batch * BATCH
        var lanes = min(n - first, BATCH)
        fill_inputs(x, y, seed, first, lanes)
        for j in range(0, BATCH, WIDTH):
            st(p, j, (ld(x, j) + ld(y, j)) * ld(x, j))
        exp_neg_abs_lanes[BATCH](p, e)
        log1p_lanes[BATCH](e, l)
        for j in range(0, BATCH, WIDTH):
            var xj = ld(x, j)
            var s = xj + ld(y, j)
            var pj = ld(p, j)
            var g = sigmoid_lanes(pj, ld(e, j))
            var lj = ld(l, j)
            st(f, j, pj.gt(0.0).select(pj + lj, lj))
            st(dx, j, s * g + xj * g)
            st(dy, j, xj * g)
        acc.add(f, dx, dy, lanes)
    free_lanes(buf)
    return acc.total()
