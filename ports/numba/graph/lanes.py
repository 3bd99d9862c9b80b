# Graph v3's lane arithmetic, WIDTH lanes at a time in explicit vectors, as the Codon
# program's graph/lanes.codon. Written as loops over 16-lane views, each op's loop would be
# unrolled by LLVM to scalar code: Numba gives LLVM no `noalias`, and an op's output lanes
# are views of the array its inputs are read from. Explicit vectors say that they do not
# overlap. Each helper is an intrinsic over one chunk of WIDTH lanes (core/vmath.py's
# lane_chunk): float64 arrays, then lane indices into them; it does the scalar code's
# operations in the scalar code's order (plain IEEE fadd/fmul/fdiv, no fusing), so the
# digits are the scalar loop's.
from core.vmath import lane_chunk


@lane_chunk
def sum4_chunk(v, val, o, a, b, c, d):
    """val[o] = ((val[a] + val[b]) + val[c]) + val[d]"""
    s = v.add(v.add(v.add(v.load(val, a), v.load(val, b)), v.load(val, c)), v.load(val, d))
    v.store(s, val, o)


@lane_chunk
def mul_chunk(v, val, o, a, b):
    """val[o] = val[a] * val[b]"""
    v.store(v.mul(v.load(val, a), v.load(val, b)), val, o)


@lane_chunk
def softplus_chunk(v, val, o, p):
    """val[o] holds log1p(exp(-|p|)); softplus = p + it where p > 0, else it."""
    vp, vo = v.load(val, p), v.load(val, o)
    v.store(v.select_gt(vp, v.splat(0.0), v.add(vp, vo), vo), val, o)


@lane_chunk
def softmax_shift_chunk(v, val, o, a, b, c, d, stride):
    """m = max2(max2(a, b), max2(c, d)), max2(x, y) = y if y > x else x (graph/recipe.py);
    out_k = in_k - m, the four outputs `stride` lanes apart from o."""
    va, vb, vc, vd = v.load(val, a), v.load(val, b), v.load(val, c), v.load(val, d)
    mab = v.select_gt(vb, va, vb, va)
    mcd = v.select_gt(vd, vc, vd, vc)
    m = v.select_gt(mcd, mab, mcd, mab)
    for x in (va, vb, vc, vd):
        v.store(v.sub(x, m), val, o)
        o = v.plus(o, stride)


@lane_chunk
def softmax_norm_chunk(v, val, o, stride):
    """o_k = e_k / (((e_0 + e_1) + e_2) + e_3), the four `stride` lanes apart from o."""
    at = [o]
    for _ in range(3):
        at.append(v.plus(at[-1], stride))
    e = [v.load(val, i) for i in at]
    total = v.add(v.add(v.add(e[0], e[1]), e[2]), e[3])
    for x, i in zip(e, at):
        v.store(v.div(x, total), val, i)


@lane_chunk
def acc_chunk(v, dst, d, src, s):
    """dst[d] += src[s]"""
    v.store(v.add(v.load(dst, d), v.load(src, s)), dst, d)


@lane_chunk
def acc_mul_chunk(v, dst, d, x, i, y, j):
    """dst[d] += x[i] * y[j]"""
    v.store(v.add(v.load(dst, d), v.mul(v.load(x, i), v.load(y, j))), dst, d)


@lane_chunk
def acc_sigmoid_chunk(v, grad, val, saved, dst, p, e, g):
    """grad[dst] += sigmoid_e(val[p], saved[e]) * grad[g], sigmoid_e = 1 / (1 + e) where
    p >= 0, else e / (1 + e) (core/ops.py)."""
    one, ve = v.splat(1.0), v.load(saved, e)
    s = v.div(v.select_ge(v.load(val, p), v.splat(0.0), one, ve), v.add(one, ve))
    v.store(v.add(v.load(grad, dst), v.mul(s, v.load(grad, g))), grad, dst)


@lane_chunk
def softmax_backward_chunk(v, grad, val, o, stride, ga, gb, gc, gd):
    """avg = ((o_0 g_0 + o_1 g_1) + o_2 g_2) + o_3 g_3; grad[in_k] += o_k (g_k - avg), k in
    order; the outputs' values (in val) and grads (in grad) `stride` lanes apart from o."""
    at = [o]
    for _ in range(3):
        at.append(v.plus(at[-1], stride))
    vo = [v.load(val, i) for i in at]
    vg = [v.load(grad, i) for i in at]
    p = [v.mul(x, y) for x, y in zip(vo, vg)]
    avg = v.add(v.add(v.add(p[0], p[1]), p[2]), p[3])
    for x, y, dst in zip(vo, vg, (ga, gb, gc, gd)):
        v.store(v.add(v.load(grad, dst), v.mul(x, v.sub(y, avg))), grad, dst)
