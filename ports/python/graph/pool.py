# Graph level v1 (pool): v0's node objects and links, but from a pool of a sample's nodes
# made once, before the first sample, and remade for every sample, so the loop creates no
# nodes.
from .recipe import GraphSums, n_nodes
from .nodes import NodeGraph
from .objects import record_nodes


def run_graph_v1(seed, m, n):
    g = NodeGraph(pool_room=n_nodes(m))
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m)
        g.backward()
        total = total + g.sums()
    return total
