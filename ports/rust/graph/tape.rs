// Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
// every sample as a dynamic autograd does: contiguous arrays of vars {val, grad} and ops
// {kind, up to 4 input ids, first output id}, addressed by index; each result computed
// once when pushed; backward is an index loop over the ops in reverse.
use crate::core::ops::{exp_neg_abs, softplus_e, sigmoid_e};
use super::recipe::{GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, n_nodes, graph_input,
                    GraphBuilder, record_ops, softmax4, softmax4_avg};

/// 24 bytes: ids in 32 bits, as every port keeps them (the largest tape, --ops 1,000,000, has
/// 1,750,100 vars); `ids` widens them for indexing.
#[derive(Clone, Copy)]
pub struct GraphOp {
    pub kind: i32,
    a: u32, // input ids; SOFTPLUS's b is its slot in `saved` (exp(-|a|))
    b: u32,
    c: u32,
    d: u32,
    out: u32, // the (first) output id; SOFTMAX4's four are out .. out+3
}
const _: () = assert!(std::mem::size_of::<GraphOp>() == 24, "a GraphOp takes 24 bytes");

impl GraphOp {
    #[inline]
    pub fn new(kind: i32, a: usize, b: usize, c: usize, d: usize, out: usize) -> GraphOp {
        GraphOp { kind, a: a as u32, b: b as u32, c: c as u32, d: d as u32, out: out as u32 }
    }

    /// Its ids as indexes: [a, b, c, d, out].
    #[inline]
    pub fn ids(&self) -> [usize; 5] {
        [self.a as usize, self.b as usize, self.c as usize, self.d as usize, self.out as usize]
    }
}

/// The ops are a Vec with room for all M, filled by push and emptied by reset: its
/// length is the Codon program's n_ops (and nothing is written before it is recorded).
struct GraphTape {
    val: Box<[f64]>,
    grad: Box<[f64]>,
    ops: Vec<GraphOp>,
    saved: Box<[f64]>, // each SOFTPLUS's exp(-|a|), kept for backward's sigmoid
    n_vars: usize,
    n_saved: usize,
}

impl GraphTape {
    fn new(m: usize) -> GraphTape {
        GraphTape {
            val: vec![0.0; n_nodes(m)].into_boxed_slice(),
            grad: vec![0.0; n_nodes(m)].into_boxed_slice(),
            ops: Vec::with_capacity(m),
            saved: vec![0.0; m / 4 + 1].into_boxed_slice(),
            n_vars: 0,
            n_saved: 0,
        }
    }

    #[inline]
    fn reset(&mut self) {
        self.n_vars = 0;
        self.ops.clear();
        self.n_saved = 0;
    }

    /// A new var holding v; returns its id.
    #[inline]
    fn leaf(&mut self, v: f64) -> usize {
        self.val[self.n_vars] = v;
        self.n_vars += 1;
        self.n_vars - 1
    }

    /// Record op `kind` on inputs a..d with (first) result v; returns the result's id.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, kind: i32, a: usize, b: usize, c: usize, d: usize, v: f64) -> usize {
        let out = self.leaf(v);
        self.ops.push(GraphOp::new(kind, a, b, c, d, out));
        out
    }
}

impl GraphBuilder for GraphTape {
    #[inline]
    fn size(&self) -> usize {
        self.n_vars
    }

    #[inline(always)]
    fn push_softplus(&mut self, a: usize) {
        let p = self.val[a];
        let e = exp_neg_abs(p);
        let slot = self.n_saved;
        self.saved[slot] = e;
        self.n_saved += 1;
        self.push(GRAPH_SOFTPLUS, a, slot, 0, 0, softplus_e(p, e));
    }

    #[inline(always)]
    fn push_sum4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let v = &self.val;
        let val = ((v[a] + v[b]) + v[c]) + v[d];
        self.push(GRAPH_SUM4, a, b, c, d, val);
    }

    #[inline(always)]
    fn push_prod(&mut self, a: usize, b: usize) {
        let val = self.val[a] * self.val[b];
        self.push(GRAPH_PROD, a, b, 0, 0, val);
    }

    #[inline(always)]
    fn push_softmax4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let v = &self.val;
        let (o0, o1, o2, o3) = softmax4(v[a], v[b], v[c], v[d]);
        self.push(GRAPH_SOFTMAX4, a, b, c, d, o0);
        self.leaf(o1);
        self.leaf(o2);
        self.leaf(o3);
    }
}

impl GraphTape {
    /// Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then
    /// each op's local rule, ops in reverse (G3).
    fn backward(&mut self) {
        let (v, g) = (&self.val[..], &mut self.grad[..]);
        for gi in g[..self.n_vars].iter_mut() {
            *gi = 1.0;
        }
        for op in self.ops.iter().rev() {
            let [a, b, c, d, o] = op.ids();
            let go = g[o];
            match op.kind {
                GRAPH_SOFTPLUS => g[a] += sigmoid_e(v[a], self.saved[b]) * go,
                GRAPH_SUM4 => {
                    g[a] += go;
                    g[b] += go;
                    g[c] += go;
                    g[d] += go;
                }
                GRAPH_PROD => {
                    g[a] += v[b] * go;
                    g[b] += v[a] * go;
                }
                _ => {
                    // SOFTMAX4
                    let avg = softmax4_avg(v[o], v[o + 1], v[o + 2], v[o + 3], g[o], g[o + 1], g[o + 2], g[o + 3]);
                    g[a] += v[o] * (g[o] - avg);
                    g[b] += v[o + 1] * (g[o + 1] - avg);
                    g[c] += v[o + 2] * (g[o + 2] - avg);
                    g[d] += v[o + 3] * (g[o + 3] - avg);
                }
            }
        }
    }

    /// This sample's loss, grad_in and grad_all (G3), each added in index order.
    fn sums(&self) -> GraphSums {
        let (mut loss, mut grad_in, mut grad_all) = (0.0, 0.0, 0.0);
        for v in &self.val[..self.n_vars] {
            loss += v;
        }
        for (i, g) in self.grad[..N_INPUTS].iter().enumerate() {
            grad_in += (i + 1) as f64 * g;
        }
        for g in &self.grad[..self.n_vars] {
            grad_all += g;
        }
        GraphSums { loss, grad_in, grad_all }
    }
}

/// Sample s's forward pass: its inputs, then the M ops.
fn record_graph(tape: &mut GraphTape, seed: u64, s: u64, m: usize) {
    tape.reset();
    for i in 0..N_INPUTS {
        tape.leaf(graph_input(seed, s, i));
    }
    record_ops(tape, m);
}

pub fn run_graph_v2(seed: u64, m: usize, n: u64) -> GraphSums {
    let mut tape = GraphTape::new(m);
    let mut total = GraphSums::ZERO;
    for s in 0..n {
        record_graph(&mut tape, seed, s, m);
        tape.backward();
        total = total + tape.sums();
    }
    total
}
