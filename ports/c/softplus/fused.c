/* Baseline `fused` (not a level): the same math written out by hand with no tape or
 * graph, the floor that the v2 tape can approach. */

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

/* Baseline `fused-simd` (not a level): the same over batches of BATCH samples with
 * v3's vector math and lane sums, no tape: the floor for v3 and v4. */

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
