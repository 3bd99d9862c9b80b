/* Level v3 (simd): the v2 tape over a batch of BATCH samples. Each var holds BATCH
 * lanes (structure of arrays), each op is a loop over its lanes that gcc vectorizes,
 * and exp/log1p are glibc's vector versions. The ops and their order are v2's. */

/* Lanes per var, a multiple of WIDTH: 256, as in the Codon program
 * (why: docs/findings/graph-where-the-time-goes.md). */
#define BATCH 256

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
