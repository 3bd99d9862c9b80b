/* Graph level v2 (tape): the softplus workload's tape grown to M ops, recorded anew for
 * every sample as a dynamic autograd does: contiguous arrays of vars {val, grad} and ops
 * {kind, up to 4 input ids, first output id}, addressed by index; each result computed
 * once when pushed; backward is an index loop over the ops in reverse. */

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

static inline void graph_tape_reset(GraphTape *t);

static void graph_tape_init(GraphTape *t, int m)
{
    t->val = graph_alloc(0, (size_t)n_nodes(m) * sizeof *t->val);
    t->grad = graph_alloc(0, (size_t)n_nodes(m) * sizeof *t->grad);
    t->ops = graph_alloc(0, (size_t)m * sizeof *t->ops);
    t->saved = graph_alloc(0, (size_t)(m / 4 + 1) * sizeof *t->saved);
    graph_tape_reset(t);
}

static inline void graph_tape_reset(GraphTape *t)
{
    t->n_vars = 0;
    t->n_ops = 0;
    t->n_saved = 0;
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
    return graph_tape_push(t, GRAPH_SUM4, a, b, c, d, ((v[a] + v[b]) + v[c]) + v[d]);
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
    int out = graph_tape_push(t, GRAPH_SOFTMAX4, a, b, c, d, o[0]);
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
        } else if (op.kind == GRAPH_SUM4) {
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
