# Baseline `fused` (not a level): the same math written out by hand with no tape or
# graph, the floor that the v2 tape can approach.
from core.rng import sample
from core.ops import Sums, exp_neg_abs, softplus_e, sigmoid_e


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

# Baseline `fused-simd` (not a level): not in this port, for v3's reason: its lanes need
# vector math, which plain CPython does not have (run_fused_simd in the Codon program).
