/* Vector exp and log1p for the batched levels: glibc's libmvec at the widest vector the
 * target CPU has, chosen when the program is built (gcc's -march, which the Makefile
 * sets from CPU=...): 8 doubles (AVX-512F, _ZGVeN8v_*), 4 (AVX2, _ZGVdN4v_*), 2 (SSE2,
 * _ZGVbN2v_*), or 1, glibc's scalar exp/log1p. The libmvec calls come from SIMD
 * declarations of exp and log1p (below); the rest of the lane arithmetic is left to
 * gcc's loop vectorizer, which uses the same target. What core/target.codon holds in
 * the Codon program is here too: WIDTH, from gcc's target macros, and AUTOGRAD_TARGET. */

/* Lane arrays start on a cache line (64 bytes, a whole number of vectors of any
 * width), so that no vector load straddles two. */
#define ALIGN 64

/* WIDTH: doubles per libmvec call, for --version only, read from the macros -march
 * sets. gcc picks the variant by itself from -march: the widest vectors it allows,
 * unless the CPU's tuning prefers narrower ones (-march=skylake-avx512 alone would get
 * the 4-lane variant under WIDTH 8). So on x86-64 the Makefile also passes
 * -mprefer-vector-width=512 (docs/targets.md), and its CPUs, native and
 * x86-64-v2/v3/v4, get WIDTH's variant (tests/test_targets.py checks the import).
 * Off x86-64, 1: the Codon program's scalar case. */
#if defined(__x86_64__) && defined(__AVX512F__)
#define WIDTH 8
#define VECTOR_NAME "AVX-512F (libmvec _ZGVeN8v)"
#elif defined(__x86_64__) && defined(__AVX2__)
#define WIDTH 4
#define VECTOR_NAME "AVX2 (libmvec _ZGVdN4v)"
#elif defined(__x86_64__) && defined(__SSE2__)
#define WIDTH 2
#define VECTOR_NAME "SSE2 (libmvec _ZGVbN2v)"
#else
#define WIDTH 1
#define VECTOR_NAME "scalar (glibc exp/log1p)"
#endif

/* The CPU the build was made for, as the Makefile's CPU=... names it. */
#ifndef AUTOGRAD_TARGET
#define AUTOGRAD_TARGET "unstated"
#endif

#define STR_(x) #x
#define STR(x) STR_(x) /* a macro's value as a string literal */

/* One line naming the build target and the vector width, as --version prints it. */
static const char *target_text(void)
{
    return "target " AUTOGRAD_TARGET ", vector width " STR(WIDTH) " doubles: " VECTOR_NAME;
}

/* The end of the program when an allocation fails, wherever it is made. */
__attribute__((noreturn)) static void out_of_memory(void)
{
    fputs("error: out of memory\n", stderr);
    exit(1);
}

/* glibc's libmvec, at the widest vector the target CPU has. Its math.h declares the
 * SIMD variants only under -ffast-math, which would also reorder the scalar levels'
 * sums; so exp and log1p are declared again here, under other names and as SIMD
 * functions. gcc then gives them a clone for every x86-64 vector ISA and its
 * vectorizer calls the one that -march allows: _ZGVeN8v_exp / _ZGVeN8v_log1p
 * (AVX-512F, 8 doubles), _ZGVdN4v_* (AVX2, 4) or _ZGVbN2v_* (SSE2, 2), the
 * variants the Codon program calls for the same target (core/vmath.codon). The
 * scalar levels keep calling plain exp and log1p and so never get vector math. */

__attribute__((simd("notinbranch"), const, nothrow)) double vexp(double) __asm__("exp");
__attribute__((simd("notinbranch"), const, nothrow)) double vlog1p(double) __asm__("log1p");

/* out[j] = exp(src[j]) for j < n; src may be out (the graph's SOFTMAX4 exps in place).
 * Hence no restrict: ivdep tells gcc that no lane reads what another lane wrote, which
 * holds for src == out too, so the loop is vectorized without a runtime overlap check
 * (one that an in-place call would always fail). */
static inline void exp_lanes(const double *src, double *out, int n)
{
#pragma GCC ivdep
#pragma GCC unroll 1
    for (int j = 0; j < n; j++)
        out[j] = vexp(src[j]);
}

/* out[j] = log1p(src[j]) for j < n. */
static inline void log1p_lanes(const double *restrict src, double *restrict out, int n)
{
#pragma GCC unroll 1
    for (int j = 0; j < n; j++)
        out[j] = vlog1p(src[j]);
}

/* out[j] = exp(-|p[j]|) for j < n. */
static inline void exp_neg_abs_lanes(const double *restrict p, double *restrict out, int n)
{
#pragma GCC unroll 1
    for (int j = 0; j < n; j++)
        out[j] = vexp(-fabs(p[j]));
}
