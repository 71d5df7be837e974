/* composition.c - the validation experiment of compositional performance
 * modelling (Calotoiu et al.), on the bundled runtime's task pools and
 * pipelines (src/rt/pipeline.c), measurement off.
 *
 * Sequential tasks on integer arrays of n elements: nop, inc (add 1 to each
 * element), qsort (libc qsort).  For every array size n the average time per
 * data element (array) is measured
 *   - of each task alone (a loop on one thread): the component models;
 *   - of task pools tpool_T(task), T = 1 .. max (each a one-stage pipeline);
 *   - of pipelines pipe(qsort,nop), pipe(qsort,inc), pipe(inc,qsort),
 *     pipe(inc,inc), pipe(inc,nop) (one worker per stage);
 *   - of the two layerings pipe(tpool_T(qsort), tpool_T(inc)) (two stages of
 *     T workers) and tpool_T(pipe(qsort,inc)) (T pipelines side by side,
 *     each taking 1/T of the elements).
 * Each configuration's measurements (per size the median of the
 * repetitions) are fitted with the default modeler (the "monolithic"
 * model); the same configuration is also predicted by composing the
 * component models ("modular": tpool(T, m) = m / T, pipe = the stage of the
 * highest order).  The relative error is that of the modular prediction
 * against the measured median, averaged over the sizes (the largest per
 * size is printed too).
 *
 * Streams: configurations with qsort sort distinct arrays (as many as one
 * worker sorts in ~250 ms, 16 at least, sorted_arrays), restored from a
 * pristine copy of ELEMENTS arrays of the largest size before each run; the others cycle
 * over distinct arrays covering 2^26 integers (reset) in a stream long
 * enough for a run to last >= 100 ms (stream_length), every page of them
 * touched first (touch).
 *
 * usage: bench_composition [MAX_T] [REPS] [ELEMENTS]
 *   TSCOPE_BENCH_RAW=FILE      also write every measurement to FILE
 *   TSCOPE_BENCH_REPLAY=FILE   model the measurements of such a FILE again
 *                              (no measuring; MAX_T and ELEMENTS as then)
 * Prints a table on stderr and JSON lines on stdout:
 *   {"bench":"composition","variant":"<config>","metric":"rel_error",...}
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <taskscope/model.h>
#include <taskscope/rt.h>

#include "bench.h"

enum { NSIZES = 5 };
static const size_t sizes[NSIZES] = {1u << 14, 1u << 15, 1u << 16, 1u << 17, 1u << 18};

struct element {
    int *data;
    size_t n;
};

static void task_nop(void *e, void *arg)
{
    (void)e;
    (void)arg;
}

static void task_inc(void *e, void *arg)
{
    struct element *el = e;
    (void)arg;
    for (size_t i = 0; i < el->n; i++)
        el->data[i]++;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void task_qsort(void *e, void *arg)
{
    struct element *el = e;
    (void)arg;
    qsort(el->data, el->n, sizeof *el->data, cmp_int);
}

static const struct {
    const char *name;
    tscope_rt_stage_fn fn;
} tasks[3] = {{"nop", task_nop}, {"inc", task_inc}, {"qsort", task_qsort}};

/* A configuration: kind 0 alone, 1 tpool_T(a), 2 pipe(a, b),
 * 3 pipe(tpool_T(a), tpool_T(b)), 4 tpool_T(pipe(a, b)). */
struct config {
    int kind, a, b;
    unsigned t;
    char name[64], expr[96];
};

enum { STREAM_INTS = 1 << 26 }; /* the data a stream of cheap elements cycles over */

static size_t nelem, nwork; /* nwork: integers in work */
static struct element *elems;
static int *pristine, *work;

static int has_qsort(const struct config *c)
{
    return c->a == 2 || c->b == 2;
}

/* Writes one integer of every page of d[0..n): on this VM memory left
 * alone for a few seconds is taken back by the host (a first pass over it
 * then costs ~1-1.3 ns per integer instead of ~0.16), and a stream must not
 * pay that for what the configuration measured before it did. */
static void touch(int *d, size_t n)
{
    volatile int *v = d;
    for (size_t i = 0; i < n; i += 1024)
        v[i] = v[i];
}

/* How many arrays of size n configurations with qsort sort in a run: enough
 * for one worker to sort for ~250 ms (a pilot times a few), at least 16 so
 * that two workers or two stages share them evenly, at most what the
 * pristine copy holds (ELEMENTS arrays of the largest size).  A fixed 64 at
 * every size made a run at 2^14 last 90 ms (a short run on this VM is
 * easily disturbed) and one at 2^18 1.9 s (most of the benchmark's time). */
static size_t sorted_arrays(size_t n)
{
    static size_t count[NSIZES];
    int s = 0;
    while (s + 1 < NSIZES && sizes[s] != n)
        s++;
    if (count[s])
        return count[s];
    size_t most = nelem * sizes[NSIZES - 1] / n, pilot = most < 4 ? most : 4;
    memcpy(work, pristine, pilot * n * sizeof *work);
    double t0 = bench_now_s();
    for (size_t i = 0; i < pilot; i++)
        qsort(work + i * n, n, sizeof *work, cmp_int);
    double each = (bench_now_s() - t0) / (double)pilot;
    size_t want = each > 0 ? (size_t)ceil(0.25 / each) : most;
    if (want < 16)
        want = 16;
    count[s] = want > most ? most : want; /* never past the pristine copy */
    return count[s];
}

/* Lays out the arrays of size n a stream of configuration c cycles over
 * and returns how many: the sorted_arrays(n) arrays for qsort, restored from the
 * pristine copy (sorting changes them); otherwise distinct arrays covering
 * STREAM_INTS integers (256 MiB), so that an element's data is as far from
 * the CPU (past L2) at every size, and inc's time per integer does not jump
 * where the working set outgrows a cache. */
static size_t reset(const struct config *c, size_t n)
{
    size_t count = nelem;
    if (has_qsort(c)) {
        count = sorted_arrays(n);
        memcpy(work, pristine, count * n * sizeof *work);
    } else {
        if (nwork / n > count)
            count = nwork / n;
        touch(work, count * n);
    }
    for (size_t i = 0; i < count; i++)
        elems[i] = (struct element){work + i * n, n};
    return count;
}

static void run_pipeline(int a, int b, unsigned wa, unsigned wb, void **ptrs, size_t n)
{
    tscope_rt_pipeline_t *p;
    if (tscope_rt_pipeline_create(16, &p) ||
        tscope_rt_pipeline_add_stage(p, tasks[a].fn, NULL, wa, 0) ||
        (b >= 0 && tscope_rt_pipeline_add_stage(p, tasks[b].fn, NULL, wb, 0)) ||
        tscope_rt_pipeline_run(p, ptrs, n)) {
        fprintf(stderr, "bench_composition: pipeline failed\n");
        exit(1);
    }
    tscope_rt_pipeline_destroy(p);
}

struct share {
    int a, b;
    void **ptrs;
    size_t n;
};

static void *share_main(void *arg)
{
    struct share *s = arg;
    run_pipeline(s->a, s->b, 1, 1, s->ptrs, s->n);
    return NULL;
}

/* Seconds per element of one configuration at array size n, over a stream
 * of len elements. */
static double run_stream(const struct config *c, size_t n, size_t len)
{
    size_t count = reset(c, n);
    void **ptrs = malloc(len * sizeof *ptrs);
    if (!ptrs)
        exit(1);
    for (size_t i = 0; i < len; i++)
        ptrs[i] = &elems[i % count];
    double t0 = bench_now_s();
    switch (c->kind) {
    case 0:
        for (size_t i = 0; i < len; i++)
            tasks[c->a].fn(ptrs[i], NULL);
        break;
    case 1:
        run_pipeline(c->a, -1, c->t, 0, ptrs, len);
        break;
    case 2:
        run_pipeline(c->a, c->b, 1, 1, ptrs, len);
        break;
    case 3:
        run_pipeline(c->a, c->b, c->t, c->t, ptrs, len);
        break;
    default: {
        pthread_t th[64];
        struct share sh[64];
        size_t per = len / c->t, off = 0;
        for (unsigned k = 0; k < c->t; k++) {
            size_t cnt = k + 1 == c->t ? len - off : per;
            sh[k] = (struct share){c->a, c->b, ptrs + off, cnt};
            off += cnt;
            pthread_create(&th[k], NULL, share_main, &sh[k]);
        }
        for (unsigned k = 0; k < c->t; k++)
            pthread_join(th[k], NULL);
    }
    }
    double secs = bench_now_s() - t0;
    free(ptrs);
    return secs / (double)len;
}

/* The stream length of a configuration at size n: configurations with qsort
 * sort their distinct arrays once (sorted_arrays); the others cycle over their
 * arrays, at least 2^26 integers, and long enough that a run takes
 * >= 100 ms (pilot runs decide), so starting the run's threads (~0.1-1 ms
 * here) is amortised at every size. */
static size_t stream_length(const struct config *c, size_t n)
{
    if (has_qsort(c))
        return sorted_arrays(n);
    size_t len = STREAM_INTS / n;
    if (len < nelem)
        len = nelem;
    for (;;) { /* pilot runs until one lasts 100 ms (the first ones are mostly thread start) */
        double secs = run_stream(c, n, len) * (double)len;
        if (secs >= 0.1 || len >= ((size_t)1 << 24))
            break;
        double grow = 0.12 / secs;
        len = (size_t)((double)len * (grow > 16 ? 16 : grow < 1.25 ? 1.25 : grow));
        if (len > ((size_t)1 << 24))
            len = (size_t)1 << 24;
    }
    return len;
}

enum { MAX_REPS = 32 };

/* Measures every configuration reps times: the stream lengths first (pilot
 * runs), then repetitions outermost, sizes, configurations interleaved, so
 * that a disturbed stretch of time spreads over all of them. */
static void measure(const struct config *cfg, int nc, int reps, double t_ns[][NSIZES][MAX_REPS])
{
    static size_t len[64][NSIZES];
    for (int s = 0; s < NSIZES; s++)
        for (int c = 0; c < nc; c++)
            len[c][s] = stream_length(&cfg[c], sizes[s]);
    for (int rep = 0; rep < reps; rep++)
        for (int s = 0; s < NSIZES; s++)
            for (int c = 0; c < nc; c++)
                t_ns[c][s][rep] = run_stream(&cfg[c], sizes[s], len[c][s]) * 1e9;
}

/* TSCOPE_BENCH_RAW=FILE keeps every measurement, one line each:
 * configuration, size, repetition, ns per array of n integers (tab-separated);
 * TSCOPE_BENCH_REPLAY=FILE models such a file again without measuring. */
static void save_raw(const char *path, const struct config *cfg, int nc, int reps,
                     double t_ns[][NSIZES][MAX_REPS])
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_composition: cannot write %s; raw measurements not kept\n", path);
        return;
    }
    fprintf(f, "# configuration\tn\trepetition\tns_per_element\n");
    for (int c = 0; c < nc; c++)
        for (int s = 0; s < NSIZES; s++)
            for (int k = 0; k < reps; k++)
                fprintf(f, "%s\t%zu\t%d\t%.9g\n", cfg[c].name, sizes[s], k, t_ns[c][s][k]);
    if (fclose(f))
        fprintf(stderr, "bench_composition: writing %s failed\n", path);
}

/* Reads a file of save_raw; returns the number of repetitions (every
 * configuration and size must have them all), or -1 with a message. */
static int load_raw(const char *path, const struct config *cfg, int nc,
                    double t_ns[][NSIZES][MAX_REPS])
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_composition: cannot open %s\n", path);
        return -1;
    }
    static unsigned char seen[64][NSIZES][MAX_REPS];
    char line[256], name[128];
    int reps = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#')
            continue;
        size_t n;
        int k, s = 0, c = 0;
        double v;
        if (sscanf(line, "%127[^\t]\t%zu\t%d\t%lf", name, &n, &k, &v) != 4 || k < 0 ||
            k >= MAX_REPS) {
            fprintf(
                stderr,
                "bench_composition: %s:%d: expected CONFIGURATION<tab>N<tab>REPETITION<tab>NS\n",
                path, lineno);
            fclose(f);
            return -1;
        }
        while (s < NSIZES && sizes[s] != n)
            s++;
        while (c < nc && strcmp(cfg[c].name, name) != 0)
            c++;
        if (s == NSIZES || c == nc)
            continue; /* a configuration or size this run does not have */
        t_ns[c][s][k] = v;
        seen[c][s][k] = 1;
        if (k + 1 > reps)
            reps = k + 1;
    }
    fclose(f);
    for (int c = 0; c < nc; c++)
        for (int s = 0; s < NSIZES; s++)
            for (int k = 0; k < reps; k++)
                if (!seen[c][s][k]) {
                    fprintf(stderr, "bench_composition: %s: no repetition %d of %s at n=%zu\n",
                            path, k, cfg[c].name, sizes[s]);
                    return -1;
                }
    return reps;
}

static tscope_model_t components[3];

static int lookup(void *d, const char *name, tscope_model_t *out)
{
    (void)d;
    for (int i = 0; i < 3; i++)
        if (strcmp(name, tasks[i].name) == 0) {
            *out = components[i];
            return 0;
        }
    return TSCOPE_ENOENT;
}

/* Allocates the arrays: the pristine copy for qsort (ELEMENTS arrays of the
 * largest size, random) and the streams' data.  Returns 0, or -1. */
static int setup_data(void)
{
    size_t maxn = sizes[NSIZES - 1];
    nwork = nelem * maxn > STREAM_INTS ? nelem * maxn : STREAM_INTS;
    size_t nel = nwork / sizes[0] > nelem ? nwork / sizes[0] : nelem;
    pristine = malloc(nelem * maxn * sizeof *pristine);
    work = calloc(nwork, sizeof *work);
    elems = malloc(nel * sizeof *elems);
    if (!pristine || !work || !elems)
        return -1;
    /* touch every page of the streams now (calloc maps them lazily, and a
     * memset of zeros would be folded into calloc): otherwise the first
     * pilot run that reaches them pays 65,536 page faults (0.7 s instead of
     * 11 ms), takes that for its speed and leaves the stream 4x too short */
    for (size_t i = 0; i < nwork; i++)
        work[i] = (int)(i & 1023);
    uint64_t r = 88172645463325252ull;
    for (size_t i = 0; i < nelem * maxn; i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        pristine[i] = (int)(r >> 33);
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned maxt = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    nelem = argc > 3 ? (size_t)atol(argv[3]) : 64;
    if (maxt < 1 || maxt > 64 || reps < 1 || reps > MAX_REPS || nelem < 2)
        return 2;
    struct config cfg[64];
    int nc = 0;
    for (int a = 0; a < 3; a++) { /* the components: one-worker pools */
        cfg[nc] = (struct config){1, a, -1, 1, "", ""};
        snprintf(cfg[nc].name, sizeof cfg[nc].name, "%s", tasks[a].name);
        snprintf(cfg[nc].expr, sizeof cfg[nc].expr, "%s", tasks[a].name);
        nc++;
    }
    for (int a = 0; a < 3; a++) { /* for reference */
        cfg[nc] = (struct config){0, a, -1, 1, "", ""};
        snprintf(cfg[nc].name, sizeof cfg[nc].name, "loop(%s)", tasks[a].name);
        snprintf(cfg[nc].expr, sizeof cfg[nc].expr, "%s", tasks[a].name);
        nc++;
    }
    for (unsigned t = 2; t <= maxt; t *= 2)
        for (int a = 0; a < 3; a++) {
            cfg[nc] = (struct config){1, a, -1, t, "", ""};
            snprintf(cfg[nc].name, sizeof cfg[nc].name, "tpool%u(%s)", t, tasks[a].name);
            snprintf(cfg[nc].expr, sizeof cfg[nc].expr, "tpool(%u, %s)", t, tasks[a].name);
            nc++;
        }
    static const int pipes[5][2] = {{2, 0}, {2, 1}, {1, 2}, {1, 1}, {1, 0}};
    for (int k = 0; k < 5; k++) {
        int a = pipes[k][0], b = pipes[k][1];
        cfg[nc] = (struct config){2, a, b, 1, "", ""};
        snprintf(cfg[nc].name, sizeof cfg[nc].name, "pipe(%s,%s)", tasks[a].name, tasks[b].name);
        snprintf(cfg[nc].expr, sizeof cfg[nc].expr, "pipe(%s, %s)", tasks[a].name, tasks[b].name);
        nc++;
    }
    for (unsigned t = 1; t <= maxt; t *= 2) {
        cfg[nc] = (struct config){3, 2, 1, t, "", ""};
        snprintf(cfg[nc].name, sizeof cfg[nc].name, "pipe(tpool%u(qsort),tpool%u(inc))", t, t);
        snprintf(cfg[nc].expr, sizeof cfg[nc].expr, "pipe(tpool(%u, qsort), tpool(%u, inc))", t, t);
        nc++;
        cfg[nc] = (struct config){4, 2, 1, t, "", ""};
        snprintf(cfg[nc].name, sizeof cfg[nc].name, "tpool%u(pipe(qsort,inc))", t);
        snprintf(cfg[nc].expr, sizeof cfg[nc].expr, "tpool(%u, pipe(qsort, inc))", t);
        nc++;
    }

    static double t_ns[64][NSIZES][MAX_REPS];
    const char *replay = getenv("TSCOPE_BENCH_REPLAY"), *raw = getenv("TSCOPE_BENCH_RAW");
    if (replay) {
        if ((reps = load_raw(replay, cfg, nc, t_ns)) < 1)
            return 1;
    } else {
        if (setup_data()) {
            fprintf(stderr, "bench_composition: out of memory\n");
            return 1;
        }
        measure(cfg, nc, reps, t_ns);
        if (raw)
            save_raw(raw, cfg, nc, reps, t_ns);
    }
    tscope_mexp_t e = {0};
    tscope_mexp_param(&e, "n");
    for (int c = 0; c < nc; c++)
        for (int s = 0; s < NSIZES; s++) {
            /* one value per point, the median of the repetitions: on this
             * shared VM one disturbed run in three is common, and in a mean it
             * made the modeler fit a term like 1.8e-18 * n^3 * log2(n) to the
             * nop component (flat otherwise): pipe(qsort, nop) then was nop */
            double n = (double)sizes[s], v[MAX_REPS];
            memcpy(v, t_ns[c][s], sizeof v);
            double med = bench_median(v, reps);
            tscope_mexp_add(&e, cfg[c].name, "ns_per_element", &n, &med, 1);
        }
    tscope_mexp_finish(&e);
    tscope_model_t mono[64];
    for (int c = 0; c < nc; c++)
        if (tscope_model_fit(&e.series[c], 1, NULL, &mono[c]))
            return 1;
    for (int a = 0; a < 3; a++)
        components[a] = mono[a];

    const char *pn = "n";
    fprintf(stderr, "%-34s %-44s %-44s %9s %9s\n", "configuration", "modular model (composed)",
            "monolithic model (fitted)", "rel.err", "max");
    for (int c = 0; c < nc; c++) {
        tscope_model_t mod;
        char err[256], ms[256], mm[256];
        if (tscope_model_compose(cfg[c].expr, lookup, NULL, &mod, err, sizeof err)) {
            fprintf(stderr, "bench_composition: %s\n", err);
            return 1;
        }
        tscope_model_format(&mod, &pn, ms, sizeof ms);
        tscope_model_format(&mono[c], &pn, mm, sizeof mm);
        double sum = 0, mx = 0;
        for (int s = 0; s < NSIZES; s++) {
            double n = (double)sizes[s], measured = e.series[c].points[s].mean;
            double rel = fabs(tscope_model_eval(&mod, &n) - measured) / measured;
            sum += rel;
            if (rel > mx)
                mx = rel;
        }
        fprintf(stderr, "%-34s %-44s %-44s %8.2f%% %8.2f%%\n", cfg[c].name, ms, mm,
                100 * sum / NSIZES, 100 * mx);
        double big = (double)sizes[NSIZES - 1];
        double diff = fabs(tscope_model_eval(&mod, &big) - tscope_model_eval(&mono[c], &big)) /
                      fabs(tscope_model_eval(&mono[c], &big));
        bench_result("composition", cfg[c].name, "rel_error", sum / NSIZES, "fraction");
        bench_result("composition", cfg[c].name, "model_difference_largest", diff, "fraction");
        bench_result("composition", cfg[c].name, "rel_error_max", mx, "fraction");
        double n = (double)sizes[NSIZES - 1];
        bench_result("composition", cfg[c].name, "measured_ns_per_element_largest",
                     e.series[c].points[NSIZES - 1].mean, "ns");
        bench_result("composition", cfg[c].name, "predicted_ns_per_element_largest",
                     tscope_model_eval(&mod, &n), "ns");
    }
    fprintf(stderr,
            "\nmeasured ns per array of n integers (one stream element; median of the "
            "repetitions; (max-min)/median)\n%-34s",
            "n =");
    for (int s = 0; s < NSIZES; s++)
        fprintf(stderr, " %22zu", sizes[s]);
    fprintf(stderr, "\n");
    for (int c = 0; c < nc; c++) {
        fprintf(stderr, "%-34s", cfg[c].name);
        for (int s = 0; s < NSIZES; s++) {
            double lo = INFINITY, hi = 0;
            for (int k = 0; k < reps; k++) {
                lo = fmin(lo, t_ns[c][s][k]);
                hi = fmax(hi, t_ns[c][s][k]);
            }
            fprintf(stderr, " %9.4g (%4.1f%%)      ", e.series[c].points[s].mean,
                    100 * (hi - lo) / e.series[c].points[s].mean);
        }
        fprintf(stderr, "\n");
    }
    tscope_mexp_free(&e);
    free(pristine);
    free(work);
    free(elems);
    return 0;
}
