# Graph level v0 (objects): every node a fresh heap object per sample (malloc, then free
# when the next sample starts), linked to its inputs by pointers; backward walks the nodes
# in reverse creation order.

from graph.recipe import N_INPUTS, GraphSums, graph_input, record_ops
from graph.nodes import NodeGraph


def record_nodes(mut g: NodeGraph, seed: UInt64, s: Int, m: Int):
    """Sample s's forward pass: its inputs, then the M ops (onto new nodes, or a pool's, v1)."""
    g.reset()
    for i in range(N_INPUTS):
        g.leaf(graph_input(seed, s, i))
    record_ops(g, m)


def run_graph_v0(seed: UInt64, m: Int, n: Int) -> GraphSums:
    var g = NodeGraph()
    var total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m)
        g.backward()
        total = total + g.sums()
    return total
