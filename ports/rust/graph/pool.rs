// Graph level v1 (pool): v0's node objects and links, but from a pool of a sample's nodes
// made once, before the first sample (node_storage), and remade for every sample, so the
// loop allocates nothing.
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
