# Graph level v1 (pool): v0's node objects and links, but from a pool of a sample's nodes
# made once, before the first sample, and remade for every sample, so the loop allocates
# nothing.

from graph.recipe import GraphSums, n_nodes
from graph.nodes import NodeGraph
from graph.objects import record_nodes


def run_graph_v1(seed: UInt64, m: Int, n: Int) -> GraphSums:
    var g = NodeGraph(pool_room=n_nodes(m))
    var total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m)
        g.backward()
        total = total + g.sums()
    return total
