/* Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
 * OpenMP thread (at most one a batch, core/threads.c), each with its own batch tape and
 * lane sums; the partial sums are added in thread order, so a given T always gives the
 * same digits. */

static Sums run_v4(uint64_t seed, int64_t n, int threads)
{
    int64_t nb = n_batches(n);
    int team = team_size(threads, nb);
    Sums *partial = malloc((size_t)team * sizeof *partial);
    if (partial == NULL)
        out_of_memory();
#pragma omp parallel for num_threads(team) schedule(static, 1)
    for (int t = 0; t < team; t++)
        partial[t] = run_batches(seed, n, t * nb / team, (t + 1) * nb / team);
    Sums total = {0.0, 0.0, 0.0};
    for (int t = 0; t < team; t++)
        total = sums_add(total, partial[t]);
    free(partial);
    return total;
}
