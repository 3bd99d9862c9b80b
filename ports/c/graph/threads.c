/* Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
 * per OpenMP thread, each with its own batch tape and lane sums, added in thread order. */

static GraphSums run_graph_v4(uint64_t seed, int m, int64_t n, int threads)
{
    int64_t nb = n_graph_batches(n);
    GraphSums *partial = graph_alloc(0, (size_t)threads * sizeof *partial);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; t++)
        partial[t] = run_graph_batches(seed, m, n, t * nb / threads, (t + 1) * nb / threads);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int t = 0; t < threads; t++)
        total = graph_sums_add(total, partial[t]);
    free(partial);
    return total;
}
