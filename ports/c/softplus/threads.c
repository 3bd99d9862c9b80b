/* Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
 * OpenMP thread, each with its own batch tape and lane sums; the partial sums are
 * added in thread order, so a given T always gives the same digits. */

static Sums run_v4(uint64_t seed, int64_t n, int threads)
{
    int64_t nb = n_batches(n);
    Sums *partial = malloc((size_t)threads * sizeof *partial);
    if (partial == NULL) {
        fputs("error: out of memory\n", stderr);
        exit(1);
    }
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; t++)
        partial[t] = run_batches(seed, n, t * nb / threads, (t + 1) * nb / threads);
    Sums total = {0.0, 0.0, 0.0};
    for (int t = 0; t < threads; t++)
        total = sums_add(total, partial[t]);
    free(partial);
    return total;
}
