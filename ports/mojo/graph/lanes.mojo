# Graph v3's lane arithmetic, WIDTH lanes at a time in SIMD[DType.float64, WIDTH]. Each
# helper does one chunk of WIDTH lanes starting at the pointers given, with the scalar
# code's operations in the scalar code's order (no fusing: the build has --fp-mode
# contract=off), so the digits are the scalar loop's.

from core.vmath import F64Ptr, V, ld, st
from graph.recipe import max2
from softplus.simd import sigmoid_lanes


@always_inline
def sum4_chunk(o: F64Ptr, a: F64Ptr, b: F64Ptr, c: F64Ptr, d: F64Ptr):
    st(o, 0, ((ld(a, 0) + ld(b, 0)) + ld(c, 0)) + ld(d, 0))


@always_inline
def mul_chunk(o: F64Ptr, a: F64Ptr, b: F64Ptr):
    st(o, 0, ld(a, 0) * ld(b, 0))


@always_inline
def softplus_chunk(o: F64Ptr, p: F64Ptr):
    """o = p + o where p > 0, else o (o holds log1p(exp(-|p|))): softplus_e, lane-wise."""
    var pj = ld(p, 0)
    var oj = ld(o, 0)
    st(o, 0, pj.gt(0.0).select(pj + oj, oj))


@always_inline
def vmax2(a: V, b: V) -> V:
    """max2 lane-wise: b where b > a, else a."""
    return b.gt(a).select(b, a)


@always_inline
def softmax_shift_chunk(o: F64Ptr, a: F64Ptr, b: F64Ptr, c: F64Ptr, d: F64Ptr, stride: Int):
    """The four outputs (stride lanes apart) get in_j - max, for one exp call over all four."""
    var va = ld(a, 0)
    var vb = ld(b, 0)
    var vc = ld(c, 0)
    var vd = ld(d, 0)
    var m = vmax2(vmax2(va, vb), vmax2(vc, vd))
    st(o, 0, va - m)
    st(o, stride, vb - m)
    st(o, 2 * stride, vc - m)
    st(o, 3 * stride, vd - m)


@always_inline
def softmax_norm_chunk(o: F64Ptr, stride: Int):
    """The four exps divided by their sum, ((e0 + e1) + e2) + e3."""
    var e0 = ld(o, 0)
    var e1 = ld(o, stride)
    var e2 = ld(o, 2 * stride)
    var e3 = ld(o, 3 * stride)
    var total = ((e0 + e1) + e2) + e3
    st(o, 0, e0 / total)
    st(o, stride, e1 / total)
    st(o, 2 * stride, e2 / total)
    st(o, 3 * stride, e3 / total)


@always_inline
def acc_chunk(dst: F64Ptr, src: F64Ptr):
    st(dst, 0, ld(dst, 0) + ld(src, 0))


@always_inline
def acc_mul_chunk(dst: F64Ptr, a: F64Ptr, b: F64Ptr):
    st(dst, 0, ld(dst, 0) + ld(a, 0) * ld(b, 0))


@always_inline
def acc_sigmoid_chunk(dst: F64Ptr, p: F64Ptr, e: F64Ptr, g: F64Ptr):
    st(dst, 0, ld(dst, 0) + sigmoid_lanes(ld(p, 0), ld(e, 0)) * ld(g, 0))


@always_inline
def softmax_backward_chunk(o: F64Ptr, g: F64Ptr, stride: Int, ga: F64Ptr, gb: F64Ptr, gc: F64Ptr, gd: F64Ptr):
    var o0 = ld(o, 0)
    var o1 = ld(o, stride)
    var o2 = ld(o, 2 * stride)
    var o3 = ld(o, 3 * stride)
    var g0 = ld(g, 0)
    var g1 = ld(g, stride)
    var g2 = ld(g, 2 * stride)
    var g3 = ld(g, 3 * stride)
    var avg = ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3
    st(ga, 0, ld(ga, 0) + o0 * (g0 - avg))
    st(gb, 0, ld(gb, 0) + o1 * (g1 - avg))
    st(gc, 0, ld(gc, 0) + o2 * (g2 - avg))
    st(gd, 0, ld(gd, 0) + o3 * (g3 - avg))
