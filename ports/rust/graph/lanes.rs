// Graph v3's lane arithmetic, WIDTH lanes at a time in [f64; WIDTH] chunks. Written as
// loops over 16-lane vars, each op's loop is unrolled to scalar code, since LLVM cannot
// tell that an op's output lanes never overlap its inputs': the vars are rows of the same
// val/grad blocks, and although split_at_mut borrows them apart, the borrows are locals of
// one function (rustc marks only function parameters noalias, and its MIR inliner drops
// even that). Each chunk helper therefore copies its input chunks into local arrays,
// computes the new chunk, then stores it whole: all loads precede all stores, so there is
// nothing to overlap and each chunk is one vector op per step. Each helper does one chunk
// of WIDTH lanes with the scalar code's operations in the scalar code's order (no fusing:
// plain IEEE add/mul/div), so the digits are the scalar loop's and the Codon program's.
use crate::core::vmath::WIDTH;
use super::recipe::max2;
use super::simd::GRAPH_BATCH;

/// WIDTH lanes of a var.
type Chunk = [f64; WIDTH];

/// Chunks per var.
pub const CHUNKS: usize = GRAPH_BATCH / WIDTH;

const _: () = assert!(CHUNKS * WIDTH == GRAPH_BATCH, "GRAPH_BATCH must be a multiple of WIDTH");

/// A var's lanes as CHUNKS chunks: the same memory seen as [[f64; WIDTH]; CHUNKS], what
/// `as_chunks` gives on rustc 1.88 and later (the port builds with 1.85, Debian 12's).
#[inline(always)]
pub fn chunks(lanes: &[f64; GRAPH_BATCH]) -> &[Chunk; CHUNKS] {
    // SAFETY: both array types hold GRAPH_BATCH f64s, contiguous, with f64's alignment.
    unsafe { &*(lanes as *const [f64; GRAPH_BATCH]).cast::<[Chunk; CHUNKS]>() }
}

#[inline(always)]
pub fn chunks_mut(lanes: &mut [f64; GRAPH_BATCH]) -> &mut [Chunk; CHUNKS] {
    // SAFETY: as in chunks.
    unsafe { &mut *(lanes as *mut [f64; GRAPH_BATCH]).cast::<[Chunk; CHUNKS]>() }
}

/// o = ((a + b) + c) + d.
#[inline(always)]
pub fn sum4_chunk(o: &mut Chunk, a: &Chunk, b: &Chunk, c: &Chunk, d: &Chunk) {
    let (a, b, c, d) = (*a, *b, *c, *d);
    *o = std::array::from_fn(|j| ((a[j] + b[j]) + c[j]) + d[j]);
}

/// o = a * b.
#[inline(always)]
pub fn mul_chunk(o: &mut Chunk, a: &Chunk, b: &Chunk) {
    let (a, b) = (*a, *b);
    *o = std::array::from_fn(|j| a[j] * b[j]);
}

/// o holds log1p(exp(-|p|)); softplus_e = p + o where p > 0, else o.
#[inline(always)]
pub fn softplus_chunk(o: &mut Chunk, p: &Chunk) {
    let (p, e) = (*p, *o);
    *o = std::array::from_fn(|j| if p[j] > 0.0 { p[j] + e[j] } else { e[j] });
}

/// m = max2(max2(a, b), max2(c, d)); o_k = in_k - m.
#[inline(always)]
pub fn softmax_shift_chunk(o: [&mut Chunk; 4], a: &Chunk, b: &Chunk, c: &Chunk, d: &Chunk) {
    let (a, b, c, d) = (*a, *b, *c, *d);
    let m: Chunk = std::array::from_fn(|j| max2(max2(a[j], b[j]), max2(c[j], d[j])));
    let [o0, o1, o2, o3] = o;
    *o0 = std::array::from_fn(|j| a[j] - m[j]);
    *o1 = std::array::from_fn(|j| b[j] - m[j]);
    *o2 = std::array::from_fn(|j| c[j] - m[j]);
    *o3 = std::array::from_fn(|j| d[j] - m[j]);
}

/// o_k = e_k / (((e_0 + e_1) + e_2) + e_3).
#[inline(always)]
pub fn softmax_norm_chunk(o: [&mut Chunk; 4]) {
    let [o0, o1, o2, o3] = o;
    let e = [*o0, *o1, *o2, *o3];
    let total: Chunk = std::array::from_fn(|j| ((e[0][j] + e[1][j]) + e[2][j]) + e[3][j]);
    *o0 = std::array::from_fn(|j| e[0][j] / total[j]);
    *o1 = std::array::from_fn(|j| e[1][j] / total[j]);
    *o2 = std::array::from_fn(|j| e[2][j] / total[j]);
    *o3 = std::array::from_fn(|j| e[3][j] / total[j]);
}

/// dst += src.
#[inline(always)]
pub fn acc_chunk(dst: &mut Chunk, src: &Chunk) {
    let (d, s) = (*dst, *src);
    *dst = std::array::from_fn(|j| d[j] + s[j]);
}

/// dst += a * b.
#[inline(always)]
pub fn acc_mul_chunk(dst: &mut Chunk, a: &Chunk, b: &Chunk) {
    let (d, a, b) = (*dst, *a, *b);
    *dst = std::array::from_fn(|j| d[j] + a[j] * b[j]);
}

/// dst += sigmoid_e(p, e) * g, sigmoid_e's branches as one select: 1 / (1 + e) where
/// p >= 0, else e / (1 + e) (the same division either way).
#[inline(always)]
pub fn acc_sigmoid_chunk(dst: &mut Chunk, p: &Chunk, e: &Chunk, g: &Chunk) {
    let (d, p, e, g) = (*dst, *p, *e, *g);
    *dst = std::array::from_fn(|j| {
        let num = if p[j] >= 0.0 { 1.0 } else { e[j] };
        d[j] + num / (1.0 + e[j]) * g[j]
    });
}

/// The softmax outputs' values o and grads g to the four inputs' grad increments:
/// avg = ((o_0 g_0 + o_1 g_1) + o_2 g_2) + o_3 g_3, increment_k = o_k (g_k - avg).
#[inline(always)]
pub fn softmax_backward_chunk(o: [&Chunk; 4], g: [&Chunk; 4]) -> [Chunk; 4] {
    let (o, g) = (o.map(|x| *x), g.map(|x| *x));
    let avg: Chunk = std::array::from_fn(|j| ((o[0][j] * g[0][j] + o[1][j] * g[1][j]) + o[2][j] * g[2][j]) + o[3][j] * g[3][j]);
    std::array::from_fn(|q| std::array::from_fn(|j| o[q][j] * (g[q][j] - avg[j])))
}
