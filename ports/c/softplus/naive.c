/* Level v0 (naive): fresh heap nodes every iteration, linked by pointers; values are
 * recomputed on demand and backward recurses through the graph. The nodes come from
 * malloc (node_new) and are freed at the end of the iteration. */

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
