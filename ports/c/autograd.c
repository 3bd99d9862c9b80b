/* autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
 * through a reverse-mode autograd, level by level (docs/contract.md).
 *
 * The C port of the Codon program, in one file and in the Codon modules' order:
 * rng, ops, graph (v0 naive, v1 pool), tape (v2), fused, vmath, simd (v3),
 * threads (v4), fused-simd, cli, report, main. Same names, same arithmetic in the
 * same order, same command line and output.
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

/* out[j] = exp(-|p[j]|) for j < n. */
static inline void exp_neg_abs_lanes(const double *restrict p, double *restrict out, int n)
{
    for (int j = 0; j < n; j++)
        out[j] = vexp(-fabs(p[j]));
}

/* out[j] = log1p(src[j]) for j < n. */
static inline void log1p_lanes(const double *restrict src, double *restrict out, int n)
{
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

/* ---- cli: the command line of contract §4, parsed strictly ------------------- */
/* Every bad input ends in usage_error: one line on stderr, exit status 2, and
 * nothing has reached stdout yet (parsing and checks come before any output). */

static const char *const LEVELS[] = {"v0", "v1", "v2", "v3", "v4"}; /* --level all, in order */
static const char *const BASELINES[] = {"fused", "fused-simd"};      /* run only when named */
#define N_LEVELS 5
#define N_BASELINES 2
#define MAX_ITERS UINT64_C(1000000000000)
#define MAX_THREADS 1024
#define DEFAULT_ITERS 10000000
#define DEFAULT_SEED 42

enum { RUN, EVAL, HELP, VERSION };

typedef struct {
    int mode;
    const char *levels[N_LEVELS];
    int n_levels;
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

static void parse_level(Options *opts, const char *text)
{
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
    for (int k = 0; k < N_BASELINES; k++)
        if (strcmp(text, BASELINES[k]) == 0) {
            opts->levels[0] = BASELINES[k];
            opts->n_levels = 1;
            return;
        }
    usage_error("--level must be one of v0, v1, v2, v3, v4, fused, fused-simd or all, got %s", shown(text));
}

/* Options from the command line; a bad one ends the program in usage_error. */
static Options parse(int argc, char **argv, int cpus)
{
    static const char *const FLAGS[] = {"--level", "--iters", "--seed", "--threads", "--json", "--eval"};
    char **args = argv + 1;
    int n_args = argc - 1;
    Options opts = {.mode = RUN, .iters = DEFAULT_ITERS, .seed = DEFAULT_SEED, .threads = cpus};
    parse_level(&opts, "all");
    if (n_args == 1 && strcmp(args[0], "--help") == 0) {
        opts.mode = HELP;
        return opts;
    }
    if (n_args == 1 && strcmp(args[0], "--version") == 0) {
        opts.mode = VERSION;
        return opts;
    }
    const char *seen[6];
    int n_seen = 0;
    for (int i = 0; i < n_args;) {
        const char *flag = args[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "--version") == 0)
            usage_error("%s takes no other arguments", flag);
        bool known = false;
        for (int k = 0; k < 6; k++)
            known = known || strcmp(flag, FLAGS[k]) == 0;
        if (!known)
            usage_error("unknown argument %s (try --help)", shown(flag));
        for (int k = 0; k < n_seen; k++)
            if (strcmp(flag, seen[k]) == 0)
                usage_error("%s given twice", flag);
        seen[n_seen++] = flag;
        int arity = strcmp(flag, "--json") == 0 ? 0 : strcmp(flag, "--eval") == 0 ? 2 : 1;
        if (i + arity >= n_args)
            usage_error("%s needs %s", flag, arity == 2 ? "two values" : "a value");
        const char *value = arity > 0 ? args[i + 1] : "";
        if (strcmp(flag, "--json") == 0) {
            opts.json = true;
        } else if (strcmp(flag, "--level") == 0) {
            parse_level(&opts, value);
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
    if (opts.mode == EVAL)
        for (int k = 0; k < n_seen; k++)
            if (strcmp(seen[k], "--eval") != 0 && strcmp(seen[k], "--json") != 0)
                usage_error("--eval takes no %s", seen[k]);
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

#define N_COLUMNS 10
static const struct {
    const char *name;
    int width; /* negative: right-aligned */
} COLUMNS[N_COLUMNS] = {{"impl", 6},     {"level", 11},   {"threads", -7}, {"iters", -14},
                        {"seconds", -10}, {"ns/iter", -10}, {"vs v0", -8},   {"sum_f", -25},
                        {"sum_dx", -25},  {"sum_dy", -25}};

/* Cells padded to COLUMNS' widths, two spaces apart, trailing spaces removed. */
static void print_row(const char *const cells[N_COLUMNS])
{
    char line[1024];
    size_t len = 0;
    for (int k = 0; k < N_COLUMNS && len < sizeof line; k++) {
        int width = COLUMNS[k].width;
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
    print_row(cells);
}

/* One result as a table row; `vs v0` is v0's time over this one (0: no v0 run). */
static void text_line(const Result *r, double v0_seconds)
{
    char threads[24], iters[24], seconds[64], ns[64], speedup[64], f[32], dx[32], dy[32];
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(iters, sizeof iters, "%" PRId64, r->iters);
    snprintf(seconds, sizeof seconds, "%.3f", r->seconds);
    snprintf(ns, sizeof ns, "%.2f", ns_per_iter(r));
    if (v0_seconds > 0.0 && r->seconds > 0.0)
        snprintf(speedup, sizeof speedup, "%.1fx", v0_seconds / r->seconds);
    else
        snprintf(speedup, sizeof speedup, "-");
    const char *cells[N_COLUMNS] = {IMPL,    r->level, threads,          iters,             seconds,
                                    ns,      speedup,  g17(f, r->sums.f), g17(dx, r->sums.dx), g17(dy, r->sums.dy)};
    print_row(cells);
}

static void json_line(const Result *r)
{
    char seconds[32], ns[32], f[32], dx[32], dy[32];
    if (printf("{\"impl\": \"%s\", \"level\": \"%s\", \"iters\": %" PRId64 ", \"seed\": %" PRIu64
               ", \"threads\": %d, \"seconds\": %s, \"ns_per_iter\": %s, \"sum_f\": %s, \"sum_dx\": %s, "
               "\"sum_dy\": %s}\n",
               IMPL, r->level, r->iters, r->seed, r->threads, g17(seconds, r->seconds), g17(ns, ns_per_iter(r)),
               g17(f, r->sums.f), g17(dx, r->sums.dx), g17(dy, r->sums.dy)) < 0)
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
    "       autograd --eval X Y [--json]\n"
    "       autograd --help | --version\n"
    "\n"
    "Runs N forward/backward passes of f(x, y) = softplus((x + y) * x) through a\n"
    "reverse-mode autograd at each optimization level and prints the time and the\n"
    "checksums (sums of f, df/dx and df/dy over the samples).\n"
    "\n"
    "  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,\n"
    "               the default), or a baseline: fused, fused-simd\n"
    "  --iters N    samples, 1..10^12 (default 10000000)\n"
    "  --seed S     input stream seed, 0..2^64-1 (default 42)\n"
    "  --threads T  threads for v4, 1..1024 (default: the CPUs this process may use)\n"
    "  --json       one JSON object per line instead of the table\n"
    "  --eval X Y   f and its gradient at one point, through the v2 tape";

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

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
