// autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
// through a reverse-mode autograd, level by level (docs/contract.md). The Rust port of
// the Codon program: one file, std only, laid out in the order of the Codon modules
// (rng, ops, graph, naive, pool, tape, fused, vmath, simd, threads, fused-simd, cli,
// report, main)
// so that the two can be read side by side.
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

/// A var's BATCH lanes, starting on a cache line so that no vector load straddles two:
/// the Codon program's alloc_lanes, as a type (Box and the stack honour its alignment).
#[derive(Clone, Copy)]
#[repr(C, align(64))] // ALIGN (the attribute takes only a literal)
struct Lanes([f64; BATCH]);

const _: () = assert!(std::mem::align_of::<Lanes>() == ALIGN);

impl Lanes {
    const ZERO: Lanes = Lanes([0.0; BATCH]);
}

impl std::ops::Deref for Lanes {
    type Target = [f64; BATCH];
    fn deref(&self) -> &[f64; BATCH] {
        &self.0
    }
}

impl std::ops::DerefMut for Lanes {
    fn deref_mut(&mut self) -> &mut [f64; BATCH] {
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
/// which it calls only in place; Rust's borrows would not let src be out).
#[inline]
fn exp_lanes(lanes: &mut Lanes) {
    let p = lanes.as_mut_ptr();
    for k in 0..BATCH / WIDTH {
        // SAFETY: lanes k*WIDTH .. (k+1)*WIDTH lie inside the batch, and k*WIDTH doubles
        // into a 64-byte aligned Lanes is aligned to the vector.
        unsafe { libmvec::exp(p.add(k * WIDTH), p.add(k * WIDTH)) }
    }
}

/// out[j] = log1p(src[j]) for every lane.
#[inline]
fn log1p_lanes(src: &Lanes, out: &mut Lanes) {
    let (s, o) = (src.as_ptr(), out.as_mut_ptr());
    for k in 0..BATCH / WIDTH {
        // SAFETY: as in exp_lanes, for both src and out.
        unsafe { libmvec::log1p(s.add(k * WIDTH), o.add(k * WIDTH)) }
    }
}

/// out[j] = exp(-|p[j]|) for every lane.
#[inline]
fn exp_neg_abs_lanes(p: &Lanes, out: &mut Lanes) {
    for j in 0..BATCH {
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
        self.grad[out] = Lanes([1.0; BATCH]);
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
/// (Nothing in run_batches should panic; if something does, the run is reported as
/// failed rather than rerun, which could hide the fault or repeat it.)
struct WorkerFailed {
    thread: u64,
    message: String,
}

fn run_v4(seed: u64, n: u64, threads: usize) -> Result<Sums, WorkerFailed> {
    let nb = n_batches(n);
    let t_count = threads.max(1) as u64;
    let range = |t: u64| (t * nb / t_count, (t + 1) * nb / t_count);
    let partial: Result<Vec<Sums>, WorkerFailed> = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..t_count)
            .map(|t| {
                let (first, end) = range(t);
                std::thread::Builder::new().spawn_scoped(scope, move || run_batches(seed, n, first, end))
            })
            .collect();
        // Range 0 runs on this thread, as an OpenMP team's master thread does.
        let (first, end) = range(0);
        let mut partial = vec![run_batches(seed, n, first, end)];
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
                    partial.push(run_batches(seed, n, first, end));
                }
            }
        }
        match failed {
            Some(failure) => Err(failure),
            None => Ok(partial),
        }
    });
    let mut total = Sums { f: 0.0, dx: 0.0, dy: 0.0 };
    for sums in partial? {
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

// ---------------------------------------------------------------- cli
// The command line of contract §4, parsed strictly: every bad input becomes a
// UsageError whose message is one line, so that main can print `error: ...` and exit 2
// before anything reaches stdout. Arguments are handled as bytes: they need not be UTF-8.

const LEVELS: &[&str] = &["v0", "v1", "v2", "v3", "v4"]; // run by --level all, in this order
const BASELINES: &[&str] = &["fused", "fused-simd"]; // run only when named
const MAX_ITERS: u64 = 1_000_000_000_000;
const MAX_THREADS: u64 = 1024;
const DEFAULT_ITERS: u64 = 10_000_000;
const DEFAULT_SEED: u64 = 42;

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
    levels: Vec<&'static str>,
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
            levels: LEVELS.to_vec(),
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

fn parse_level(text: &[u8]) -> Result<Vec<&'static str>, UsageError> {
    if text == b"all" {
        return Ok(LEVELS.to_vec());
    }
    if let Some(level) = LEVELS.iter().chain(BASELINES).find(|l| l.as_bytes() == text) {
        return Ok(vec![*level]);
    }
    let all: Vec<&str> = LEVELS.iter().chain(BASELINES).copied().collect();
    Err(UsageError(format!("--level must be one of {} or all, got {}", all.join(", "), shown(text))))
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
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_slice();
        if arg == b"--help" || arg == b"--version" {
            return Err(UsageError(format!("{} takes no other arguments", String::from_utf8_lossy(arg))));
        }
        let flag = match ["--level", "--iters", "--seed", "--threads", "--json", "--eval"]
            .iter()
            .find(|f| f.as_bytes() == arg)
        {
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
            "--level" => opts.levels = parse_level(value)?,
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

/// Cells padded to COLUMNS' widths (negative: right-aligned), two spaces apart.
fn row(cells: &[String]) -> String {
    let out: Vec<String> = cells
        .iter()
        .zip(COLUMNS.iter())
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
    row(&names)
}

/// One result as a table row; `vs v0` is v0's time over this one (0: no v0 run).
fn text_line(r: &RunResult, v0_seconds: f64) -> String {
    let speedup = if v0_seconds > 0.0 && r.seconds > 0.0 {
        format!("{:.1}x", v0_seconds / r.seconds)
    } else {
        "-".to_string()
    };
    row(&[
        IMPL.to_string(),
        r.level.to_string(),
        r.threads.to_string(),
        r.iters.to_string(),
        format!("{:.3}", r.seconds),
        format!("{:.2}", r.ns_per_iter()),
        speedup,
        g17(r.sums.f),
        g17(r.sums.dx),
        g17(r.sums.dy),
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
       autograd --eval X Y [--json]
       autograd --help | --version

Runs N forward/backward passes of f(x, y) = softplus((x + y) * x) through a
reverse-mode autograd at each optimization level and prints the time and the
checksums (sums of f, df/dx and df/dy over the samples).

  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,
               the default), or a baseline: fused, fused-simd
  --iters N    samples, 1..10^12 (default 10000000)
  --seed S     input stream seed, 0..2^64-1 (default 42)
  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)
  --json       one JSON object per line instead of the table
  --eval X Y   f and its gradient at one point, through the v2 tape";

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
