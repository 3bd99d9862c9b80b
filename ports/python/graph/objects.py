# Graph level v0 (objects): every node a fresh heap object per sample (a Python object,
# freed by reference counting when the next sample drops the list), linked to its inputs
# by reference; backward walks the nodes in reverse creation order.
from .recipe import N_INPUTS, GraphSums, graph_input, record_ops
from .nodes import NodeGraph


def record_nodes(g, seed, s, m):
    """Sample s's forward pass: its inputs, then the M ops (onto new nodes, or a pool's, v1)."""
    g.reset()
    for i in range(N_INPUTS):
        g.leaf(graph_input(seed, s, i))
    record_ops(g, m)


def run_graph_v0(seed, m, n):
    g = NodeGraph()
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m)
        g.backward()
        total = total + g.sums()
    return total
