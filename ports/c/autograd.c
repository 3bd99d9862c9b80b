/* autograd: millions of forward/backward passes of f(x, y) = softplus((x + y) * x)
 * through a reverse-mode autograd, level by level (docs/contract.md). This file is
 * the entry: command line, dispatch to the levels, output.
 *
 * The C port of the Codon program, as one translation unit: this file includes the
 * module files, each the C of the Codon module with the same path, in the order below
 * (each after the ones it uses); they are not compiled on their own (ports/c/README.md).
 *
 *   make build/autograd-c            (CPU=native by default; CPU=x86-64-v2|v3|v4 too)
 *   cc -O3 -march=native -mprefer-vector-width=512 -ffp-contract=off -fno-math-errno \
 *      -fno-trapping-math -fopenmp -DAUTOGRAD_TARGET='"native"' -o build/autograd-c \
 *      ports/c/autograd.c -lmvec -lm
 *   (the Makefile's C_FLAGS and C_LIBS; -mprefer-vector-width=512 on x86-64 only)
 *
 * The vector width of v3, v4 and fused-simd follows -march (core/vmath.c);
 * AUTOGRAD_TARGET only names the target in --version.
 */

#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/rng.c"
#include "core/ops.c"
#include "core/vmath.c"
#include "core/threads.c"
#include "softplus/nodes.c"
#include "softplus/naive.c"
#include "softplus/pool.c"
#include "softplus/tape.c"
#include "softplus/simd.c"
#include "softplus/threads.c"
#include "softplus/fused.c"
#include "graph/recipe.c"
#include "graph/nodes.c"
#include "graph/objects.c"
#include "graph/pool.c"
#include "graph/tape.c"
#include "graph/simd.c"
#include "graph/threads.c"
#include "cli/args.c"
#include "cli/output.c"

static const char *const VERSION_TEXT = "autograd (c) 0.1.0";
/* The bounds and defaults are cli/args.c's macros, made strings by core/vmath.c's STR. */
static const char *const HELP_TEXT =
    "usage: autograd [--level v0|v1|v2|v3|v4|fused|fused-simd|all] [--iters N] [--seed S]\n"
    "                [--threads T] [--json]\n"
    "       autograd --workload graph [--level v0|v1|v2|v3|v4|all] [--ops M] [--iters N]\n"
    "                [--seed S] [--threads T] [--json]\n"
    "       autograd --eval X Y [--json]\n"
    "       autograd --help | --version\n"
    "\n"
    "Runs N forward/backward passes through a reverse-mode autograd at each\n"
    "optimization level and prints the time and the checksums. Workloads:\n"
    "  softplus  f(x, y) = softplus((x + y) * x), the default; checksums are the\n"
    "            sums of f, df/dx and df/dy over the samples\n"
    "  graph     a tape of M ops over 100 inputs (Rogozhnikov's benchmark graph),\n"
    "            loss = the sum of every node; checksums are the sums of the loss,\n"
    "            of the inputs' weighted gradients and of every node's gradient\n"
    "\n"
    "  --workload W softplus or graph (default softplus)\n"
    "  --level L    v0 naive, v1 pool, v2 tape, v3 simd, v4 threads, all (v0..v4,\n"
    "               the default), or a softplus baseline: fused, fused-simd\n"
    "  --ops M      graph ops, 1.." STR(MAX_GRAPH_OPS) " (default " STR(DEFAULT_OPS) "; graph workload only)\n"
    "  --iters N    samples, 1..10^12 (default " STR(DEFAULT_ITERS) "; graph " STR(DEFAULT_GRAPH_ITERS) ")\n"
    "  --seed S     input stream seed, 0..2^64-1 (default " STR(DEFAULT_SEED) ")\n"
    "  --threads T  threads for v4, 1.." STR(MAX_THREADS) " (default: the CPUs this process may use)\n"
    "  --json       one JSON object per line instead of the table\n"
    "  --eval X Y   f and its gradient at one point, through the softplus v2 tape";

/* CPUs in this process's affinity mask (what taskset or a container allows). */
static int cpus_available(void)
{
    cpu_set_t mask; /* room for 1024 CPUs */
    if (sched_getaffinity(0, sizeof mask, &mask) != 0)
        return 1;
    int count = CPU_COUNT(&mask);
    return count > 0 ? count : 1;
}

static Sums run_level(const char *level, uint64_t seed, int64_t n, int threads)
{
    if (strcmp(level, "v0") == 0)
        return run_v0(seed, n);
    if (strcmp(level, "v1") == 0)
        return run_v1(seed, n);
    if (strcmp(level, "v2") == 0)
        return run_v2(seed, n);
    if (strcmp(level, "v3") == 0)
        return run_v3(seed, n);
    if (strcmp(level, "v4") == 0)
        return run_v4(seed, n, threads);
    if (strcmp(level, "fused") == 0)
        return run_fused(seed, n);
    return run_fused_simd(seed, n);
}

static GraphSums run_graph_level(const char *level, uint64_t seed, int m, int64_t n, int threads)
{
    if (strcmp(level, "v0") == 0)
        return run_graph_v0(seed, m, n);
    if (strcmp(level, "v1") == 0)
        return run_graph_v1(seed, m, n);
    if (strcmp(level, "v2") == 0)
        return run_graph_v2(seed, m, n);
    if (strcmp(level, "v3") == 0)
        return run_graph_v3(seed, m, n);
    return run_graph_v4(seed, m, n, threads);
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Seconds of CPU time (contract §5): the process's for v4, whose OpenMP threads all count,
 * this thread's for every other level (other processes' and threads' time does not count).
 * Read just inside the wall clock's reads, so that a short single-threaded run's CPU time
 * does not gain the reads' own cost (and the first read's page faults) over its wall time. */
static double cpu_clock(const char *level)
{
    struct timespec ts;
    clock_gettime(strcmp(level, "v4") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Refuses a graph run whose tapes cannot fit in this machine's memory (docs/contract-graph.md),
 * before any is allocated: the most any requested level's tapes take (tapes_bytes) against the
 * physical memory. A machine whose sysconf cannot tell is not refused. */
static void check_memory(const Options *opts)
{
    uint64_t need = 0;
    for (int k = 0; k < opts->n_levels; k++) {
        uint64_t bytes = tapes_bytes(opts->levels[k], opts->ops, opts->iters, opts->threads);
        if (bytes > need)
            need = bytes;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0)
        return;
    uint64_t have = (uint64_t)pages * (uint64_t)page_size, mib = UINT64_C(1) << 20;
    if (need > have)
        usage_error("the tapes of --ops %d need at least %" PRIu64 " MiB, more than this machine's memory (%" PRIu64
                    " MiB)", opts->ops, (need + mib - 1) / mib, have / mib);
}

/* A level's checksums, of either workload: what run_levels takes from run_one to line. */
typedef union {
    Sums softplus;
    GraphSums graph;
} LevelSums;

/* Each level of opts, timed, one output line each: both workloads' loop. The clocks time
 * run_one(opts, level, threads) alone; line(opts, level, threads, seconds, cpu, sums, v0_seconds)
 * prints the level's output line (v0's seconds for the speed-up column). C has no closures, so
 * each workload's run_one and line take opts themselves. */
static void run_levels(const Options *opts, void (*header)(void),
                       LevelSums (*run_one)(const Options *opts, const char *level, int threads),
                       void (*line)(const Options *opts, const char *level, int threads, double seconds, double cpu,
                                    LevelSums sums, double v0_seconds))
{
    if (!opts->json) {
        header();
        flush_output();
    }
    double v0_seconds = 0.0;
    for (int k = 0; k < opts->n_levels; k++) {
        const char *level = opts->levels[k];
        int threads = strcmp(level, "v4") == 0 ? opts->threads : 1;
        int64_t start = monotonic_ns();
        double cpu_start = cpu_clock(level);
        LevelSums sums = run_one(opts, level, threads);
        double cpu = cpu_clock(level) - cpu_start;
        double seconds = (double)(monotonic_ns() - start) / 1e9;
        if (strcmp(level, "v0") == 0)
            v0_seconds = seconds;
        line(opts, level, threads, seconds, cpu, sums, v0_seconds);
        flush_output(); /* each row as soon as its level finishes */
    }
}

/* The Codon program's run_graph's lambda: the graph level to time. */
static LevelSums graph_run_one(const Options *opts, const char *level, int threads)
{
    return (LevelSums){.graph = run_graph_level(level, opts->seed, opts->ops, opts->iters, threads)};
}

static void graph_line(const Options *opts, const char *level, int threads, double seconds, double cpu,
                       LevelSums sums, double v0_seconds)
{
    GraphResult r = {level, opts->ops, opts->iters, opts->seed, threads, seconds, cpu, sums.graph};
    if (opts->json)
        graph_json_line(&r);
    else
        graph_text_line(&r, v0_seconds);
}

/* The graph workload (docs/contract-graph.md): each level, timed, one line each. */
static void run_graph(const Options *opts)
{
    run_levels(opts, graph_text_header, graph_run_one, graph_line);
}

/* The Codon program's run's lambda: the softplus level to time. */
static LevelSums softplus_run_one(const Options *opts, const char *level, int threads)
{
    return (LevelSums){.softplus = run_level(level, opts->seed, opts->iters, threads)};
}

static void softplus_line(const Options *opts, const char *level, int threads, double seconds, double cpu,
                          LevelSums sums, double v0_seconds)
{
    Result r = {level, opts->iters, opts->seed, threads, seconds, cpu, sums.softplus};
    if (opts->json)
        json_line(&r);
    else
        text_line(&r, v0_seconds);
}

static void run(const Options *opts)
{
    run_levels(opts, text_header, softplus_run_one, softplus_line);
}

static void evaluate(const Options *opts)
{
    double f, dfdx, dfdy;
    eval_point(opts->x, opts->y, &f, &dfdx, &dfdy);
    double p = (opts->x + opts->y) * opts->x;
    if (!isfinite(p))
        usage_error("(X + Y) * X overflows at this point");
    if (!isfinite(f) || !isfinite(dfdx) || !isfinite(dfdy))
        usage_error("the result overflows at this point");
    if (opts->json)
        eval_json(opts->x, opts->y, f, dfdx, dfdy);
    else
        eval_text(opts->x, opts->y, f, dfdx, dfdy);
}

int main(int argc, char **argv)
{
    Options opts = parse(argc, argv, cpus_available());
    if (opts.mode == HELP) {
        if (puts(HELP_TEXT) == EOF)
            output_error();
    } else if (opts.mode == VERSION) {
        if (puts(VERSION_TEXT) == EOF || puts(target_text()) == EOF)
            output_error();
    } else if (opts.mode == EVAL) {
        evaluate(&opts);
    } else if (strcmp(opts.workload, "graph") == 0) {
        check_memory(&opts);
        run_graph(&opts);
    } else {
        run(&opts);
    }
    /* Closing stdout reports the last buffered write's failure (and a failed close):
     * left to exit(), it would be lost and the status 0. */
    flush_output();
    if (fclose(stdout) != 0)
        output_error();
    return 0;
}
