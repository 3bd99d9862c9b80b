// The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
// level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
// scalar forward math of an op, and the per-sample checksums.
use std::ops::Add;
use crate::core::rng::{draw, unit};

// The graph workload's op kinds, defined here once for every graph level; GRAPH_ keeps them
// apart from the softplus workload's kinds, which share three names, two with other values.
pub const GRAPH_LEAF: i32 = -1; // a node no op made: an input
pub const GRAPH_SOFTPLUS: i32 = 0; // op k has kind k % 4, in this order
pub const GRAPH_SUM4: i32 = 1;
pub const GRAPH_PROD: i32 = 2;
pub const GRAPH_SOFTMAX4: i32 = 3;

pub const N_INPUTS: usize = 100;

/// The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3).
#[derive(Clone, Copy, Debug)]
pub struct GraphSums {
    pub loss: f64,
    pub grad_in: f64,
    pub grad_all: f64,
}

impl Add for GraphSums {
    type Output = GraphSums;
    fn add(self, o: GraphSums) -> GraphSums {
        GraphSums { loss: self.loss + o.loss, grad_in: self.grad_in + o.grad_in, grad_all: self.grad_all + o.grad_all }
    }
}

impl GraphSums {
    pub const ZERO: GraphSums = GraphSums { loss: 0.0, grad_in: 0.0, grad_all: 0.0 };
}

/// Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4.
pub fn n_nodes(m: usize) -> usize {
    N_INPUTS + m + 3 * (m / 4)
}

/// Input i of sample s, in [-1, 1) (G1).
#[inline]
pub fn graph_input(seed: u64, s: u64, i: usize) -> f64 {
    2.0 * unit(draw(seed, N_INPUTS as u64 * s + i as u64 + 1)) - 1.0
}

/// What record_ops needs of a level's graph builder (the Codon program passes any object
/// with these methods): the nodes so far, and the four ops, taking node ids.
pub trait GraphBuilder {
    fn size(&self) -> usize;
    fn push_softplus(&mut self, a: usize);
    fn push_sum4(&mut self, a: usize, b: usize, c: usize, d: usize);
    fn push_prod(&mut self, a: usize, b: usize);
    fn push_softmax4(&mut self, a: usize, b: usize, c: usize, d: usize);
}

/// Op of kind `kind` onto g, its inputs counted back from g's size (G2); always inlined, so
/// that a kind known where it is called takes no branch.
#[inline(always)]
fn record_op<G: GraphBuilder>(g: &mut G, kind: i32) {
    let n = g.size();
    match kind {
        GRAPH_SOFTPLUS => g.push_softplus(n - 10),
        GRAPH_SUM4 => g.push_sum4(n - 30, n - 25, n - 20, n - 15),
        GRAPH_PROD => g.push_prod(n - 20, n - 10),
        _ => g.push_softmax4(n - 4, n - 3, n - 2, n - 1),
    }
}

/// The M ops of G2, in order, onto g. Op k's kind is k % 4, so they go on a block of the
/// four kinds at a time, then the first M % 4 of one more block: no branch on the kind per op.
#[inline]
pub fn record_ops<G: GraphBuilder>(g: &mut G, m: usize) {
    for _ in 0..m / 4 {
        record_op(g, GRAPH_SOFTPLUS);
        record_op(g, GRAPH_SUM4);
        record_op(g, GRAPH_PROD);
        record_op(g, GRAPH_SOFTMAX4);
    }
    for kind in 0..(m % 4) as i32 {
        record_op(g, kind);
    }
}

/// Python's max(a, b): b if b > a, else a.
#[inline]
pub fn max2(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// out_j = exp(in_j - max) / (((e_0 + e_1) + e_2) + e_3).
#[inline]
pub fn softmax4(a: f64, b: f64, c: f64, d: f64) -> (f64, f64, f64, f64) {
    let m = max2(max2(a, b), max2(c, d));
    let (e0, e1, e2, e3) = ((a - m).exp(), (b - m).exp(), (c - m).exp(), (d - m).exp());
    let total = ((e0 + e1) + e2) + e3;
    (e0 / total, e1 / total, e2 / total, e3 / total)
}

/// SOFTMAX4's backward term: sum of o_j * g[out_j], left to right.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn softmax4_avg(o0: f64, o1: f64, o2: f64, o3: f64, g0: f64, g1: f64, g2: f64, g3: f64) -> f64 {
    ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3
}
