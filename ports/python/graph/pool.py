# Graph level v1 (pool): v0's node objects and links, but the nodes of the first sample
# are kept and remade for every later one, so the loop creates no nodes.
from .recipe import GraphSums
from .nodes import NodeGraph
from .objects import record_nodes


def run_graph_v1(seed, m, n):
    g = NodeGraph()
    total = GraphSums(0.0, 0.0, 0.0)
    for s in range(n):
        record_nodes(g, seed, s, m, True)
        g.backward()
        total = total + g.sums()
    return total
