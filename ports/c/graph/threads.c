/* Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
 * per OpenMP thread (at most one a batch, core/threads.c), each with its own batch tape and
 * lane sums, added in thread order. */

static GraphSums run_graph_v4(uint64_t seed, int m, int64_t n, int threads)
{
    int64_t nb = n_graph_batches(n);
    int team = team_size(threads, nb);
    GraphSums *partial = graph_alloc(0, (size_t)team * sizeof *partial);
#pragma omp parallel for num_threads(team) schedule(static, 1)
    for (int t = 0; t < team; t++)
        partial[t] = run_graph_batches(seed, m, n, t * nb / team, (t + 1) * nb / team);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int t = 0; t < team; t++)
        total = graph_sums_add(total, partial[t]);
    free(partial);
    return total;
}

/* The least memory `level`'s tapes take at M ops, N samples and T threads: a node's val and grad
 * doubles, 16 bytes, in each lane (GRAPH_BATCH at v3 and v4) of each tape (v4: one for each thread
 * of the team, team_size). The ops and saved lanes come on top; v0 and v1's node objects are
 * counted as tape entries (docs/contract-graph.md). */
static uint64_t tapes_bytes(const char *level, int m, int64_t n, int threads)
{
    bool batched = strcmp(level, "v3") == 0 || strcmp(level, "v4") == 0;
    uint64_t lanes = batched ? GRAPH_BATCH : 1;
    uint64_t tapes = strcmp(level, "v4") == 0 ? (uint64_t)team_size(threads, n_graph_batches(n)) : 1;
    return tapes * lanes * (uint64_t)n_nodes(m) * 16;
}
