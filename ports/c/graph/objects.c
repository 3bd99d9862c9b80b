/* Graph level v0 (objects): every node a fresh heap object per sample (malloc, then free
 * when the next sample starts), linked to its inputs by pointers; backward walks the nodes
 * in reverse creation order. */

/* Sample s's forward pass: its inputs, then the M ops (onto new nodes, or a pool's, v1). */
static void record_nodes(NodeGraph *g, uint64_t seed, int64_t s, int m)
{
    node_graph_reset(g);
    for (int i = 0; i < N_INPUTS; i++)
        node_graph_leaf(g, graph_input(seed, s, i));
    record_ops(node_graph, g, m);
}

static GraphSums run_graph_v0(uint64_t seed, int m, int64_t n)
{
    NodeGraph g;
    node_graph_init(&g);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int64_t s = 0; s < n; s++) {
        record_nodes(&g, seed, s, m);
        node_graph_backward(&g);
        total = graph_sums_add(total, node_graph_sums(&g));
    }
    node_graph_free(&g);
    return total;
}
