// Graph level v1 (pool): v0's node objects and links, but the nodes of the first sample
// are kept and remade for every later one, so the loop allocates nothing.
//
// Here one set of nodes is allocated before the first sample and remade for each.
use super::recipe::GraphSums;
use super::nodes::{node_storage, NodeGraph};
use super::objects::record_nodes;

pub fn run_graph_v1(seed: u64, m: usize, n: u64) -> GraphSums {
    let storage = node_storage(m);
    let mut g = NodeGraph::new(&storage);
    let mut total = GraphSums::ZERO;
    for s in 0..n {
        record_nodes(&mut g, seed, s, m);
        g.backward();
        total = total + g.sums();
    }
    total
}
