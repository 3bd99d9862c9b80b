// Vector exp and log1p for the batched levels: glibc's libmvec at the widest vector the
// target CPU has, chosen when the program is compiled (rustc's target features, which
// -C target-cpu sets; the Makefile passes CPU=...): 8 doubles (AVX-512F, _ZGVeN8v_*), 4
// (AVX2, _ZGVdN4v_*), 2 (SSE2, _ZGVbN2v_*), or 1, glibc's scalar exp/log1p. rustc has no
// vector-math library to vectorize exp/log1p calls with, so the libmvec variants are
// called directly; the rest of the lane arithmetic is left to LLVM's loop vectorizer,
// which uses the same target.
//
// Only the module for the target is compiled (#[cfg]), so a binary never holds an
// instruction its CPU lacks. What core/target.codon states for the Codon program (WIDTH,
// TARGET) is here: WIDTH from the target features, TARGET from AUTOGRAD_TARGET.

pub const ALIGN: usize = 64; // bytes: a cache line, a whole number of vectors of any width

/// What the program was built for: CPU=... of the Makefile, which runs rustc with
/// AUTOGRAD_TARGET in its environment.
const TARGET: &str = match option_env!("AUTOGRAD_TARGET") {
    Some(target) => target,
    None => "unstated",
};

const VECTOR_NAMES: [(usize, &str); 4] = [
    (1, "scalar (glibc exp/log1p)"),
    (2, "SSE2 (libmvec _ZGVbN2v)"),
    (4, "AVX2 (libmvec _ZGVdN4v)"),
    (8, "AVX-512F (libmvec _ZGVeN8v)"),
];

/// One line naming the build target and the vector width, as --version prints it.
pub fn target_text() -> String {
    let name = VECTOR_NAMES.iter().find(|(width, _)| *width == WIDTH).map_or("?", |(_, name)| name);
    format!("target {}, vector width {} doubles: {}", TARGET, WIDTH, name)
}

/// N lanes of a var, starting on a cache line so that no vector load straddles two:
/// the Codon program's alloc_lanes, as a type (Box, Vec and the stack honour its
/// alignment). Lanes (softplus, BATCH) and GraphLanes (graph, GRAPH_BATCH) are its sizes.
#[derive(Clone, Copy)]
#[repr(C, align(64))] // ALIGN (the attribute takes only a literal)
pub struct AlignedLanes<const N: usize>(pub [f64; N]);

impl<const N: usize> AlignedLanes<N> {
    pub const ZERO: AlignedLanes<N> = AlignedLanes([0.0; N]);
}

impl<const N: usize> std::ops::Deref for AlignedLanes<N> {
    type Target = [f64; N];
    fn deref(&self) -> &[f64; N] {
        &self.0
    }
}

impl<const N: usize> std::ops::DerefMut for AlignedLanes<N> {
    fn deref_mut(&mut self) -> &mut [f64; N] {
        &mut self.0
    }
}

// Each libmvec module computes WIDTH lanes per call: exp(src, dst) and log1p(src, dst)
// read WIDTH doubles at src and write them at dst (src may be dst), both aligned to the
// vector, which Lanes' alignment gives every multiple of WIDTH.
//
// The functions take and return the vector in one register (zmm0, ymm0, xmm0): the C
// ABI for __m512d, __m256d and __m128d when the target has AVX-512F, AVX and SSE2. But
// stable Rust refuses SIMD types in `extern` blocks (feature simd_ffi), so the symbols
// are declared without a signature and called through a function pointer of the right
// type (LLVM still emits a direct call, through the GOT).
//
// The three x86-64 modules differ only in the width, the vector type, its load and store
// and the symbols' names, so one macro writes them (the names are spelled out: stable
// Rust cannot paste identifiers together).
macro_rules! libmvec_module {
    ($(#[$cfg:meta])* width: $width:literal, vector: $vector:ident, load: $load:ident, store: $store:ident,
     exp: $exp:ident, log1p: $log1p:ident) => {
        $(#[$cfg])*
        mod libmvec {
            use std::arch::x86_64::{$vector, $load, $store};

            pub const WIDTH: usize = $width;

            #[link(name = "mvec")]
            unsafe extern "C" {
                fn $exp();
                fn $log1p();
            }

            #[allow(improper_ctypes_definitions)] // the vector travels in one register: see above
            type VectorFn = unsafe extern "C" fn($vector) -> $vector;

            /// dst[0..WIDTH] = f(src[0..WIDTH]). SAFETY (caller): f's real signature is
            /// VectorFn; src and dst hold WIDTH doubles and are aligned to the vector.
            #[inline(always)]
            unsafe fn call(f: unsafe extern "C" fn(), src: *const f64, dst: *mut f64) {
                unsafe {
                    let f: VectorFn = std::mem::transmute(f);
                    $store(dst, f($load(src)));
                }
            }

            #[inline(always)]
            pub unsafe fn exp(src: *const f64, dst: *mut f64) {
                unsafe { call($exp, src, dst) }
            }

            #[inline(always)]
            pub unsafe fn log1p(src: *const f64, dst: *mut f64) {
                unsafe { call($log1p, src, dst) }
            }
        }
    };
}

libmvec_module! {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    width: 8, vector: __m512d, load: _mm512_load_pd, store: _mm512_store_pd,
    exp: _ZGVeN8v_exp, log1p: _ZGVeN8v_log1p
}

libmvec_module! {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2", not(target_feature = "avx512f")))]
    width: 4, vector: __m256d, load: _mm256_load_pd, store: _mm256_store_pd,
    exp: _ZGVdN4v_exp, log1p: _ZGVdN4v_log1p
}

libmvec_module! {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(target_feature = "avx2")))]
    width: 2, vector: __m128d, load: _mm_load_pd, store: _mm_store_pd,
    exp: _ZGVbN2v_exp, log1p: _ZGVbN2v_log1p
}

// Not x86-64 (or no SSE2): one lane at a time through glibc's scalar exp and log1p,
// the same results within the v3 tolerance.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
mod libmvec {
    pub const WIDTH: usize = 1;

    /// *dst = exp(*src). SAFETY (caller): both point to a double.
    #[inline(always)]
    pub unsafe fn exp(src: *const f64, dst: *mut f64) {
        unsafe { *dst = (*src).exp() }
    }

    /// *dst = log1p(*src). SAFETY (caller): both point to a double.
    #[inline(always)]
    pub unsafe fn log1p(src: *const f64, dst: *mut f64) {
        unsafe { *dst = (*src).ln_1p() }
    }
}

pub use self::libmvec::WIDTH; // doubles per libmvec call

/// lanes[j] = exp(lanes[j]) for every lane (the Codon program's exp_lanes(src, out, n),
/// which it calls only in place; Rust's borrows would not let src be out). N is a
/// multiple of WIDTH (BATCH and GRAPH_BATCH are asserted to be).
#[inline]
pub fn exp_lanes<const N: usize>(lanes: &mut AlignedLanes<N>) {
    let p = lanes.as_mut_ptr();
    for k in 0..N / WIDTH {
        // SAFETY: lanes k*WIDTH .. (k+1)*WIDTH lie inside the N lanes, and k*WIDTH doubles
        // into 64-byte aligned lanes is aligned to the vector.
        unsafe { libmvec::exp(p.add(k * WIDTH), p.add(k * WIDTH)) }
    }
}

/// out[j] = log1p(src[j]) for every lane.
#[inline]
pub fn log1p_lanes<const N: usize>(src: &AlignedLanes<N>, out: &mut AlignedLanes<N>) {
    let (s, o) = (src.as_ptr(), out.as_mut_ptr());
    for k in 0..N / WIDTH {
        // SAFETY: as in exp_lanes, for both src and out.
        unsafe { libmvec::log1p(s.add(k * WIDTH), o.add(k * WIDTH)) }
    }
}

/// out[j] = exp(-|p[j]|) for every lane.
#[inline]
pub fn exp_neg_abs_lanes<const N: usize>(p: &AlignedLanes<N>, out: &mut AlignedLanes<N>) {
    for j in 0..N {
        out[j] = -p[j].abs();
    }
    exp_lanes(out);
}
