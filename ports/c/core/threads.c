/* The team of threads of the v4 levels, shared by both workloads (the Codon program's
 * core/threads; here each level's `omp parallel for` is the team). */

/* The threads a v4 level runs for --threads T over nb batches, min(T, nb): the same
 * ranges and digits, no idle thread (docs/contract.md §6, v4's team). */
static int team_size(int threads, int64_t nb)
{
    return threads < nb ? threads : (int)nb;
}
