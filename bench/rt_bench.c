/* rt_bench.c - task benchmarks on the bundled runtime and the overhead
 * harness.
 *
 * Benchmarks (as in the DASH tools-interface and AllScale evaluations):
 *   taskbench   n empty tasks in m task classes
 *   depbench    n empty tasks with d local dependencies each
 *   stencil_chain      1-D Jacobi sweeps, each sweep waits for the whole
 *                      previous one (taskwait per sweep)
 *   stencil_fine_grain the same sweeps, each block waits only for the three
 *                      blocks it reads (task dependencies)
 *   fib         recursive Fibonacci, one task per call
 *   cholesky    blocked Cholesky with task dependencies, BLAS/LAPACK from
 *               OpenBLAS (only when built with it; the build says so)
 * Each result is verified (the stencils against a sequential run).
 *
 * usage: rt_bench overhead [--threads T] [--reps R] [--scale S] [--only V]
 *                          [BENCH...]
 *          runs every benchmark alternately with measurement off (off),
 *          the dummy tool plugin alone (dummy), profiling on as by default,
 *          each thread aggregating its own tasks in its shard (profile) and
 *          naive mode (naive: the same shards, every event under one
 *          process-wide lock) (--only V: off and V only, e.g. to profile
 *          one variant), R repetitions, and
 *          prints per benchmark and variant the median time, the median
 *          ratio to "off", the ratio of the fastest runs (time_ratio_of_min:
 *          noise only adds time, so the minima show the intrinsic cost) and
 *          the median wall time added per task (added_ns_per_task) and the
 *          median CPU time of all threads added per task
 *          (added_cpu_ns_per_task, CLOCK_PROCESS_CPUTIME_ID) as JSON lines
 *        rt_bench validate VALIDATOR.so [--threads T] [--scale S]
 *          runs every benchmark once with the validator plugin and fails on
 *          any event-sequence violation (the test suite runs this under TSan)
 * --scale divides the problem sizes (default 1; tests use 20).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <taskscope/rt.h>

#include "bench.h"
#include "stencil.h"

static unsigned threads = 2;
static unsigned scale = 1;

/* ---- benchmarks -------------------------------------------------------- */

static void empty(void *arg)
{
    (void)arg;
}

static int taskbench(void)
{
    size_t n = 200000 / scale, m = 8;
    tscope_type_t types[8];
    for (size_t k = 0; k < m; k++) {
        char name[32];
        snprintf(name, sizeof name, "taskbench_class%zu", k);
        tscope_type_register(name, &types[k]);
    }
    for (size_t i = 0; i < n; i++) {
        tscope_rt_spawn_opts_t o = {sizeof o, types[i % m], 0, 0, 0, NULL, 0};
        if (tscope_rt_spawn(empty, NULL, &o, NULL))
            return -1;
    }
    tscope_rt_taskwait();
    return 0;
}

static int depbench(void)
{
    enum { K = 64, D = 4 };
    static char slots[K];
    size_t n = 100000 / scale;
    tscope_type_t t;
    tscope_type_register("depbench_task", &t);
    for (size_t i = 0; i < n; i++) {
        tscope_rt_dep_t deps[D];
        deps[0] = (tscope_rt_dep_t){&slots[i % K], TSCOPE_RT_OUT};
        for (size_t k = 1; k < D; k++)
            deps[k] = (tscope_rt_dep_t){&slots[(i + K - k) % K], TSCOPE_RT_IN};
        tscope_rt_spawn_opts_t o = {sizeof o, t, 0, 0, 0, deps, D};
        if (tscope_rt_spawn(empty, NULL, &o, NULL))
            return -1;
    }
    tscope_rt_taskwait();
    return 0;
}

static int stencil_check(int sweeps)
{
    double *a = malloc(st_n * sizeof *a), *b = malloc(st_n * sizeof *b);
    for (size_t i = 0; i < st_n; i++)
        a[i] = b[i] = stencil_initial(i);
    for (int s = 0; s < sweeps; s++) {
        for (size_t i = 0; i < st_n; i++)
            b[i] = (i == 0 || i == st_n - 1) ? a[i] : (a[i - 1] + a[i] + a[i + 1]) / 3.0;
        double *t = a;
        a = b;
        b = t;
    }
    int ok = memcmp(a, st_buf[sweeps % 2], st_n * sizeof *a) == 0;
    free(a);
    free(b);
    return ok ? 0 : -1;
}

static int stencil_run(int fine)
{
    int sweeps = 40;
    stencil_setup((1u << 20) / scale / ST_BLOCKS);
    tscope_type_t t;
    tscope_type_register(fine ? "stencil_fine_block" : "stencil_chain_block", &t);
    struct sweep_block *items = malloc((size_t)sweeps * ST_BLOCKS * sizeof *items);
    for (int s = 0; s < sweeps; s++) {
        for (size_t blk = 0; blk < ST_BLOCKS; blk++) {
            struct sweep_block *sb = &items[(size_t)s * ST_BLOCKS + blk];
            *sb = (struct sweep_block){s, blk};
            tscope_rt_spawn_opts_t o = {sizeof o, t, 0, 0, 0, NULL, 0};
            tscope_rt_dep_t deps[4];
            if (fine) {
                /* reads blocks blk-1..blk+1 of buffer s%2, writes block blk of
                 * the other buffer (a block's address stands for the block) */
                size_t nd = 0;
                for (long k = (long)blk - 1; k <= (long)blk + 1; k++)
                    if (k >= 0 && k < ST_BLOCKS)
                        deps[nd++] =
                            (tscope_rt_dep_t){&st_buf[s % 2][(size_t)k * st_block], TSCOPE_RT_IN};
                deps[nd++] = (tscope_rt_dep_t){&st_buf[(s + 1) % 2][blk * st_block], TSCOPE_RT_OUT};
                o.deps = deps;
                o.ndeps = nd;
            }
            if (tscope_rt_spawn(stencil_block, sb, &o, NULL))
                return -1;
        }
        if (!fine)
            tscope_rt_taskwait();
    }
    tscope_rt_taskwait();
    free(items);
    return stencil_check(sweeps);
}

static int stencil_chain(void)
{
    return stencil_run(0);
}

static int stencil_fine_grain(void)
{
    return stencil_run(1);
}

struct fibarg {
    int n;
    long r;
};
static tscope_type_t t_fib;

static void fib_task(void *arg)
{
    struct fibarg *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    struct fibarg a = {f->n - 1, 0}, b = {f->n - 2, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_fib, 0, TSCOPE_TASK_SPLITTABLE, 0, NULL, 0};
    tscope_rt_spawn(fib_task, &a, &o, NULL);
    tscope_rt_spawn(fib_task, &b, &o, NULL);
    tscope_rt_taskwait();
    f->r = a.r + b.r;
}

static int fib(void)
{
    int n = scale > 1 ? 16 : 24;
    tscope_type_register("fib", &t_fib);
    struct fibarg f = {n, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_fib, 0, 0, 0, NULL, 0};
    tscope_rt_spawn(fib_task, &f, &o, NULL);
    tscope_rt_taskwait();
    long want = n == 16 ? 987 : 46368;
    return f.r == want ? 0 : -1;
}

#ifdef TSCOPE_HAVE_BLAS
#include "cholesky.h"
static int cholesky(void)
{
    return scale > 1 ? cholesky_run(256, 64) : cholesky_run(3072, 192);
}
#endif

static const struct {
    const char *name;
    int (*run)(void);
} benches[] = {
#ifdef TSCOPE_HAVE_BLAS
    {"cholesky", cholesky},
#endif
    {"taskbench", taskbench},
    {"depbench", depbench},
    {"stencil_chain", stencil_chain},
    {"stencil_fine_grain", stencil_fine_grain},
    {"fib", fib},
};
enum { NBENCH = sizeof benches / sizeof benches[0] };

/* ---- variants ---------------------------------------------------------- */

static char dummy_path[1200];
/* profile: the default, each thread aggregates its own tasks (issue 26) */
static const char *variants[] = {"off", "dummy", "profile", "naive"};
enum { NVAR = sizeof variants / sizeof variants[0] };
static const char *only; /* --only: "off" and this variant */

static void configure(const char *variant, const char *tools)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1); /* the sampler is measured on its own */
    setenv("TASKSCOPE_ENABLE", strcmp(variant, "off") ? "1" : "0", 1);
    setenv("TASKSCOPE_MODE", strcmp(variant, "naive") ? "profile" : "naive", 1);
    setenv("TASKSCOPE_TOOLS", strcmp(variant, "dummy") == 0 ? dummy_path : tools, 1);
    /* dummy: the tools interface alone, the built-in profiler off */
    setenv("TASKSCOPE_PROFILER", strcmp(variant, "dummy") == 0 ? "0" : "1", 1);
}

static uint64_t last_tasks; /* tasks the last timed run completed */
static double last_cpu;     /* CPU seconds of the whole process in the last timed run */

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One timed run of a benchmark in a fresh taskscope + runtime; -1 on a
 * failed check. */
static double timed_run(int b, const char *variant, const char *tools)
{
    configure(variant, tools);
    if (tscope_init(0, 1) || tscope_rt_init(threads)) {
        fprintf(stderr, "rt_bench: init failed\n");
        exit(1);
    }
    double t0 = bench_now_s(), c0 = cpu_now_s();
    int rc = benches[b].run();
    tscope_flush(); /* the window includes the consumer's backlog: no work deferred past it */
    double secs = bench_now_s() - t0;
    last_cpu = cpu_now_s() - c0; /* workers, the consumer and every other thread */
    tscope_rt_stats_t st;
    last_tasks = tscope_rt_stats(&st) == 0 ? st.completed : 0;
    tscope_rt_finalize();
    tscope_finalize();
    if (rc) {
        fprintf(stderr, "rt_bench: %s (%s): result check failed\n", benches[b].name, variant);
        return -1;
    }
    return secs;
}

static int selected(int b, int argc, char **argv, int first)
{
    if (first >= argc)
        return 1;
    for (int i = first; i < argc; i++)
        if (strcmp(argv[i], benches[b].name) == 0)
            return 1;
    return 0;
}

static int overhead(int reps, int argc, char **argv, int first)
{
    for (int b = 0; b < NBENCH; b++) {
        if (!selected(b, argc, argv, first))
            continue;
        double t[NVAR][64], ratio[NVAR][64], added[NVAR][64], cpu[NVAR][64], added_cpu[NVAR][64];
        timed_run(b, "off", ""); /* warm-up */
        uint64_t tasks = last_tasks;
        for (int r = 0; r < reps; r++) {
            for (int v = 0; v < NVAR; v++) {
                t[v][r] = 0;
                if (v && only && strcmp(only, variants[v]))
                    continue;
                t[v][r] = timed_run(b, variants[v], "");
                if (t[v][r] < 0)
                    return 1;
                cpu[v][r] = last_cpu;
            }
            for (int v = 0; v < NVAR; v++) {
                ratio[v][r] = t[v][r] / t[0][r];
                added[v][r] = t[v][r] - t[0][r];
                added_cpu[v][r] = cpu[v][r] - cpu[0][r];
            }
        }
        double best[NVAR];
        for (int v = 0; v < NVAR; v++) {
            best[v] = t[v][0];
            for (int r = 1; r < reps; r++)
                best[v] = t[v][r] < best[v] ? t[v][r] : best[v];
        }
        for (int v = 0; v < NVAR; v++) {
            if (v && only && strcmp(only, variants[v]))
                continue;
            bench_result(benches[b].name, variants[v], "time_s", bench_median(t[v], reps), "s");
            if (v) {
                bench_result(benches[b].name, variants[v], "time_ratio",
                             bench_median(ratio[v], reps), "x");
                /* the least disturbed run of each: the machine's noise only adds time */
                bench_result(benches[b].name, variants[v], "time_ratio_of_min", best[v] / best[0],
                             "x");
                /* what measuring adds per task, in wall time: unlike the ratio
                 * it does not move with the runtime's own speed that day */
                if (tasks) {
                    bench_result(benches[b].name, variants[v], "added_ns_per_task",
                                 bench_median(added[v], reps) * 1e9 / (double)tasks, "ns");
                    /* and in CPU time, all threads: the producers' and the
                     * consumer's work, which on a full machine is the
                     * program's loss even where the wall time hides it */
                    bench_result(benches[b].name, variants[v], "added_cpu_ns_per_task",
                                 bench_median(added_cpu[v], reps) * 1e9 / (double)tasks, "ns");
                }
            }
        }
    }
    return 0;
}

struct validator_results {
    uint64_t tasks, ended, cancelled, violations;
    char first[256];
};

static int validate(const char *validator, int argc, char **argv, int first)
{
    int failed = 0;
    for (int b = 0; b < NBENCH; b++) {
        if (!selected(b, argc, argv, first))
            continue;
        if (timed_run(b, "profile", validator) < 0)
            return 1;
        void *dl = dlopen(validator, RTLD_NOW | RTLD_NOLOAD);
        struct validator_results *r = dl ? dlsym(dl, "validator_results") : NULL;
        if (!r) {
            fprintf(stderr, "rt_bench: the validator %s was not loaded\n", validator);
            return 1;
        }
        printf("%s: %llu tasks, %llu ended, %llu cancelled, %llu violations%s%s\n", benches[b].name,
               (unsigned long long)r->tasks, (unsigned long long)r->ended,
               (unsigned long long)r->cancelled, (unsigned long long)r->violations,
               r->violations ? ": " : "", r->first);
        if (r->violations || r->tasks == 0 || r->tasks != r->ended + r->cancelled)
            failed = 1;
    }
    return failed;
}

int main(int argc, char **argv)
{
#ifndef TSCOPE_HAVE_BLAS
    fprintf(stderr, "rt_bench: note: built without OpenBLAS/LAPACKE: no cholesky benchmark "
                    "(install libopenblas-dev liblapacke-dev, or run ./scripts/setup)\n");
#endif
    if (argc < 2) {
        fprintf(stderr, "usage: rt_bench overhead|validate ... (see the source)\n");
        return 2;
    }
    snprintf(dummy_path, sizeof dummy_path, "%s/libtaskscope-tool-dummy.so", TSCOPE_TOOLS_DIR);
    const char *mode = argv[1];
    const char *validator = NULL;
    int i = 2, reps = 5;
    if (strcmp(mode, "validate") == 0) {
        if (argc < 3)
            return 2;
        validator = argv[2];
        i = 3;
    }
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc)
            return 2;
        if (strcmp(argv[i], "--threads") == 0)
            threads = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
        else if (strcmp(argv[i], "--scale") == 0)
            scale = (unsigned)atoi(argv[i + 1]);
        else
            return 2;
    }
    if (threads < 1 || reps < 1 || reps > 64 || scale < 1)
        return 2;
    if (strcmp(mode, "overhead") == 0)
        return overhead(reps, argc, argv, i);
    if (validator)
        return validate(validator, argc, argv, i);
    return 2;
}
