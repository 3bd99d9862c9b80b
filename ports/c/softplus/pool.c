/* Level v1 (pool): the v0 graph, but its nodes come from a fixed pool allocated once
 * and relinked every iteration, so the loop allocates nothing. Values are still
 * recomputed on demand (the seed's v1). */

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
