/* Output of contract §5, written with the C library's printf in the C locale (the
 * program never sets another). */

static const char *const IMPL = "c";

/* Output that cannot be written (a full disk, /dev/full) ends the program with one
 * line on stderr and exit status 1, not 2: the command line was fine. stdout is
 * buffered, so a lost write usually shows only when it is flushed: every print and
 * every flush is checked. */
__attribute__((noreturn)) static void output_error(void)
{
    fputs("error: cannot write to standard output\n", stderr);
    exit(1);
}

/* Push what is buffered to stdout now, or end the program if it cannot be written. */
static void flush_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        output_error();
}

/* 17 significant digits: enough to round-trip any double. */
static const char *g17(char buf[32], double v)
{
    snprintf(buf, 32, "%.17g", v);
    return buf;
}

typedef struct {
    const char *level;
    int64_t iters;
    uint64_t seed;
    int threads;
    double seconds;
    double cpu_seconds; /* the CPU time of the same region (contract §5) */
    Sums sums;
} Result;

static double ns_per_iter(const Result *r)
{
    return r->seconds * 1e9 / (double)r->iters;
}

typedef struct {
    const char *level;
    int ops;
    int64_t iters;
    uint64_t seed;
    int threads;
    double seconds;
    double cpu_seconds;
    GraphSums sums;
} GraphResult;

static double graph_ns_per_iter(const GraphResult *r)
{
    return r->seconds * 1e9 / (double)r->iters;
}

static double ns_per_op(const GraphResult *r)
{
    return graph_ns_per_iter(r) / (double)r->ops;
}

typedef struct {
    const char *name;
    int width; /* negative: right-aligned */
} Column;

#define N_COLUMNS 10
static const Column COLUMNS[N_COLUMNS] = {{"impl", 6},     {"level", 11},    {"threads", -7}, {"iters", -14},
                                          {"seconds", -10}, {"ns/iter", -10}, {"vs v0", -8},   {"sum_f", -25},
                                          {"sum_dx", -25},  {"sum_dy", -25}};
#define N_GRAPH_COLUMNS 12
static const Column GRAPH_COLUMNS[N_GRAPH_COLUMNS] = {
    {"impl", 6},     {"level", 11},  {"threads", -7},   {"ops", -8},           {"iters", -14},
    {"seconds", -10}, {"ns/iter", -14}, {"ns/op", -10}, {"vs v0", -8},         {"sum_loss", -25},
    {"sum_grad_in", -25}, {"sum_grad_all", -25}};

/* Cells padded to the columns' widths, two spaces apart, trailing spaces removed. */
static void row(const Column *columns, int n, const char *const *cells)
{
    char line[1024];
    size_t len = 0;
    for (int k = 0; k < n && len < sizeof line; k++) {
        int width = columns[k].width;
        len += (size_t)snprintf(line + len, sizeof line - len, width > 0 ? "%s%-*s" : "%s%*s",
                                k > 0 ? "  " : "", width > 0 ? width : -width, cells[k]);
    }
    if (len >= sizeof line)
        len = sizeof line - 1;
    while (len > 0 && line[len - 1] == ' ')
        len--;
    line[len] = '\0';
    if (puts(line) == EOF)
        output_error();
}

static void text_header(void)
{
    const char *cells[N_COLUMNS];
    for (int k = 0; k < N_COLUMNS; k++)
        cells[k] = COLUMNS[k].name;
    row(COLUMNS, N_COLUMNS, cells);
}

static void graph_text_header(void)
{
    const char *cells[N_GRAPH_COLUMNS];
    for (int k = 0; k < N_GRAPH_COLUMNS; k++)
        cells[k] = GRAPH_COLUMNS[k].name;
    row(GRAPH_COLUMNS, N_GRAPH_COLUMNS, cells);
}

/* v0's time over this one, "-" when v0 was not run before it. */
static const char *speedup(char buf[64], double v0_seconds, double seconds)
{
    if (v0_seconds > 0.0 && seconds > 0.0)
        snprintf(buf, 64, "%.1fx", v0_seconds / seconds);
    else
        snprintf(buf, 64, "-");
    return buf;
}

/* One result as a table row; `vs v0` is v0's time over this one (0: no v0 run). */
static void text_line(const Result *r, double v0_seconds)
{
    char threads[24], iters[24], seconds[64], ns[64], vs[64], f[32], dx[32], dy[32];
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(iters, sizeof iters, "%" PRId64, r->iters);
    snprintf(seconds, sizeof seconds, "%.3f", r->seconds);
    snprintf(ns, sizeof ns, "%.2f", ns_per_iter(r));
    const char *cells[N_COLUMNS] = {IMPL,    r->level,                         threads,          iters,
                                    seconds, ns,                               speedup(vs, v0_seconds, r->seconds),
                                    g17(f, r->sums.f), g17(dx, r->sums.dx), g17(dy, r->sums.dy)};
    row(COLUMNS, N_COLUMNS, cells);
}

static void graph_text_line(const GraphResult *r, double v0_seconds)
{
    char threads[24], ops[24], iters[24], seconds[64], ns[64], ns_op[64], vs[64], loss[32], grad_in[32],
        grad_all[32];
    snprintf(threads, sizeof threads, "%d", r->threads);
    snprintf(ops, sizeof ops, "%d", r->ops);
    snprintf(iters, sizeof iters, "%" PRId64, r->iters);
    snprintf(seconds, sizeof seconds, "%.3f", r->seconds);
    snprintf(ns, sizeof ns, "%.1f", graph_ns_per_iter(r));
    snprintf(ns_op, sizeof ns_op, "%.2f", ns_per_op(r));
    const char *cells[N_GRAPH_COLUMNS] = {IMPL,
                                          r->level,
                                          threads,
                                          ops,
                                          iters,
                                          seconds,
                                          ns,
                                          ns_op,
                                          speedup(vs, v0_seconds, r->seconds),
                                          g17(loss, r->sums.loss),
                                          g17(grad_in, r->sums.grad_in),
                                          g17(grad_all, r->sums.grad_all)};
    row(GRAPH_COLUMNS, N_GRAPH_COLUMNS, cells);
}

static void json_line(const Result *r)
{
    char seconds[32], cpu[32], ns[32], f[32], dx[32], dy[32];
    if (printf("{\"impl\": \"%s\", \"workload\": \"softplus\", \"level\": \"%s\", \"iters\": %" PRId64
               ", \"seed\": %" PRIu64 ", \"threads\": %d, \"seconds\": %s, \"cpu_seconds\": %s, \"ns_per_iter\": %s, "
               "\"sum_f\": %s, \"sum_dx\": %s, \"sum_dy\": %s}\n",
               IMPL, r->level, r->iters, r->seed, r->threads, g17(seconds, r->seconds), g17(cpu, r->cpu_seconds),
               g17(ns, ns_per_iter(r)), g17(f, r->sums.f), g17(dx, r->sums.dx), g17(dy, r->sums.dy)) < 0)
        output_error();
}

static void graph_json_line(const GraphResult *r)
{
    char seconds[32], cpu[32], ns[32], ns_op[32], loss[32], grad_in[32], grad_all[32];
    if (printf("{\"impl\": \"%s\", \"workload\": \"graph\", \"level\": \"%s\", \"ops\": %d, \"iters\": %" PRId64
               ", \"seed\": %" PRIu64 ", \"threads\": %d, \"seconds\": %s, \"cpu_seconds\": %s, \"ns_per_iter\": %s, "
               "\"ns_per_op\": %s, \"sum_loss\": %s, \"sum_grad_in\": %s, \"sum_grad_all\": %s}\n",
               IMPL, r->level, r->ops, r->iters, r->seed, r->threads, g17(seconds, r->seconds),
               g17(cpu, r->cpu_seconds), g17(ns, graph_ns_per_iter(r)), g17(ns_op, ns_per_op(r)),
               g17(loss, r->sums.loss), g17(grad_in, r->sums.grad_in), g17(grad_all, r->sums.grad_all)) < 0)
        output_error();
}

static void eval_text(double x, double y, double f, double dfdx, double dfdy)
{
    char b[5][32];
    if (printf("x %s  y %s  f %s  dfdx %s  dfdy %s\n", g17(b[0], x), g17(b[1], y), g17(b[2], f),
               g17(b[3], dfdx), g17(b[4], dfdy)) < 0)
        output_error();
}

static void eval_json(double x, double y, double f, double dfdx, double dfdy)
{
    char b[5][32];
    if (printf("{\"impl\": \"%s\", \"x\": %s, \"y\": %s, \"f\": %s, \"dfdx\": %s, \"dfdy\": %s}\n", IMPL,
               g17(b[0], x), g17(b[1], y), g17(b[2], f), g17(b[3], dfdx), g17(b[4], dfdy)) < 0)
        output_error();
}
