// Graph level v0 (objects): every node a fresh heap object per sample (a Box: malloc and
// free), linked to its inputs by reference; backward walks the nodes in reverse creation
// order.
use super::recipe::{N_INPUTS, GraphSums, graph_input, n_nodes, record_ops};
use super::nodes::{fill_node_storage, GraphNode, NodeGraph, NodeStorage};

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
    let mut storage = NodeStorage::with_capacity(n_nodes(m)); // the array, kept; its nodes are not
    for s in 0..n {
        fill_node_storage(&mut storage, m);
        // SAFETY: the graph borrows the nodes through a pointer, not through `storage`, so that
        // `clear` below can free them (a borrow of `storage` itself would last as long as the
        // nodes' links do, for the whole loop). Nothing reads a node after `clear`: `g` and the
        // links in the freed nodes are not used again, and `storage` never grows past its
        // capacity, so the slice does not move while `g` reads it.
        let nodes = unsafe { &*(storage.as_slice() as *const [Box<GraphNode>]) };
        let mut g = NodeGraph::new(nodes);
        record_nodes(&mut g, seed, s, m);
        g.backward();
        total = total + g.sums();
        storage.clear(); // the sample's nodes are freed here
    }
    total
}
