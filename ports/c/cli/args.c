/* The command line of contract §4, parsed strictly: every bad input ends in usage_error,
 * whose message is one line: it prints `error: ...` and exits 2 before anything reaches
 * stdout (parsing and checks come before any output). */

static const char *const LEVELS[] = {"v0", "v1", "v2", "v3", "v4"}; /* --level all, in order */
static const char *const BASELINES[] = {"fused", "fused-simd"};      /* run only when named (softplus workload) */
static const char *const WORKLOADS[] = {"softplus", "graph"};        /* --workload, the first the default */
#define N_LEVELS 5
#define N_BASELINES 2
#define N_WORKLOADS 2
#define MAX_ITERS UINT64_C(1000000000000)
#define MAX_THREADS 1024
#define MAX_GRAPH_OPS 1000000 /* --ops (MAX_OPS is the softplus tape's) */
#define DEFAULT_ITERS 10000000       /* softplus samples */
#define DEFAULT_GRAPH_ITERS 10000    /* graph samples (Rogozhnikov's 10,000 passes) */
#define DEFAULT_OPS 10000
#define DEFAULT_SEED 42
#define N_FLAGS 8
static const char *const FLAGS[N_FLAGS] = {"--workload", "--level",   "--ops",  "--iters",
                                           "--seed",     "--threads", "--json", "--eval"};

enum { RUN, EVAL, HELP, VERSION };

__attribute__((noreturn, format(printf, 1, 2))) static void usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("error: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(2);
}

typedef struct {
    int mode;
    const char *workload;
    const char *levels[N_LEVELS];
    int n_levels;
    int ops;
    int64_t iters;
    uint64_t seed;
    int threads;
    bool json;
    double x;
    double y;
} Options;

/* An argument quoted for an error line, control and non-ASCII bytes shown as '?'.
 * (Only ever called on the way to exit, so it is never freed.) */
static const char *shown(const char *arg)
{
    size_t len = strlen(arg);
    char *out = malloc(len + 3);
    if (out == NULL)
        return "'?'";
    out[0] = '\'';
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)arg[k];
        out[k + 1] = c >= ' ' && c <= '~' ? (char)c : '?';
    }
    out[len + 1] = '\'';
    out[len + 2] = '\0';
    return out;
}

/* A decimal integer in [lo, hi], written in digits only (no sign, exponent, hex). */
static uint64_t parse_uint(const char *flag, const char *text, uint64_t lo, uint64_t hi)
{
    size_t len = strlen(text);
    bool ok = len >= 1 && len <= 20;
    uint64_t value = 0;
    for (size_t k = 0; ok && k < len; k++) {
        if (text[k] < '0' || text[k] > '9') {
            ok = false;
            break;
        }
        uint64_t digit = (uint64_t)(text[k] - '0');
        if (value > (hi - digit) / 10) /* value * 10 + digit would pass hi (or wrap) */
            ok = false;
        else
            value = value * 10 + digit;
    }
    if (!ok || value < lo)
        usage_error("%s must be a whole number from %" PRIu64 " to %" PRIu64 ", got %s", flag, lo, hi,
                    shown(text));
    return value;
}

/* [+-] digits [. digits] [e [+-] digits], with at least one mantissa digit. */
static bool is_decimal(const char *text)
{
    size_t i = 0, n = strlen(text);
    if (i < n && (text[i] == '+' || text[i] == '-'))
        i++;
    int digits = 0;
    while (i < n && text[i] >= '0' && text[i] <= '9')
        i++, digits++;
    if (i < n && text[i] == '.') {
        i++;
        while (i < n && text[i] >= '0' && text[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < n && (text[i] == 'e' || text[i] == 'E')) {
        i++;
        if (i < n && (text[i] == '+' || text[i] == '-'))
            i++;
        size_t start = i;
        while (i < n && text[i] >= '0' && text[i] <= '9')
            i++;
        if (i == start)
            return false;
    }
    return i == n;
}

/* A finite decimal number (no hex, inf or nan), read by the C library's strtod. */
static double parse_point(const char *flag, const char *text)
{
    if (!is_decimal(text))
        usage_error("%s needs finite decimal numbers, got %s", flag, shown(text));
    double value = strtod(text, NULL);
    if (!isfinite(value)) /* +-inf: the decimal is beyond the double range */
        usage_error("%s value %s is out of range", flag, shown(text));
    return value;
}

/* The n names joined by ", " onto the end of out (size bytes in all), for the lists of names
 * in the errors below. */
static char *join_onto(char *out, size_t size, const char *const *names, int n)
{
    for (int k = 0; k < n; k++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", len > 0 ? ", " : "", names[k]);
    }
    return out;
}

/* The levels --level names; the graph workload has no baselines. */
static void parse_level(Options *opts, const char *text)
{
    bool softplus = strcmp(opts->workload, "softplus") == 0;
    if (strcmp(text, "all") == 0) {
        for (int k = 0; k < N_LEVELS; k++)
            opts->levels[k] = LEVELS[k];
        opts->n_levels = N_LEVELS;
        return;
    }
    for (int k = 0; k < N_LEVELS; k++)
        if (strcmp(text, LEVELS[k]) == 0) {
            opts->levels[0] = LEVELS[k];
            opts->n_levels = 1;
            return;
        }
    for (int k = 0; softplus && k < N_BASELINES; k++)
        if (strcmp(text, BASELINES[k]) == 0) {
            opts->levels[0] = BASELINES[k];
            opts->n_levels = 1;
            return;
        }
    char named[64] = "";
    join_onto(named, sizeof named, LEVELS, N_LEVELS);
    if (softplus)
        join_onto(named, sizeof named, BASELINES, N_BASELINES);
    usage_error("--level must be one of %s or all, got %s", named, shown(text));
}

static const char *parse_workload(const char *text)
{
    for (int k = 0; k < N_WORKLOADS; k++)
        if (strcmp(text, WORKLOADS[k]) == 0)
            return WORKLOADS[k];
    char named[64] = "";
    usage_error("--workload must be one of %s, got %s", join_onto(named, sizeof named, WORKLOADS, N_WORKLOADS),
                shown(text));
}

/* Whether flag is among the n flags seen. */
static bool was_seen(const char *const *seen, int n, const char *flag)
{
    for (int k = 0; k < n; k++)
        if (strcmp(seen[k], flag) == 0)
            return true;
    return false;
}

/* Options from the command line; a bad one ends the program in usage_error. */
static Options parse(int argc, char **argv, int cpus)
{
    char **args = argv + 1;
    int n_args = argc - 1;
    Options opts = {.mode = RUN,
                    .workload = WORKLOADS[0],
                    .ops = DEFAULT_OPS,
                    .iters = DEFAULT_ITERS,
                    .seed = DEFAULT_SEED,
                    .threads = cpus};
    parse_level(&opts, "all");
    if (n_args == 1 && strcmp(args[0], "--help") == 0) {
        opts.mode = HELP;
        return opts;
    }
    if (n_args == 1 && strcmp(args[0], "--version") == 0) {
        opts.mode = VERSION;
        return opts;
    }
    const char *seen[N_FLAGS];
    int n_seen = 0;
    const char *level = "all";
    for (int i = 0; i < n_args;) {
        const char *flag = args[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "--version") == 0)
            usage_error("%s takes no other arguments", flag);
        if (!was_seen(FLAGS, N_FLAGS, flag))
            usage_error("unknown argument %s (try --help)", shown(flag));
        if (was_seen(seen, n_seen, flag))
            usage_error("%s given twice", flag);
        seen[n_seen++] = flag;
        int arity = strcmp(flag, "--json") == 0 ? 0 : strcmp(flag, "--eval") == 0 ? 2 : 1;
        if (i + arity >= n_args)
            usage_error("%s needs %s", flag, arity == 2 ? "two values" : "a value");
        const char *value = arity > 0 ? args[i + 1] : "";
        if (strcmp(flag, "--json") == 0) {
            opts.json = true;
        } else if (strcmp(flag, "--workload") == 0) {
            opts.workload = parse_workload(value);
        } else if (strcmp(flag, "--level") == 0) {
            level = value; /* checked below, once the workload is known */
        } else if (strcmp(flag, "--ops") == 0) {
            opts.ops = (int)parse_uint(flag, value, 1, MAX_GRAPH_OPS);
        } else if (strcmp(flag, "--iters") == 0) {
            opts.iters = (int64_t)parse_uint(flag, value, 1, MAX_ITERS);
        } else if (strcmp(flag, "--seed") == 0) {
            opts.seed = parse_uint(flag, value, 0, UINT64_MAX);
        } else if (strcmp(flag, "--threads") == 0) {
            opts.threads = (int)parse_uint(flag, value, 1, MAX_THREADS);
        } else { /* --eval X Y */
            opts.mode = EVAL;
            opts.x = parse_point(flag, value);
            opts.y = parse_point(flag, args[i + 2]);
        }
        i += 1 + arity;
    }
    if (opts.mode == EVAL) {
        for (int k = 0; k < n_seen; k++)
            if (strcmp(seen[k], "--eval") != 0 && strcmp(seen[k], "--json") != 0)
                usage_error("--eval takes no %s", seen[k]);
        return opts;
    }
    if (was_seen(seen, n_seen, "--ops") && strcmp(opts.workload, "graph") != 0)
        usage_error("--ops belongs to the graph workload (add --workload graph)");
    parse_level(&opts, level);
    if (strcmp(opts.workload, "graph") == 0 && !was_seen(seen, n_seen, "--iters"))
        opts.iters = DEFAULT_GRAPH_ITERS;
    return opts;
}
