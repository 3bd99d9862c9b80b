/* autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
 * through a reverse-mode autograd, level by level (docs/contract.md), and the graph
 * workload, a tape of M ops (docs/contract-graph.md).
 *
 * The C port of the Codon program, in one file and in the Codon modules' order:
 * rng, ops, graph (v0 naive, v1 pool), tape (v2), fused, vmath, simd (v3),
 * threads (v4), fused-simd; graph recipe, graph nodes, graph objects (v0), graph
 * pool (v1), graph tape (v2), graph simd (v3), graph threads (v4); cli, report, main.
 * Same names, same arithmetic in the same order, same command line and output.
 *
 *   make build/autograd-c            (CPU=native by default; CPU=x86-64-v2|v3|v4 too)
 *   cc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp \
 *      -DAUTOGRAD_TARGET='"native"' -o build/autograd-c ports/c/autograd.c -lmvec -lm
 *
 * The vector width of v3, v4 and fused-simd follows -march (see vmath); AUTOGRAD_TARGET
 * only names the target in --version.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- rng: the input stream of contract §1 ------------------------------------ */
/* Counter-based splitmix64, written out so that every language draws the same
 * numbers (never a standard-library RNG). */

#define GAMMA UINT64_C(0x9E3779B97F4A7C15)
#define MIX1 UINT64_C(0xBF58476D1CE4E5B9)
#define MIX2 UINT64_C(0x94D049BB133111EB)
#define UNIT (1.0 / 9007199254740992.0) /* 2^-53 */

/* The splitmix64 finalizer: a bijective scramble of one 64-bit word. */
static inline uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * MIX1;
    z = (z ^ (z >> 27)) * MIX2;
    return z ^ (z >> 31);
}

/* The k-th output (k >= 1) of the splitmix64 stream seeded with `seed`. */
static inline uint64_t draw(uint64_t seed, int64_t k)
{
    return splitmix64(seed + (uint64_t)k * GAMMA);
}

/* The top 53 bits of z as a double in [0, 1); they fit a signed conversion exactly. */
static inline double unit(uint64_t z)
{
    return (double)(int64_t)(z >> 11) * UNIT;
}

/* Sample i: (x_i, y_i), both in [-1, 1). */
static inline void sample(uint64_t seed, int64_t i, double *x, double *y)
{
    *x = 2.0 * unit(draw(seed, 2 * i + 1)) - 1.0;
    *y = 2.0 * unit(draw(seed, 2 * i + 2)) - 1.0;
}

/* ---- ops: the scalar math of contract §2, shared by every level -------------- */

/* The checksums of a run: plain sums over the samples, in index order. */
typedef struct {
    double f, dx, dy;
} Sums;

static inline Sums sums_add(Sums a, Sums b)
{
    return (Sums){a.f + b.f, a.dx + b.dx, a.dy + b.dy};
}

/* Both softplus and its derivative need e = exp(-|p|) (never exp(+|p|), which could
 * overflow). The *_e forms take e ready-made, so that a caller computing both shares
 * one exp; the results are bit for bit those of the contract's formulas. */

static inline double exp_neg_abs(double p)
{
    return exp(-fabs(p));
}

/* log(1 + exp(p)) = p + log1p(exp(-p)) for p > 0, else log1p(exp(p)). */
static inline double softplus_e(double p, double e)
{
    return p > 0.0 ? p + log1p(e) : log1p(e);
}

/* d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)). */
static inline double sigmoid_e(double p, double e)
{
    return p >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

static inline double softplus(double p)
{
    return softplus_e(p, exp_neg_abs(p));
}

static inline double sigmoid(double p)
{
    return sigmoid_e(p, exp_neg_abs(p));
}

/* ---- graph: the pointer-linked nodes of levels v0 and v1 --------------------- */
/* The seed's first design: each node knows its inputs, computes its value when asked
 * (recomputing its whole subgraph every time), and pushes gradients to its inputs by
 * recursion. */

enum { LEAF = 0, SUM = 1, PROD = 2, SOFTPLUS = 3 };

typedef struct Node Node;
struct Node {
    int kind;
    double leaf_val; /* the value of a LEAF; unused by the other kinds */
    double grad;
    Node *a;         /* inputs: none for a LEAF, `a` only for SOFTPLUS */
    Node *b;
};

/* (Re)make a node: used by node_new (v0) and by the v1 pool. */
static void node_set(Node *node, int kind, double leaf_val, Node *a, Node *b)
{
    node->kind = kind;
    node->leaf_val = leaf_val;
    node->grad = 0.0;
    node->a = a;
    node->b = b;
}

/* The node's value, recomputed from the leaves on every call. */
static double node_value(const Node *node)
{
    switch (node->kind) {
    case SUM:
        return node_value(node->a) + node_value(node->b);
    case PROD:
        return node_value(node->a) * node_value(node->b);
    case SOFTPLUS:
        return softplus(node_value(node->a));
    default:
        return node->leaf_val;
    }
}

/* Add g to the node's grad and recurse into its inputs (chain rule). */
static void node_backward(Node *node, double g)
{
    node->grad += g;
    switch (node->kind) {
    case SUM:
        node_backward(node->a, g);
        node_backward(node->b, g);
        break;
    case PROD:
        node_backward(node->a, node_value(node->b) * g);
        node_backward(node->b, node_value(node->a) * g);
        break;
    case SOFTPLUS:
        node_backward(node->a, sigmoid(node_value(node->a)) * g);
        break;
    }
}

/* ---- naive: level v0 --------------------------------------------------------- */
/* Fresh heap nodes every iteration (malloc, then free at the end of the iteration),
 * linked by pointers; values recomputed on demand, backward by recursion. */

static Node *node_new(int kind, double leaf_val, Node *a, Node *b)
{
    Node *node = malloc(sizeof *node);
    if (node == NULL) {
        fputs("error: out of memory\n", stderr);
        exit(1);
    }
    node_set(node, kind, leaf_val, a, b);
    return node;
}

static Sums run_v0(uint64_t seed, int64_t n)
{
    double sum_f = 0.0, sum_dx = 0.0, sum_dy = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double xv, yv;
        sample(seed, i, &xv, &yv);
        Node *x = node_new(LEAF, xv, NULL, NULL);
        Node *y = node_new(LEAF, yv, NULL, NULL);
        Node *s = node_new(SUM, 0.0, x, y);
        Node *p = node_new(PROD, 0.0, s, x);
        Node *f = node_new(SOFTPLUS, 0.0, p, NULL);
        node_backward(f, 1.0);
        sum_f += node_value(f);
        sum_dx += x->grad;
        sum_dy += y->grad;
        free(f);
        free(p);
        free(s);
        free(y);
        free(x);
    }
    return (Sums){sum_f, sum_dx, sum_dy};
}

/* ---- pool: level v1 ---------------------------------------------------------- */
/* The v0 graph, but its nodes come from a fixed pool allocated once and relinked
 * every iteration, so the loop allocates nothing. Values are still recomputed on
 * demand (the seed's v1). */

#define POOL_SIZE 5 /* x, y, s, p, f */

typedef struct {
    Node nodes[POOL_SIZE];
    int used;
} Pool;

static void pool_reset(Pool *pool)
{
    pool->used = 0;
}

/* The next free node, remade as (kind, leaf_val, a, b). */
static Node *pool_take(Pool *pool, int kind, double leaf_val, Node *a, Node *b)
{
    Node *node = &pool->nodes[pool->used++];
    node_set(node, kind, leaf_val, a, b);
    return node;
}

static Sums run_v1(uint64_t seed, int64_t n)
{
    Pool pool;
    pool_reset(&pool);
    double sum_f = 0.0, sum_dx = 0.0, sum_dy = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double xv, yv;
        sample(seed, i, &xv, &yv);
        pool_reset(&pool);
        Node *x = pool_take(&pool, LEAF, xv, NULL, NULL);
        Node *y = pool_take(&pool, LEAF, yv, NULL, NULL);
        Node *s = pool_take(&pool, SUM, 0.0, x, y);
        Node *p = pool_take(&pool, PROD, 0.0, s, x);
        Node *f = pool_take(&pool, SOFTPLUS, 0.0, p, NULL);
        node_backward(f, 1.0);
        sum_f += node_value(f);
        sum_dx += x->grad;
        sum_dy += y->grad;
    }
    return (Sums){sum_f, sum_dx, sum_dy};
}

/* ---- tape: level v2, the seed's NaiveTape ------------------------------------ */
/* Contiguous fixed-size arrays of vars {val, grad} and ops {kind, input ids, output
 * id}, addressed by index. Each op computes its result once when pushed; backward
 * walks the ops in reverse. */

#define MAX_VARS 6 /* x, y, s, p, exp(-|p|), f */
#define MAX_OPS 3  /* SUM, PROD, SOFTPLUS */

typedef struct {
    double val;
    double grad;
} Var;

typedef struct {
    int kind;
    int a; /* input ids; SOFTPLUS's b is the var that saves exp(-|a|) */
    int b;
    int out; /* output id */
} Op;

typedef struct {
    Var vars[MAX_VARS];
    Op ops[MAX_OPS];
    int n_vars;
    int n_ops;
} Tape;

static inline void tape_reset(Tape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
}

static inline double tape_val(const Tape *t, int i)
{
    return t->vars[i].val;
}

static inline double tape_grad(const Tape *t, int i)
{
    return t->vars[i].grad;
}

static inline void tape_add_grad(Tape *t, int i, double g)
{
    t->vars[i].grad += g;
}

/* A new input var; returns its id. */
static inline int tape_leaf(Tape *t, double val)
{
    t->vars[t->n_vars] = (Var){val, 0.0};
    return t->n_vars++;
}

/* Record op `kind` on inputs a, b with result `val`; returns the result's id. */
static inline int tape_push(Tape *t, int kind, int a, int b, double val)
{
    int out = tape_leaf(t, val);
    t->ops[t->n_ops++] = (Op){kind, a, b, out};
    return out;
}

static inline int tape_push_sum(Tape *t, int a, int b)
{
    return tape_push(t, SUM, a, b, tape_val(t, a) + tape_val(t, b));
}

static inline int tape_push_prod(Tape *t, int a, int b)
{
    return tape_push(t, PROD, a, b, tape_val(t, a) * tape_val(t, b));
}

static inline int tape_push_softplus(Tape *t, int a)
{
    /* exp(-|p|) is saved in a var of its own, so that backward reuses it (each result
     * computed once); the op names it as its second input. */
    double p = tape_val(t, a);
    int e = tape_leaf(t, exp_neg_abs(p));
    return tape_push(t, SOFTPLUS, a, e, softplus_e(p, tape_val(t, e)));
}

/* Reverse sweep: every grad from 0, grad(out) = 1, then each op's local rule. */
static inline void tape_backward(Tape *t, int out)
{
    for (int i = 0; i < t->n_vars; i++)
        t->vars[i].grad = 0.0;
    tape_add_grad(t, out, 1.0);
    for (int k = t->n_ops - 1; k >= 0; k--) {
        Op op = t->ops[k];
        double g = tape_grad(t, op.out);
        switch (op.kind) {
        case SUM:
            tape_add_grad(t, op.a, g);
            tape_add_grad(t, op.b, g);
            break;
        case PROD:
            tape_add_grad(t, op.a, tape_val(t, op.b) * g);
            tape_add_grad(t, op.b, tape_val(t, op.a) * g);
            break;
        default: /* SOFTPLUS */
            tape_add_grad(t, op.a, sigmoid_e(tape_val(t, op.a), tape_val(t, op.b)) * g);
            break;
        }
    }
}

/* One forward pass of f(x, y) = softplus((x + y) * x); returns the id of f and sets
 * those of x and y. */
static inline int record(Tape *tape, double xv, double yv, int *x, int *y)
{
    tape_reset(tape);
    *x = tape_leaf(tape, xv);
    *y = tape_leaf(tape, yv);
    int s = tape_push_sum(tape, *x, *y);
    int p = tape_push_prod(tape, s, *x);
    return tape_push_softplus(tape, p);
}

static Sums run_v2(uint64_t seed, int64_t n)
{
    Tape tape;
    double sum_f = 0.0, sum_dx = 0.0, sum_dy = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double xv, yv;
        int x, y;
        sample(seed, i, &xv, &yv);
        int f = record(&tape, xv, yv, &x, &y);
        tape_backward(&tape, f);
        sum_f += tape_val(&tape, f);
        sum_dx += tape_grad(&tape, x);
        sum_dy += tape_grad(&tape, y);
    }
    return (Sums){sum_f, sum_dx, sum_dy};
}

/* f, df/dx, df/dy at one point, through the v2 tape (for --eval). */
static void eval_point(double xv, double yv, double *f, double *dfdx, double *dfdy)
{
    Tape tape;
    int x, y;
    int out = record(&tape, xv, yv, &x, &y);
    tape_backward(&tape, out);
    *f = tape_val(&tape, out);
    *dfdx = tape_grad(&tape, x);
    *dfdy = tape_grad(&tape, y);
}

/* ---- fused: baseline (not a level) ------------------------------------------- */
/* The same math written out by hand with no tape or graph, the floor that the v2
 * tape can approach. */

static Sums run_fused(uint64_t seed, int64_t n)
{
    double sum_f = 0.0, sum_dx = 0.0, sum_dy = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double x, y;
        sample(seed, i, &x, &y);
        double s = x + y;
        double p = s * x;
        double e = exp_neg_abs(p);
        double g = sigmoid_e(p, e);
        sum_f += softplus_e(p, e);
        sum_dx += s * g + x * g;
        sum_dy += x * g;
    }
    return (Sums){sum_f, sum_dx, sum_dy};
}

/* ---- vmath: vector exp and log1p for the batched levels ---------------------- */
/* glibc's libmvec, at the widest vector the target CPU has. Its math.h declares the
 * SIMD variants only under -ffast-math, which would also reorder the scalar levels'
 * sums; so exp and log1p are declared again here, under other names and as SIMD
 * functions. gcc then gives them a clone for every x86-64 vector ISA and its
 * vectorizer calls the one that -march allows: _ZGVeN8v_exp / _ZGVeN8v_log1p
 * (AVX-512F, 8 doubles), _ZGVdN4v_* (AVX2, 4) or _ZGVbN2v_* (SSE2, 2), the
 * variants the Codon program calls for the same target (core/vmath.codon). The
 * scalar levels keep calling plain exp and log1p and so never get vector math. */

__attribute__((simd("notinbranch"), const, nothrow)) double vexp(double) __asm__("exp");
__attribute__((simd("notinbranch"), const, nothrow)) double vlog1p(double) __asm__("log1p");

/* WIDTH: doubles per libmvec call, for --version only, read from the macros -march
 * sets. gcc picks the variant by itself from -march: the widest vectors it allows,
 * unless the CPU's tuning prefers narrower ones (-march=skylake-avx512 would get the
 * 4-lane variant under WIDTH 8); the Makefile's CPUs, native here and x86-64-v2/v3/v4,
 * were checked with objdump. Off x86-64, 1: the Codon program's scalar case. */
#if defined(__x86_64__) && defined(__AVX512F__)
#define WIDTH 8
#define VECTOR_NAME "AVX-512F (libmvec _ZGVeN8v)"
#elif defined(__x86_64__) && defined(__AVX2__)
#define WIDTH 4
#define VECTOR_NAME "AVX2 (libmvec _ZGVdN4v)"
#elif defined(__x86_64__) && defined(__SSE2__)
#define WIDTH 2
#define VECTOR_NAME "SSE2 (libmvec _ZGVbN2v)"
#else
#define WIDTH 1
#define VECTOR_NAME "scalar (glibc exp/log1p)"
#endif

/* The CPU the build was made for, as the Makefile's CPU=... names it. */
#ifndef AUTOGRAD_TARGET
#define AUTOGRAD_TARGET "unstated"
#endif

#define STR_(x) #x
#define STR(x) STR_(x) /* a macro's value as a string literal */

/* One line naming the build target and the vector width, as --version prints it. */
static const char *target_text(void)
{
    return "target " AUTOGRAD_TARGET ", vector width " STR(WIDTH) " doubles: " VECTOR_NAME;
}

/* Lane arrays start on a cache line (64 bytes, a whole number of vectors of any
 * width), so that no vector load straddles two. */
#define ALIGN 64

/* out[j] = exp(src[j]) for j < n; src may be out (the graph's SOFTMAX4 exps in place).
 * Hence no restrict: ivdep tells gcc that no lane reads what another lane wrote, which
 * holds for src == out too, so the loop is vectorized without a runtime overlap check
 * (one that an in-place call would always fail). */
static inline void exp_lanes(const double *src, double *out, int n)
{
#pragma GCC ivdep
#pragma GCC unroll 1
    for (int j = 0; j < n; j++)
        out[j] = vexp(src[j]);
}

/* out[j] = exp(-|p[j]|) for j < n. */
static inline void exp_neg_abs_lanes(const double *restrict p, double *restrict out, int n)
{
#pragma GCC unroll 1
    for (int j = 0; j < n; j++)
        out[j] = vexp(-fabs(p[j]));
}

/* out[j] = log1p(src[j]) for j < n. */
static inline void log1p_lanes(const double *restrict src, double *restrict out, int n)
{
#pragma GCC unroll 1
    for (int j = 0; j < n; j++)
        out[j] = vlog1p(src[j]);
}

/* ---- simd: level v3 ---------------------------------------------------------- */
/* The v2 tape over a batch of BATCH samples. Each var holds BATCH lanes (structure of
 * arrays), each op is a loop over its lanes that gcc vectorizes, and exp/log1p are
 * glibc's vector versions. The ops and their order are v2's. */

#define BATCH 256 /* lanes per var, a multiple of WIDTH: 64..1024 measured, 256 best or tied (README) */

typedef struct {
    _Alignas(ALIGN) double val[MAX_VARS * BATCH]; /* var i's lanes at [i * BATCH, (i + 1) * BATCH) */
    _Alignas(ALIGN) double grad[MAX_VARS * BATCH];
    Op ops[MAX_OPS];
    int n_vars;
    int n_ops;
} BatchTape;

static inline void batch_reset(BatchTape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
}

static inline double *batch_vals(BatchTape *t, int i)
{
    return t->val + i * BATCH;
}

static inline double *batch_grads(BatchTape *t, int i)
{
    return t->grad + i * BATCH;
}

/* A new var; the caller fills its lanes. Returns its id. */
static inline int batch_leaf(BatchTape *t)
{
    return t->n_vars++;
}

/* Record op `kind` on inputs a, b; returns the id of its output, for the caller to fill. */
static inline int batch_push(BatchTape *t, int kind, int a, int b)
{
    int out = batch_leaf(t);
    t->ops[t->n_ops++] = (Op){kind, a, b, out};
    return out;
}

static inline int batch_push_sum(BatchTape *t, int a, int b)
{
    int out = batch_push(t, SUM, a, b);
    double *restrict o = batch_vals(t, out);
    const double *u = batch_vals(t, a), *v = batch_vals(t, b);
    for (int j = 0; j < BATCH; j++)
        o[j] = u[j] + v[j];
    return out;
}

static inline int batch_push_prod(BatchTape *t, int a, int b)
{
    int out = batch_push(t, PROD, a, b);
    double *restrict o = batch_vals(t, out);
    const double *u = batch_vals(t, a), *v = batch_vals(t, b);
    for (int j = 0; j < BATCH; j++)
        o[j] = u[j] * v[j];
    return out;
}

static inline int batch_push_softplus(BatchTape *t, int a)
{
    /* As in v2, exp(-|p|) gets a var of its own, named as the op's second input. */
    int e = batch_leaf(t);
    const double *p = batch_vals(t, a);
    double *ve = batch_vals(t, e);
    exp_neg_abs_lanes(p, ve, BATCH);
    int out = batch_push(t, SOFTPLUS, a, e);
    double *restrict o = batch_vals(t, out);
    log1p_lanes(ve, o, BATCH);
    for (int j = 0; j < BATCH; j++)
        o[j] = p[j] > 0.0 ? p[j] + o[j] : o[j]; /* softplus_e, lane-wise */
    return out;
}

/* Reverse sweep, lane-wise: grads from 0, grad(out) = 1, each op's local rule. Each
 * input gets its own loop, so that an op whose two inputs are one var stays right. */
static inline void batch_backward(BatchTape *t, int out)
{
    for (int j = 0; j < t->n_vars * BATCH; j++)
        t->grad[j] = 0.0;
    double *gout = batch_grads(t, out);
    for (int j = 0; j < BATCH; j++)
        gout[j] = 1.0;
    for (int k = t->n_ops - 1; k >= 0; k--) {
        Op op = t->ops[k];
        const double *g = batch_grads(t, op.out);
        double *ga = batch_grads(t, op.a), *gb = batch_grads(t, op.b);
        const double *va = batch_vals(t, op.a), *vb = batch_vals(t, op.b);
        switch (op.kind) {
        case SUM:
            for (int j = 0; j < BATCH; j++)
                ga[j] += g[j];
            for (int j = 0; j < BATCH; j++)
                gb[j] += g[j];
            break;
        case PROD:
            for (int j = 0; j < BATCH; j++)
                ga[j] += vb[j] * g[j];
            for (int j = 0; j < BATCH; j++)
                gb[j] += va[j] * g[j];
            break;
        default: /* SOFTPLUS: b holds exp(-|a|) */
            for (int j = 0; j < BATCH; j++)
                ga[j] += sigmoid_e(va[j], vb[j]) * g[j];
            break;
        }
    }
}

/* Samples first .. first+lanes-1 into the lanes of x and y; unused lanes get 0. */
static inline void fill_inputs(double *x, double *y, uint64_t seed, int64_t first, int lanes)
{
    for (int j = 0; j < lanes; j++)
        sample(seed, first + j, &x[j], &y[j]);
    for (int j = lanes; j < BATCH; j++) {
        x[j] = 0.0;
        y[j] = 0.0;
    }
}

/* Per-lane running sums, so that accumulating a batch is a vector add. */
typedef struct {
    _Alignas(ALIGN) double f[BATCH];
    _Alignas(ALIGN) double dx[BATCH];
    _Alignas(ALIGN) double dy[BATCH];
} LaneSums;

static inline void lane_sums_init(LaneSums *acc)
{
    for (int j = 0; j < BATCH; j++) {
        acc->f[j] = 0.0;
        acc->dx[j] = 0.0;
        acc->dy[j] = 0.0;
    }
}

static inline void lane_sums_add(LaneSums *restrict acc, const double *f, const double *dx,
                                 const double *dy, int lanes)
{
    for (int j = 0; j < lanes; j++) {
        acc->f[j] += f[j];
        acc->dx[j] += dx[j];
        acc->dy[j] += dy[j];
    }
}

/* The lanes added up in lane order. */
static inline Sums lane_sums_total(const LaneSums *acc)
{
    Sums s = {0.0, 0.0, 0.0};
    for (int j = 0; j < BATCH; j++)
        s = sums_add(s, (Sums){acc->f[j], acc->dx[j], acc->dy[j]});
    return s;
}

static inline int64_t n_batches(int64_t n)
{
    return (n + BATCH - 1) / BATCH;
}

/* Batches [first_batch, end_batch) of the n samples through one batch tape. */
static Sums run_batches(uint64_t seed, int64_t n, int64_t first_batch, int64_t end_batch)
{
    BatchTape tape;
    LaneSums acc;
    lane_sums_init(&acc);
    for (int64_t batch = first_batch; batch < end_batch; batch++) {
        int64_t first = batch * BATCH;
        int lanes = n - first < BATCH ? (int)(n - first) : BATCH;
        batch_reset(&tape);
        int x = batch_leaf(&tape), y = batch_leaf(&tape);
        fill_inputs(batch_vals(&tape, x), batch_vals(&tape, y), seed, first, lanes);
        int s = batch_push_sum(&tape, x, y);
        int p = batch_push_prod(&tape, s, x);
        int f = batch_push_softplus(&tape, p);
        batch_backward(&tape, f);
        lane_sums_add(&acc, batch_vals(&tape, f), batch_grads(&tape, x), batch_grads(&tape, y), lanes);
    }
    return lane_sums_total(&acc);
}

static Sums run_v3(uint64_t seed, int64_t n)
{
    return run_batches(seed, n, 0, n_batches(n));
}

/* ---- threads: level v4 ------------------------------------------------------- */
/* v3 with the batches split into T contiguous ranges, one per OpenMP thread, each
 * with its own batch tape and lane sums; the partial sums are added in thread order,
 * so a given T always gives the same digits. */

static Sums run_v4(uint64_t seed, int64_t n, int threads)
{
    int64_t nb = n_batches(n);
    Sums *partial = malloc((size_t)threads * sizeof *partial);
    if (partial == NULL) {
        fputs("error: out of memory\n", stderr);
        exit(1);
    }
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; t++)
        partial[t] = run_batches(seed, n, t * nb / threads, (t + 1) * nb / threads);
    Sums total = {0.0, 0.0, 0.0};
    for (int t = 0; t < threads; t++)
        total = sums_add(total, partial[t]);
    free(partial);
    return total;
}

/* ---- fused-simd: baseline (not a level) -------------------------------------- */
/* The same over batches of BATCH samples with v3's vector math and lane sums, no
 * tape: the floor for v3 and v4. */

static Sums run_fused_simd(uint64_t seed, int64_t n)
{
    _Alignas(ALIGN) double x[BATCH], y[BATCH], p[BATCH], e[BATCH], l[BATCH];
    _Alignas(ALIGN) double f[BATCH], dx[BATCH], dy[BATCH];
    LaneSums acc;
    lane_sums_init(&acc);
    for (int64_t batch = 0; batch < n_batches(n); batch++) {
        int64_t first = batch * BATCH;
        int lanes = n - first < BATCH ? (int)(n - first) : BATCH;
        fill_inputs(x, y, seed, first, lanes);
        for (int j = 0; j < BATCH; j++)
            p[j] = (x[j] + y[j]) * x[j];
        exp_neg_abs_lanes(p, e, BATCH);
        log1p_lanes(e, l, BATCH);
        for (int j = 0; j < BATCH; j++) {
            double s = x[j] + y[j];
            double g = sigmoid_e(p[j], e[j]);
            f[j] = p[j] > 0.0 ? p[j] + l[j] : l[j];
            dx[j] = s * g + x[j] * g;
            dy[j] = x[j] * g;
        }
        lane_sums_add(&acc, f, dx, dy, lanes);
    }
    return lane_sums_total(&acc);
}

/* ---- graph recipe: the graph workload's shared parts ------------------------- */
/* The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
 * level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
 * scalar forward math of an op, and the per-sample checksums. The kinds carry a GRAPH_
 * prefix where the softplus levels' names (SOFTPLUS, PROD, LEAF) would clash. */

enum {
    GRAPH_SOFTPLUS = 0, /* op k has kind k % 4, in this order */
    SUM4 = 1,
    GRAPH_PROD = 2,
    SOFTMAX4 = 3
};

#define N_INPUTS 100

/* The checksums of a run: sums over the samples of loss, grad_in and grad_all (G3). */
typedef struct {
    double loss, grad_in, grad_all;
} GraphSums;

static inline GraphSums graph_sums_add(GraphSums a, GraphSums o)
{
    return (GraphSums){a.loss + o.loss, a.grad_in + o.grad_in, a.grad_all + o.grad_all};
}

/* Nodes of an M-op graph: the inputs, one output per op, three more per SOFTMAX4. */
static inline int n_nodes(int m)
{
    return N_INPUTS + m + 3 * (m / 4);
}

/* Input i of sample s, in [-1, 1) (G1). */
static inline double graph_input(uint64_t seed, int64_t s, int i)
{
    return 2.0 * unit(draw(seed, N_INPUTS * s + i + 1)) - 1.0;
}

/* The M ops of G2, in order, onto g: any level's graph builder, whose functions
 * PREFIX_size (the nodes so far) and PREFIX_push_softplus, _push_sum4, _push_prod,
 * _push_softmax4 take node ids. C has no duck typing: record_ops is a macro, given
 * the builder's prefix (node_graph, graph_tape, graph_batch). */
#define record_ops(PREFIX, g, m)                                                                                  \
    do {                                                                                                         \
        for (int k = 0; k < (m); k++) {                                                                          \
            int n = PREFIX##_size(g);                                                                            \
            switch (k % 4) {                                                                                     \
            case GRAPH_SOFTPLUS:                                                                                 \
                PREFIX##_push_softplus(g, n - 10);                                                               \
                break;                                                                                           \
            case SUM4:                                                                                           \
                PREFIX##_push_sum4(g, n - 30, n - 25, n - 20, n - 15);                                           \
                break;                                                                                           \
            case GRAPH_PROD:                                                                                     \
                PREFIX##_push_prod(g, n - 20, n - 10);                                                           \
                break;                                                                                           \
            default:                                                                                             \
                PREFIX##_push_softmax4(g, n - 4, n - 3, n - 2, n - 1);                                           \
                break;                                                                                           \
            }                                                                                                    \
        }                                                                                                        \
    } while (0)

/* Python's max(a, b): b if b > a, else a. */
static inline double max2(double a, double b)
{
    return b > a ? b : a;
}

/* out_j = exp(in_j - max) / ((e_0 + e_1) + e_2) + e_3. */
static inline void softmax4(double a, double b, double c, double d, double out[4])
{
    double m = max2(max2(a, b), max2(c, d));
    double e0 = exp(a - m), e1 = exp(b - m), e2 = exp(c - m), e3 = exp(d - m);
    double total = ((e0 + e1) + e2) + e3;
    out[0] = e0 / total;
    out[1] = e1 / total;
    out[2] = e2 / total;
    out[3] = e3 / total;
}

/* SOFTMAX4's backward term: sum of o_j * g[out_j], left to right. */
static inline double softmax4_avg(double o0, double o1, double o2, double o3, double g0, double g1, double g2,
                                  double g3)
{
    return ((o0 * g0 + o1 * g1) + o2 * g2) + o3 * g3;
}

/* Memory for the graph levels; a failed allocation ends the program like node_new's. */
static void *graph_alloc(size_t align, size_t bytes)
{
    void *p = align > 0 ? aligned_alloc(align, bytes) : malloc(bytes);
    if (p == NULL) {
        fputs("error: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

/* ---- graph nodes: the node objects of graph levels v0 and v1 ----------------- */
/* Every node a heap object holding its value, its grad and pointers to its input
 * nodes, each value computed once when the node is made. The graph keeps its nodes in
 * creation order, which is all backward needs: it walks them in reverse. v0 frees the
 * nodes after every sample, v1 keeps them as a pool. */

#define GRAPH_LEAF (-1)

typedef struct GraphNode GraphNode;
struct GraphNode {
    double val;
    double grad;
    int kind;     /* GRAPH_LEAF, or the kind of the op that made it (all four of a SOFTMAX4's) */
    double saved; /* GRAPH_SOFTPLUS: exp(-|a->val|), for backward's sigmoid */
    GraphNode *a; /* inputs, as many as the kind has */
    GraphNode *b;
    GraphNode *c;
    GraphNode *d;
};

/* (Re)make a node; its grad starts at 1.0, d loss / d val (the loss sums every node). */
static inline void graph_node_set(GraphNode *node, int kind, double val, double saved, GraphNode *a,
                                  GraphNode *b, GraphNode *c, GraphNode *d)
{
    node->kind = kind;
    node->val = val;
    node->saved = saved;
    node->grad = 1.0;
    node->a = a;
    node->b = b;
    node->c = c;
    node->d = d;
}

/* A fresh node from malloc (the Codon program's GraphNode(...)). */
static inline GraphNode *graph_node_new(int kind, double val, double saved, GraphNode *a, GraphNode *b,
                                        GraphNode *c, GraphNode *d)
{
    GraphNode *node = graph_alloc(0, sizeof *node);
    graph_node_set(node, kind, val, saved, a, b, c, d);
    return node;
}

typedef struct {
    GraphNode **nodes; /* in creation order; nodes[count..len) are a pool's spares */
    int len;           /* nodes made: the Codon program's len(nodes) */
    int cap;           /* room in `nodes` */
    int count;
} NodeGraph;

static void node_graph_init(NodeGraph *g)
{
    *g = (NodeGraph){NULL, 0, 0, 0};
}

/* Start a sample: with keep (v1) the nodes are reused, else (v0) freed. The array of
 * pointers is kept either way (the Codon program makes a new list; only the nodes are
 * the level's point). */
static void node_graph_reset(NodeGraph *g, bool keep)
{
    if (!keep) {
        for (int i = 0; i < g->len; i++)
            free(g->nodes[i]);
        g->len = 0;
    }
    g->count = 0;
}

/* Free the nodes and the array (the Codon program leaves them to its GC). */
static void node_graph_free(NodeGraph *g)
{
    node_graph_reset(g, false);
    free(g->nodes);
}

static inline int node_graph_size(const NodeGraph *g)
{
    return g->count;
}

static inline GraphNode *node_graph_at(const NodeGraph *g, int i)
{
    return g->nodes[i];
}

/* The next node, made as given: a new heap object, or a kept one remade. */
static inline GraphNode *node_graph_take(NodeGraph *g, int kind, double val, double saved, GraphNode *a,
                                         GraphNode *b, GraphNode *c, GraphNode *d)
{
    if (g->count == g->len) {
        if (g->len == g->cap) {
            g->cap = g->cap > 0 ? 2 * g->cap : 1024;
            g->nodes = realloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
            if (g->nodes == NULL) {
                fputs("error: out of memory\n", stderr);
                exit(1);
            }
        }
        g->nodes[g->len++] = graph_node_new(kind, val, saved, a, b, c, d);
    } else {
        graph_node_set(g->nodes[g->count], kind, val, saved, a, b, c, d);
    }
    g->count++;
    return g->nodes[g->count - 1];
}

static inline void node_graph_leaf(NodeGraph *g, double val)
{
    node_graph_take(g, GRAPH_LEAF, val, 0.0, NULL, NULL, NULL, NULL);
}

static inline void node_graph_push_softplus(NodeGraph *g, int i)
{
    GraphNode *a = node_graph_at(g, i);
    double e = exp_neg_abs(a->val);
    node_graph_take(g, GRAPH_SOFTPLUS, softplus_e(a->val, e), e, a, NULL, NULL, NULL);
}

static inline void node_graph_push_sum4(NodeGraph *g, int i, int j, int k, int l)
{
    GraphNode *a = node_graph_at(g, i), *b = node_graph_at(g, j), *c = node_graph_at(g, k),
              *d = node_graph_at(g, l);
    node_graph_take(g, SUM4, ((a->val + b->val) + c->val) + d->val, 0.0, a, b, c, d);
}

static inline void node_graph_push_prod(NodeGraph *g, int i, int j)
{
    GraphNode *a = node_graph_at(g, i), *b = node_graph_at(g, j);
    node_graph_take(g, GRAPH_PROD, a->val * b->val, 0.0, a, b, NULL, NULL);
}

static inline void node_graph_push_softmax4(NodeGraph *g, int i, int j, int k, int l)
{
    GraphNode *a = node_graph_at(g, i), *b = node_graph_at(g, j), *c = node_graph_at(g, k),
              *d = node_graph_at(g, l);
    double o[4];
    softmax4(a->val, b->val, c->val, d->val, o);
    for (int q = 0; q < 4; q++)
        node_graph_take(g, SOFTMAX4, o[q], 0.0, a, b, c, d);
}

/* The nodes in reverse creation order, each pushing its grad to its inputs (G3); a
 * SOFTMAX4's four outputs are handled together, at the last of them. */
static void node_graph_backward(NodeGraph *g)
{
    int i = g->count - 1;
    while (i >= N_INPUTS) {
        GraphNode *node = g->nodes[i];
        double gr = node->grad;
        if (node->kind == GRAPH_SOFTPLUS) {
            node->a->grad += sigmoid_e(node->a->val, node->saved) * gr;
        } else if (node->kind == SUM4) {
            node->a->grad += gr;
            node->b->grad += gr;
            node->c->grad += gr;
            node->d->grad += gr;
        } else if (node->kind == GRAPH_PROD) {
            node->a->grad += node->b->val * gr;
            node->b->grad += node->a->val * gr;
        } else { /* SOFTMAX4: nodes i-3 .. i are its outputs */
            GraphNode *o0 = g->nodes[i - 3], *o1 = g->nodes[i - 2], *o2 = g->nodes[i - 1], *o3 = node;
            double avg = softmax4_avg(o0->val, o1->val, o2->val, o3->val, o0->grad, o1->grad, o2->grad, o3->grad);
            node->a->grad += o0->val * (o0->grad - avg);
            node->b->grad += o1->val * (o1->grad - avg);
            node->c->grad += o2->val * (o2->grad - avg);
            node->d->grad += o3->val * (o3->grad - avg);
            i -= 3;
        }
        i -= 1;
    }
}

/* This sample's loss, grad_in and grad_all (G3), each added in creation order. */
static GraphSums node_graph_sums(const NodeGraph *g)
{
    double loss = 0.0, grad_in = 0.0, grad_all = 0.0;
    for (int i = 0; i < g->count; i++)
        loss += g->nodes[i]->val;
    for (int i = 0; i < N_INPUTS; i++)
        grad_in += (double)(i + 1) * g->nodes[i]->grad;
    for (int i = 0; i < g->count; i++)
        grad_all += g->nodes[i]->grad;
    return (GraphSums){loss, grad_in, grad_all};
}

/* ---- graph objects: graph level v0 ------------------------------------------- */
/* Every node a fresh heap object per sample (malloc, then free when the next sample
 * starts), linked to its inputs by pointers; backward walks the nodes in reverse
 * creation order. */

/* Sample s's forward pass: its inputs, then the M ops (keep: reuse the nodes, v1). */
static void record_nodes(NodeGraph *g, uint64_t seed, int64_t s, int m, bool keep)
{
    node_graph_reset(g, keep);
    for (int i = 0; i < N_INPUTS; i++)
        node_graph_leaf(g, graph_input(seed, s, i));
    record_ops(node_graph, g, m);
}

static GraphSums run_graph_v0(uint64_t seed, int m, int64_t n)
{
    NodeGraph g;
    node_graph_init(&g);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int64_t s = 0; s < n; s++) {
        record_nodes(&g, seed, s, m, false);
        node_graph_backward(&g);
        total = graph_sums_add(total, node_graph_sums(&g));
    }
    node_graph_free(&g);
    return total;
}

/* ---- graph pool: graph level v1 ---------------------------------------------- */
/* v0's node objects and links, but the nodes of the first sample are kept and remade
 * for every later one, so the loop allocates nothing. */

static GraphSums run_graph_v1(uint64_t seed, int m, int64_t n)
{
    NodeGraph g;
    node_graph_init(&g);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int64_t s = 0; s < n; s++) {
        record_nodes(&g, seed, s, m, true);
        node_graph_backward(&g);
        total = graph_sums_add(total, node_graph_sums(&g));
    }
    node_graph_free(&g);
    return total;
}

/* ---- graph tape: graph level v2 ---------------------------------------------- */
/* The softplus workload's tape grown to M ops, recorded anew for every sample as a
 * dynamic autograd does: contiguous arrays of vars {val, grad} and ops {kind, up to 4
 * input ids, first output id}, addressed by index; each result computed once when
 * pushed; backward is an index loop over the ops in reverse. */

typedef struct {
    int kind;
    int a; /* input ids; GRAPH_SOFTPLUS's b is its slot in `saved` (exp(-|a|)) */
    int b;
    int c;
    int d;
    int out; /* the (first) output id; SOFTMAX4's four are out .. out+3 */
} GraphOp;

typedef struct {
    double *val;
    double *grad;
    GraphOp *ops;
    double *saved; /* each GRAPH_SOFTPLUS's exp(-|a|), kept for backward's sigmoid */
    int n_vars;
    int n_ops;
    int n_saved;
} GraphTape;

static inline void graph_tape_reset(GraphTape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
    t->n_saved = 0;
}

static void graph_tape_init(GraphTape *t, int m)
{
    t->val = graph_alloc(0, (size_t)n_nodes(m) * sizeof *t->val);
    t->grad = graph_alloc(0, (size_t)n_nodes(m) * sizeof *t->grad);
    t->ops = graph_alloc(0, (size_t)m * sizeof *t->ops);
    t->saved = graph_alloc(0, (size_t)(m / 4 + 1) * sizeof *t->saved);
    graph_tape_reset(t);
}

static void graph_tape_free(GraphTape *t)
{
    free(t->val);
    free(t->grad);
    free(t->ops);
    free(t->saved);
}

static inline int graph_tape_size(const GraphTape *t)
{
    return t->n_vars;
}

/* A new var holding v; returns its id. */
static inline int graph_tape_leaf(GraphTape *t, double v)
{
    t->val[t->n_vars] = v;
    return t->n_vars++;
}

/* Record op `kind` on inputs a..d with (first) result v; returns the result's id. */
static inline int graph_tape_push(GraphTape *t, int kind, int a, int b, int c, int d, double v)
{
    int out = graph_tape_leaf(t, v);
    t->ops[t->n_ops++] = (GraphOp){kind, a, b, c, d, out};
    return out;
}

static inline int graph_tape_push_softplus(GraphTape *t, int a)
{
    double p = t->val[a];
    double e = exp_neg_abs(p);
    int slot = t->n_saved;
    t->saved[slot] = e;
    t->n_saved++;
    return graph_tape_push(t, GRAPH_SOFTPLUS, a, slot, 0, 0, softplus_e(p, e));
}

static inline int graph_tape_push_sum4(GraphTape *t, int a, int b, int c, int d)
{
    const double *v = t->val;
    return graph_tape_push(t, SUM4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d]);
}

static inline int graph_tape_push_prod(GraphTape *t, int a, int b)
{
    return graph_tape_push(t, GRAPH_PROD, a, b, 0, 0, t->val[a] * t->val[b]);
}

static inline int graph_tape_push_softmax4(GraphTape *t, int a, int b, int c, int d)
{
    const double *v = t->val;
    double o[4];
    softmax4(v[a], v[b], v[c], v[d], o);
    int out = graph_tape_push(t, SOFTMAX4, a, b, c, d, o[0]);
    graph_tape_leaf(t, o[1]);
    graph_tape_leaf(t, o[2]);
    graph_tape_leaf(t, o[3]);
    return out;
}

/* Reverse sweep for loss = the sum of every node: each grad starts at 1.0, then each
 * op's local rule, ops in reverse (G3). */
static void graph_tape_backward(GraphTape *t)
{
    const double *v = t->val;
    double *g = t->grad;
    for (int i = 0; i < t->n_vars; i++)
        g[i] = 1.0;
    for (int k = t->n_ops - 1; k >= 0; k--) {
        GraphOp op = t->ops[k];
        double go = g[op.out];
        if (op.kind == GRAPH_SOFTPLUS) {
            g[op.a] += sigmoid_e(v[op.a], t->saved[op.b]) * go;
        } else if (op.kind == SUM4) {
            g[op.a] += go;
            g[op.b] += go;
            g[op.c] += go;
            g[op.d] += go;
        } else if (op.kind == GRAPH_PROD) {
            g[op.a] += v[op.b] * go;
            g[op.b] += v[op.a] * go;
        } else { /* SOFTMAX4 */
            int o = op.out;
            double avg = softmax4_avg(v[o], v[o + 1], v[o + 2], v[o + 3], g[o], g[o + 1], g[o + 2], g[o + 3]);
            g[op.a] += v[o] * (g[o] - avg);
            g[op.b] += v[o + 1] * (g[o + 1] - avg);
            g[op.c] += v[o + 2] * (g[o + 2] - avg);
            g[op.d] += v[o + 3] * (g[o + 3] - avg);
        }
    }
}

/* This sample's loss, grad_in and grad_all (G3), each added in index order. */
static GraphSums graph_tape_sums(const GraphTape *t)
{
    double loss = 0.0, grad_in = 0.0, grad_all = 0.0;
    for (int i = 0; i < t->n_vars; i++)
        loss += t->val[i];
    for (int i = 0; i < N_INPUTS; i++)
        grad_in += (double)(i + 1) * t->grad[i];
    for (int i = 0; i < t->n_vars; i++)
        grad_all += t->grad[i];
    return (GraphSums){loss, grad_in, grad_all};
}

/* Sample s's forward pass: its inputs, then the M ops. */
static void record_graph(GraphTape *tape, uint64_t seed, int64_t s, int m)
{
    graph_tape_reset(tape);
    for (int i = 0; i < N_INPUTS; i++)
        graph_tape_leaf(tape, graph_input(seed, s, i));
    record_ops(graph_tape, tape, m);
}

static GraphSums run_graph_v2(uint64_t seed, int m, int64_t n)
{
    GraphTape tape;
    graph_tape_init(&tape, m);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int64_t s = 0; s < n; s++) {
        record_graph(&tape, seed, s, m);
        graph_tape_backward(&tape);
        total = graph_sums_add(total, graph_tape_sums(&tape));
    }
    graph_tape_free(&tape);
    return total;
}

/* ---- graph simd: graph level v3 ---------------------------------------------- */
/* The v2 graph tape recorded once per batch of GRAPH_BATCH samples. Each var holds
 * GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes that gcc
 * vectorizes, and exp/log1p are libmvec's at the target's width (vmath). */

/* Lanes per var, a multiple of every vector width. A batch's vals and grads take
 * n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB at 16 lanes and 10,000 ops (2.2 MB at 8),
 * past L2, in L3, whatever the batch (the Codon program's choice, README). */
#define GRAPH_BATCH 16

/* Before each loop over a var's GRAPH_BATCH lanes. gcc 12 unrolls a 16-iteration loop
 * completely before its loop vectorizer runs, and its SLP vectorizer then leaves most
 * of the unrolled adds and multiplies scalar (the lanes of two vars might overlap, as
 * far as it knows). omp simd (the build has -fopenmp) keeps the loop a loop and tells
 * gcc that no lane depends on another, which holds: an op's output var is never one of
 * its inputs, and its inputs are distinct vars. It changes no arithmetic: each lane's
 * operations and their order are the source's, and -ffp-contract=off still applies. */
#define LANE_LOOP _Pragma("omp simd")

typedef struct {
    double *val; /* var i's lanes at [i * GRAPH_BATCH, (i + 1) * GRAPH_BATCH), on a cache line */
    double *grad;
    GraphOp *ops;
    double *saved; /* each GRAPH_SOFTPLUS's exp(-|a|) lanes, at its slot */
    int n_vars;
    int n_ops;
    int n_saved;
} GraphBatchTape;

static inline void graph_batch_reset(GraphBatchTape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
    t->n_saved = 0;
}

/* The lane arrays from aligned_alloc (ALIGN bytes: n * GRAPH_BATCH doubles is a whole
 * number of cache lines, as aligned_alloc wants). */
static void graph_batch_init(GraphBatchTape *t, int m)
{
    t->val = graph_alloc(ALIGN, (size_t)n_nodes(m) * GRAPH_BATCH * sizeof(double));
    t->grad = graph_alloc(ALIGN, (size_t)n_nodes(m) * GRAPH_BATCH * sizeof(double));
    t->ops = graph_alloc(0, (size_t)m * sizeof *t->ops);
    t->saved = graph_alloc(ALIGN, (size_t)(m / 4 + 1) * GRAPH_BATCH * sizeof(double));
    graph_batch_reset(t);
}

static void graph_batch_free(GraphBatchTape *t)
{
    free(t->val);
    free(t->grad);
    free(t->ops);
    free(t->saved);
}

static inline int graph_batch_size(const GraphBatchTape *t)
{
    return t->n_vars;
}

static inline double *graph_batch_vals(const GraphBatchTape *t, int i)
{
    return t->val + (size_t)i * GRAPH_BATCH;
}

static inline double *graph_batch_grads(const GraphBatchTape *t, int i)
{
    return t->grad + (size_t)i * GRAPH_BATCH;
}

/* A new var; the caller fills its lanes. Returns its id. */
static inline int graph_batch_leaf(GraphBatchTape *t)
{
    return t->n_vars++;
}

/* Record op `kind` on inputs a..d; returns its (first) output's id, for the caller to fill. */
static inline int graph_batch_push(GraphBatchTape *t, int kind, int a, int b, int c, int d)
{
    int out = graph_batch_leaf(t);
    t->ops[t->n_ops++] = (GraphOp){kind, a, b, c, d, out};
    return out;
}

static inline void graph_batch_push_softplus(GraphBatchTape *t, int a)
{
    int slot = t->n_saved++;
    int out = graph_batch_push(t, GRAPH_SOFTPLUS, a, slot, 0, 0);
    const double *p = graph_batch_vals(t, a);
    double *e = t->saved + (size_t)slot * GRAPH_BATCH;
    double *restrict o = graph_batch_vals(t, out);
    exp_neg_abs_lanes(p, e, GRAPH_BATCH);
    log1p_lanes(e, o, GRAPH_BATCH);
    LANE_LOOP
    for (int j = 0; j < GRAPH_BATCH; j++)
        o[j] = p[j] > 0.0 ? p[j] + o[j] : o[j]; /* softplus_e, lane-wise */
}

static inline void graph_batch_push_sum4(GraphBatchTape *t, int a, int b, int c, int d)
{
    double *restrict o = graph_batch_vals(t, graph_batch_push(t, SUM4, a, b, c, d));
    const double *va = graph_batch_vals(t, a), *vb = graph_batch_vals(t, b), *vc = graph_batch_vals(t, c),
                 *vd = graph_batch_vals(t, d);
    LANE_LOOP
    for (int j = 0; j < GRAPH_BATCH; j++)
        o[j] = ((va[j] + vb[j]) + vc[j]) + vd[j];
}

static inline void graph_batch_push_prod(GraphBatchTape *t, int a, int b)
{
    double *restrict o = graph_batch_vals(t, graph_batch_push(t, GRAPH_PROD, a, b, 0, 0));
    const double *va = graph_batch_vals(t, a), *vb = graph_batch_vals(t, b);
    LANE_LOOP
    for (int j = 0; j < GRAPH_BATCH; j++)
        o[j] = va[j] * vb[j];
}

static inline void graph_batch_push_softmax4(GraphBatchTape *t, int a, int b, int c, int d)
{
    int out = graph_batch_push(t, SOFTMAX4, a, b, c, d);
    graph_batch_leaf(t);
    graph_batch_leaf(t);
    graph_batch_leaf(t);
    /* The four outputs are consecutive vars: their 4 * GRAPH_BATCH lanes take one exp call. */
    double *restrict o0 = graph_batch_vals(t, out);
    double *o1 = o0 + GRAPH_BATCH, *o2 = o1 + GRAPH_BATCH, *o3 = o2 + GRAPH_BATCH;
    const double *va = graph_batch_vals(t, a), *vb = graph_batch_vals(t, b), *vc = graph_batch_vals(t, c),
                 *vd = graph_batch_vals(t, d);
    LANE_LOOP
    for (int j = 0; j < GRAPH_BATCH; j++) {
        double m = max2(max2(va[j], vb[j]), max2(vc[j], vd[j]));
        o0[j] = va[j] - m;
        o1[j] = vb[j] - m;
        o2[j] = vc[j] - m;
        o3[j] = vd[j] - m;
    }
    exp_lanes(o0, o0, 4 * GRAPH_BATCH);
    LANE_LOOP
    for (int j = 0; j < GRAPH_BATCH; j++) {
        double total = ((o0[j] + o1[j]) + o2[j]) + o3[j];
        o0[j] = o0[j] / total;
        o1[j] = o1[j] / total;
        o2[j] = o2[j] / total;
        o3[j] = o3[j] / total;
    }
}

static inline void graph_batch_softmax4_backward(GraphBatchTape *t, GraphOp op);

/* Reverse sweep, lane-wise: every grad from 1.0, then each op's local rule (G3). */
static void graph_batch_backward(GraphBatchTape *t)
{
    for (size_t j = 0; j < (size_t)t->n_vars * GRAPH_BATCH; j++)
        t->grad[j] = 1.0;
    for (int k = t->n_ops - 1; k >= 0; k--) {
        GraphOp op = t->ops[k];
        const double *g = graph_batch_grads(t, op.out);
        double *ga = graph_batch_grads(t, op.a);
        const double *va = graph_batch_vals(t, op.a);
        if (op.kind == GRAPH_SOFTPLUS) {
            const double *e = t->saved + (size_t)op.b * GRAPH_BATCH;
            LANE_LOOP
            for (int j = 0; j < GRAPH_BATCH; j++)
                ga[j] += sigmoid_e(va[j], e[j]) * g[j];
        } else if (op.kind == SUM4) {
            const int q4[4] = {op.a, op.b, op.c, op.d};
            for (int q = 0; q < 4; q++) {
                double *gq = graph_batch_grads(t, q4[q]);
                LANE_LOOP
                for (int j = 0; j < GRAPH_BATCH; j++)
                    gq[j] += g[j];
            }
        } else if (op.kind == GRAPH_PROD) {
            double *gb = graph_batch_grads(t, op.b);
            const double *vb = graph_batch_vals(t, op.b);
            LANE_LOOP
            for (int j = 0; j < GRAPH_BATCH; j++)
                ga[j] += vb[j] * g[j];
            LANE_LOOP
            for (int j = 0; j < GRAPH_BATCH; j++)
                gb[j] += va[j] * g[j];
        } else { /* SOFTMAX4 */
            graph_batch_softmax4_backward(t, op);
        }
    }
}

static inline void graph_batch_softmax4_backward(GraphBatchTape *t, GraphOp op)
{
    const double *o0 = graph_batch_vals(t, op.out), *o1 = o0 + GRAPH_BATCH, *o2 = o1 + GRAPH_BATCH,
                 *o3 = o2 + GRAPH_BATCH;
    const double *g0 = graph_batch_grads(t, op.out), *g1 = g0 + GRAPH_BATCH, *g2 = g1 + GRAPH_BATCH,
                 *g3 = g2 + GRAPH_BATCH;
    double *ga = graph_batch_grads(t, op.a), *gb = graph_batch_grads(t, op.b), *gc = graph_batch_grads(t, op.c),
           *gd = graph_batch_grads(t, op.d);
    LANE_LOOP
    for (int j = 0; j < GRAPH_BATCH; j++) {
        double avg = ((o0[j] * g0[j] + o1[j] * g1[j]) + o2[j] * g2[j]) + o3[j] * g3[j];
        ga[j] += o0[j] * (g0[j] - avg);
        gb[j] += o1[j] * (g1[j] - avg);
        gc[j] += o2[j] * (g2[j] - avg);
        gd[j] += o3[j] * (g3[j] - avg);
    }
}

/* Samples first .. first+lanes-1's inputs into the 100 input vars; unused lanes get 0. */
static void fill_graph_inputs(GraphBatchTape *tape, uint64_t seed, int64_t first, int lanes)
{
    graph_batch_reset(tape);
    for (int i = 0; i < N_INPUTS; i++) {
        double *v = graph_batch_vals(tape, graph_batch_leaf(tape));
        for (int j = 0; j < lanes; j++)
            v[j] = graph_input(seed, first + j, i);
        for (int j = lanes; j < GRAPH_BATCH; j++)
            v[j] = 0.0;
    }
}

/* Per-lane running checksums, so that a batch is added with vector adds. */
typedef struct {
    _Alignas(ALIGN) double loss[GRAPH_BATCH];
    _Alignas(ALIGN) double grad_in[GRAPH_BATCH];
    _Alignas(ALIGN) double grad_all[GRAPH_BATCH];
} GraphLaneSums;

static void graph_lane_sums_init(GraphLaneSums *acc)
{
    for (int j = 0; j < GRAPH_BATCH; j++) {
        acc->loss[j] = 0.0;
        acc->grad_in[j] = 0.0;
        acc->grad_all[j] = 0.0;
    }
}

/* Each lane's sample checksums (G3, nodes in index order), added for the used lanes. */
static void graph_lane_sums_add(GraphLaneSums *restrict acc, const GraphBatchTape *tape, int lanes)
{
    _Alignas(ALIGN) double loss[GRAPH_BATCH], grad_in[GRAPH_BATCH], grad_all[GRAPH_BATCH];
    for (int j = 0; j < GRAPH_BATCH; j++) {
        loss[j] = 0.0;
        grad_in[j] = 0.0;
        grad_all[j] = 0.0;
    }
    for (int i = 0; i < tape->n_vars; i++) {
        const double *v = graph_batch_vals(tape, i), *g = graph_batch_grads(tape, i);
        LANE_LOOP
        for (int j = 0; j < GRAPH_BATCH; j++) {
            loss[j] += v[j];
            grad_all[j] += g[j];
        }
    }
    for (int i = 0; i < N_INPUTS; i++) {
        const double *g = graph_batch_grads(tape, i);
        LANE_LOOP
        for (int j = 0; j < GRAPH_BATCH; j++)
            grad_in[j] += (double)(i + 1) * g[j];
    }
    for (int j = 0; j < lanes; j++) {
        acc->loss[j] += loss[j];
        acc->grad_in[j] += grad_in[j];
        acc->grad_all[j] += grad_all[j];
    }
}

/* The lanes added up in lane order. */
static GraphSums graph_lane_sums_total(const GraphLaneSums *acc)
{
    GraphSums s = {0.0, 0.0, 0.0};
    for (int j = 0; j < GRAPH_BATCH; j++)
        s = graph_sums_add(s, (GraphSums){acc->loss[j], acc->grad_in[j], acc->grad_all[j]});
    return s;
}

static inline int64_t n_graph_batches(int64_t n)
{
    return (n + GRAPH_BATCH - 1) / GRAPH_BATCH;
}

/* Batches [first_batch, end_batch) of the n samples through one batch tape. */
static GraphSums run_graph_batches(uint64_t seed, int m, int64_t n, int64_t first_batch, int64_t end_batch)
{
    GraphBatchTape tape;
    graph_batch_init(&tape, m);
    GraphLaneSums acc;
    graph_lane_sums_init(&acc);
    for (int64_t batch = first_batch; batch < end_batch; batch++) {
        int64_t first = batch * GRAPH_BATCH;
        int lanes = n - first < GRAPH_BATCH ? (int)(n - first) : GRAPH_BATCH;
        fill_graph_inputs(&tape, seed, first, lanes);
        record_ops(graph_batch, &tape, m);
        graph_batch_backward(&tape);
        graph_lane_sums_add(&acc, &tape, lanes);
    }
    graph_batch_free(&tape);
    return graph_lane_sums_total(&acc);
}

static GraphSums run_graph_v3(uint64_t seed, int m, int64_t n)
{
    return run_graph_batches(seed, m, n, 0, n_graph_batches(n));
}

/* ---- graph threads: graph level v4 ------------------------------------------- */
/* Graph v3 with the batches split into T contiguous ranges, one per OpenMP thread,
 * each with its own batch tape and lane sums, added in thread order. */

static GraphSums run_graph_v4(uint64_t seed, int m, int64_t n, int threads)
{
    int64_t nb = n_graph_batches(n);
    GraphSums *partial = graph_alloc(0, (size_t)threads * sizeof *partial);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; t++)
        partial[t] = run_graph_batches(seed, m, n, t * nb / threads, (t + 1) * nb / threads);
    GraphSums total = {0.0, 0.0, 0.0};
    for (int t = 0; t < threads; t++)
        total = graph_sums_add(total, partial[t]);
    free(partial);
    return total;
}

/* ---- cli: the command line of contract §4, parsed strictly ------------------- */
/* Every bad input ends in usage_error: one line on stderr, exit status 2, and
 * nothing has reached stdout yet (parsing and checks come before any output). */

static const char *const LEVELS[] = {"v0", "v1", "v2", "v3", "v4"}; /* --level all, in order */
static const char *const BASELINES[] = {"fused", "fused-simd"};      /* run only when named (softplus workload) */
static const char *const WORKLOADS[] = {"softplus", "graph"};        /* --workload, the first the default */
#define N_LEVELS 5
#define N_BASELINES 2
#define N_WORKLOADS 2
#define MAX_ITERS UINT64_C(1000000000000)
#define MAX_THREADS 1024
#define MAX_GRAPH_OPS 1000000 /* the Codon program's MAX_OPS (a name the softplus tape has here) */
#define DEFAULT_ITERS 10000000       /* softplus samples */
#define DEFAULT_GRAPH_ITERS 10000    /* graph samples (Rogozhnikov's 10,000 passes) */
#define DEFAULT_OPS 10000
#define DEFAULT_SEED 42
#define N_FLAGS 8
static const char *const FLAGS[N_FLAGS] = {"--workload", "--level",   "--ops",  "--iters",
                                           "--seed",     "--threads", "--json", "--eval"};

enum { RUN, EVAL, HELP, VERSION };

typedef struct {
    int mode;
    const char *workload;
    const char *levels[N_LEVELS];
    int n_levels;
    int ops;
    int64_t iters;
    uint64_t seed;
    int threads;
    bool json;
    double x;
    double y;
} Options;

__attribute__((noreturn, format(printf, 1, 2))) static void usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("error: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(2);
}

/* An argument quoted for an error line, control and non-ASCII bytes shown as '?'.
 * (Only ever called on the way to exit, so it is never freed.) */
static const char *shown(const char *arg)
{
    size_t len = strlen(arg);
    char *out = malloc(len + 3);
    if (out == NULL)
        return "'?'";
    out[0] = '\'';
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)arg[k];
        out[k + 1] = c >= ' ' && c <= '~' ? (char)c : '?';
    }
    out[len + 1] = '\'';
    out[len + 2] = '\0';
    return out;
}

/* A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex). */
static uint64_t parse_uint(const char *flag, const char *text, uint64_t lo, uint64_t hi)
{
    size_t len = strlen(text);
    bool ok = len >= 1 && len <= 20;
    uint64_t value = 0;
    for (size_t k = 0; ok && k < len; k++) {
        if (text[k] < '0' || text[k] > '9') {
            ok = false;
            break;
        }
        uint64_t digit = (uint64_t)(text[k] - '0');
        if (value > (hi - digit) / 10) /* value * 10 + digit would pass hi (or wrap) */
            ok = false;
        else
            value = value * 10 + digit;
    }
    if (!ok || value < lo)
        usage_error("%s must be a whole number from %" PRIu64 " to %" PRIu64 ", got %s", flag, lo, hi,
                    shown(text));
    return value;
}

/* [+-] digits [. digits] [e [+-] digits], with at least one mantissa digit. */
static bool is_decimal(const char *text)
{
    size_t i = 0, n = strlen(text);
    if (i < n && (text[i] == '+' || text[i] == '-'))
        i++;
    int digits = 0;
    while (i < n && text[i] >= '0' && text[i] <= '9')
        i++, digits++;
    if (i < n && text[i] == '.') {
        i++;
        while (i < n && text[i] >= '0' && text[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < n && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        if (i < n && (text[i] == '+' || text[i] == '-'))
            i++;
        size_t start = i;
        while (i < n && text[i] >= '0' && text[i] <= '9')
            i++;
        if (i == start)
            return false;
    }
    return i == n;
}

/* A finite decimal number (no hex, inf or nan), read by the C library's strtod. */
static double parse_point(const char *flag, const char *text)
{
    if (!is_decimal(text))
        usage_error("%s needs finite decimal numbers, got %s", flag, shown(text));
    double value = strtod(text, NULL);
    if (!isfinite(value)) /* +-inf: the decimal is beyond the double range */
        usage_error("%s value %s is out of range", flag, shown(text));
    return value;
}

/* The levels --level names; the graph workload has no baselines. */
static void parse_level(Options *opts, const char *text)
{
    bool softplus = strcmp(opts->workload, "softplus") == 0;
    if (strcmp(text, "all") == 0) {
        for (int k = 0; k < N_LEVELS; k++)
            opts->levels[k] = LEVELS[k];
        opts->n_levels = N_LEVELS;
        return;
    }
    for (int k = 0; k < N_LEVELS; k++)
        if (strcmp(text, LEVELS[k]) == 0) {
            opts->levels[0] = LEVELS[k];
            opts->n_levels = 1;
            return;
        }
    for (int k = 0; softplus && k < N_BASELINES; k++)
        if (strcmp(text, BASELINES[k]) == 0) {
            opts->levels[0] = BASELINES[k];
            opts->n_levels = 1;
            return;
        }
    usage_error("--level must be one of v0, v1, v2, v3, v4%s or all, got %s", softplus ? ", fused, fused-simd" : "",
                shown(text));
}

static const char *parse_workload(const char *text)
{
    for (int k = 0; k < N_WORKLOADS; k++)
        if (strcmp(text, WORKLOADS[k]) == 0)
            return WORKLOADS[k];
    usage_error("--workload must be one of softplus, graph, got %s", shown(text));
}

/* Whether flag is among the n flags seen. */
static bool was_seen(const char *const *seen, int n, const char *flag)
{
    for (int k = 0; k < n; k++)
        if (strcmp(seen[k], flag) == 0)
            return true;
    return false;
}

/* Options from the command line; a bad one ends the program in usage_error. */
static Options parse(int argc, char **argv, int cpus)
{
    char **args = argv + 1;
    int n_args = argc - 1;
    Options opts = {.mode = RUN,
                    .workload = WORKLOADS[0],
                    .ops = DEFAULT_OPS,
                    .iters = DEFAULT_ITERS,
                    .seed = DEFAULT_SEED,
                    .threads = cpus};
    parse_level(&opts, "all");
    if (n_args == 1 && strcmp(args[0], "--help") == 0) {
        opts.mode = HELP;
        return opts;
    }
    if (n_args == 1 && strcmp(args[0], "--version") == 0) {
        opts.mode = VERSION;
        return opts;
    }
    const char *seen[N_FLAGS];
    int n_seen = 0;
    const char *level = "all";
    for (int i = 0; i < n_args;) {
        const char *flag = args[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "--version") == 0)
            usage_error("%s takes no other arguments", flag);
        if (!was_seen(FLAGS, N_FLAGS, flag))
            usage_error("unknown argument %s (try --help)", shown(flag));
        if (was_seen(seen, n_seen, flag))
            usage_error("%s given twice", flag);
        seen[n_seen++] = flag;
        int arity = strcmp(flag, "--json") == 0 ? 0 : strcmp(flag, "--eval") == 0 ? 2 : 1;
        if (i + arity >= n_args)
            usage_error("%s needs %s", flag, arity == 2 ? "two values" : "a value");
        const char *value = arity > 0 ? args[i + 1] : "";
        if (strcmp(flag, "--json") == 0) {
            opts.json = true;
        } else if (strcmp(flag, "--workload") == 0) {
            opts.workload = parse_workload(value);
        } else if (strcmp(flag, "--level") == 0) {
            level = value; /* checked below, once the workload is known */
        } else if (strcmp(flag, "--ops") == 0) {
            opts.ops = (int)parse_uint(flag, value, 1, MAX_GRAPH_OPS);
        } else if (strcmp(flag, "--iters") == 0) {
            opts.iters = (int64_t)parse_uint(flag, value, 1, MAX_ITERS);
        } else if (strcmp(flag, "--seed") == 0) {
            opts.seed = parse_uint(flag, value, 0, UINT64_MAX);
        } else if (strcmp(flag, "--threads") == 0) {
            opts.threads = (int)parse_uint(flag, value, 1, MAX_THREADS);
        } else { /* --eval X Y */
            opts.mode = EVAL;
            opts.x = parse_point(flag, value);
            opts.y = parse_point(flag, args[i + 2]);
        }
        i += 1 + arity;
    }
    if (opts.mode == EVAL) {
        for (int k = 0; k < n_seen; k++)
            if (strcmp(seen[k], "--eval") != 0 && strcmp(seen[k], "--json") != 0)
                usage_error("--eval takes no %s", seen[k]);
        return opts;
    }
    if (was_seen(seen, n_seen, "--ops") && strcmp(opts.workload, "graph") != 0)
        usage_error("--ops belongs to the graph workload (add --workload graph)");
    parse_level(&opts, level);
    if (strcmp(opts.workload, "graph") == 0 && !was_seen(seen, n_seen, "--iters"))
        opts.iters = DEFAULT_GRAPH_ITERS;
    return opts;
}

/* ---- report: the output of contract §5 --------------------------------------- */
/* Numbers through the C library's printf in the C locale (never set otherwise). */

static const char *const IMPL = "c";

/* Output that cannot be written (a full disk, /dev/full) ends the program with one
 * line on stderr and exit status 1, not 2: the command line was fine. stdout is
 * buffered, so a lost write usually shows only when it is flushed: every print and
 * every flush is checked. */
__attribute__((noreturn)) static void output_error(void)
{
    fputs("error: cannot write to standard output\n", stderr);
    exit(1);
}

/* Push what is buffered to stdout now, or end the program if it cannot be written. */
static void flush_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        output_error();
}

/* 17 significant digits: enough to round-trip any double. */
static const char *g17(char buf[32], double v)
{
    snprintf(buf, 32, "%.17g", v);
    return buf;
}

typedef struct {
    const char *level;
    int64_t iters;
    uint64_t seed;
    int threads;
    double seconds;
    Sums sums;
} Result;

static double ns_per_iter(const Result *r)
{
    return r->seconds * 1e9 / (double)r->iters;
}

typedef struct {
    const char *level;
    int ops;
    int64_t iters;
    uint64_t seed;
    int threads;
    double seconds;
    GraphSums sums;
} GraphResult;

static double graph_ns_per_iter(const GraphResult *r)
{
    return r->seconds * 1e9 / (double)r->iters;
}

static double ns_per_op(const GraphResult *r)
{
    return graph_ns_per_iter(r) / (double)r->ops;
}

typedef struct {
    const char *name;
    int width; /* negative: right-aligned */
} Column;

#define N_COLUMNS 10
static const Column COLUMNS[N_COLUMNS] = {{"impl", 6},     {"level", 11},    {"threads", -7}, {"iters", -14},
                                          {"seconds", -10}, {"ns/iter", -10}, {"vs v0", -8},   {"sum_f", -25},
                                          {"sum_dx", -25},  {"sum_dy", -25}};
#define N_GRAPH_COLUMNS 12
static const Column GRAPH_COLUMNS[N_GRAPH_COLUMNS] = {
    {"impl", 6},     {"level", 11},  {"threads", -7},   {"ops", -8},           {"iters", -14},
    {"seconds", -10}, {"ns/iter", -14}, {"ns/op", -10}, {"vs v0", -8},         {"sum_loss", -25},
    {"sum_grad_in", -25}, {"sum_grad_all", -25}};

/* Cells padded to the columns' widths, two spaces apart, trailing spaces removed. */
static void row(const Column *columns, int n, const char *const *cells)
{
    char line[1024];
    size_t len = 0;
    for (int k = 0; k < n && len < sizeof line; k++) {
        int width = columns[k].width;
        len += (size_t)snprintf(line + len, sizeof line - len, width > 0 ? "%s%-*s" : "%s%*s",
                                k > 0 ? "  " : "", width > 0 ? width : -width, cells[k]);
    }
    if (len >= sizeof line)
        len = sizeof line - 1;
    while (len > 0 && line[len - 1] == ' ')
        len--;
    line[len] = '\0';
    if (puts(line) == EOF)
        output_error();
}

static void text_header(void)
{
    const char *cells[N_COLUMNS];
    for (int k = 0; k < N_COLUMNS; k++)
        cells[k] = COLUMNS[k].name;
    row(COLUMNS, N_COLUMNS, cells);
}

static void graph_text_header(void)
{
    const char *cells[N_GRAPH_COLUMNS];
    for (int k = 0; k < N_GRAPH_COLUMNS; k++)
        cells[k] = GRAPH_COLUMNS[k].name;
    row(GRAPH_COLUMNS, N_GRAPH_COLUMNS, cells);
}

/* v0's time over this one, "-" when v0 was not run before it. */
static const char *speedup(char buf[64], double v0_seconds, double seconds)
{
    if (v0_seconds > 0.0 && seconds > 0.0)
        snprintf(buf, 64, "%.1fx", v0_seconds / seconds);
    else
        snprintf(buf, 64, "-");
    return buf;
}

/* One result as a table row; `vs v0` is v0's time over this one (0: no v0 run). */
static void text_line(const Result *r, double v0_seconds)
{
    char threads[24], iters[24], seconds[64], ns[64], vs[64], f[32], dx[32], dy[32];
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(iters, sizeof iters, "%" PRId64, r->iters);
    snprintf(seconds, sizeof seconds, "%.3f", r->seconds);
    snprintf(ns, sizeof ns, "%.2f", ns_per_iter(r));
    const char *cells[N_COLUMNS] = {IMPL,    r->level,                         threads,          iters,
                                    seconds, ns,                               speedup(vs, v0_seconds, r->seconds),
                                    g17(f, r->sums.f), g17(dx, r->sums.dx), g17(dy, r->sums.dy)};
    row(COLUMNS, N_COLUMNS, cells);
}

static void graph_text_line(const GraphResult *r, double v0_seconds)
{
    char threads[24], ops[24], iters[24], seconds[64], ns[64], ns_op[64], vs[64], loss[32], grad_in[32],
        grad_all[32];
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(ops, sizeof ops, "%d", r->ops);
    snprintf(iters, sizeof iters, "%" PRId64, r->iters);
    snprintf(seconds, sizeof seconds, "%.3f", r->seconds);
    snprintf(ns, sizeof ns, "%.1f", graph_ns_per_iter(r));
    snprintf(ns_op, sizeof ns_op, "%.2f", ns_per_op(r));
    const char *cells[N_GRAPH_COLUMNS] = {IMPL,
                                          r->level,
                                          threads,
                                          ops,
                                          iters,
                                          seconds,
                                          ns,
                                          ns_op,
                                          speedup(vs, v0_seconds, r->seconds),
                                          g17(loss, r->sums.loss),
                                          g17(grad_in, r->sums.grad_in),
                                          g17(grad_all, r->sums.grad_all)};
    row(GRAPH_COLUMNS, N_GRAPH_COLUMNS, cells);
}

static void json_line(const Result *r)
{
    char seconds[32], ns[32], f[32], dx[32], dy[32];
    if (printf("{\"impl\": \"%s\", \"workload\": \"softplus\", \"level\": \"%s\", \"iters\": %" PRId64
               ", \"seed\": %" PRIu64 ", \"threads\": %d, \"seconds\": %s, \"ns_per_iter\": %s, \"sum_f\": %s, "
               "\"sum_dx\": %s, \"sum_dy\": %s}\n",
               IMPL, r->level, r->iters, r->seed, r->threads, g17(seconds, r->seconds), g17(ns, ns_per_iter(r)),
               g17(f, r->sums.f), g17(dx, r->sums.dx), g17(dy, r->sums.dy)) < 0)
        output_error();
}

static void graph_json_line(const GraphResult *r)
{
    char seconds[32], ns[32], ns_op[32], loss[32], grad_in[32], grad_all[32];
    if (printf("{\"impl\": \"%s\", \"workload\": \"graph\", \"level\": \"%s\", \"ops\": %d, \"iters\": %" PRId64
               ", \"seed\": %" PRIu64 ", \"threads\": %d, \"seconds\": %s, \"ns_per_iter\": %s, \"ns_per_op\": %s, "
               "\"sum_loss\": %s, \"sum_grad_in\": %s, \"sum_grad_all\": %s}\n",
               IMPL, r->level, r->ops, r->iters, r->seed, r->threads, g17(seconds, r->seconds),
               g17(ns, graph_ns_per_iter(r)), g17(ns_op, ns_per_op(r)), g17(loss, r->sums.loss),
               g17(grad_in, r->sums.grad_in), g17(grad_all, r->sums.grad_all)) < 0)
        output_error();
}

static void eval_text(double x, double y, double f, double dfdx, double dfdy)
{
    char b[5][32];
    if (printf("x %s  y %s  f %s  dfdx %s  dfdy %s\n", g17(b[0], x), g17(b[1], y), g17(b[2], f),
               g17(b[3], dfdx), g17(b[4], dfdy)) < 0)
        output_error();
}

static void eval_json(double x, double y, double f, double dfdx, double dfdy)
{
    char b[5][32];
    if (printf("{\"impl\": \"%s\", \"x\": %s, \"y\": %s, \"f\": %s, \"dfdx\": %s, \"dfdy\": %s}\n", IMPL,
               g17(b[0], x), g17(b[1], y), g17(b[2], f), g17(b[3], dfdx), g17(b[4], dfdy)) < 0)
        output_error();
}

/* ---- main: command line, dispatch to the levels, output ---------------------- */

static const char *const VERSION_TEXT = "autograd (c) 0.1.0";
static const char *const HELP_TEXT =
    "usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]\n"
    "                [--threads T] [--json]\n"
    "       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]\n"
    "                [--seed S] [--threads T] [--json]\n"
    "       autograd --eval X Y [--json]\n"
    "       autograd --help | --version\n"
    "\n"
    "Runs N forward/backward passes through a reverse-mode autograd at each\n"
    "optimization level and prints the time and the checksums. Workloads:\n"
    "  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the\n"
    "            sums of f, df/dx and df/dy over the samples\n"
    "  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),\n"
    "            loss = the sum of every node; checksums are the sums of the loss,\n"
    "            of the inputs' weighted gradients and of every node's gradient\n"
    "\n"
    "  --workload W softplus or graph (default softplus)\n"
    "  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,\n"
    "               the default), or a softplus baseline: fused, fused-simd\n"
    "  --ops M      graph ops, 1..1000000 (default 10000; graph workload only)\n"
    "  --iters N    samples, 1..10^12 (default 10000000; graph 10000)\n"
    "  --seed S     input stream seed, 0..2^64-1 (default 42)\n"
    "  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)\n"
    "  --json       one JSON object per line instead of the table\n"
    "  --eval X Y   f and its gradient at one point, through the softplus v2 tape";

/* CPUs in this process's affinity mask (what taskset or a container allows). */
static int cpus_available(void)
{
    cpu_set_t mask; /* room for 1024 CPUs */
    if (sched_getaffinity(0, sizeof mask, &mask) != 0)
        return 1;
    int count = CPU_COUNT(&mask);
    return count > 0 ? count : 1;
}

static Sums run_level(const char *level, uint64_t seed, int64_t n, int threads)
{
    if (strcmp(level, "v0") == 0)
        return run_v0(seed, n);
    if (strcmp(level, "v1") == 0)
        return run_v1(seed, n);
    if (strcmp(level, "v2") == 0)
        return run_v2(seed, n);
    if (strcmp(level, "v3") == 0)
        return run_v3(seed, n);
    if (strcmp(level, "v4") == 0)
        return run_v4(seed, n, threads);
    if (strcmp(level, "fused") == 0)
        return run_fused(seed, n);
    return run_fused_simd(seed, n);
}

static GraphSums run_graph_level(const char *level, uint64_t seed, int m, int64_t n, int threads)
{
    if (strcmp(level, "v0") == 0)
        return run_graph_v0(seed, m, n);
    if (strcmp(level, "v1") == 0)
        return run_graph_v1(seed, m, n);
    if (strcmp(level, "v2") == 0)
        return run_graph_v2(seed, m, n);
    if (strcmp(level, "v3") == 0)
        return run_graph_v3(seed, m, n);
    return run_graph_v4(seed, m, n, threads);
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The graph workload (docs/contract-graph.md): each level, timed, one line each. */
static void run_graph(const Options *opts)
{
    if (!opts->json) {
        graph_text_header();
        flush_output();
    }
    double v0_seconds = 0.0;
    for (int k = 0; k < opts->n_levels; k++) {
        const char *level = opts->levels[k];
        int threads = strcmp(level, "v4") == 0 ? opts->threads : 1;
        int64_t start = monotonic_ns();
        GraphSums sums = run_graph_level(level, opts->seed, opts->ops, opts->iters, threads);
        double seconds = (double)(monotonic_ns() - start) / 1e9;
        GraphResult r = {level, opts->ops, opts->iters, opts->seed, threads, seconds, sums};
        if (strcmp(level, "v0") == 0)
            v0_seconds = seconds;
        if (opts->json)
            graph_json_line(&r);
        else
            graph_text_line(&r, v0_seconds);
        flush_output(); /* each row as soon as its level finishes */
    }
}

static void run(const Options *opts)
{
    if (!opts->json) {
        text_header();
        flush_output();
    }
    double v0_seconds = 0.0;
    for (int k = 0; k < opts->n_levels; k++) {
        const char *level = opts->levels[k];
        int threads = strcmp(level, "v4") == 0 ? opts->threads : 1;
        int64_t start = monotonic_ns();
        Sums sums = run_level(level, opts->seed, opts->iters, threads);
        double seconds = (double)(monotonic_ns() - start) / 1e9;
        Result r = {level, opts->iters, opts->seed, threads, seconds, sums};
        if (strcmp(level, "v0") == 0)
            v0_seconds = seconds;
        if (opts->json)
            json_line(&r);
        else
            text_line(&r, v0_seconds);
        flush_output(); /* each row as soon as its level finishes */
    }
}

static void evaluate(const Options *opts)
{
    double f, dfdx, dfdy;
    eval_point(opts->x, opts->y, &f, &dfdx, &dfdy);
    double p = (opts->x + opts->y) * opts->x;
    if (!isfinite(p))
        usage_error("(X + Y) * X overflows at this point");
    if (!isfinite(f) || !isfinite(dfdx) || !isfinite(dfdy))
        usage_error("the result overflows at this point");
    if (opts->json)
        eval_json(opts->x, opts->y, f, dfdx, dfdy);
    else
        eval_text(opts->x, opts->y, f, dfdx, dfdy);
}

int main(int argc, char **argv)
{
    Options opts = parse(argc, argv, cpus_available());
    if (opts.mode == HELP) {
        if (puts(HELP_TEXT) == EOF)
            output_error();
    } else if (opts.mode == VERSION) {
        if (puts(VERSION_TEXT) == EOF || puts(target_text()) == EOF)
            output_error();
    } else if (opts.mode == EVAL) {
        evaluate(&opts);
    } else if (strcmp(opts.workload, "graph") == 0) {
        run_graph(&opts);
    } else {
        run(&opts);
    }
    /* Closing stdout reports the last buffered write's failure (and a failed close):
     * left to exit(), it would be lost and the status 0. */
    flush_output();
    if (fclose(stdout) != 0)
        output_error();
    return 0;
}
