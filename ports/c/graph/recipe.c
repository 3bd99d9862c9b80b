/* The graph workload's recipe (docs/contract-graph.md G1-G3), shared by every graph
 * level: a sample's 100 inputs, the kind and input offsets of each of the M ops, the
 * scalar forward math of an op, and the per-sample checksums. */

/* The graph workload's op kinds, defined here once for every graph level; GRAPH_ keeps them
 * apart from the softplus workload's kinds, which share three names, two with other values. */
enum {
    GRAPH_LEAF = -1,    /* a node no op made: an input */
    GRAPH_SOFTPLUS = 0, /* op k has kind k % 4, in this order */
    GRAPH_SUM4 = 1,
    GRAPH_PROD = 2,
    GRAPH_SOFTMAX4 = 3
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

/* Op of kind KIND onto g, a level's graph builder, its inputs counted back from the
 * builder's size (G2). The builder's functions PREFIX_size (the nodes so far) and
 * PREFIX_push_softplus, _push_sum4, _push_prod, _push_softmax4 take node ids. C has no
 * duck typing: record_op and record_ops are macros, given the builder's prefix
 * (node_graph, graph_tape, graph_batch). */
#define record_op(PREFIX, g, kind)                                                                               \
    do {                                                                                                         \
        int n = PREFIX##_size(g);                                                                                \
        switch (kind) {                                                                                          \
        case GRAPH_SOFTPLUS:                                                                                     \
            PREFIX##_push_softplus(g, n - 10);                                                                   \
            break;                                                                                               \
        case GRAPH_SUM4:                                                                                         \
            PREFIX##_push_sum4(g, n - 30, n - 25, n - 20, n - 15);                                               \
            break;                                                                                               \
        case GRAPH_PROD:                                                                                         \
            PREFIX##_push_prod(g, n - 20, n - 10);                                                               \
            break;                                                                                               \
        default:                                                                                                 \
            PREFIX##_push_softmax4(g, n - 4, n - 3, n - 2, n - 1);                                               \
            break;                                                                                               \
        }                                                                                                        \
    } while (0)

/* The M ops of G2, in order, onto g. Op k's kind is k % 4, so they go on a block of the
 * four kinds at a time, each kind known where it is compiled, then the first M % 4 of
 * one more block: no branch on the kind per op. */
#define record_ops(PREFIX, g, m)                                                                                 \
    do {                                                                                                         \
        for (int block = 0; block < (m) / 4; block++) {                                                          \
            record_op(PREFIX, g, GRAPH_SOFTPLUS);                                                                \
            record_op(PREFIX, g, GRAPH_SUM4);                                                                    \
            record_op(PREFIX, g, GRAPH_PROD);                                                                    \
            record_op(PREFIX, g, GRAPH_SOFTMAX4);                                                                \
        }                                                                                                        \
        for (int kind = 0; kind < (m) % 4; kind++)                                                               \
            record_op(PREFIX, g, kind);                                                                          \
    } while (0)

/* Python's max(a, b): b if b > a, else a. */
static inline double max2(double a, double b)
{
    return b > a ? b : a;
}

/* out_j = exp(in_j - max) / (((e_0 + e_1) + e_2) + e_3). */
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
    if (p == NULL)
        out_of_memory();
    return p;
}
