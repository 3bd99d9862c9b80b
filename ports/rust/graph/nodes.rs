// The node objects of graph levels v0 and v1: every node a heap object holding its value,
// its grad and references to its input nodes, each value computed once when the node is
// made. The graph keeps its nodes in creation order, which is all backward needs: it walks
// them in reverse. v0 drops the nodes after every sample, v1 keeps them as a pool.
//
// Every node is a Box. As in the softplus v1 pool, the graph borrows its nodes instead of
// owning them (nodes that point at each other cannot live inside their owner in safe
// Rust), so the Boxes are made before the nodes are: v0 makes a fresh set for every
// sample and drops it after, v1 makes one set and reuses it.
use std::cell::Cell;
use crate::core::ops::{exp_neg_abs, softplus_e, sigmoid_e};
use super::recipe::{GRAPH_LEAF, GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, n_nodes,
                    GraphBuilder, softmax4, softmax4_avg};

type Link<'a> = Cell<Option<&'a GraphNode<'a>>>;

/// A node; every field a Cell, so that backward can add to the grads of its inputs
/// through shared references and the pool can remake a node.
pub struct GraphNode<'a> {
    val: Cell<f64>,
    grad: Cell<f64>,
    kind: Cell<i32>,   // GRAPH_LEAF, or the kind of the op that made it (all four of a SOFTMAX4's)
    saved: Cell<f64>,  // SOFTPLUS: exp(-|a.val|), for backward's sigmoid
    a: Link<'a>,       // inputs, as many as the kind has
    b: Link<'a>,
    c: Link<'a>,
    d: Link<'a>,
}

type NodeRef<'a> = Option<&'a GraphNode<'a>>;

impl<'a> GraphNode<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(kind: i32, val: f64, saved: f64, a: NodeRef<'a>, b: NodeRef<'a>, c: NodeRef<'a>, d: NodeRef<'a>) -> Self {
        let node = GraphNode {
            val: Cell::new(0.0),
            grad: Cell::new(0.0),
            kind: Cell::new(GRAPH_LEAF),
            saved: Cell::new(0.0),
            a: Cell::new(None),
            b: Cell::new(None),
            c: Cell::new(None),
            d: Cell::new(None),
        };
        node.set(kind, val, saved, a, b, c, d);
        node
    }

    /// (Re)make this node; its grad starts at 1.0, d loss / d val (the loss sums every node).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn set(&self, kind: i32, val: f64, saved: f64, a: NodeRef<'a>, b: NodeRef<'a>, c: NodeRef<'a>, d: NodeRef<'a>) {
        self.kind.set(kind);
        self.val.set(val);
        self.saved.set(saved);
        self.grad.set(1.0);
        self.a.set(a);
        self.b.set(b);
        self.c.set(c);
        self.d.set(d);
    }
}

/// A sample's nodes, the Codon program's NodeGraph.nodes array: one Box per node.
pub type NodeStorage<'a> = Vec<Box<GraphNode<'a>>>;

/// Room for the nodes of one M-op sample: n_nodes(m) fresh heap objects.
pub fn node_storage<'a>(m: usize) -> NodeStorage<'a> {
    let mut storage = NodeStorage::with_capacity(n_nodes(m));
    fill_node_storage(&mut storage, m);
    storage
}

/// Fills an empty storage with the nodes of one M-op sample.
pub fn fill_node_storage(storage: &mut NodeStorage, m: usize) {
    storage.extend((0..n_nodes(m)).map(|_| Box::new(GraphNode::new(GRAPH_LEAF, 0.0, 0.0, None, None, None, None))));
}

pub struct NodeGraph<'a> {
    nodes: &'a [Box<GraphNode<'a>>], // in creation order; nodes[count..] are not made yet
    count: usize,
}

impl<'a> NodeGraph<'a> {
    pub fn new(nodes: &'a [Box<GraphNode<'a>>]) -> NodeGraph<'a> {
        NodeGraph { nodes, count: 0 }
    }

    /// Start a sample (v1: its nodes are remade; v0 brings fresh nodes each sample).
    pub fn reset(&mut self) {
        self.count = 0;
    }

    #[inline]
    fn at(&self, i: usize) -> &'a GraphNode<'a> {
        &self.nodes[i]
    }

    /// The next node, made as given.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn take(&mut self, kind: i32, val: f64, saved: f64, a: NodeRef<'a>, b: NodeRef<'a>, c: NodeRef<'a>,
            d: NodeRef<'a>) -> &'a GraphNode<'a> {
        let node = self.at(self.count);
        node.set(kind, val, saved, a, b, c, d);
        self.count += 1;
        node
    }

    pub fn leaf(&mut self, val: f64) {
        self.take(GRAPH_LEAF, val, 0.0, None, None, None, None);
    }
}

impl<'a> GraphBuilder for NodeGraph<'a> {
    #[inline]
    fn size(&self) -> usize {
        self.count
    }

    #[inline(always)]
    fn push_softplus(&mut self, i: usize) {
        let a = self.at(i);
        let e = exp_neg_abs(a.val.get());
        self.take(GRAPH_SOFTPLUS, softplus_e(a.val.get(), e), e, Some(a), None, None, None);
    }

    #[inline(always)]
    fn push_sum4(&mut self, i: usize, j: usize, k: usize, l: usize) {
        let (a, b, c, d) = (self.at(i), self.at(j), self.at(k), self.at(l));
        let val = ((a.val.get() + b.val.get()) + c.val.get()) + d.val.get();
        self.take(GRAPH_SUM4, val, 0.0, Some(a), Some(b), Some(c), Some(d));
    }

    #[inline(always)]
    fn push_prod(&mut self, i: usize, j: usize) {
        let (a, b) = (self.at(i), self.at(j));
        self.take(GRAPH_PROD, a.val.get() * b.val.get(), 0.0, Some(a), Some(b), None, None);
    }

    #[inline(always)]
    fn push_softmax4(&mut self, i: usize, j: usize, k: usize, l: usize) {
        let (a, b, c, d) = (self.at(i), self.at(j), self.at(k), self.at(l));
        let (o0, o1, o2, o3) = softmax4(a.val.get(), b.val.get(), c.val.get(), d.val.get());
        for o in [o0, o1, o2, o3] {
            self.take(GRAPH_SOFTMAX4, o, 0.0, Some(a), Some(b), Some(c), Some(d));
        }
    }
}

impl<'a> NodeGraph<'a> {
    /// The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
    /// SOFTMAX4's four outputs are handled together, at the last of them.
    pub fn backward(&self) {
        let add = |node: &GraphNode, g: f64| node.grad.set(node.grad.get() + g);
        let mut i = self.count - 1;
        while i >= N_INPUTS {
            let node = self.at(i);
            let g = node.grad.get();
            // An op node always has its kind's inputs; matching on them avoids any unwrap.
            match (node.kind.get(), node.a.get(), node.b.get(), node.c.get(), node.d.get()) {
                (GRAPH_SOFTPLUS, Some(a), _, _, _) => add(a, sigmoid_e(a.val.get(), node.saved.get()) * g),
                (GRAPH_SUM4, Some(a), Some(b), Some(c), Some(d)) => {
                    add(a, g);
                    add(b, g);
                    add(c, g);
                    add(d, g);
                }
                (GRAPH_PROD, Some(a), Some(b), _, _) => {
                    add(a, b.val.get() * g);
                    add(b, a.val.get() * g);
                }
                (GRAPH_SOFTMAX4, Some(a), Some(b), Some(c), Some(d)) => {
                    // nodes i-3 .. i are its outputs
                    let (o0, o1, o2, o3) = (self.at(i - 3), self.at(i - 2), self.at(i - 1), node);
                    let (v0, v1, v2, v3) = (o0.val.get(), o1.val.get(), o2.val.get(), o3.val.get());
                    let (g0, g1, g2, g3) = (o0.grad.get(), o1.grad.get(), o2.grad.get(), o3.grad.get());
                    let avg = softmax4_avg(v0, v1, v2, v3, g0, g1, g2, g3);
                    add(a, v0 * (g0 - avg));
                    add(b, v1 * (g1 - avg));
                    add(c, v2 * (g2 - avg));
                    add(d, v3 * (g3 - avg));
                    i -= 3;
                }
                _ => {}
            }
            i -= 1;
        }
    }

    /// This sample's loss, grad_in and grad_all (G3), each added in creation order.
    pub fn sums(&self) -> GraphSums {
        let (mut loss, mut grad_in, mut grad_all) = (0.0, 0.0, 0.0);
        for node in &self.nodes[..self.count] {
            loss += node.val.get();
        }
        for (i, node) in self.nodes[..N_INPUTS].iter().enumerate() {
            grad_in += (i + 1) as f64 * node.grad.get();
        }
        for node in &self.nodes[..self.count] {
            grad_all += node.grad.get();
        }
        GraphSums { loss, grad_in, grad_all }
    }
}
