/* Graph level v3 (simd): the v2 graph tape recorded once per batch of GRAPH_BATCH samples.
 * Each var holds GRAPH_BATCH lanes (structure of arrays), each op is a loop over its lanes
 * that gcc vectorizes, and exp/log1p are libmvec's at the target's width (core/vmath). */

/* Lanes per var, a multiple of every vector width. A batch's vals and grads take
 * n_nodes * GRAPH_BATCH * 16 bytes: 4.5 MB at 16 lanes and 10,000 ops (2.2 MB at 8).
 * Why 16 (the Codon program's choice): docs/findings/graph-where-the-time-goes.md. */
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

static inline void graph_batch_reset(GraphBatchTape *t);

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

static inline void graph_batch_reset(GraphBatchTape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
    t->n_saved = 0;
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
    double *restrict o = graph_batch_vals(t, graph_batch_push(t, GRAPH_SUM4, a, b, c, d));
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
    int out = graph_batch_push(t, GRAPH_SOFTMAX4, a, b, c, d);
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
        } else if (op.kind == GRAPH_SUM4) {
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

/* Batches [first_batch, end_batch) of the n samples through one batch tape. No caller passes an
 * empty range (v4's team has at most one thread a batch: core/threads); one would allocate nothing. */
static GraphSums run_graph_batches(uint64_t seed, int m, int64_t n, int64_t first_batch, int64_t end_batch)
{
    if (first_batch >= end_batch)
        return (GraphSums){0.0, 0.0, 0.0};
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
