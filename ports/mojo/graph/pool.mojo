# Graph level v1 (pool): v0's node objects and links, but the nodes of the first sample
# are kept and remade for every later one, so the loop allocates nothing.

from graph.recipe import GraphSums
from graph.nodes import NodeGraph
from graph.objects import record_nodes


def run_graph_v1(seed: UInt64, m: Int, n: Int) -> GraphSums:
    var g = NodeGraph()
    var total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m, True)
        g.backward()
        total = total + g.sums()
    return total
