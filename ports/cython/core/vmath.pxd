# Vector exp and log1p for the batched levels: glibc's libmvec at the widest vector the
# target CPU has, chosen when the module is built (gcc's -march, which the Makefile sets
# from CPU=..., as for the C port): 8 doubles (AVX-512F, _ZGVeN8v_*), 4 (AVX2, _ZGVdN4v_*),
# 2 (SSE2, _ZGVbN2v_*), or 1, glibc's scalar exp/log1p. The libmvec calls come from SIMD
# declarations of exp and log1p in the C below (the C port's, core/vmath.c), which Cython
# copies verbatim into every module that cimports this file; the lane loops themselves are
# Cython, vectorized by gcc. What core/target.codon holds in the Codon program is here too:
# WIDTH, from gcc's target macros, and AUTOGRAD_TARGET (-D from the Makefile).

cdef extern from *:
    """
    /* WIDTH: doubles per libmvec call, for --version only, read from the macros -march sets. */
    #if defined(__x86_64__) && defined(__AVX512F__)
    #define AUTOGRAD_WIDTH 8
    #define AUTOGRAD_VECTOR_NAME "AVX-512F (libmvec _ZGVeN8v)"
    #elif defined(__x86_64__) && defined(__AVX2__)
    #define AUTOGRAD_WIDTH 4
    #define AUTOGRAD_VECTOR_NAME "AVX2 (libmvec _ZGVdN4v)"
    #elif defined(__x86_64__) && defined(__SSE2__)
    #define AUTOGRAD_WIDTH 2
    #define AUTOGRAD_VECTOR_NAME "SSE2 (libmvec _ZGVbN2v)"
    #else
    #define AUTOGRAD_WIDTH 1
    #define AUTOGRAD_VECTOR_NAME "scalar (glibc exp/log1p)"
    #endif
    #ifndef AUTOGRAD_TARGET
    #define AUTOGRAD_TARGET "unstated"
    #endif

    /* glibc's libmvec: math.h declares the SIMD variants only under -ffast-math, which would
     * also reorder the scalar levels' sums; so exp and log1p are declared again, under other
     * names and as SIMD functions, and gcc's vectorizer calls the variant -march allows. The
     * scalar levels keep calling plain exp and log1p and so never get vector math. */
    __attribute__((simd("notinbranch"), const, nothrow)) double vexp(double) __asm__("exp");
    __attribute__((simd("notinbranch"), const, nothrow)) double vlog1p(double) __asm__("log1p");

    /* A lane array that no other pointer reaches while it is written: gcc vectorizes a
     * loop that stores through one without a run-time overlap check. */
    typedef double *__restrict__ autograd_lanes;
    """
    int WIDTH "AUTOGRAD_WIDTH"
    const char* VECTOR_NAME "AUTOGRAD_VECTOR_NAME"
    const char* TARGET "AUTOGRAD_TARGET"
    double vexp(double) noexcept nogil
    double vlog1p(double) noexcept nogil
    ctypedef double* lanes "autograd_lanes"

from libc.stdlib cimport malloc, exit
from libc.stdio cimport fputs, stderr
from libc.math cimport fabs

cdef extern from "<stdlib.h>" nogil:
    void* aligned_alloc(size_t alignment, size_t size)  # C11: not in Cython's libc.stdlib

# Lane arrays start on a cache line (64 bytes, a whole number of vectors of any width),
# so that no vector load straddles two.
cdef enum:
    ALIGN = 64


cdef inline void* alloc_or_die(size_t align, size_t nbytes) noexcept nogil:
    """Memory for the levels (aligned_alloc when align > 0: nbytes a multiple of it);
    a failed allocation ends the program with the C port's line."""
    cdef void* p = aligned_alloc(align, nbytes) if align > 0 else malloc(nbytes)
    if p == NULL:
        fputs(b"error: out of memory\n", stderr)
        exit(1)
    return p


cdef inline void exp_lanes(const double* src, lanes out, int n) noexcept nogil:
    """out[j] = exp(src[j]) for j < n."""
    cdef int j
    for j in range(n):
        out[j] = vexp(src[j])


cdef inline void exp_lanes_in_place(lanes out, int n) noexcept nogil:
    """out[j] = exp(out[j]) for j < n (the C port's exp_lanes(out, out, n))."""
    cdef int j
    for j in range(n):
        out[j] = vexp(out[j])


cdef inline void log1p_lanes(const double* src, lanes out, int n) noexcept nogil:
    """out[j] = log1p(src[j]) for j < n."""
    cdef int j
    for j in range(n):
        out[j] = vlog1p(src[j])


cdef inline void exp_neg_abs_lanes(const double* p, lanes out, int n) noexcept nogil:
    """out[j] = exp(-|p[j]|) for j < n."""
    cdef int j
    for j in range(n):
        out[j] = vexp(-fabs(p[j]))
