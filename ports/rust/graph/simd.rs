// Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
// Each var holds GRAPH_BATCH lanes (structure of arrays), each op works on its lanes WIDTH at
// a time in explicit [f64; WIDTH] chunks (graph/lanes.rs says why), and exp/log1p are
// libmvec's at the target's width (core/vmath).
use crate::core::vmath::{ALIGN, AlignedLanes, WIDTH, exp_lanes, exp_neg_abs_lanes, log1p_lanes};
use super::recipe::{GRAPH_SOFTPLUS, GRAPH_SUM4, GRAPH_PROD, GRAPH_SOFTMAX4, N_INPUTS, GraphSums, n_nodes, graph_input,
                    GraphBuilder, record_ops};
use super::tape::GraphOp;
use super::lanes::{chunks, chunks_mut, sum4_chunk, mul_chunk, softplus_chunk, softmax_shift_chunk,
                   softmax_norm_chunk, acc_chunk, acc_mul_chunk, acc_sigmoid_chunk, softmax_backward_chunk, CHUNKS};

/// Lanes per var, a multiple of every vector width. A batch's vals and grads take
/// n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB at 16 lanes and 10,000 ops. Why 16:
/// docs/findings/graph-where-the-time-goes.md.
pub const GRAPH_BATCH: usize = 16;
const _: () = assert!(GRAPH_BATCH % WIDTH == 0, "GRAPH_BATCH must be a multiple of WIDTH");
const _: () = assert!(std::mem::size_of::<GraphLanes>() == GRAPH_BATCH * 8, "GraphLanes must have no padding");

/// A graph var's GRAPH_BATCH lanes (two cache lines), starting on a cache line: Lanes'
/// type at this size.
type GraphLanes = AlignedLanes<GRAPH_BATCH>;

/// n vars' lanes in one allocation, var i's at row i: n * GRAPH_BATCH doubles starting on
/// a cache line, all 0.0 (the Codon program's alloc_lanes(n * GRAPH_BATCH)).
///
/// The memory comes from calloc, so a large block is fresh pages that the kernel zeroes
/// when they are first touched, as the Codon program's tape is left untouched until used.
/// Neither vec![ZERO; n] nor alloc_zeroed at the rows' 64-byte alignment does that: both
/// write every row up front (std's alloc_zeroed calls calloc only for alignments up to
/// 16), which at 1,000,000 ops is 450 MB per tape. So the block is allocated at f64's
/// alignment with a cache line to spare, and the rows start at its first cache line.
struct LaneRows {
    block: *mut u8,
    layout: std::alloc::Layout,
    rows: *mut GraphLanes,
    n: usize,
}

impl LaneRows {
    fn new(n: usize) -> LaneRows {
        let size = n.checked_mul(std::mem::size_of::<GraphLanes>()).and_then(|bytes| bytes.checked_add(ALIGN));
        let layout = size.and_then(|size| std::alloc::Layout::from_size_align(size, 8).ok());
        let layout = layout.expect("graph tape too large");
        // SAFETY: the layout's size is at least ALIGN, never 0; a null result is handed to
        // handle_alloc_error. The block holds n rows after its first 64-byte boundary,
        // which is at most ALIGN - 8 bytes in, and all-zero bytes are valid rows of 0.0.
        unsafe {
            let block = std::alloc::alloc_zeroed(layout);
            if block.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            let rows = block.add(block.align_offset(ALIGN)) as *mut GraphLanes;
            LaneRows { block, layout, rows, n }
        }
    }
}

impl std::ops::Deref for LaneRows {
    type Target = [GraphLanes];
    fn deref(&self) -> &[GraphLanes] {
        // SAFETY: n initialized rows at `rows` (new), borrowed with self.
        unsafe { std::slice::from_raw_parts(self.rows, self.n) }
    }
}

impl std::ops::DerefMut for LaneRows {
    fn deref_mut(&mut self) -> &mut [GraphLanes] {
        // SAFETY: as in deref, and &mut self makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.rows, self.n) }
    }
}

impl LaneRows {
    /// The first n rows' lanes as one slice of n * GRAPH_BATCH doubles.
    #[inline]
    fn flat_mut(&mut self, n: usize) -> &mut [f64] {
        let rows = &mut self[..n];
        // SAFETY: GraphLanes is repr(C) [f64; GRAPH_BATCH] with no padding (its size,
        // 128 bytes, is a multiple of its alignment), so n consecutive rows are
        // n * GRAPH_BATCH consecutive doubles, borrowed through `rows`.
        unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr() as *mut f64, n * GRAPH_BATCH) }
    }
}

impl Drop for LaneRows {
    fn drop(&mut self) {
        // SAFETY: the block new allocated with this layout, freed once.
        unsafe { std::alloc::dealloc(self.block, self.layout) }
    }
}

/// The ops as in GraphTape: a Vec, its length the Codon program's n_ops.
struct GraphBatchTape {
    val: LaneRows, // var i's lanes in row i
    grad: LaneRows,
    ops: Vec<GraphOp>,
    saved: LaneRows, // each SOFTPLUS's exp(-|a|) lanes, at its slot
    n_vars: usize,
    n_saved: usize,
}

impl GraphBatchTape {
    fn new(m: usize) -> GraphBatchTape {
        GraphBatchTape {
            val: LaneRows::new(n_nodes(m)),
            grad: LaneRows::new(n_nodes(m)),
            ops: Vec::with_capacity(m),
            saved: LaneRows::new(m / 4 + 1),
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

    /// A new var; the caller fills its lanes. Returns its id.
    #[inline]
    fn leaf(&mut self) -> usize {
        self.n_vars += 1;
        self.n_vars - 1
    }

    /// Record op `kind` on inputs a..d; returns its (first) output's id, for the caller to fill.
    #[inline]
    fn push(&mut self, kind: i32, a: usize, b: usize, c: usize, d: usize) -> usize {
        let out = self.leaf();
        self.ops.push(GraphOp::new(kind, a, b, c, d, out));
        out
    }

    /// The vals below `out` (an op's inputs) and the rows from out on, borrowed together:
    /// an op's inputs always precede its outputs, so the split keeps the borrows apart.
    #[inline]
    fn inputs_and_outs(&mut self, out: usize) -> (&[GraphLanes], &mut [GraphLanes]) {
        let (inputs, outs) = self.val.split_at_mut(out);
        (inputs, outs)
    }
}

impl GraphBuilder for GraphBatchTape {
    #[inline]
    fn size(&self) -> usize {
        self.n_vars
    }

    #[inline(always)]
    fn push_softplus(&mut self, a: usize) {
        let slot = self.n_saved;
        self.n_saved += 1;
        let out = self.push(GRAPH_SOFTPLUS, a, slot, 0, 0);
        let e = &mut self.saved[slot];
        let (inputs, outs) = self.val.split_at_mut(out);
        let (p, o) = (&inputs[a], &mut outs[0]);
        exp_neg_abs_lanes(p, e);
        log1p_lanes(e, o);
        for k in 0..CHUNKS {
            softplus_chunk(&mut chunks_mut(o)[k], &chunks(p)[k]); // softplus_e, lane-wise
        }
    }

    #[inline(always)]
    fn push_sum4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let out = self.push(GRAPH_SUM4, a, b, c, d);
        let (v, outs) = self.inputs_and_outs(out);
        let (o, va, vb, vc, vd) = (&mut outs[0], &v[a], &v[b], &v[c], &v[d]);
        for k in 0..CHUNKS {
            let (va, vb, vc, vd) = (&chunks(va)[k], &chunks(vb)[k], &chunks(vc)[k], &chunks(vd)[k]);
            sum4_chunk(&mut chunks_mut(o)[k], va, vb, vc, vd);
        }
    }

    #[inline(always)]
    fn push_prod(&mut self, a: usize, b: usize) {
        let out = self.push(GRAPH_PROD, a, b, 0, 0);
        let (v, outs) = self.inputs_and_outs(out);
        let (o, va, vb) = (&mut outs[0], &v[a], &v[b]);
        for k in 0..CHUNKS {
            mul_chunk(&mut chunks_mut(o)[k], &chunks(va)[k], &chunks(vb)[k]);
        }
    }

    #[inline(always)]
    fn push_softmax4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let out = self.push(GRAPH_SOFTMAX4, a, b, c, d);
        self.leaf();
        self.leaf();
        self.leaf();
        let (v, outs) = self.inputs_and_outs(out);
        let [o0, o1, o2, o3, ..] = outs else { unreachable!("SOFTMAX4 has four outputs") };
        let (va, vb, vc, vd) = (&v[a], &v[b], &v[c], &v[d]);
        for k in 0..CHUNKS {
            let o = [&mut chunks_mut(o0)[k], &mut chunks_mut(o1)[k], &mut chunks_mut(o2)[k], &mut chunks_mut(o3)[k]];
            softmax_shift_chunk(o, &chunks(va)[k], &chunks(vb)[k], &chunks(vc)[k], &chunks(vd)[k]);
        }
        // The Codon program exps the four consecutive vars in one call of 4 * GRAPH_BATCH
        // lanes; here one call per var, the same libmvec calls on the same lanes.
        for o in [&mut *o0, &mut *o1, &mut *o2, &mut *o3] {
            exp_lanes(o);
        }
        for k in 0..CHUNKS {
            softmax_norm_chunk([&mut chunks_mut(o0)[k], &mut chunks_mut(o1)[k], &mut chunks_mut(o2)[k], &mut chunks_mut(o3)[k]]);
        }
    }
}

impl GraphBatchTape {
    /// Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3).
    fn backward(&mut self) {
        // One flat fill, as the Codon program's: row by row, LLVM would vectorize across rows
        // (a scatter per lane).
        self.grad.flat_mut(self.n_vars).fill(1.0);
        for k in (0..self.ops.len()).rev() {
            let op = self.ops[k];
            let [a, b, c, d, out] = op.ids();
            // The inputs precede the output: split the grads there, so that g and the
            // inputs' grads can be borrowed together.
            let (grads, outs) = self.grad.split_at_mut(out);
            let g = &outs[0];
            let va = &self.val[a];
            match op.kind {
                GRAPH_SOFTPLUS => {
                    let (ga, e) = (&mut grads[a], &self.saved[b]);
                    for k in 0..CHUNKS {
                        acc_sigmoid_chunk(&mut chunks_mut(ga)[k], &chunks(va)[k], &chunks(e)[k], &chunks(g)[k]);
                    }
                }
                GRAPH_SUM4 => {
                    for q in [a, b, c, d] {
                        let gq = &mut grads[q];
                        for k in 0..CHUNKS {
                            acc_chunk(&mut chunks_mut(gq)[k], &chunks(g)[k]);
                        }
                    }
                }
                GRAPH_PROD => {
                    let vb = &self.val[b];
                    let ga = &mut grads[a];
                    for k in 0..CHUNKS {
                        acc_mul_chunk(&mut chunks_mut(ga)[k], &chunks(vb)[k], &chunks(g)[k]);
                    }
                    let gb = &mut grads[b];
                    for k in 0..CHUNKS {
                        acc_mul_chunk(&mut chunks_mut(gb)[k], &chunks(va)[k], &chunks(g)[k]);
                    }
                }
                _ => self.softmax4_backward(op), // SOFTMAX4
            }
        }
    }

    fn softmax4_backward(&mut self, op: GraphOp) {
        let [a, b, c, d, out] = op.ids();
        let (grads, outs) = self.grad.split_at_mut(out);
        let [o0, o1, o2, o3, ..] = &self.val[out..] else { unreachable!("SOFTMAX4 has four outputs") };
        let [g0, g1, g2, g3, ..] = &*outs else { unreachable!("SOFTMAX4 has four outputs") };
        // Each chunk's four increments first, then the inputs' grads one after the other
        // (the Codon program's softmax_backward_chunk: the same sums, whichever inputs
        // coincide).
        for k in 0..CHUNKS {
            let o = [&chunks(o0)[k], &chunks(o1)[k], &chunks(o2)[k], &chunks(o3)[k]];
            let g = [&chunks(g0)[k], &chunks(g1)[k], &chunks(g2)[k], &chunks(g3)[k]];
            let inc = softmax_backward_chunk(o, g);
            for (&q, dq) in [a, b, c, d].iter().zip(&inc) {
                acc_chunk(&mut chunks_mut(&mut grads[q])[k], dq);
            }
        }
    }
}

/// Samples first .. first+lanes-1's inputs into the 100 input vars; unused lanes get 0.
fn fill_graph_inputs(tape: &mut GraphBatchTape, seed: u64, first: u64, lanes: usize) {
    tape.reset();
    for i in 0..N_INPUTS {
        let id = tape.leaf();
        let v = &mut tape.val[id];
        for j in 0..lanes {
            v[j] = graph_input(seed, first + j as u64, i);
        }
        for j in lanes..GRAPH_BATCH {
            v[j] = 0.0;
        }
    }
}

/// Per-lane running checksums, so that a batch is added with vector adds.
struct GraphLaneSums {
    loss: GraphLanes,
    grad_in: GraphLanes,
    grad_all: GraphLanes,
}

impl GraphLaneSums {
    fn new() -> GraphLaneSums {
        GraphLaneSums { loss: GraphLanes::ZERO, grad_in: GraphLanes::ZERO, grad_all: GraphLanes::ZERO }
    }

    /// Each lane's sample checksums (G3, nodes in index order), added for the used lanes.
    fn add(&mut self, tape: &GraphBatchTape, lanes: usize) {
        let (mut loss, mut grad_in, mut grad_all) = (GraphLanes::ZERO, GraphLanes::ZERO, GraphLanes::ZERO);
        for (v, g) in tape.val[..tape.n_vars].iter().zip(&tape.grad[..tape.n_vars]) {
            for k in 0..CHUNKS {
                acc_chunk(&mut chunks_mut(&mut loss)[k], &chunks(v)[k]);
                acc_chunk(&mut chunks_mut(&mut grad_all)[k], &chunks(g)[k]);
            }
        }
        for (i, g) in tape.grad[..N_INPUTS].iter().enumerate() {
            let weighted = [(i + 1) as f64; WIDTH];
            for k in 0..CHUNKS {
                acc_mul_chunk(&mut chunks_mut(&mut grad_in)[k], &weighted, &chunks(g)[k]);
            }
        }
        for j in 0..lanes {
            self.loss[j] += loss[j];
            self.grad_in[j] += grad_in[j];
            self.grad_all[j] += grad_all[j];
        }
    }

    /// The lanes added up in lane order.
    fn total(&self) -> GraphSums {
        let mut s = GraphSums::ZERO;
        for j in 0..GRAPH_BATCH {
            s = s + GraphSums { loss: self.loss[j], grad_in: self.grad_in[j], grad_all: self.grad_all[j] };
        }
        s
    }
}

pub fn n_graph_batches(n: u64) -> u64 {
    n.div_ceil(GRAPH_BATCH as u64)
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape. No caller passes an
/// empty range (v4's team has at most one thread a batch: core/threads); one would allocate nothing.
pub fn run_graph_batches(seed: u64, m: usize, n: u64, first_batch: u64, end_batch: u64) -> GraphSums {
    if first_batch >= end_batch {
        return GraphSums::ZERO;
    }
    let mut tape = GraphBatchTape::new(m);
    let mut acc = GraphLaneSums::new();
    for batch in first_batch..end_batch {
        let first = batch * GRAPH_BATCH as u64;
        let lanes = (n - first).min(GRAPH_BATCH as u64) as usize;
        fill_graph_inputs(&mut tape, seed, first, lanes);
        record_ops(&mut tape, m);
        tape.backward();
        acc.add(&tape, lanes);
    }
    acc.total()
}

pub fn run_graph_v3(seed: u64, m: usize, n: u64) -> GraphSums {
    run_graph_batches(seed, m, n, 0, n_graph_batches(n))
}
