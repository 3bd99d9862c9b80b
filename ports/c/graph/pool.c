/* Graph level v1 (pool): v0's node objects and links, but the nodes of the first sample
 * are kept and remade for every later one, so the loop allocates nothing. */

static GraphSums run_graph_v1(uint64_t seed, int m, int64_t n)
{
    NodeGraph g;
    node_graph_init(&g);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int64_t s = 0; s < n; s++) {
        record_nodes(&g, seed, s, m, true);
        node_graph_backward(&g);
        total = graph_sums_add(total, node_graph_sums(&g));
    }
    node_graph_free(&g);
    return total;
}
