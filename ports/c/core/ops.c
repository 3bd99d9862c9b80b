/* The scalar math of contract §2, shared by every level and baseline, so that the
 * levels differ only in how they organise the graph, never in the arithmetic. */

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

/* d softplus / dp = 1 / (1 + exp(-p)) for p >= 0, else exp(p) / (1 + exp(p)): the
 * numerator chosen, then one division (written as two quotients, gcc divides twice in
 * every vector lane, once for each, and blends). */
static inline double sigmoid_e(double p, double e)
{
    return (p >= 0.0 ? 1.0 : e) / (1.0 + e);
}

static inline double softplus(double p)
{
    return softplus_e(p, exp_neg_abs(p));
}

static inline double sigmoid(double p)
{
    return sigmoid_e(p, exp_neg_abs(p));
}
