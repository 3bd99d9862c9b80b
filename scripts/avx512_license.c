/* What a few 512-bit integer multiplies cost the scalar code around them (docs/targets.md, "Vector width and CPU
 * targets"). The loop is scalar glibc work, log1p(exp(-x)), 40 M times; every 4,000 of them it does 39
 * vpmullq (13 calls of 3), on ymm or on zmm registers, or none: about as many as the Codon program's graph
 * v2 input fill does a sample (11 on zmm), as often. On a CPU that lowers its clock while 512-bit heavy
 * instructions run (Intel's AVX-512 "licence"), the zmm rounds slow all the work, not only the multiplies.
 *
 *   cc -O2 -march=native -o build/avx512-license scripts/avx512_license.c -lm && build/avx512-license
 *
 * Needs an AVX-512 CPU (AVX512DQ); prints the median of 5 rounds of the three, run alternately. */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void multiplies(long long *p, int zmm)
{
    if (zmm) {
        __m512i a = _mm512_loadu_si512(p), b = _mm512_set1_epi64(0x9E3779B97F4A7C15LL);
        for (int k = 0; k < 3; k++)
            a = _mm512_mullo_epi64(a, b);
        _mm512_storeu_si512(p, a);
    } else {
        __m256i a = _mm256_loadu_si256((__m256i *)p), b = _mm256_set1_epi64x(0x9E3779B97F4A7C15LL);
        for (int k = 0; k < 3; k++)
            a = _mm256_mullo_epi64(a, b);
        _mm256_storeu_si256((__m256i *)p, a);
    }
}

/* Seconds for the scalar loop; mode 0: no multiplies, 1: on ymm, 2: on zmm. */
static double run(int mode)
{
    long long buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    volatile double sum = 0.0;
    double x = 0.1, t0 = now();
    for (long i = 0; i < 40000000; i++) {
        if (mode && i % 4000 == 0)
            for (int r = 0; r < 13; r++)
                multiplies(buf, mode == 2);
        sum += log1p(exp(-x));
        x += 1e-9;
    }
    sum += (double)buf[0];   /* the multiplies' result is used */
    return now() - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    enum { ROUNDS = 5 };
    double t[3][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int m = 0; m < 3; m++)
            t[m][r] = run(m);
    for (int m = 0; m < 3; m++)
        qsort(t[m], ROUNDS, sizeof(double), cmp);
    printf("scalar loop alone          %.3f s\n", t[0][ROUNDS / 2]);
    printf("with vpmullq on ymm        %.3f s  (%.3f of alone)\n", t[1][ROUNDS / 2], t[1][ROUNDS / 2] / t[0][ROUNDS / 2]);
    printf("with vpmullq on zmm        %.3f s  (%.3f of alone, %.3f of ymm)\n", t[2][ROUNDS / 2],
           t[2][ROUNDS / 2] / t[0][ROUNDS / 2], t[2][ROUNDS / 2] / t[1][ROUNDS / 2]);
    return 0;
}
