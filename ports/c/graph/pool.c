/* Graph level v1 (pool): v0's node objects and links, but from a pool of a sample's nodes
 * made once, before the first sample, and remade for every sample, so the loop allocates
 * nothing. */

static GraphSums run_graph_v1(uint64_t seed, int m, int64_t n)
{
    NodeGraph g;
    node_graph_make_pool(&g, n_nodes(m));
    GraphSums total = {0.0, 0.0, 0.0};
    for (int64_t s = 0; s < n; s++) {
        record_nodes(&g, seed, s, m);
        node_graph_backward(&g);
        total = graph_sums_add(total, node_graph_sums(&g));
    }
    node_graph_free(&g);
    return total;
}
