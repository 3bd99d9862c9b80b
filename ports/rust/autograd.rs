// autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
// through a reverse-mode autograd, level by level (docs/contract.md), and the graph
// workload, a tape of M ops (docs/contract-graph.md). The Rust port of the Codon program:
// one file, std only, laid out in the order of the Codon modules (rng, ops, graph,
// naive, pool, tape, fused, vmath, simd, threads, fused-simd; graph recipe, nodes,
// objects, pool, tape, simd, threads; cli, report, main) so that the two can be read
// side by side.
//
// Build: rustc -C opt-level=3 -C target-cpu=native -o build/autograd-rust ports/rust/autograd.rs
// (Linux, x86-64; v3/v4/fused-simd call glibc's libmvec at the widest vector that
// target-cpu enables: AVX-512F, AVX2 or SSE2). The Makefile also sets AUTOGRAD_TARGET=CPU
// in rustc's environment, for --version to name.
// Rust never contracts a*b + c into an FMA nor reassociates floats, so the scalar
// levels keep the contract's order exactly without any flag.

use std::cell::Cell;
use std::io::{self, Write};
use std::ops::Add;
use std::time::Instant;

// ---------------------------------------------------------------- rng
// The input stream of contract §1: counter-based splitmix64, written out by hand so
// that every language draws the same numbers (never a standard-library RNG).

const GAMMA: u64 = 0x9E3779B97F4A7C15;
const MIX1: u64 = 0xBF58476D1CE4E5B9;
const MIX2: u64 = 0x94D049BB133111EB;
const UNIT: f64 = 1.0 / 9007199254740992.0; // 2^-53

/// The splitmix64 finalizer: a bijective scramble of one 64-bit word.
#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MIX1);
    z = (z ^ (z >> 27)).wrapping_mul(MIX2);
    z ^ (z >> 31)
}

/// The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`.
#[inline]
fn draw(seed: u64, k: u64) -> u64 {
    splitmix64(seed.wrapping_add(k.wrapping_mul(GAMMA)))
}

/// The top 53 bits of z as a float in [0, 1).
#[inline]
fn unit(z: u64) -> f64 {
    // Below 2^53, so the signed conversion is exact (and cheaper than u64 -> f64).
    ((z >> 11) as i64) as f64 * UNIT
}

/// Sample i: (x_i, y_i), both in [-1, 1).
#[inline]
fn sample(seed: u64, i: u64) -> (f64, f64) {
    let x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0;
    let y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0;
    (x, y)
}

// ---------------------------------------------------------------- ops
// The scalar math of contract §2, shared by every level and baseline, so that the
// levels differ only in how they organise the graph, never in the arithmetic.

/// The checksums of a run: plain sums over the samples, in index order.
#[derive(Clone, Copy, Debug)]
struct Sums {
    f: f64,
    dx: f64,
    dy: f64,
}

impl Add for Sums {
    type Output = Sums;
    fn add(self, o: Sums) -> Sums {
        Sums { f: self.f + o.f, dx: self.dx + o.dx, dy: self.dy + o.dy }
    }
}

// Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
// overflow). The *_e forms take e ready-made, so that a caller computing both shares
// one exp; the results are bit for bit those of the contract's formulas.

#[inline]
fn exp_neg_abs(p: f64) -> f64 {
    (-p.abs()).exp()
}

/// log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p)).
#[inline]
fn softplus_e(p: f64, e: f64) -> f64 {
    if p > 0.0 { p + e.ln_1p() } else { e.ln_1p() }
}

/// d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)).
#[inline]
fn sigmoid_e(p: f64, e: f64) -> f64 {
    if p >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) }
}

#[inline]
fn softplus(p: f64) -> f64 {
    softplus_e(p, exp_neg_abs(p))
}

#[inline]
fn sigmoid(p: f64) -> f64 {
    sigmoid_e(p, exp_neg_abs(p))
}

// ---------------------------------------------------------------- graph
// The pointer-linked graph of levels v0 and v1, the seed's first design: each node
// knows its inputs, computes its value when asked (recomputing its whole subgraph
// every time), and pushes gradients to its inputs by recursion.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Leaf,
    Sum,
    Prod,
    Softplus,
}

/// A graph node. Links are plain references: x feeds both s and p, so a node has
/// several readers, and every field is a Cell so that backward (and the v1 pool's
/// relinking) can write through those shared references.
struct Node<'a> {
    kind: Cell<Kind>,
    leaf_val: Cell<f64>, // the value of a LEAF; unused by the other kinds
    grad: Cell<f64>,
    a: Cell<Option<&'a Node<'a>>>, // inputs: none for a LEAF, `a` only for SOFTPLUS
    b: Cell<Option<&'a Node<'a>>>,
}

impl<'a> Node<'a> {
    fn new(kind: Kind, leaf_val: f64, a: Option<&'a Node<'a>>, b: Option<&'a Node<'a>>) -> Node<'a> {
        let node = Node {
            kind: Cell::new(Kind::Leaf),
            leaf_val: Cell::new(0.0),
            grad: Cell::new(0.0),
            a: Cell::new(None),
            b: Cell::new(None),
        };
        node.set(kind, leaf_val, a, b);
        node
    }

    /// (Re)make this node: used by the constructor and by the v1 pool.
    fn set(&self, kind: Kind, leaf_val: f64, a: Option<&'a Node<'a>>, b: Option<&'a Node<'a>>) {
        self.kind.set(kind);
        self.leaf_val.set(leaf_val);
        self.grad.set(0.0);
        self.a.set(a);
        self.b.set(b);
    }

    /// The node's value, recomputed from the leaves on every call.
    fn value(&self) -> f64 {
        // An op node always has its inputs; matching on them avoids any unwrap.
        match (self.kind.get(), self.a.get(), self.b.get()) {
            (Kind::Sum, Some(a), Some(b)) => a.value() + b.value(),
            (Kind::Prod, Some(a), Some(b)) => a.value() * b.value(),
            (Kind::Softplus, Some(a), _) => softplus(a.value()),
            _ => self.leaf_val.get(),
        }
    }

    /// Add g to this node's grad and recurse into its inputs (chain rule).
    fn backward(&self, g: f64) {
        self.grad.set(self.grad.get() + g);
        match (self.kind.get(), self.a.get(), self.b.get()) {
            (Kind::Sum, Some(a), Some(b)) => {
                a.backward(g);
                b.backward(g);
            }
            (Kind::Prod, Some(a), Some(b)) => {
                a.backward(b.value() * g);
                b.backward(a.value() * g);
            }
            (Kind::Softplus, Some(a), _) => a.backward(sigmoid(a.value()) * g),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------- naive (v0)
// Level v0 (naive): fresh heap nodes every iteration (Box: malloc and free), linked by
// references; values are recomputed on demand and backward recurses through the graph.

fn run_v0(seed: u64, n: u64) -> Sums {
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (xv, yv) = sample(seed, i);
        let x = Box::new(Node::new(Kind::Leaf, xv, None, None));
        let y = Box::new(Node::new(Kind::Leaf, yv, None, None));
        let s = Box::new(Node::new(Kind::Sum, 0.0, Some(&*x), Some(&*y)));
        let p = Box::new(Node::new(Kind::Prod, 0.0, Some(&*s), Some(&*x)));
        let f = Box::new(Node::new(Kind::Softplus, 0.0, Some(&*p), None));
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad.get();
        sum_dy += y.grad.get();
    } // the five boxes are freed here, every iteration
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}

// ---------------------------------------------------------------- pool (v1)
// Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
// and relinked every iteration, so the loop allocates nothing. Values are still
// recomputed on demand (the seed's v1).

const POOL_SIZE: usize = 5; // x, y, s, p, f

/// The pool borrows its nodes rather than owning them: nodes that link to each other
/// by reference must live in storage that outlives the pool (Rust has no
/// self-referential owners without unsafe code).
struct Pool<'a> {
    nodes: &'a [Node<'a>],
    used: usize,
}

impl<'a> Pool<'a> {
    fn new(nodes: &'a [Node<'a>]) -> Pool<'a> {
        Pool { nodes, used: 0 }
    }

    fn reset(&mut self) {
        self.used = 0;
    }

    /// The next free node, remade as (kind, leaf_val, a, b).
    fn take(&mut self, kind: Kind, leaf_val: f64, a: Option<&'a Node<'a>>, b: Option<&'a Node<'a>>) -> &'a Node<'a> {
        let node = &self.nodes[self.used];
        self.used += 1;
        node.set(kind, leaf_val, a, b);
        node
    }
}

fn run_v1(seed: u64, n: u64) -> Sums {
    let storage: Vec<Node> = (0..POOL_SIZE).map(|_| Node::new(Kind::Leaf, 0.0, None, None)).collect();
    let mut pool = Pool::new(&storage);
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (xv, yv) = sample(seed, i);
        pool.reset();
        let x = pool.take(Kind::Leaf, xv, None, None);
        let y = pool.take(Kind::Leaf, yv, None, None);
        let s = pool.take(Kind::Sum, 0.0, Some(x), Some(y));
        let p = pool.take(Kind::Prod, 0.0, Some(s), Some(x));
        let f = pool.take(Kind::Softplus, 0.0, Some(p), None);
        f.backward(1.0);
        sum_f += f.value();
        sum_dx += x.grad.get();
        sum_dy += y.grad.get();
    }
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}

// ---------------------------------------------------------------- tape (v2)
// Level v2 (tape), the seed's NaiveTape: contiguous fixed-size arrays of vars
// {val, grad} and ops {kind, input ids, output id}, addressed by index. Each op
// computes its result once when pushed; backward walks the ops in reverse.

const MAX_VARS: usize = 6; // x, y, s, p, exp(-|p|), f
const MAX_OPS: usize = 3; // SUM, PROD, SOFTPLUS

#[derive(Clone, Copy)]
struct Var {
    val: f64,
    grad: f64,
}

#[derive(Clone, Copy)]
struct Op {
    kind: Kind,
    a: usize, // input ids; SOFTPLUS's b is the var that saves exp(-|a|)
    b: usize,
    out: usize, // output id
}

const NO_OP: Op = Op { kind: Kind::Leaf, a: 0, b: 0, out: 0 };

struct Tape {
    vars: Box<[Var; MAX_VARS]>,
    ops: Box<[Op; MAX_OPS]>,
    n_vars: usize,
    n_ops: usize,
}

impl Tape {
    #[inline]
    fn new() -> Tape {
        Tape {
            vars: Box::new([Var { val: 0.0, grad: 0.0 }; MAX_VARS]),
            ops: Box::new([NO_OP; MAX_OPS]),
            n_vars: 0,
            n_ops: 0,
        }
    }

    #[inline]
    fn reset(&mut self) {
        self.n_vars = 0;
        self.n_ops = 0;
    }

    #[inline]
    fn val(&self, i: usize) -> f64 {
        self.vars[i].val
    }

    #[inline]
    fn grad(&self, i: usize) -> f64 {
        self.vars[i].grad
    }

    #[inline]
    fn add_grad(&mut self, i: usize, g: f64) {
        self.vars[i].grad += g;
    }

    /// A new input var; returns its id.
    #[inline]
    fn leaf(&mut self, val: f64) -> usize {
        self.vars[self.n_vars] = Var { val, grad: 0.0 };
        self.n_vars += 1;
        self.n_vars - 1
    }

    /// Record op `kind` on inputs a, b with result `val`; returns the result's id.
    #[inline]
    fn push(&mut self, kind: Kind, a: usize, b: usize, val: f64) -> usize {
        let out = self.leaf(val);
        self.ops[self.n_ops] = Op { kind, a, b, out };
        self.n_ops += 1;
        out
    }

    #[inline]
    fn push_sum(&mut self, a: usize, b: usize) -> usize {
        let val = self.val(a) + self.val(b);
        self.push(Kind::Sum, a, b, val)
    }

    #[inline]
    fn push_prod(&mut self, a: usize, b: usize) -> usize {
        let val = self.val(a) * self.val(b);
        self.push(Kind::Prod, a, b, val)
    }

    #[inline]
    fn push_softplus(&mut self, a: usize) -> usize {
        // exp(-|p|) is saved in a var of its own, so that backward reuses it (each
        // result computed once); the op names it as its second input.
        let p = self.val(a);
        let e = self.leaf(exp_neg_abs(p));
        let val = softplus_e(p, self.val(e));
        self.push(Kind::Softplus, a, e, val)
    }

    /// Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule.
    #[inline(always)] // as Codon's @inline
    fn backward(&mut self, out: usize) {
        for i in 0..self.n_vars {
            self.vars[i].grad = 0.0;
        }
        self.add_grad(out, 1.0);
        for k in (0..self.n_ops).rev() {
            let op = self.ops[k];
            let g = self.grad(op.out);
            match op.kind {
                Kind::Sum => {
                    self.add_grad(op.a, g);
                    self.add_grad(op.b, g);
                }
                Kind::Prod => {
                    let (va, vb) = (self.val(op.a), self.val(op.b));
                    self.add_grad(op.a, vb * g);
                    self.add_grad(op.b, va * g);
                }
                _ => {
                    // SOFTPLUS
                    let s = sigmoid_e(self.val(op.a), self.val(op.b));
                    self.add_grad(op.a, s * g);
                }
            }
        }
    }
}

/// One forward pass of f(x, y) = softplus((x + y) * x); returns the ids of x, y, f.
#[inline(always)] // as Codon's @inline
fn record(tape: &mut Tape, xv: f64, yv: f64) -> (usize, usize, usize) {
    tape.reset();
    let x = tape.leaf(xv);
    let y = tape.leaf(yv);
    let s = tape.push_sum(x, y);
    let p = tape.push_prod(s, x);
    let f = tape.push_softplus(p);
    (x, y, f)
}

fn run_v2(seed: u64, n: u64) -> Sums {
    let mut tape = Tape::new();
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (xv, yv) = sample(seed, i);
        let (x, y, f) = record(&mut tape, xv, yv);
        tape.backward(f);
        sum_f += tape.val(f);
        sum_dx += tape.grad(x);
        sum_dy += tape.grad(y);
    }
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}

/// f, df/dx, df/dy at one point, through the v2 tape (for --eval).
fn eval_point(xv: f64, yv: f64) -> (f64, f64, f64) {
    let mut tape = Tape::new();
    let (x, y, f) = record(&mut tape, xv, yv);
    tape.backward(f);
    (tape.val(f), tape.grad(x), tape.grad(y))
}

// ---------------------------------------------------------------- fused (baseline)
// Baseline `fused` (not a level): the same math written out by hand with no tape or
// graph, the floor that the v2 tape can approach.

fn run_fused(seed: u64, n: u64) -> Sums {
    let (mut sum_f, mut sum_dx, mut sum_dy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (x, y) = sample(seed, i);
        let s = x + y;
        let p = s * x;
        let e = exp_neg_abs(p);
        let g = sigmoid_e(p, e);
        sum_f += softplus_e(p, e);
        sum_dx += s * g + x * g;
        sum_dy += x * g;
    }
    Sums { f: sum_f, dx: sum_dx, dy: sum_dy }
}

// ---------------------------------------------------------------- vmath
// Vector exp and log1p for the batched levels: glibc's libmvec at the widest vector the
// target CPU has, chosen when the program is compiled (rustc's target features, which
// -C target-cpu sets): 8 doubles (AVX-512F, _ZGVeN8v_*), 4 (AVX2, _ZGVdN4v_*), 2 (SSE2,
// _ZGVbN2v_*), or 1, glibc's scalar exp/log1p. Only the module for the target is
// compiled (#[cfg]), so a binary never holds an instruction its CPU lacks. rustc has no
// vector-math library to vectorize exp/log1p calls with, so the libmvec variants are
// called directly; the rest of the lane arithmetic is left to LLVM's loop vectorizer,
// which uses the same target.

const ALIGN: usize = 64; // bytes: a cache line, a whole number of vectors of any width

/// What the program was built for: CPU=... of the Makefile, which runs rustc with
/// AUTOGRAD_TARGET in its environment.
const TARGET: &str = match option_env!("AUTOGRAD_TARGET") {
    Some(target) => target,
    None => "unstated",
};

const VECTOR_NAMES: [(usize, &str); 4] = [
    (1, "scalar (glibc exp/log1p)"),
    (2, "SSE2 (libmvec _ZGVbN2v)"),
    (4, "AVX2 (libmvec _ZGVdN4v)"),
    (8, "AVX-512F (libmvec _ZGVeN8v)"),
];

/// One line naming the build target and the vector width, as --version prints it.
fn target_text() -> String {
    let name = VECTOR_NAMES.iter().find(|(width, _)| *width == WIDTH).map_or("?", |(_, name)| name);
    format!("target {}, vector width {} doubles: {}", TARGET, WIDTH, name)
}

/// N lanes of a var, starting on a cache line so that no vector load straddles two:
/// the Codon program's alloc_lanes, as a type (Box, Vec and the stack honour its
/// alignment). Lanes (softplus, BATCH) and GraphLanes (graph, GRAPH_BATCH) are its sizes.
#[derive(Clone, Copy)]
#[repr(C, align(64))] // ALIGN (the attribute takes only a literal)
struct AlignedLanes<const N: usize>([f64; N]);

/// A softplus var's BATCH lanes.
type Lanes = AlignedLanes<BATCH>;

const _: () = assert!(std::mem::align_of::<Lanes>() == ALIGN);

impl<const N: usize> AlignedLanes<N> {
    const ZERO: AlignedLanes<N> = AlignedLanes([0.0; N]);
}

impl<const N: usize> std::ops::Deref for AlignedLanes<N> {
    type Target = [f64; N];
    fn deref(&self) -> &[f64; N] {
        &self.0
    }
}

impl<const N: usize> std::ops::DerefMut for AlignedLanes<N> {
    fn deref_mut(&mut self) -> &mut [f64; N] {
        &mut self.0
    }
}

// Each libmvec module computes WIDTH lanes per call: exp(src, dst) and log1p(src, dst)
// read WIDTH doubles at src and write them at dst (src may be dst), both aligned to the
// vector, which Lanes' alignment gives every multiple of WIDTH.
//
// The functions take and return the vector in one register (zmm0, ymm0, xmm0): the C
// ABI for __m512d, __m256d and __m128d when the target has AVX-512F, AVX and SSE2. But
// stable Rust refuses SIMD types in `extern` blocks (feature simd_ffi), so the symbols
// are declared without a signature and called through a function pointer of the right
// type (LLVM still emits a direct call, through the GOT).

#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
mod libmvec {
    use std::arch::x86_64::{__m512d, _mm512_load_pd, _mm512_store_pd};

    pub const WIDTH: usize = 8;

    #[link(name = "mvec")]
    unsafe extern "C" {
        fn _ZGVeN8v_exp();
        fn _ZGVeN8v_log1p();
    }

    #[allow(improper_ctypes_definitions)] // __m512d travels in zmm0: see above
    type VectorFn = unsafe extern "C" fn(__m512d) -> __m512d;

    /// dst[0..8] = f(src[0..8]). SAFETY (caller): f's real signature is VectorFn;
    /// src and dst hold 8 doubles and are 64-byte aligned.
    #[inline(always)]
    unsafe fn call(f: unsafe extern "C" fn(), src: *const f64, dst: *mut f64) {
        unsafe {
            let f: VectorFn = std::mem::transmute(f);
            _mm512_store_pd(dst, f(_mm512_load_pd(src)));
        }
    }

    #[inline(always)]
    pub unsafe fn exp(src: *const f64, dst: *mut f64) {
        unsafe { call(_ZGVeN8v_exp, src, dst) }
    }

    #[inline(always)]
    pub unsafe fn log1p(src: *const f64, dst: *mut f64) {
        unsafe { call(_ZGVeN8v_log1p, src, dst) }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2", not(target_feature = "avx512f")))]
mod libmvec {
    use std::arch::x86_64::{__m256d, _mm256_load_pd, _mm256_store_pd};

    pub const WIDTH: usize = 4;

    #[link(name = "mvec")]
    unsafe extern "C" {
        fn _ZGVdN4v_exp();
        fn _ZGVdN4v_log1p();
    }

    #[allow(improper_ctypes_definitions)] // __m256d travels in ymm0: see above
    type VectorFn = unsafe extern "C" fn(__m256d) -> __m256d;

    /// dst[0..4] = f(src[0..4]). SAFETY (caller): f's real signature is VectorFn;
    /// src and dst hold 4 doubles and are 32-byte aligned.
    #[inline(always)]
    unsafe fn call(f: unsafe extern "C" fn(), src: *const f64, dst: *mut f64) {
        unsafe {
            let f: VectorFn = std::mem::transmute(f);
            _mm256_store_pd(dst, f(_mm256_load_pd(src)));
        }
    }

    #[inline(always)]
    pub unsafe fn exp(src: *const f64, dst: *mut f64) {
        unsafe { call(_ZGVdN4v_exp, src, dst) }
    }

    #[inline(always)]
    pub unsafe fn log1p(src: *const f64, dst: *mut f64) {
        unsafe { call(_ZGVdN4v_log1p, src, dst) }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(target_feature = "avx2")))]
mod libmvec {
    use std::arch::x86_64::{__m128d, _mm_load_pd, _mm_store_pd};

    pub const WIDTH: usize = 2;

    #[link(name = "mvec")]
    unsafe extern "C" {
        fn _ZGVbN2v_exp();
        fn _ZGVbN2v_log1p();
    }

    #[allow(improper_ctypes_definitions)] // __m128d travels in xmm0: see above
    type VectorFn = unsafe extern "C" fn(__m128d) -> __m128d;

    /// dst[0..2] = f(src[0..2]). SAFETY (caller): f's real signature is VectorFn;
    /// src and dst hold 2 doubles and are 16-byte aligned.
    #[inline(always)]
    unsafe fn call(f: unsafe extern "C" fn(), src: *const f64, dst: *mut f64) {
        unsafe {
            let f: VectorFn = std::mem::transmute(f);
            _mm_store_pd(dst, f(_mm_load_pd(src)));
        }
    }

    #[inline(always)]
    pub unsafe fn exp(src: *const f64, dst: *mut f64) {
        unsafe { call(_ZGVbN2v_exp, src, dst) }
    }

    #[inline(always)]
    pub unsafe fn log1p(src: *const f64, dst: *mut f64) {
        unsafe { call(_ZGVbN2v_log1p, src, dst) }
    }
}

// Not x86-64 (or no SSE2): one lane at a time through glibc's scalar exp and log1p,
// the same results within the v3 tolerance, only slower.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
mod libmvec {
    pub const WIDTH: usize = 1;

    /// *dst = exp(*src). SAFETY (caller): both point to a double.
    #[inline(always)]
    pub unsafe fn exp(src: *const f64, dst: *mut f64) {
        unsafe { *dst = (*src).exp() }
    }

    /// *dst = log1p(*src). SAFETY (caller): both point to a double.
    #[inline(always)]
    pub unsafe fn log1p(src: *const f64, dst: *mut f64) {
        unsafe { *dst = (*src).ln_1p() }
    }
}

use libmvec::WIDTH; // doubles per libmvec call
const _: () = assert!(BATCH.is_multiple_of(WIDTH), "BATCH must be a multiple of WIDTH");

/// lanes[j] = exp(lanes[j]) for every lane (the Codon program's exp_lanes(src, out, n),
/// which it calls only in place; Rust's borrows would not let src be out). N is a
/// multiple of WIDTH (BATCH and GRAPH_BATCH are asserted to be).
#[inline]
fn exp_lanes<const N: usize>(lanes: &mut AlignedLanes<N>) {
    let p = lanes.as_mut_ptr();
    for k in 0..N / WIDTH {
        // SAFETY: lanes k*WIDTH .. (k+1)*WIDTH lie inside the N lanes, and k*WIDTH doubles
        // into 64-byte aligned lanes is aligned to the vector.
        unsafe { libmvec::exp(p.add(k * WIDTH), p.add(k * WIDTH)) }
    }
}

/// out[j] = log1p(src[j]) for every lane.
#[inline]
fn log1p_lanes<const N: usize>(src: &AlignedLanes<N>, out: &mut AlignedLanes<N>) {
    let (s, o) = (src.as_ptr(), out.as_mut_ptr());
    for k in 0..N / WIDTH {
        // SAFETY: as in exp_lanes, for both src and out.
        unsafe { libmvec::log1p(s.add(k * WIDTH), o.add(k * WIDTH)) }
    }
}

/// out[j] = exp(-|p[j]|) for every lane.
#[inline]
fn exp_neg_abs_lanes<const N: usize>(p: &AlignedLanes<N>, out: &mut AlignedLanes<N>) {
    for j in 0..N {
        out[j] = -p[j].abs();
    }
    exp_lanes(out);
}

// ---------------------------------------------------------------- simd (v3)
// Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
// lanes (structure of arrays), each op is a loop over its lanes that LLVM vectorizes,
// and exp/log1p are glibc's vector versions. The ops and their order are v2's.

/// Lanes per var: 256, as in the Codon program; measured against 64..1024 here too
/// (README). The tape's val and grad (2 x 6 x 2 KiB) stay in L1.
const BATCH: usize = 256;

/// The v2 tape with BATCH lanes per var: val and grad are MAX_VARS x BATCH arrays,
/// var i's lanes at [i * BATCH, (i + 1) * BATCH); ops as in v2.
struct BatchTape {
    val: Box<[Lanes; MAX_VARS]>,
    grad: Box<[Lanes; MAX_VARS]>,
    ops: Box<[Op; MAX_OPS]>,
    n_vars: usize,
    n_ops: usize,
}

impl BatchTape {
    fn new() -> BatchTape {
        BatchTape {
            val: Box::new([Lanes::ZERO; MAX_VARS]),
            grad: Box::new([Lanes::ZERO; MAX_VARS]),
            ops: Box::new([NO_OP; MAX_OPS]),
            n_vars: 0,
            n_ops: 0,
        }
    }

    fn reset(&mut self) {
        self.n_vars = 0;
        self.n_ops = 0;
    }

    fn vals(&self, i: usize) -> &Lanes {
        &self.val[i]
    }

    fn grads(&self, i: usize) -> &Lanes {
        &self.grad[i]
    }

    /// The lanes of vars i < j, both writable (how the caller fills two leaves).
    fn vals_mut2(&mut self, i: usize, j: usize) -> (&mut Lanes, &mut Lanes) {
        let (below, rest) = self.val.split_at_mut(j);
        (&mut below[i], &mut rest[0])
    }

    /// The vals below `out` (an op's inputs) and out's lanes, borrowed together: an
    /// op's inputs always precede its output, so the split keeps the borrows apart.
    fn inputs_and_out(&mut self, out: usize) -> (&[Lanes], &mut Lanes) {
        let (inputs, rest) = self.val.split_at_mut(out);
        (inputs, &mut rest[0])
    }

    /// A new var; the caller fills its lanes. Returns its id.
    fn leaf(&mut self) -> usize {
        self.n_vars += 1;
        self.n_vars - 1
    }

    /// Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill.
    fn push(&mut self, kind: Kind, a: usize, b: usize) -> usize {
        let out = self.leaf();
        self.ops[self.n_ops] = Op { kind, a, b, out };
        self.n_ops += 1;
        out
    }

    fn push_sum(&mut self, a: usize, b: usize) -> usize {
        let out = self.push(Kind::Sum, a, b);
        let (v, o) = self.inputs_and_out(out);
        let (u, w) = (&v[a], &v[b]);
        for j in 0..BATCH {
            o[j] = u[j] + w[j];
        }
        out
    }

    fn push_prod(&mut self, a: usize, b: usize) -> usize {
        let out = self.push(Kind::Prod, a, b);
        let (v, o) = self.inputs_and_out(out);
        let (u, w) = (&v[a], &v[b]);
        for j in 0..BATCH {
            o[j] = u[j] * w[j];
        }
        out
    }

    fn push_softplus(&mut self, a: usize) -> usize {
        // As in v2, exp(-|p|) gets a var of its own, named as the op's second input.
        let e = self.leaf();
        let (v, ve) = self.inputs_and_out(e);
        exp_neg_abs_lanes(&v[a], ve);
        let out = self.push(Kind::Softplus, a, e);
        let (v, o) = self.inputs_and_out(out);
        let (p, ve) = (&v[a], &v[e]);
        log1p_lanes(ve, o);
        for j in 0..BATCH {
            o[j] = if p[j] > 0.0 { p[j] + o[j] } else { o[j] }; // softplus_e, lane-wise
        }
        out
    }

    /// Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule.
    #[inline]
    fn backward(&mut self, out: usize) {
        for row in self.grad[..self.n_vars].iter_mut() {
            *row = Lanes::ZERO;
        }
        self.grad[out] = AlignedLanes([1.0; BATCH]);
        for k in (0..self.n_ops).rev() {
            let op = self.ops[k];
            // The inputs precede the output: split the grads there, so that g and
            // the inputs' grads can be borrowed together.
            let (grads, rest) = self.grad.split_at_mut(op.out);
            let g = &rest[0];
            let (va, vb) = (&self.val[op.a], &self.val[op.b]);
            match op.kind {
                Kind::Sum => {
                    let ga = &mut grads[op.a];
                    for j in 0..BATCH {
                        ga[j] += g[j];
                    }
                    let gb = &mut grads[op.b];
                    for j in 0..BATCH {
                        gb[j] += g[j];
                    }
                }
                Kind::Prod => {
                    let ga = &mut grads[op.a];
                    for j in 0..BATCH {
                        ga[j] += vb[j] * g[j];
                    }
                    let gb = &mut grads[op.b];
                    for j in 0..BATCH {
                        gb[j] += va[j] * g[j];
                    }
                }
                _ => {
                    // SOFTPLUS: b holds exp(-|a|)
                    let ga = &mut grads[op.a];
                    for j in 0..BATCH {
                        ga[j] += sigmoid_e(va[j], vb[j]) * g[j];
                    }
                }
            }
        }
    }
}

/// Samples first .. first+lanes-1 into the lanes of x and y; unused lanes get 0.
fn fill_inputs(x: &mut Lanes, y: &mut Lanes, seed: u64, first: u64, lanes: usize) {
    for j in 0..lanes {
        (x[j], y[j]) = sample(seed, first + j as u64);
    }
    for j in lanes..BATCH {
        (x[j], y[j]) = (0.0, 0.0);
    }
}

/// Per-lane running sums, so that accumulating a batch is a vector add.
struct LaneSums {
    f: Lanes,
    dx: Lanes,
    dy: Lanes,
}

impl LaneSums {
    fn new() -> LaneSums {
        LaneSums { f: Lanes::ZERO, dx: Lanes::ZERO, dy: Lanes::ZERO }
    }

    #[inline]
    fn add(&mut self, f: &Lanes, dx: &Lanes, dy: &Lanes, lanes: usize) {
        for j in 0..lanes {
            self.f[j] += f[j];
            self.dx[j] += dx[j];
            self.dy[j] += dy[j];
        }
    }

    /// The lanes added up in lane order.
    fn total(&self) -> Sums {
        let mut s = Sums { f: 0.0, dx: 0.0, dy: 0.0 };
        for j in 0..BATCH {
            s = s + Sums { f: self.f[j], dx: self.dx[j], dy: self.dy[j] };
        }
        s
    }
}

fn n_batches(n: u64) -> u64 {
    n.div_ceil(BATCH as u64)
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape.
fn run_batches(seed: u64, n: u64, first_batch: u64, end_batch: u64) -> Sums {
    let mut tape = BatchTape::new();
    let mut acc = LaneSums::new();
    for batch in first_batch..end_batch {
        let first = batch * BATCH as u64;
        let lanes = (n - first).min(BATCH as u64) as usize;
        tape.reset();
        let (x, y) = (tape.leaf(), tape.leaf());
        let (xs, ys) = tape.vals_mut2(x, y);
        fill_inputs(xs, ys, seed, first, lanes);
        let s = tape.push_sum(x, y);
        let p = tape.push_prod(s, x);
        let f = tape.push_softplus(p);
        tape.backward(f);
        acc.add(tape.vals(f), tape.grads(x), tape.grads(y), lanes);
    }
    acc.total()
}

fn run_v3(seed: u64, n: u64) -> Sums {
    run_batches(seed, n, 0, n_batches(n))
}

// ---------------------------------------------------------------- threads (v4)
// Level v4 (threads): v3 with the batches split into T contiguous ranges, one per
// scoped std::thread, each with its own batch tape and lane sums; the partial sums are
// added in thread order, so a given T always gives the same digits.

/// A v4 worker thread that panicked: its range has no sums, so the run has no result.
/// (Nothing in run_batches or run_graph_batches should panic; if something does, the
/// run is reported as failed rather than rerun, which could hide the fault or repeat it.)
struct WorkerFailed {
    thread: u64,
    message: String,
}

/// The Codon program's `@par(num_threads=T, schedule="static", chunk_size=1)` loop over
/// T contiguous ranges of nb batches, shared by softplus and graph v4: work(first, end)
/// for range t = [t*nb/T, (t+1)*nb/T) on thread t, the results in thread order.
fn in_threads<S: Send>(threads: usize, nb: u64, work: impl Fn(u64, u64) -> S + Sync) -> Result<Vec<S>, WorkerFailed> {
    let t_count = threads.max(1) as u64;
    let range = |t: u64| (t * nb / t_count, (t + 1) * nb / t_count);
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (1..t_count)
            .map(|t| {
                let (first, end) = range(t);
                std::thread::Builder::new().spawn_scoped(scope, move || work(first, end))
            })
            .collect();
        // Range 0 runs on this thread, as an OpenMP team's master thread does.
        let (first, end) = range(0);
        let mut partial = vec![work(first, end)];
        // Every worker is joined before a failure is returned: a panicked thread left
        // unjoined would make thread::scope itself panic as it ends.
        let mut failed = None;
        for (t, worker) in (1..t_count).zip(workers) {
            match worker {
                Ok(handle) => match handle.join() {
                    Ok(sums) => partial.push(sums),
                    Err(payload) => {
                        failed.get_or_insert(WorkerFailed { thread: t, message: panic_message(&*payload) });
                    }
                },
                // A thread that could not be started (e.g. `ulimit -u`) has its range
                // done here instead: the same numbers, added in the same place.
                Err(_) => {
                    let (first, end) = range(t);
                    partial.push(work(first, end));
                }
            }
        }
        match failed {
            Some(failure) => Err(failure),
            None => Ok(partial),
        }
    })
}

fn run_v4(seed: u64, n: u64, threads: usize) -> Result<Sums, WorkerFailed> {
    let nb = n_batches(n);
    let partial = in_threads(threads, nb, |first, end| run_batches(seed, n, first, end))?;
    let mut total = Sums { f: 0.0, dx: 0.0, dy: 0.0 };
    for sums in partial {
        total = total + sums;
    }
    Ok(total)
}

// ---------------------------------------------------------------- fused-simd (baseline)
// Baseline `fused-simd` (not a level): the same over batches of BATCH samples with
// v3's vector math and lane sums, no tape: the floor for v3 and v4.

fn run_fused_simd(seed: u64, n: u64) -> Sums {
    let (mut x, mut y, mut p, mut e, mut l) = (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO, Lanes::ZERO, Lanes::ZERO);
    let (mut f, mut dx, mut dy) = (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO);
    let mut acc = LaneSums::new();
    for batch in 0..n_batches(n) {
        let first = batch * BATCH as u64;
        let lanes = (n - first).min(BATCH as u64) as usize;
        fill_inputs(&mut x, &mut y, seed, first, lanes);
        for j in 0..BATCH {
            p[j] = (x[j] + y[j]) * x[j];
        }
        exp_neg_abs_lanes(&p, &mut e);
        log1p_lanes(&e, &mut l);
        for j in 0..BATCH {
            let s = x[j] + y[j];
            let g = sigmoid_e(p[j], e[j]);
            f[j] = if p[j] > 0.0 { p[j] + l[j] } else { l[j] };
            dx[j] = s * g + x[j] * g;
            dy[j] = x[j] * g;
        }
        acc.add(&f, &dx, &dy, lanes);
    }
    acc.total()
}

// ---------------------------------------------------------------- graph recipe
// The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
// level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
// scalar forward math of an op, and the per-sample checksums.

const SOFTPLUS: i32 = 0; // op k has kind k % 4, in this order
const SUM4: i32 = 1;
const PROD: i32 = 2;
const SOFTMAX4: i32 = 3;

const N_INPUTS: usize = 100;

/// The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3).
#[derive(Clone, Copy, Debug)]
struct GraphSums {
    loss: f64,
    grad_in: f64,
    grad_all: f64,
}

impl Add for GraphSums {
    type Output = GraphSums;
    fn add(self, o: GraphSums) -> GraphSums {
        GraphSums { loss: self.loss + o.loss, grad_in: self.grad_in + o.grad_in, grad_all: self.grad_all + o.grad_all }
    }
}

impl GraphSums {
    const ZERO: GraphSums = GraphSums { loss: 0.0, grad_in: 0.0, grad_all: 0.0 };
}

/// Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4.
fn n_nodes(m: usize) -> usize {
    N_INPUTS + m + 3 * (m / 4)
}

/// Input i of sample s, in [-1, 1) (G1).
#[inline]
fn graph_input(seed: u64, s: u64, i: usize) -> f64 {
    2.0 * unit(draw(seed, N_INPUTS as u64 * s + i as u64 + 1)) - 1.0
}

/// What record_ops needs of a level's graph builder (the Codon program passes any object
/// with these methods): the nodes so far, and the four ops, taking node ids.
trait GraphBuilder {
    fn size(&self) -> usize;
    fn push_softplus(&mut self, a: usize);
    fn push_sum4(&mut self, a: usize, b: usize, c: usize, d: usize);
    fn push_prod(&mut self, a: usize, b: usize);
    fn push_softmax4(&mut self, a: usize, b: usize, c: usize, d: usize);
}

/// The M ops of G2, in order, onto g.
#[inline]
fn record_ops<G: GraphBuilder>(g: &mut G, m: usize) {
    for k in 0..m {
        let n = g.size();
        match (k % 4) as i32 {
            SOFTPLUS => g.push_softplus(n - 10),
            SUM4 => g.push_sum4(n - 30, n - 25, n - 20, n - 15),
            PROD => g.push_prod(n - 20, n - 10),
            _ => g.push_softmax4(n - 4, n - 3, n - 2, n - 1),
        }
    }
}

/// Python's max(a, b): b if b > a, else a.
#[inline]
fn max2(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3.
#[inline]
fn softmax4(a: f64, b: f64, c: f64, d: f64) -> (f64, f64, f64, f64) {
    let m = max2(max2(a, b), max2(c, d));
    let (e0, e1, e2, e3) = ((a - m).exp(), (b - m).exp(), (c - m).exp(), (d - m).exp());
    let total = ((e0 + e1) + e2) + e3;
    (e0 / total, e1 / total, e2 / total, e3 / total)
}

/// SOFTMAX4's backward term: sum of o_j * g[out_j], left to right.
#[inline]
#[allow(clippy::too_many_arguments)]
fn softmax4_avg(o0: f64, o1: f64, o2: f64, o3: f64, g0: f64, g1: f64, g2: f64, g3: f64) -> f64 {
    ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3
}

// ---------------------------------------------------------------- graph nodes
// The node objects of graph levels v0 and v1: every node a heap object (a Box) holding
// its value, its grad and references to its input nodes, each value computed once when
// the node is made. The graph keeps its nodes in creation order, which is all backward
// needs: it walks them in reverse. As in the softplus v1 pool, the graph borrows its
// nodes instead of owning them (nodes that point at each other cannot live inside their
// owner in safe Rust), so the Boxes are made before the nodes are: v0 makes a fresh set
// for every sample and drops it after, v1 makes one set and reuses it.

const LEAF: i32 = -1;

type Link<'a> = Cell<Option<&'a GraphNode<'a>>>;

/// A node; every field a Cell, so that backward can add to the grads of its inputs
/// through shared references and the pool can remake a node.
struct GraphNode<'a> {
    val: Cell<f64>,
    grad: Cell<f64>,
    kind: Cell<i32>,   // LEAF, or the kind of the op that made it (all four of a SOFTMAX4's)
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
            kind: Cell::new(LEAF),
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

/// A sample's nodes, the Codon program's List[GraphNode]: one Box per node.
type NodeStorage<'a> = Vec<Box<GraphNode<'a>>>;

/// Room for the nodes of one M-op sample: n_nodes(m) fresh heap objects.
fn node_storage<'a>(m: usize) -> NodeStorage<'a> {
    (0..n_nodes(m)).map(|_| Box::new(GraphNode::new(LEAF, 0.0, 0.0, None, None, None, None))).collect()
}

struct NodeGraph<'a> {
    nodes: &'a [Box<GraphNode<'a>>], // in creation order; nodes[count..] are not made yet
    count: usize,
}

impl<'a> NodeGraph<'a> {
    fn new(nodes: &'a [Box<GraphNode<'a>>]) -> NodeGraph<'a> {
        NodeGraph { nodes, count: 0 }
    }

    /// Start a sample (v1: its nodes are remade; v0 brings a fresh storage each sample).
    fn reset(&mut self) {
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

    fn leaf(&mut self, val: f64) {
        self.take(LEAF, val, 0.0, None, None, None, None);
    }
}

impl<'a> GraphBuilder for NodeGraph<'a> {
    #[inline]
    fn size(&self) -> usize {
        self.count
    }

    #[inline]
    fn push_softplus(&mut self, i: usize) {
        let a = self.at(i);
        let e = exp_neg_abs(a.val.get());
        self.take(SOFTPLUS, softplus_e(a.val.get(), e), e, Some(a), None, None, None);
    }

    #[inline]
    fn push_sum4(&mut self, i: usize, j: usize, k: usize, l: usize) {
        let (a, b, c, d) = (self.at(i), self.at(j), self.at(k), self.at(l));
        let val = ((a.val.get() + b.val.get()) + c.val.get()) + d.val.get();
        self.take(SUM4, val, 0.0, Some(a), Some(b), Some(c), Some(d));
    }

    #[inline]
    fn push_prod(&mut self, i: usize, j: usize) {
        let (a, b) = (self.at(i), self.at(j));
        self.take(PROD, a.val.get() * b.val.get(), 0.0, Some(a), Some(b), None, None);
    }

    #[inline]
    fn push_softmax4(&mut self, i: usize, j: usize, k: usize, l: usize) {
        let (a, b, c, d) = (self.at(i), self.at(j), self.at(k), self.at(l));
        let (o0, o1, o2, o3) = softmax4(a.val.get(), b.val.get(), c.val.get(), d.val.get());
        for o in [o0, o1, o2, o3] {
            self.take(SOFTMAX4, o, 0.0, Some(a), Some(b), Some(c), Some(d));
        }
    }
}

impl<'a> NodeGraph<'a> {
    /// The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
    /// SOFTMAX4's four outputs are handled together, at the last of them.
    fn backward(&self) {
        let add = |node: &GraphNode, g: f64| node.grad.set(node.grad.get() + g);
        let mut i = self.count - 1;
        while i >= N_INPUTS {
            let node = self.at(i);
            let g = node.grad.get();
            // An op node always has its kind's inputs; matching on them avoids any unwrap.
            match (node.kind.get(), node.a.get(), node.b.get(), node.c.get(), node.d.get()) {
                (SOFTPLUS, Some(a), _, _, _) => add(a, sigmoid_e(a.val.get(), node.saved.get()) * g),
                (SUM4, Some(a), Some(b), Some(c), Some(d)) => {
                    add(a, g);
                    add(b, g);
                    add(c, g);
                    add(d, g);
                }
                (PROD, Some(a), Some(b), _, _) => {
                    add(a, b.val.get() * g);
                    add(b, a.val.get() * g);
                }
                (SOFTMAX4, Some(a), Some(b), Some(c), Some(d)) => {
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
    fn sums(&self) -> GraphSums {
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

// ---------------------------------------------------------------- graph objects (v0)
// Graph level v0 (objects): every node a fresh heap object per sample (a Box: malloc and
// free), linked to its inputs by reference; backward walks the nodes in reverse creation
// order.

/// Sample s's forward pass: its inputs, then the M ops.
fn record_nodes(g: &mut NodeGraph, seed: u64, s: u64, m: usize) {
    g.reset();
    for i in 0..N_INPUTS {
        g.leaf(graph_input(seed, s, i));
    }
    record_ops(g, m);
}

fn run_graph_v0(seed: u64, m: usize, n: u64) -> GraphSums {
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

// ---------------------------------------------------------------- graph pool (v1)
// Graph level v1 (pool): v0's node objects and links, but one set of nodes, allocated
// once and remade for every sample, so the loop allocates nothing.

fn run_graph_v1(seed: u64, m: usize, n: u64) -> GraphSums {
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

// ---------------------------------------------------------------- graph tape (v2)
// Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
// every sample as a dynamic autograd does: contiguous arrays of vars {val, grad} and ops
// {kind, up to 4 input ids, first output id}, addressed by index; each result computed
// once when pushed; backward is an index loop over the ops in reverse.

#[derive(Clone, Copy)]
struct GraphOp {
    kind: i32,
    a: usize, // input ids; SOFTPLUS's b is its slot in `saved` (exp(-|a|))
    b: usize,
    c: usize,
    d: usize,
    out: usize, // the (first) output id; SOFTMAX4's four are out .. out+3
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
        self.ops.push(GraphOp { kind, a, b, c, d, out });
        out
    }
}

impl GraphBuilder for GraphTape {
    #[inline]
    fn size(&self) -> usize {
        self.n_vars
    }

    #[inline]
    fn push_softplus(&mut self, a: usize) {
        let p = self.val[a];
        let e = exp_neg_abs(p);
        let slot = self.n_saved;
        self.saved[slot] = e;
        self.n_saved += 1;
        self.push(SOFTPLUS, a, slot, 0, 0, softplus_e(p, e));
    }

    #[inline]
    fn push_sum4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let v = &self.val;
        let val = ((v[a] + v[b]) + v[c]) + v[d];
        self.push(SUM4, a, b, c, d, val);
    }

    #[inline]
    fn push_prod(&mut self, a: usize, b: usize) {
        let val = self.val[a] * self.val[b];
        self.push(PROD, a, b, 0, 0, val);
    }

    #[inline]
    fn push_softmax4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let v = &self.val;
        let (o0, o1, o2, o3) = softmax4(v[a], v[b], v[c], v[d]);
        self.push(SOFTMAX4, a, b, c, d, o0);
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
            let go = g[op.out];
            match op.kind {
                SOFTPLUS => g[op.a] += sigmoid_e(v[op.a], self.saved[op.b]) * go,
                SUM4 => {
                    g[op.a] += go;
                    g[op.b] += go;
                    g[op.c] += go;
                    g[op.d] += go;
                }
                PROD => {
                    g[op.a] += v[op.b] * go;
                    g[op.b] += v[op.a] * go;
                }
                _ => {
                    // SOFTMAX4
                    let o = op.out;
                    let avg = softmax4_avg(v[o], v[o + 1], v[o + 2], v[o + 3], g[o], g[o + 1], g[o + 2], g[o + 3]);
                    g[op.a] += v[o] * (g[o] - avg);
                    g[op.b] += v[o + 1] * (g[o + 1] - avg);
                    g[op.c] += v[o + 2] * (g[o + 2] - avg);
                    g[op.d] += v[o + 3] * (g[o + 3] - avg);
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

fn run_graph_v2(seed: u64, m: usize, n: u64) -> GraphSums {
    let mut tape = GraphTape::new(m);
    let mut total = GraphSums::ZERO;
    for s in 0..n {
        record_graph(&mut tape, seed, s, m);
        tape.backward();
        total = total + tape.sums();
    }
    total
}

// ---------------------------------------------------------------- graph simd (v3)
// Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
// Each var holds GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes
// that LLVM vectorizes, and exp/log1p are libmvec's at the target's width (vmath).

/// Lanes per var, a multiple of every vector width. A batch's vals and grads take
/// n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB at 10,000 ops, so the graph lives in L2/L3
/// whatever the batch.
const GRAPH_BATCH: usize = 16;
const _: () = assert!(GRAPH_BATCH.is_multiple_of(WIDTH), "GRAPH_BATCH must be a multiple of WIDTH");
const _: () = assert!(std::mem::size_of::<GraphLanes>() == GRAPH_BATCH * 8, "GraphLanes must have no padding");

/// A graph var's GRAPH_BATCH lanes (two cache lines), starting on a cache line: Lanes'
/// type at this size.
type GraphLanes = AlignedLanes<GRAPH_BATCH>;

// Graph v3's lane arithmetic, WIDTH lanes at a time (the Codon program's graph/lanes.codon).
// Written as loops over 16-lane vars, each op's loop was unrolled to scalar code: the vars
// are rows of the same val/grad blocks, and although split_at_mut borrows them apart, the
// borrows are locals of one function (rustc marks only function parameters noalias, and
// its MIR inliner drops even that), so LLVM must assume an output lane may overlap an
// input. Each chunk helper therefore copies its input chunks into local arrays, computes
// the new chunk, then stores it whole: all loads precede all stores, so there is nothing
// to overlap and each chunk is one vector op per step. Each helper does the scalar code's
// operations in the scalar code's order (no fusing: plain IEEE add/mul/div), so the digits
// are the scalar loop's and the Codon program's.

/// WIDTH lanes of a var.
type Chunk = [f64; WIDTH];

/// Chunks per var.
const CHUNKS: usize = GRAPH_BATCH / WIDTH;

/// A var's lanes as CHUNKS chunks.
#[inline(always)]
fn chunks(lanes: &[f64; GRAPH_BATCH]) -> &[Chunk] {
    lanes.as_chunks::<WIDTH>().0
}

#[inline(always)]
fn chunks_mut(lanes: &mut [f64; GRAPH_BATCH]) -> &mut [Chunk] {
    lanes.as_chunks_mut::<WIDTH>().0
}

/// o = ((a + b) + c) + d.
#[inline(always)]
fn sum4_chunk(o: &mut Chunk, a: &Chunk, b: &Chunk, c: &Chunk, d: &Chunk) {
    let (a, b, c, d) = (*a, *b, *c, *d);
    *o = std::array::from_fn(|j| ((a[j] + b[j]) + c[j]) + d[j]);
}

/// o = a * b.
#[inline(always)]
fn mul_chunk(o: &mut Chunk, a: &Chunk, b: &Chunk) {
    let (a, b) = (*a, *b);
    *o = std::array::from_fn(|j| a[j] * b[j]);
}

/// o holds log1p(exp(-|p|)); softplus_e = p + o where p > 0, else o.
#[inline(always)]
fn softplus_chunk(o: &mut Chunk, p: &Chunk) {
    let (p, e) = (*p, *o);
    *o = std::array::from_fn(|j| if p[j] > 0.0 { p[j] + e[j] } else { e[j] });
}

/// m = max2(max2(a, b), max2(c, d)); o_k = in_k - m.
#[inline(always)]
fn softmax_shift_chunk(o: [&mut Chunk; 4], a: &Chunk, b: &Chunk, c: &Chunk, d: &Chunk) {
    let (a, b, c, d) = (*a, *b, *c, *d);
    let m: Chunk = std::array::from_fn(|j| max2(max2(a[j], b[j]), max2(c[j], d[j])));
    let [o0, o1, o2, o3] = o;
    *o0 = std::array::from_fn(|j| a[j] - m[j]);
    *o1 = std::array::from_fn(|j| b[j] - m[j]);
    *o2 = std::array::from_fn(|j| c[j] - m[j]);
    *o3 = std::array::from_fn(|j| d[j] - m[j]);
}

/// o_k = e_k / (((e_0 + e_1) + e_2) + e_3).
#[inline(always)]
fn softmax_norm_chunk(o: [&mut Chunk; 4]) {
    let [o0, o1, o2, o3] = o;
    let e = [*o0, *o1, *o2, *o3];
    let total: Chunk = std::array::from_fn(|j| ((e[0][j] + e[1][j]) + e[2][j]) + e[3][j]);
    *o0 = std::array::from_fn(|j| e[0][j] / total[j]);
    *o1 = std::array::from_fn(|j| e[1][j] / total[j]);
    *o2 = std::array::from_fn(|j| e[2][j] / total[j]);
    *o3 = std::array::from_fn(|j| e[3][j] / total[j]);
}

/// dst += src.
#[inline(always)]
fn acc_chunk(dst: &mut Chunk, src: &Chunk) {
    let (d, s) = (*dst, *src);
    *dst = std::array::from_fn(|j| d[j] + s[j]);
}

/// dst += a * b.
#[inline(always)]
fn acc_mul_chunk(dst: &mut Chunk, a: &Chunk, b: &Chunk) {
    let (d, a, b) = (*dst, *a, *b);
    *dst = std::array::from_fn(|j| d[j] + a[j] * b[j]);
}

/// dst += sigmoid_e(p, e) * g, sigmoid_e's branches as one select: 1 / (1 + e) where
/// p >= 0, else e / (1 + e) (the same division either way).
#[inline(always)]
fn acc_sigmoid_chunk(dst: &mut Chunk, p: &Chunk, e: &Chunk, g: &Chunk) {
    let (d, p, e, g) = (*dst, *p, *e, *g);
    *dst = std::array::from_fn(|j| {
        let num = if p[j] >= 0.0 { 1.0 } else { e[j] };
        d[j] + num / (1.0 + e[j]) * g[j]
    });
}

/// The softmax outputs' values o and grads g to the four inputs' grad increments:
/// avg = ((o_0 g_0 + o_1 g_1) + o_2 g_2) + o_3 g_3, increment_k = o_k (g_k - avg).
#[inline(always)]
fn softmax_backward_chunk(o: [&Chunk; 4], g: [&Chunk; 4]) -> [Chunk; 4] {
    let (o, g) = (o.map(|x| *x), g.map(|x| *x));
    let avg: Chunk = std::array::from_fn(|j| ((o[0][j] * g[0][j] + o[1][j] * g[1][j]) + o[2][j] * g[2][j]) + o[3][j] * g[3][j]);
    std::array::from_fn(|q| std::array::from_fn(|j| o[q][j] * (g[q][j] - avg[j])))
}

/// n vars' lanes in one allocation, var i's at row i: n * GRAPH_BATCH doubles starting on
/// a cache line, all 0.0 (the Codon program's alloc_lanes(n * GRAPH_BATCH)).
///
/// The memory comes from calloc, so a large block is fresh pages that the kernel zeroes
/// when they are first touched, as the Codon program's tape is left untouched until used.
/// Neither vec![ZERO; n] nor alloc_zeroed at the rows' 64-byte alignment does that: both
/// write every row up front (std's alloc_zeroed calls calloc only for alignments up to
/// 16), which at 1,000,000 ops is 450 MB per tape, in every v4 thread, batches or not
/// (v4 on 7 threads was 3.6x slower than the Codon program's, with 3.3 GB resident).
/// So the block is allocated at f64's alignment with a cache line to spare, and the rows
/// start at its first cache line.
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
        self.ops.push(GraphOp { kind, a, b, c, d, out });
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

    #[inline]
    fn push_softplus(&mut self, a: usize) {
        let slot = self.n_saved;
        self.n_saved += 1;
        let out = self.push(SOFTPLUS, a, slot, 0, 0);
        let e = &mut self.saved[slot];
        let (inputs, outs) = self.val.split_at_mut(out);
        let (p, o) = (&inputs[a], &mut outs[0]);
        exp_neg_abs_lanes(p, e);
        log1p_lanes(e, o);
        for k in 0..CHUNKS {
            softplus_chunk(&mut chunks_mut(o)[k], &chunks(p)[k]); // softplus_e, lane-wise
        }
    }

    #[inline]
    fn push_sum4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let out = self.push(SUM4, a, b, c, d);
        let (v, outs) = self.inputs_and_outs(out);
        let (o, va, vb, vc, vd) = (&mut outs[0], &v[a], &v[b], &v[c], &v[d]);
        for k in 0..CHUNKS {
            let (va, vb, vc, vd) = (&chunks(va)[k], &chunks(vb)[k], &chunks(vc)[k], &chunks(vd)[k]);
            sum4_chunk(&mut chunks_mut(o)[k], va, vb, vc, vd);
        }
    }

    #[inline]
    fn push_prod(&mut self, a: usize, b: usize) {
        let out = self.push(PROD, a, b, 0, 0);
        let (v, outs) = self.inputs_and_outs(out);
        let (o, va, vb) = (&mut outs[0], &v[a], &v[b]);
        for k in 0..CHUNKS {
            mul_chunk(&mut chunks_mut(o)[k], &chunks(va)[k], &chunks(vb)[k]);
        }
    }

    #[inline]
    fn push_softmax4(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let out = self.push(SOFTMAX4, a, b, c, d);
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
        // One flat fill, as the Codon program's: row by row, LLVM vectorized across rows
        // (a scatter per lane).
        self.grad.flat_mut(self.n_vars).fill(1.0);
        for k in (0..self.ops.len()).rev() {
            let op = self.ops[k];
            // The inputs precede the output: split the grads there, so that g and the
            // inputs' grads can be borrowed together.
            let (grads, outs) = self.grad.split_at_mut(op.out);
            let g = &outs[0];
            let va = &self.val[op.a];
            match op.kind {
                SOFTPLUS => {
                    let (ga, e) = (&mut grads[op.a], &self.saved[op.b]);
                    for k in 0..CHUNKS {
                        acc_sigmoid_chunk(&mut chunks_mut(ga)[k], &chunks(va)[k], &chunks(e)[k], &chunks(g)[k]);
                    }
                }
                SUM4 => {
                    for q in [op.a, op.b, op.c, op.d] {
                        let gq = &mut grads[q];
                        for k in 0..CHUNKS {
                            acc_chunk(&mut chunks_mut(gq)[k], &chunks(g)[k]);
                        }
                    }
                }
                PROD => {
                    let vb = &self.val[op.b];
                    let ga = &mut grads[op.a];
                    for k in 0..CHUNKS {
                        acc_mul_chunk(&mut chunks_mut(ga)[k], &chunks(vb)[k], &chunks(g)[k]);
                    }
                    let gb = &mut grads[op.b];
                    for k in 0..CHUNKS {
                        acc_mul_chunk(&mut chunks_mut(gb)[k], &chunks(va)[k], &chunks(g)[k]);
                    }
                }
                _ => self.softmax4_backward(op), // SOFTMAX4
            }
        }
    }

    fn softmax4_backward(&mut self, op: GraphOp) {
        let (grads, outs) = self.grad.split_at_mut(op.out);
        let [o0, o1, o2, o3, ..] = &self.val[op.out..] else { unreachable!("SOFTMAX4 has four outputs") };
        let [g0, g1, g2, g3, ..] = &*outs else { unreachable!("SOFTMAX4 has four outputs") };
        // Each chunk's four increments first, then the inputs' grads one after the other
        // (the Codon program's softmax_backward_chunk: the same sums, whichever inputs
        // coincide).
        for k in 0..CHUNKS {
            let o = [&chunks(o0)[k], &chunks(o1)[k], &chunks(o2)[k], &chunks(o3)[k]];
            let g = [&chunks(g0)[k], &chunks(g1)[k], &chunks(g2)[k], &chunks(g3)[k]];
            let d = softmax_backward_chunk(o, g);
            for (&q, dq) in [op.a, op.b, op.c, op.d].iter().zip(&d) {
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

fn n_graph_batches(n: u64) -> u64 {
    n.div_ceil(GRAPH_BATCH as u64)
}

/// Batches [first_batch, end_batch) of the n samples through one batch tape.
fn run_graph_batches(seed: u64, m: usize, n: u64, first_batch: u64, end_batch: u64) -> GraphSums {
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

fn run_graph_v3(seed: u64, m: usize, n: u64) -> GraphSums {
    run_graph_batches(seed, m, n, 0, n_graph_batches(n))
}

// ---------------------------------------------------------------- graph threads (v4)
// Graph level v4 (threads): graph v3 with the batches split into T contiguous ranges, one
// per thread (in_threads, as softplus v4), each with its own batch tape and lane sums,
// added in thread order.

fn run_graph_v4(seed: u64, m: usize, n: u64, threads: usize) -> Result<GraphSums, WorkerFailed> {
    let nb = n_graph_batches(n);
    let partial = in_threads(threads, nb, |first, end| run_graph_batches(seed, m, n, first, end))?;
    let mut total = GraphSums::ZERO;
    for sums in partial {
        total = total + sums;
    }
    Ok(total)
}

// ---------------------------------------------------------------- cli
// The command line of contract §4, parsed strictly: every bad input becomes a
// UsageError whose message is one line, so that main can print `error: ...` and exit 2
// before anything reaches stdout. Arguments are handled as bytes: they need not be UTF-8.

const LEVELS: &[&str] = &["v0", "v1", "v2", "v3", "v4"]; // run by --level all, in this order
const BASELINES: &[&str] = &["fused", "fused-simd"]; // run only when named (softplus workload)
const WORKLOADS: &[&str] = &["softplus", "graph"]; // --workload, the first the default
const MAX_ITERS: u64 = 1_000_000_000_000;
const MAX_THREADS: u64 = 1024;
const MAX_GRAPH_OPS: u64 = 1_000_000; // the Codon program's MAX_OPS (a name the softplus tape has here)
const DEFAULT_ITERS: u64 = 10_000_000; // softplus samples
const DEFAULT_GRAPH_ITERS: u64 = 10_000; // graph samples (Rogozhnikov's 10,000 passes)
const DEFAULT_OPS: usize = 10_000;
const DEFAULT_SEED: u64 = 42;
const FLAGS: &[&str] = &["--workload", "--level", "--ops", "--iters", "--seed", "--threads", "--json", "--eval"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Eval,
    Help,
    Version,
}

struct UsageError(String);

struct Options {
    mode: Mode,
    workload: &'static str,
    levels: Vec<&'static str>,
    ops: usize,
    iters: u64,
    seed: u64,
    threads: usize,
    json: bool,
    x: f64,
    y: f64,
}

impl Options {
    fn new(mode: Mode, threads: usize) -> Options {
        Options {
            mode,
            workload: WORKLOADS[0],
            levels: LEVELS.to_vec(),
            ops: DEFAULT_OPS,
            iters: DEFAULT_ITERS,
            seed: DEFAULT_SEED,
            threads,
            json: false,
            x: 0.0,
            y: 0.0,
        }
    }
}

/// An argument quoted for an error line, control and non-ASCII bytes shown as '?'.
fn shown(arg: &[u8]) -> String {
    let inner: String = arg.iter().map(|&c| if (b' '..=b'~').contains(&c) { c as char } else { '?' }).collect();
    format!("'{}'", inner)
}

/// A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex).
fn parse_uint(flag: &str, text: &[u8], lo: u64, hi: u64) -> Result<u64, UsageError> {
    let bad = || UsageError(format!("{} must be a whole number from {} to {}, got {}", flag, lo, hi, shown(text)));
    if text.is_empty() || text.len() > 20 {
        return Err(bad());
    }
    let mut value: u64 = 0;
    for &c in text {
        if !c.is_ascii_digit() {
            return Err(bad());
        }
        let digit = (c - b'0') as u64;
        if value > (hi - digit) / 10 {
            // value * 10 + digit would pass hi (or wrap)
            return Err(bad());
        }
        value = value * 10 + digit;
    }
    if value < lo {
        return Err(bad());
    }
    Ok(value)
}

/// [+-] digits [. digits] [e [+-] digits], with at least one mantissa digit.
fn is_decimal(text: &[u8]) -> bool {
    let (mut i, n) = (0, text.len());
    let at = |i: usize, set: &[u8]| i < n && set.contains(&text[i]);
    let digit = |i: usize| i < n && text[i].is_ascii_digit();
    if at(i, b"+-") {
        i += 1;
    }
    let mut digits = 0;
    while digit(i) {
        i += 1;
        digits += 1;
    }
    if at(i, b".") {
        i += 1;
        while digit(i) {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return false;
    }
    if at(i, b"eE") {
        i += 1;
        if at(i, b"+-") {
            i += 1;
        }
        let start = i;
        while digit(i) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == n
}

/// A finite decimal number (no hex, inf or nan). Rust's float parser rounds correctly,
/// like the C library's strtod the Codon program uses, so both read the same double.
fn parse_point(flag: &str, text: &[u8]) -> Result<f64, UsageError> {
    let bad = || UsageError(format!("{} needs finite decimal numbers, got {}", flag, shown(text)));
    if !is_decimal(text) {
        return Err(bad());
    }
    let value: f64 = match std::str::from_utf8(text).ok().and_then(|s| s.parse().ok()) {
        Some(v) => v,
        None => return Err(bad()),
    };
    if !value.is_finite() {
        // +-inf: the decimal is beyond the float range
        return Err(UsageError(format!("{} value {} is out of range", flag, shown(text))));
    }
    Ok(value)
}

/// The levels --level names; the graph workload has no baselines.
fn parse_level(text: &[u8], workload: &str) -> Result<Vec<&'static str>, UsageError> {
    let named: Vec<&'static str> = if workload == "softplus" {
        LEVELS.iter().chain(BASELINES).copied().collect()
    } else {
        LEVELS.to_vec()
    };
    if text == b"all" {
        return Ok(LEVELS.to_vec());
    }
    if let Some(level) = named.iter().find(|l| l.as_bytes() == text) {
        return Ok(vec![*level]);
    }
    Err(UsageError(format!("--level must be one of {} or all, got {}", named.join(", "), shown(text))))
}

fn parse_workload(text: &[u8]) -> Result<&'static str, UsageError> {
    match WORKLOADS.iter().find(|w| w.as_bytes() == text) {
        Some(workload) => Ok(workload),
        None => Err(UsageError(format!("--workload must be one of {}, got {}", WORKLOADS.join(", "), shown(text)))),
    }
}

/// Options from the arguments after the program name.
fn parse(args: &[Vec<u8>], cpus: usize) -> Result<Options, UsageError> {
    if args.len() == 1 && args[0] == b"--help" {
        return Ok(Options::new(Mode::Help, cpus));
    }
    if args.len() == 1 && args[0] == b"--version" {
        return Ok(Options::new(Mode::Version, cpus));
    }
    let mut opts = Options::new(Mode::Run, cpus);
    let mut seen: Vec<&'static str> = Vec::new();
    let mut level: &[u8] = b"all";
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_slice();
        if arg == b"--help" || arg == b"--version" {
            return Err(UsageError(format!("{} takes no other arguments", String::from_utf8_lossy(arg))));
        }
        let flag = match FLAGS.iter().find(|f| f.as_bytes() == arg) {
            Some(f) => *f,
            None => return Err(UsageError(format!("unknown argument {} (try --help)", shown(arg)))),
        };
        if seen.contains(&flag) {
            return Err(UsageError(format!("{} given twice", flag)));
        }
        seen.push(flag);
        let arity = match flag {
            "--json" => 0,
            "--eval" => 2,
            _ => 1,
        };
        if i + arity >= args.len() {
            let what = if arity == 2 { "two values" } else { "a value" };
            return Err(UsageError(format!("{} needs {}", flag, what)));
        }
        let value: &[u8] = if arity > 0 { &args[i + 1] } else { b"" };
        match flag {
            "--json" => opts.json = true,
            "--workload" => opts.workload = parse_workload(value)?,
            "--level" => level = value, // checked below, once the workload is known
            "--ops" => opts.ops = parse_uint(flag, value, 1, MAX_GRAPH_OPS)? as usize,
            "--iters" => opts.iters = parse_uint(flag, value, 1, MAX_ITERS)?,
            "--seed" => opts.seed = parse_uint(flag, value, 0, u64::MAX)?,
            "--threads" => opts.threads = parse_uint(flag, value, 1, MAX_THREADS)? as usize,
            _ => {
                // --eval X Y
                opts.mode = Mode::Eval;
                opts.x = parse_point(flag, value)?;
                opts.y = parse_point(flag, &args[i + 2])?;
            }
        }
        i += 1 + arity;
    }
    if opts.mode == Mode::Eval {
        if let Some(other) = seen.iter().find(|f| **f != "--eval" && **f != "--json") {
            return Err(UsageError(format!("--eval takes no {}", other)));
        }
        return Ok(opts);
    }
    if seen.contains(&"--ops") && opts.workload != "graph" {
        return Err(UsageError("--ops belongs to the graph workload (add --workload graph)".to_string()));
    }
    opts.levels = parse_level(level, opts.workload)?;
    if opts.workload == "graph" && !seen.contains(&"--iters") {
        opts.iters = DEFAULT_GRAPH_ITERS;
    }
    Ok(opts)
}

// ---------------------------------------------------------------- report
// Output of contract §5. Rust has no %g, so g17 builds C's "%.17g" from Rust's exact
// (correctly rounded, ties to even, like glibc) scientific formatting.

const IMPL: &str = "rust";

/// 17 significant digits, exactly as C's printf("%.17g"): enough to round-trip any double.
fn g17(v: f64) -> String {
    const P: i32 = 17;
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let sci = format!("{:.*e}", (P - 1) as usize, v); // "-d.dddddddddddddddde-5"
    let (mantissa, exp) = match sci.split_once('e') {
        Some(parts) => parts,
        None => return sci,
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect(); // P digits
    let body = if (-4..P).contains(&exp) {
        // %f style with P - 1 - exp decimals, trailing zeros (and a bare point) dropped
        let (int, frac) = if exp >= 0 {
            let (int, frac) = digits.split_at(exp as usize + 1);
            (int.to_string(), frac.to_string())
        } else {
            ("0".to_string(), "0".repeat((-exp - 1) as usize) + &digits)
        };
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() { int } else { format!("{}.{}", int, frac) }
    } else {
        // %e style: trailing zeros dropped, exponent signed with at least two digits
        let (lead, frac) = digits.split_at(1);
        let frac = frac.trim_end_matches('0');
        let mant = if frac.is_empty() { lead.to_string() } else { format!("{}.{}", lead, frac) };
        format!("{}e{}{:02}", mant, if exp < 0 { '-' } else { '+' }, exp.abs())
    };
    format!("{}{}", sign, body)
}

/// One level's run (the Codon program's Result; renamed, Result being Rust's error type).
struct RunResult {
    level: &'static str,
    iters: u64,
    seed: u64,
    threads: usize,
    seconds: f64,
    sums: Sums,
}

impl RunResult {
    fn ns_per_iter(&self) -> f64 {
        self.seconds * 1e9 / self.iters as f64
    }
}

/// One level's run of the graph workload.
struct GraphResult {
    level: &'static str,
    ops: usize,
    iters: u64,
    seed: u64,
    threads: usize,
    seconds: f64,
    sums: GraphSums,
}

impl GraphResult {
    fn ns_per_iter(&self) -> f64 {
        self.seconds * 1e9 / self.iters as f64
    }

    fn ns_per_op(&self) -> f64 {
        self.ns_per_iter() / self.ops as f64
    }
}

// Text columns: (name, width), negative widths right-aligned.
const COLUMNS: [(&str, i32); 10] = [
    ("impl", 6),
    ("level", 11),
    ("threads", -7),
    ("iters", -14),
    ("seconds", -10),
    ("ns/iter", -10),
    ("vs v0", -8),
    ("sum_f", -25),
    ("sum_dx", -25),
    ("sum_dy", -25),
];
const GRAPH_COLUMNS: [(&str, i32); 12] = [
    ("impl", 6),
    ("level", 11),
    ("threads", -7),
    ("ops", -8),
    ("iters", -14),
    ("seconds", -10),
    ("ns/iter", -14),
    ("ns/op", -10),
    ("vs v0", -8),
    ("sum_loss", -25),
    ("sum_grad_in", -25),
    ("sum_grad_all", -25),
];

/// Cells padded to the columns' widths, two spaces apart.
fn row(columns: &[(&str, i32)], cells: &[String]) -> String {
    let out: Vec<String> = cells
        .iter()
        .zip(columns.iter())
        .map(|(cell, &(_, width))| {
            if width > 0 {
                format!("{:<w$}", cell, w = width as usize)
            } else {
                format!("{:>w$}", cell, w = (-width) as usize)
            }
        })
        .collect();
    out.join("  ").trim_end().to_string()
}

fn text_header() -> String {
    let names: Vec<String> = COLUMNS.iter().map(|(name, _)| name.to_string()).collect();
    row(&COLUMNS, &names)
}

fn graph_text_header() -> String {
    let names: Vec<String> = GRAPH_COLUMNS.iter().map(|(name, _)| name.to_string()).collect();
    row(&GRAPH_COLUMNS, &names)
}

/// v0's time over this one, "-" when v0 was not run before it.
fn speedup(v0_seconds: f64, seconds: f64) -> String {
    if v0_seconds > 0.0 && seconds > 0.0 {
        format!("{:.1}x", v0_seconds / seconds)
    } else {
        "-".to_string()
    }
}

fn text_line(r: &RunResult, v0_seconds: f64) -> String {
    row(&COLUMNS, &[
        IMPL.to_string(),
        r.level.to_string(),
        r.threads.to_string(),
        r.iters.to_string(),
        format!("{:.3}", r.seconds),
        format!("{:.2}", r.ns_per_iter()),
        speedup(v0_seconds, r.seconds),
        g17(r.sums.f),
        g17(r.sums.dx),
        g17(r.sums.dy),
    ])
}

fn graph_text_line(r: &GraphResult, v0_seconds: f64) -> String {
    row(&GRAPH_COLUMNS, &[
        IMPL.to_string(),
        r.level.to_string(),
        r.threads.to_string(),
        r.ops.to_string(),
        r.iters.to_string(),
        format!("{:.3}", r.seconds),
        format!("{:.1}", r.ns_per_iter()),
        format!("{:.2}", r.ns_per_op()),
        speedup(v0_seconds, r.seconds),
        g17(r.sums.loss),
        g17(r.sums.grad_in),
        g17(r.sums.grad_all),
    ])
}

/// {"key": value, ...} from keys and already-encoded values, in order.
fn json_object(fields: &[(&str, String)]) -> String {
    let members: Vec<String> = fields.iter().map(|(key, value)| format!("\"{}\": {}", key, value)).collect();
    format!("{{{}}}", members.join(", "))
}

fn json_line(r: &RunResult) -> String {
    json_object(&[
        ("impl", format!("\"{}\"", IMPL)),
        ("workload", "\"softplus\"".to_string()),
        ("level", format!("\"{}\"", r.level)),
        ("iters", r.iters.to_string()),
        ("seed", r.seed.to_string()),
        ("threads", r.threads.to_string()),
        ("seconds", g17(r.seconds)),
        ("ns_per_iter", g17(r.ns_per_iter())),
        ("sum_f", g17(r.sums.f)),
        ("sum_dx", g17(r.sums.dx)),
        ("sum_dy", g17(r.sums.dy)),
    ])
}

fn graph_json_line(r: &GraphResult) -> String {
    json_object(&[
        ("impl", format!("\"{}\"", IMPL)),
        ("workload", "\"graph\"".to_string()),
        ("level", format!("\"{}\"", r.level)),
        ("ops", r.ops.to_string()),
        ("iters", r.iters.to_string()),
        ("seed", r.seed.to_string()),
        ("threads", r.threads.to_string()),
        ("seconds", g17(r.seconds)),
        ("ns_per_iter", g17(r.ns_per_iter())),
        ("ns_per_op", g17(r.ns_per_op())),
        ("sum_loss", g17(r.sums.loss)),
        ("sum_grad_in", g17(r.sums.grad_in)),
        ("sum_grad_all", g17(r.sums.grad_all)),
    ])
}

fn eval_text(x: f64, y: f64, f: f64, dfdx: f64, dfdy: f64) -> String {
    format!("x {}  y {}  f {}  dfdx {}  dfdy {}", g17(x), g17(y), g17(f), g17(dfdx), g17(dfdy))
}

fn eval_json(x: f64, y: f64, f: f64, dfdx: f64, dfdy: f64) -> String {
    json_object(&[
        ("impl", format!("\"{}\"", IMPL)),
        ("x", g17(x)),
        ("y", g17(y)),
        ("f", g17(f)),
        ("dfdx", g17(dfdx)),
        ("dfdy", g17(dfdy)),
    ])
}

// ---------------------------------------------------------------- main

const VERSION_TEXT: &str = "autograd (rust) 0.1.0";
const HELP_TEXT: &str = "usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]
                [--threads T] [--json]
       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]
                [--seed S] [--threads T] [--json]
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes through a reverse-mode autograd at each
optimization level and prints the time and the checksums. Workloads:
  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the
            sums of f, df/dx and df/dy over the samples
  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),
            loss = the sum of every node; checksums are the sums of the loss,
            of the inputs' weighted gradients and of every node's gradient

  --workload W softplus or graph (default softplus)
  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
               the default), or a softplus baseline: fused, fused-simd
  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)
  --iters N    samples, 1..10^12 (default 10000000; graph 10000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the softplus v2 tape";

unsafe extern "C" {
    fn sched_getaffinity(pid: i32, cpusetsize: usize, mask: *mut u64) -> i32;
}

/// CPUs in this process's affinity mask (what taskset or a container allows).
/// std's available_parallelism would also apply cgroup CPU quotas; the contract counts
/// the mask, like the Codon program.
fn cpus_available() -> usize {
    let mut mask = [0u64; 16]; // room for 1024 CPUs
    // SAFETY: the kernel writes at most size_of_val(&mask) bytes into mask.
    if unsafe { sched_getaffinity(0, std::mem::size_of_val(&mask), mask.as_mut_ptr()) } != 0 {
        return 1;
    }
    let count: u32 = mask.iter().map(|w| w.count_ones()).sum();
    (count as usize).max(1)
}

fn run_level(level: &str, seed: u64, n: u64, threads: usize) -> Result<Sums, WorkerFailed> {
    Ok(match level {
        "v0" => run_v0(seed, n),
        "v1" => run_v1(seed, n),
        "v2" => run_v2(seed, n),
        "v3" => run_v3(seed, n),
        "v4" => run_v4(seed, n, threads)?,
        "fused-simd" => run_fused_simd(seed, n),
        _ => run_fused(seed, n),
    })
}

fn run_graph_level(level: &str, seed: u64, m: usize, n: u64, threads: usize) -> Result<GraphSums, WorkerFailed> {
    Ok(match level {
        "v0" => run_graph_v0(seed, m, n),
        "v1" => run_graph_v1(seed, m, n),
        "v2" => run_graph_v2(seed, m, n),
        "v3" => run_graph_v3(seed, m, n),
        _ => run_graph_v4(seed, m, n, threads)?,
    })
}

/// Why the program stops early: bad input (exit 2), output that could not be written or
/// a v4 worker that failed (exit 1).
enum Failure {
    Usage(UsageError),
    Output(io::Error),
    Worker(WorkerFailed),
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Failure {
        Failure::Usage(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Output(e)
    }
}

impl From<WorkerFailed> for Failure {
    fn from(e: WorkerFailed) -> Failure {
        Failure::Worker(e)
    }
}

/// A panic's message as one line (a panic's payload is its formatted message, a &str
/// or a String).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s,
        (_, Some(s)) => s.as_str(),
        _ => "unknown panic",
    };
    text.lines().collect::<Vec<_>>().join(" ")
}

/// Prints one line and flushes it, so that each row appears as its level finishes.
fn emit(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{}", line)?;
    out.flush()
}

/// The graph workload (docs/contract-graph.md): each level, timed, one line each.
fn run_graph(opts: &Options) -> Result<(), Failure> {
    if !opts.json {
        emit(&graph_text_header())?;
    }
    let mut v0_seconds = 0.0;
    for &level in &opts.levels {
        let threads = if level == "v4" { opts.threads } else { 1 };
        let start = Instant::now();
        let sums = run_graph_level(level, opts.seed, opts.ops, opts.iters, threads)?;
        let seconds = start.elapsed().as_nanos() as f64 / 1e9;
        let r = GraphResult { level, ops: opts.ops, iters: opts.iters, seed: opts.seed, threads, seconds, sums };
        if level == "v0" {
            v0_seconds = seconds;
        }
        emit(&if opts.json { graph_json_line(&r) } else { graph_text_line(&r, v0_seconds) })?;
    }
    Ok(())
}

fn run(opts: &Options) -> Result<(), Failure> {
    if !opts.json {
        emit(&text_header())?;
    }
    let mut v0_seconds = 0.0;
    for &level in &opts.levels {
        let threads = if level == "v4" { opts.threads } else { 1 };
        let start = Instant::now();
        let sums = run_level(level, opts.seed, opts.iters, threads)?;
        let seconds = start.elapsed().as_nanos() as f64 / 1e9;
        let r = RunResult { level, iters: opts.iters, seed: opts.seed, threads, seconds, sums };
        if level == "v0" {
            v0_seconds = seconds;
        }
        emit(&if opts.json { json_line(&r) } else { text_line(&r, v0_seconds) })?;
    }
    Ok(())
}

fn evaluate(opts: &Options) -> Result<(), Failure> {
    let (f, dfdx, dfdy) = eval_point(opts.x, opts.y);
    let p = (opts.x + opts.y) * opts.x;
    if !p.is_finite() {
        return Err(UsageError("(X + Y) * X overflows at this point".to_string()).into());
    }
    if !(f.is_finite() && dfdx.is_finite() && dfdy.is_finite()) {
        return Err(UsageError("the result overflows at this point".to_string()).into());
    }
    let (x, y) = (opts.x, opts.y);
    emit(&if opts.json { eval_json(x, y, f, dfdx, dfdy) } else { eval_text(x, y, f, dfdx, dfdy) })?;
    Ok(())
}

fn real_main() -> Result<(), Failure> {
    use std::os::unix::ffi::OsStringExt;
    let args: Vec<Vec<u8>> = std::env::args_os().skip(1).map(|a| a.into_vec()).collect();
    let opts = parse(&args, cpus_available())?;
    match opts.mode {
        Mode::Help => emit(HELP_TEXT)?,
        Mode::Version => {
            emit(VERSION_TEXT)?;
            emit(&target_text())?
        }
        Mode::Eval => evaluate(&opts)?,
        Mode::Run if opts.workload == "graph" => run_graph(&opts)?,
        Mode::Run => run(&opts)?,
    }
    Ok(())
}

fn main() {
    // A panic is reported as one `error:` line by whoever catches it (run_v4's join, or
    // catch_unwind below), never with Rust's default message and backtrace note.
    std::panic::set_hook(Box::new(|_| {}));
    let code = match std::panic::catch_unwind(real_main) {
        Ok(Ok(())) => 0,
        Ok(Err(Failure::Usage(e))) => {
            let _ = writeln!(io::stderr(), "error: {}", e.0);
            2
        }
        // A reader that stops early (`| head`) is not an error worth a message.
        Ok(Err(Failure::Output(e))) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Ok(Err(Failure::Output(_))) => {
            let _ = writeln!(io::stderr(), "error: cannot write to standard output");
            1
        }
        Ok(Err(Failure::Worker(e))) => {
            let _ = writeln!(io::stderr(), "error: v4 thread {} panicked: {}", e.thread, e.message);
            1
        }
        Err(payload) => {
            let _ = writeln!(io::stderr(), "error: internal error: {}", panic_message(&*payload));
            1
        }
    };
    std::process::exit(code);
}
