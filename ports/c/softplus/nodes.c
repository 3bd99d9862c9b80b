/* The pointer-linked graph of levels v0 and v1, the seed's first design: each node
 * knows its inputs, computes its value when asked (recomputing its whole subgraph
 * every time), and pushes gradients to its inputs by recursion. */

/* The softplus workload's op kinds, defined here once for every level (the tapes of
 * v2-v4 record SUM, PROD and SOFTPLUS). */
enum { LEAF = 0, SUM = 1, PROD = 2, SOFTPLUS = 3 };

typedef struct Node Node;
struct Node {
    int kind;
    double leaf_val; /* the value of a LEAF; unused by the other kinds */
    double grad;
    Node *a;         /* inputs: none for a LEAF, `a` only for SOFTPLUS */
    Node *b;
};

static void node_set(Node *node, int kind, double leaf_val, Node *a, Node *b);

/* A fresh node from malloc (the Codon program's Node(...)); naive frees it. */
static Node *node_new(int kind, double leaf_val, Node *a, Node *b)
{
    Node *node = malloc(sizeof *node);
    if (node == NULL)
        out_of_memory();
    node_set(node, kind, leaf_val, a, b);
    return node;
}

/* (Re)make a node: used by node_new (v0) and by the v1 pool. */
static void node_set(Node *node, int kind, double leaf_val, Node *a, Node *b)
{
    node->kind = kind;
    node->leaf_val = leaf_val;
    node->grad = 0.0;
    node->a = a;
    node->b = b;
}

static double node_op_value(const Node *node);

/* The node's value, recomputed from the leaves on every call. A leaf's is read where it is
 * asked for (9 of a sample's 15 calls are on leaves); the other kinds recurse. */
static inline __attribute__((always_inline)) double node_value(const Node *node)
{
    if (node->kind == LEAF)
        return node->leaf_val;
    return node_op_value(node);
}

/* node_value of a node that is not a leaf. */
static double node_op_value(const Node *node)
{
    switch (node->kind) {
    case SUM:
        return node_value(node->a) + node_value(node->b);
    case PROD:
        return node_value(node->a) * node_value(node->b);
    default:
        return softplus(node_value(node->a));
    }
}

static void node_op_backward(Node *node, double g);

/* Add g to the node's grad and recurse into its inputs (chain rule). */
static inline __attribute__((always_inline)) void node_backward(Node *node, double g)
{
    node->grad += g;
    if (node->kind != LEAF)
        node_op_backward(node, g);
}

/* node_backward's recursion into a node's inputs, for a node that is not a leaf. */
static void node_op_backward(Node *node, double g)
{
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
