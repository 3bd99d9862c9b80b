// Graph level v0 (objects): every node a fresh heap object per sample (a Box: malloc and
// free), linked to its inputs by reference; backward walks the nodes in reverse creation
// order.
use super::recipe::{N_INPUTS, GraphSums, graph_input, record_ops};
use super::nodes::{node_storage, NodeGraph};

/// Sample s's forward pass: its inputs, then the M ops.
pub fn record_nodes(g: &mut NodeGraph, seed: u64, s: u64, m: usize) {
    g.reset();
    for i in 0..N_INPUTS {
        g.leaf(graph_input(seed, s, i));
    }
    record_ops(g, m);
}

pub fn run_graph_v0(seed: u64, m: usize, n: u64) -> GraphSums {
    let mut total = GraphSums::ZERO;
    for s in 0..n {
        let storage = node_storage(m);
        let mut g = NodeGraph::new(&storage);
        record_nodes(&mut g, seed, s, m);
        g.backward();
        total = total + g.sums();
    } // the sample's nodes are freed here
    total
}
