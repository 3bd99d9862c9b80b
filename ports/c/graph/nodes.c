/* The node objects of graph levels v0 and v1: every node a heap object holding its value,
 * its grad and pointers to its input nodes, each value computed once when the node is
 * made. The graph keeps its nodes in creation order, which is all backward needs: it walks
 * them in reverse. v0 frees the nodes after every sample, v1 keeps them as a pool. */

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

static inline void graph_node_set(GraphNode *node, int kind, double val, double saved, GraphNode *a,
                                  GraphNode *b, GraphNode *c, GraphNode *d);

/* A fresh node from malloc (the Codon program's NodeGraph.make, then set). */
static inline GraphNode *graph_node_new(int kind, double val, double saved, GraphNode *a, GraphNode *b,
                                        GraphNode *c, GraphNode *d)
{
    GraphNode *node = graph_alloc(0, sizeof *node);
    graph_node_set(node, kind, val, saved, a, b, c, d);
    return node;
}

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

typedef struct {
    GraphNode **nodes; /* in creation order */
    int len;           /* nodes made: the Codon program's made */
    int cap;           /* room in `nodes` */
    int count;
    bool pool;         /* v1: the nodes made once, by node_graph_make_pool, and remade by every sample */
} NodeGraph;

static void node_graph_init(NodeGraph *g)
{
    *g = (NodeGraph){NULL, 0, 0, 0, false};
}

/* Start a sample: a pool's nodes are remade; otherwise (v0) they are freed. The array of
 * pointers is kept either way (the Codon program empties its slots; only the nodes are the
 * level's point). */
static void node_graph_reset(NodeGraph *g)
{
    if (!g->pool) {
        for (int i = 0; i < g->len; i++)
            free(g->nodes[i]);
        g->len = 0;
    }
    g->count = 0;
}

/* Free the nodes and the array (the Codon program leaves them to its GC). */
static void node_graph_free(NodeGraph *g)
{
    for (int i = 0; i < g->len; i++)
        free(g->nodes[i]);
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

/* The next node, made as given: a new heap object (v0, and a pool's nodes as they are made),
 * or a pool's remade. */
static inline GraphNode *node_graph_take(NodeGraph *g, int kind, double val, double saved, GraphNode *a,
                                         GraphNode *b, GraphNode *c, GraphNode *d)
{
    if (g->count == g->len) {
        if (g->len == g->cap) {
            g->cap = g->cap > 0 ? 2 * g->cap : 1024;
            g->nodes = realloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
            if (g->nodes == NULL)
                out_of_memory();
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

/* Make a pool (v1) of `room` nodes, a sample's, once, before the first sample, as the Codon
 * program's NodeGraph[True] does; every sample then remakes them. */
static void node_graph_make_pool(NodeGraph *g, int room)
{
    node_graph_init(g);
    for (int i = 0; i < room; i++)
        node_graph_leaf(g, 0.0);
    g->pool = true;
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
    node_graph_take(g, GRAPH_SUM4, ((a->val + b->val) + c->val) + d->val, 0.0, a, b, c, d);
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
        node_graph_take(g, GRAPH_SOFTMAX4, o[q], 0.0, a, b, c, d);
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
        } else if (node->kind == GRAPH_SUM4) {
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
