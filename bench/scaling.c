/* scaling.c - `scripts/bench scaling`: what measuring fine-grained tasks
 * costs as threads are added, each thread aggregating its own tasks in its
 * shard of the profile (issue 26), what work is left to the consumer
 * thread, and what merging the per-thread shards costs.
 *
 * This file is two programs.  Compiled normally it is the benchmark
 * (bench_scaling); compiled with clang -fopenmp (_OPENMP defined) it is
 * scaling_omp_fib, the OpenMP program the benchmark measures.
 *
 * Variants (T = 1, 2, 4, 8 threads by default; a result line carries
 * "threads":T and "oversubscribed":true when T exceeds the online CPUs):
 *   rt_fib@T           fib on the bundled runtime (one task per call, as
 *                      rt_bench's fib), in this process, measured as by
 *                      default
 *   omp_fib@T          fib with OpenMP tasks on libomp through the OMPT
 *                      adapter, a process run as a user runs it:
 *                      `taskscope run --outputs none --sample-ms 0 --ompt`
 *   merge@64           64 shards with 100 types and 1,000 tree nodes each
 *   merge@64x10        64 shards with 1,000 types and 10,000 tree nodes each
 *
 * Metrics of the fib variants (medians over the repetitions; all variants
 * of a repetition run back to back so that drift affects them alike):
 *   added_ns_per_task       wall time over the run with measurement off
 *                           (rt: TASKSCOPE_ENABLE=0; omp: the program with
 *                           no tool at all), per task
 *   added_cpu_ns_per_task   the same in CPU time of the whole process (rt:
 *                           CLOCK_PROCESS_CPUTIME_ID over the timed window;
 *                           omp: user+system time of the launcher and the
 *                           program, from wait4)
 *   ring_waits              times a producer waited for ring space, summed
 *                           over threads (tscope_query_totals' ring_waits)
 *   consumer_cpu_ns_per_event  the consumer thread's own CPU time divided by
 *                           the events the program made: the run's totals'
 *                           events, which count the events the threads'
 *                           shards took as well as any that went through the
 *                           rings (the sampler is off), reported as
 *                           events_per_task.  (ring_events is gone: it was
 *                           these totals' events, no longer only the rings'.)
 *   omp only: ratio_to_counting_tool (wall, against the program under
 *                           bench/ompt_counting.so, the floor of OMPT)
 *
 * How the numbers are read.  rt: in this process, which links the static
 * library: the consumer's CPU clock is pthread_getcpuclockid(tscope__g.
 * consumer), read after tscope_init and after a tscope_flush at the end of
 * the timed window (before tscope_finalize).  omp: the measured code must
 * be the unmodified path (libomp -> OMPT adapter -> libtaskscope.so), so the
 * program runs in a child process; after its parallel region, when
 * TSCOPE_SCALING_REPORT is set, it looks up the already loaded
 * libtaskscope.so.0 (dlopen RTLD_NOLOAD: the adapter loaded it), calls
 * tscope_flush and tscope_query_totals, reads the CPU time of its thread
 * named "tscope-consumer" (/proc/self/task/TID/schedstat, the scheduler's
 * nanosecond run time, the same quantity as the thread's CPU clock) and
 * prints them.  This report (one flush and a scan of /proc/self/task) is
 * inside the timed process; the finalize after it (the consumer's last
 * round, writing nothing with --outputs none) is not in the consumer's
 * figure.  The wall and CPU times of the omp variants are whole processes
 * including the launcher's fixed cost (see `scripts/bench ompt`'s
 * fixed_cost_ms), spread over the tasks.
 *
 * Merge: shards built with the shard functions on thread indices 0..63
 * against a store of their own (tscope__store_new + tscope__shards_reset,
 * as tests/test_shard.c does; no tscope_init): each type is a root node and
 * has 9 child nodes of other types, so types * 10 distinct tree nodes.
 * Before every fold each shard runs its whole pattern again (every type,
 * node and edge entry changes), then tscope__shards_fold runs under the
 * store's lock, timed alone: merge_ms is the median of 15 folds after one
 * untimed first fold (first_fold_ms: it also allocates the fold's copies
 * of every entry), merge_ms_min the fastest of them (on a busy machine
 * noise only adds time), ns_per_entry the median over the type and node
 * entries folded (64 * (types + nodes)): flat when the merge grows
 * linearly.
 *
 * usage: bench_scaling [--reps R] [--threads T,T,...] [--rt-n N] [--omp-n N]
 *                      [GROUP...]   (groups: rt omp merge; default all)
 * Defaults: 5 repetitions, threads 1,2,4,8, rt fib 25 (242,785 tasks), omp
 * fib 27 (635,620 tasks).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NOLOAD (the build defines it everywhere else) */
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
/* ---- scaling_omp_fib: the measured OpenMP program ---------------------------- */
#include <omp.h>

#include <taskscope/taskscope.h>

static long fib(int n)
{
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

/* The CPU time in ns of this process's thread named `name`; 0 if none. */
static unsigned long long thread_cpu_ns(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    unsigned long long ns = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name) != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        if ((f = fopen(path, "r")) != NULL) {
            if (fscanf(f, "%llu", &ns) != 1)
                ns = 0;
            fclose(f);
        }
        break;
    }
    if (d)
        closedir(d);
    return ns;
}

/* Flushes the measurement and prints what the benchmark reads; 1 if
 * libtaskscope is not in this process. */
static int report(long tasks)
{
    void *lib = dlopen("libtaskscope.so.0", RTLD_NOW | RTLD_NOLOAD);
    int (*flush)(void) = lib ? (int (*)(void))dlsym(lib, "tscope_flush") : NULL;
    int (*totals)(tscope_totals_t *) =
        lib ? (int (*)(tscope_totals_t *))dlsym(lib, "tscope_query_totals") : NULL;
    tscope_totals_t t;
    if (!flush || !totals || flush() || totals(&t)) {
        fprintf(stderr, "scaling_omp_fib: libtaskscope is not loaded or not measuring\n");
        return 1;
    }
    printf("scaling tasks %ld events %llu ring_waits %llu dropped %llu consumer_cpu_ns %llu\n",
           tasks, (unsigned long long)t.events, (unsigned long long)t.ring_waits,
           (unsigned long long)t.events_dropped, thread_cpu_ns("tscope-consumer"));
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 27;
    if (n < 2 || n > 40) {
        fprintf(stderr, "usage: scaling_omp_fib [N 2..40]\n");
        return 2;
    }
    long r = 0;
#pragma omp parallel
    {
#pragma omp single
        r = fib(n);
    }
    long f0 = 0, f1 = 1; /* tasks: 2 per call with n >= 2, 2*fib(n+1) - 2 */
    for (int i = 0; i < n; i++) {
        long t = f0 + f1;
        f0 = f1;
        f1 = t;
    }
    if (r != f0) {
        fprintf(stderr, "scaling_omp_fib: fib(%d) = %ld, expected %ld\n", n, r, f0);
        return 1;
    }
    long tasks = 2 * f1 - 2;
    if (getenv("TSCOPE_SCALING_REPORT"))
        return report(tasks);
    printf("scaling tasks %ld\n", tasks);
    return 0;
}

#else
/* ---- bench_scaling: the benchmark ------------------------------------------------ */
#include <ftw.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <taskscope/rt.h>

#include "bench.h"
#include "core/config.h"
#include "core/core.h"
#include "profile/shard.h"
#include "profile/store.h"

#define MAX_REPS 64
#define MAX_T 16

static int reps = 5;
static int nthreads = 4;
static unsigned threads[MAX_T] = {1, 2, 4, 8};
static int rt_n = 25, omp_n = 27;
static long ncpu;

/* One result line, with the thread count and whether it oversubscribes
 * the machine (threads 0: a line without them). */
static void result(const char *variant, unsigned t, const char *metric, double value,
                   const char *unit)
{
    char name[64];
    if (t)
        snprintf(name, sizeof name, "%s@%u", variant, t);
    else
        snprintf(name, sizeof name, "%s", variant);
    printf("{\"bench\":\"scaling\",\"variant\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,"
           "\"unit\":\"%s\"",
           name, metric, value, unit);
    if (t)
        printf(",\"threads\":%u,\"oversubscribed\":%s", t, (long)t > ncpu ? "true" : "false");
    printf("}\n");
    fflush(stdout);
}

static double cpu_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What one fib run measured. */
struct run {
    double wall_s, cpu_s; /* the timed window (rt) or the whole process (omp) */
    double consumer_ns;   /* the consumer thread's CPU time */
    double events, waits; /* totals' events (every event made) and ring_waits */
    double tasks;
};

/* The medians of a variant at one T. */
struct medians {
    double wall, cpu, consumer, events, waits, tasks;
};

static void median_of(struct run *r, int n, struct medians *m)
{
    double v[6][MAX_REPS];
    for (int i = 0; i < n; i++) {
        v[0][i] = r[i].wall_s;
        v[1][i] = r[i].cpu_s;
        v[2][i] = r[i].consumer_ns;
        v[3][i] = r[i].events;
        v[4][i] = r[i].waits;
        v[5][i] = r[i].tasks;
    }
    m->wall = bench_median(v[0], n);
    m->cpu = bench_median(v[1], n);
    m->consumer = bench_median(v[2], n);
    m->events = bench_median(v[3], n);
    m->waits = bench_median(v[4], n);
    m->tasks = bench_median(v[5], n);
}

/* The metrics of a measured variant against its baseline (see the top
 * comment). */
static void report(const char *variant, unsigned t, const struct medians *m,
                   const struct medians *off)
{
    double tasks = off->tasks;
    result(variant, t, "added_ns_per_task", (m->wall - off->wall) * 1e9 / tasks, "ns");
    result(variant, t, "added_cpu_ns_per_task", (m->cpu - off->cpu) * 1e9 / tasks, "ns");
    result(variant, t, "ring_waits", m->waits, "waits");
    result(variant, t, "consumer_cpu_ns_per_event", m->events > 0 ? m->consumer / m->events : 0,
           "ns");
    result(variant, t, "events_per_task", m->events / tasks, "events");
    result(variant, t, "wall_s", m->wall, "s");
}

/* ---- fib on the bundled runtime ------------------------------------------------- */

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

static double consumer_cpu_ns(void)
{
    clockid_t c;
    if (!tscope__g.consumer_running || pthread_getcpuclockid(tscope__g.consumer, &c))
        return 0;
    return cpu_s(c) * 1e9;
}

/* One run of fib(rt_n) on T workers, measured (measure != 0) or with
 * measurement off. */
static void rt_run(unsigned t, int measure, struct run *out)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    setenv("TASKSCOPE_ENABLE", measure ? "1" : "0", 1);
    if (tscope_init(0, 1) || tscope_rt_init(t)) {
        fprintf(stderr, "bench_scaling: init failed\n");
        exit(1);
    }
    tscope_type_register("fib", &t_fib);
    double c0 = consumer_cpu_ns();
    double w0 = bench_now_s(), p0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
    struct fibarg f = {rt_n, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_fib, 0, 0, 0, NULL, 0};
    tscope_rt_spawn(fib_task, &f, &o, NULL);
    tscope_rt_taskwait();
    tscope_flush(); /* the consumer's backlog is in the window */
    out->wall_s = bench_now_s() - w0;
    out->cpu_s = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - p0;
    out->consumer_ns = consumer_cpu_ns() - c0;
    tscope_totals_t tot;
    memset(&tot, 0, sizeof tot);
    tscope_query_totals(&tot);
    out->events = (double)tot.events;
    out->waits = (double)tot.ring_waits;
    tscope_rt_stats_t st;
    out->tasks = tscope_rt_stats(&st) == 0 ? (double)st.completed : 0;
    tscope_rt_finalize();
    tscope_finalize();
    long a = 0, b = 1;
    for (int i = 0; i < rt_n; i++) {
        long s = a + b;
        a = b;
        b = s;
    }
    if (f.r != a || out->tasks < 1) {
        fprintf(stderr, "bench_scaling: rt fib(%d) = %ld, expected %ld\n", rt_n, f.r, a);
        exit(1);
    }
}

static void bench_rt(void)
{
    for (int k = 0; k < nthreads; k++) {
        unsigned t = threads[k];
        struct run off[MAX_REPS], measured[MAX_REPS], warm;
        rt_run(t, 0, &warm);
        for (int r = 0; r < reps; r++) {
            rt_run(t, 0, &off[r]);
            rt_run(t, 1, &measured[r]);
        }
        struct medians m0, m1;
        median_of(off, reps, &m0);
        median_of(measured, reps, &m1);
        result("rt_fib", t, "tasks", m0.tasks, "tasks");
        result("rt_fib", t, "wall_s_off", m0.wall, "s");
        report("rt_fib", t, &m1, &m0);
    }
}

/* ---- fib on libomp, in child processes --------------------------------------------- */

static char tmpdir[] = "/tmp/taskscope-scaling-XXXXXX";

/* Runs the OpenMP program at T threads: variant none (no tool), counting
 * (the counting OMPT tool) or taskscope (`taskscope run`); reads its report
 * line. */
static void omp_run(unsigned t, const char *variant, struct run *out)
{
    static unsigned seq;
    char nthr[16], n[16], outdir[200], line[512] = "";
    snprintf(nthr, sizeof nthr, "%u", t);
    snprintf(n, sizeof n, "%d", omp_n);
    snprintf(outdir, sizeof outdir, "%s/run%u", tmpdir, seq++);
    const char *prog = TSCOPE_BUILD_DIR "/bench/scaling_omp_fib";
    int pipefd[2];
    if (pipe(pipefd)) {
        perror("bench_scaling: pipe");
        exit(1);
    }
    double w0 = bench_now_s();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        setenv("OMP_NUM_THREADS", nthr, 1);
        unsetenv("OMP_TOOL_LIBRARIES");
        if (strcmp(variant, "none") == 0) {
            execl(prog, prog, n, (char *)NULL);
        } else if (strcmp(variant, "counting") == 0) {
            setenv("OMP_TOOL_LIBRARIES", TSCOPE_BUILD_DIR "/bench/ompt_counting.so", 1);
            execl(prog, prog, n, (char *)NULL);
        } else {
            setenv("TSCOPE_SCALING_REPORT", "1", 1);
            const char *ts = TSCOPE_BUILD_DIR "/taskscope";
            execl(ts, ts, "run", "-o", outdir, "--no-summary", "--outputs", "none", "--sample-ms",
                  "0", "--ompt", "--", prog, n, (char *)NULL);
        }
        _exit(127);
    }
    close(pipefd[1]);
    FILE *f = fdopen(pipefd[0], "r");
    char buf[512];
    while (f && fgets(buf, sizeof buf, f))
        if (strncmp(buf, "scaling ", 8) == 0)
            snprintf(line, sizeof line, "%s", buf);
    if (f)
        fclose(f);
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status)) {
        fprintf(stderr, "bench_scaling: %s (%s, %u threads) failed\n", prog, variant, t);
        exit(1);
    }
    out->wall_s = bench_now_s() - w0;
    out->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    unsigned long long tasks = 0, events = 0, waits = 0, dropped = 0, cons = 0;
    int got = sscanf(line,
                     "scaling tasks %llu events %llu ring_waits %llu dropped %llu "
                     "consumer_cpu_ns %llu",
                     &tasks, &events, &waits, &dropped, &cons);
    int measured = strcmp(variant, "none") && strcmp(variant, "counting");
    if (got < 1 || (measured && got != 5)) {
        fprintf(stderr, "bench_scaling: no report from %s (%s): '%s'\n", prog, variant, line);
        exit(1);
    }
    if (dropped) {
        fprintf(stderr, "bench_scaling: %s (%s) dropped %llu events\n", prog, variant, dropped);
        exit(1);
    }
    out->tasks = (double)tasks;
    out->events = (double)events;
    out->waits = (double)waits;
    out->consumer_ns = (double)cons;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void bench_omp(void)
{
    if (access(TSCOPE_BUILD_DIR "/bench/scaling_omp_fib", X_OK) ||
        access(TSCOPE_BUILD_DIR "/bench/ompt_counting.so", R_OK)) {
        fprintf(stderr, "bench_scaling: no scaling_omp_fib or ompt_counting.so (clang and "
                        "libomp-dev are needed): no omp variants\n");
        return;
    }
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "bench_scaling: cannot create %s\n", tmpdir);
        exit(1);
    }
    for (int k = 0; k < nthreads; k++) {
        unsigned t = threads[k];
        struct run none[MAX_REPS], counting[MAX_REPS], measured[MAX_REPS], warm;
        omp_run(t, "none", &warm); /* the page cache */
        for (int r = 0; r < reps; r++) {
            omp_run(t, "none", &none[r]);
            omp_run(t, "counting", &counting[r]);
            omp_run(t, "taskscope", &measured[r]);
        }
        struct medians m0, mc, m1;
        median_of(none, reps, &m0);
        median_of(counting, reps, &mc);
        median_of(measured, reps, &m1);
        result("omp_fib", t, "tasks", m0.tasks, "tasks");
        result("omp_fib", t, "wall_s_no_tool", m0.wall, "s");
        result("omp_fib", t, "wall_s_counting_tool", mc.wall, "s");
        report("omp_fib", t, &m1, &m0);
        result("omp_fib", t, "ratio_to_counting_tool", m1.wall / mc.wall, "x");
        result("omp_fib_counting_tool", t, "added_ns_per_task",
               (mc.wall - m0.wall) * 1e9 / m0.tasks, "ns");
    }
    nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- merging the shards ------------------------------------------------------- */

#define MERGE_SHARDS 64
#define MERGE_CHILDREN 9
#define MERGE_FOLDS 15

static uint64_t merge_ts = 1, merge_id = 1;

/* Runs the shard's whole pattern once: every type as a root task, with 9
 * child tasks of other types inside it. */
static void merge_touch(uint32_t shard, uint16_t types)
{
    for (uint16_t a = 1; a <= types; a++) {
        struct tscope_task *p = tscope__shard_start(shard, merge_ts++, merge_id++, a);
        for (uint16_t k = 1; k <= MERGE_CHILDREN; k++) {
            uint16_t b = (uint16_t)(1 + (a - 1 + k) % types);
            struct tscope_task *c = tscope__shard_start(shard, merge_ts++, merge_id++, b);
            if (!c || tscope__shard_end(shard, merge_ts++, c)) {
                fprintf(stderr, "bench_scaling: merge: shard event failed\n");
                exit(1);
            }
        }
        if (!p || tscope__shard_end(shard, merge_ts++, p)) {
            fprintf(stderr, "bench_scaling: merge: shard event failed\n");
            exit(1);
        }
    }
}

static void bench_merge(const char *variant, uint16_t types)
{
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    struct tscope__store *s = tscope__store_new(&cfg, 0);
    if (!s) {
        fprintf(stderr, "bench_scaling: merge: no store\n");
        exit(1);
    }
    tscope__shards_reset(s);
    double ms[MERGE_FOLDS], first = 0;
    for (int fold = 0; fold <= MERGE_FOLDS; fold++) {
        for (uint32_t sh = 0; sh < MERGE_SHARDS; sh++)
            merge_touch(sh, types);
        pthread_mutex_lock(&s->lock);
        double t0 = bench_now_s();
        tscope__shards_fold(s);
        double t1 = bench_now_s();
        pthread_mutex_unlock(&s->lock);
        if (fold) /* the first fold also allocates what the fold keeps */
            ms[fold - 1] = (t1 - t0) * 1e3;
        else
            first = (t1 - t0) * 1e3;
    }
    pthread_mutex_lock(&s->lock);
    uint64_t want = (uint64_t)MERGE_SHARDS * (MERGE_FOLDS + 1) * (1 + MERGE_CHILDREN);
    uint32_t nodes = s->nnodes - 1; /* node 0 is the root */
    int ok = s->types[1].calls == want && nodes >= (uint32_t)types * (1 + MERGE_CHILDREN);
    pthread_mutex_unlock(&s->lock);
    if (!ok) {
        fprintf(stderr, "bench_scaling: merge: the store has %u nodes and %llu calls of type 1\n",
                nodes, (unsigned long long)s->types[1].calls);
        exit(1);
    }
    double med = bench_median(ms, MERGE_FOLDS); /* sorts ms */
    result(variant, 0, "merge_ms", med, "ms");
    result(variant, 0, "merge_ms_min", ms[0], "ms");
    result(variant, 0, "first_fold_ms", first, "ms");
    result(variant, 0, "ns_per_entry", med * 1e6 / (MERGE_SHARDS * (types + (double)nodes)), "ns");
    result(variant, 0, "shards", MERGE_SHARDS, "shards");
    result(variant, 0, "types", types, "types");
    result(variant, 0, "tree_nodes", nodes, "nodes");
    tscope__shards_free();
    tscope__store_free(s);
}

/* ---- main --------------------------------------------------------------------- */

static int parse_threads(const char *list)
{
    nthreads = 0;
    for (const char *p = list; *p && nthreads < MAX_T;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 256)
            return -1;
        threads[nthreads++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return nthreads ? 0 : -1;
}

int main(int argc, char **argv)
{
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0) {
            if (parse_threads(argv[i + 1]))
                reps = 0;
        } else if (strcmp(argv[i], "--rt-n") == 0)
            rt_n = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--omp-n") == 0)
            omp_n = atoi(argv[i + 1]);
        else
            reps = 0;
    }
    if (reps < 1 || reps > MAX_REPS || rt_n < 2 || rt_n > 35 || omp_n < 2 || omp_n > 40 ||
        (i < argc && argv[i][0] == '-')) {
        fprintf(stderr, "usage: bench_scaling [--reps 1..64] [--threads T,T,...] [--rt-n N] "
                        "[--omp-n N] [rt|omp|merge...]\n");
        return 2;
    }
    int all = i >= argc;
    for (int g = all ? 0 : i; all ? g < 1 : g < argc; g++) {
        const char *group = all ? NULL : argv[g];
        if (!group || strcmp(group, "rt") == 0)
            bench_rt();
        if (!group || strcmp(group, "omp") == 0)
            bench_omp();
        if (!group || strcmp(group, "merge") == 0) {
            bench_merge("merge@64", 100);
            bench_merge("merge@64x10", 1000);
        }
        if (group && strcmp(group, "rt") && strcmp(group, "omp") && strcmp(group, "merge")) {
            fprintf(stderr, "bench_scaling: unknown group %s (rt, omp, merge)\n", group);
            return 2;
        }
    }
    return 0;
}
#endif
