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
 * component models with the contention-aware operators
 * (tscope_model_compose_at: each worker slowed by what the others share,
 * pipe = the slowest stage at the size, plus handover and queue costs), from
 * a contention table the benchmark calibrates after measuring (see
 * calibrate_once; never next to a configuration, at sizes between the
 * validated ones).  The relative error is that of the modular prediction
 * against the measured median, averaged over the sizes (the largest per
 * size is printed too); rel_error_plain is that of the plain operators
 * (tpool(T, m) = m / T, pipe = the stage of the highest order).  The
 * calibration's time is printed (calibration_s) with the benchmark's
 * (benchmark_s), and the median and worst rel_error of the non-loop
 * configurations whose threads fit on the cores (within_cores).
 *
 * Streams: configurations with qsort sort distinct arrays (as many as one
 * worker sorts in ~250 ms, 16 at least, sorted_arrays), restored from a
 * pristine copy of ELEMENTS arrays of the largest size before each run; the others cycle
 * over distinct arrays covering 2^26 integers (reset) in a stream long
 * enough for a run to last >= 100 ms (stream_length), every page of them
 * touched first (touch).
 *
 * usage: bench_composition [MAX_T] [REPS] [ELEMENTS]
 *   TSCOPE_BENCH_RAW=FILE      also write every measurement to FILE, and the
 *                              calibration's to FILE.contention
 *   TSCOPE_BENCH_REPLAY=FILE   model the measurements of such a FILE again
 *                              (no measuring; MAX_T and ELEMENTS as then),
 *                              with FILE.contention when there is one (else
 *                              the plain operators); TSCOPE_BENCH_CALIBRATE=1
 *                              calibrates anew instead
 *   TSCOPE_BENCH_CAL_REPS=N    calibration repetitions (3)
 *   TSCOPE_BENCH_RUN_MS=MS     a cheap configuration's run lasts >= MS (100),
 *                              one with qsort ~2.5 MS
 *   TSCOPE_BENCH_ESTIMATOR=E   a point's value from its repetitions: median
 *                              (default), min or q25 (the lower quartile)
 * Prints a table on stderr and JSON lines on stdout:
 *   {"bench":"composition","variant":"<config>","metric":"rel_error",...}
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#include <taskscope/model.h>
#include <taskscope/rt.h>

#include "bench.h"
#include "model/contention.h"

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
/* a run of a cheap configuration lasts at least run_s, one with qsort ~2.5x
 * that (TSCOPE_BENCH_RUN_MS, default 100) */
static double run_s = 0.1;
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
    static size_t known_n[64], count[64];
    int s = 0;
    while (s < 64 && known_n[s] && known_n[s] != n)
        s++;
    if (s < 64 && known_n[s] == n)
        return count[s];
    size_t most = nelem * sizes[NSIZES - 1] / n, pilot = most < 4 ? most : 4;
    memcpy(work, pristine, pilot * n * sizeof *work);
    double t0 = bench_now_s();
    for (size_t i = 0; i < pilot; i++)
        qsort(work + i * n, n, sizeof *work, cmp_int);
    double each = (bench_now_s() - t0) / (double)pilot;
    size_t want = each > 0 ? (size_t)ceil(2.5 * run_s / each) : most;
    if (want < 16)
        want = 16;
    want = want > most ? most : want; /* never past the pristine copy */
    if (s < 64) {
        known_n[s] = n;
        count[s] = want;
    }
    return want;
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

static void run_pipeline_fn(tscope_rt_stage_fn a, tscope_rt_stage_fn b, unsigned wa, unsigned wb,
                            void **ptrs, size_t n)
{
    tscope_rt_pipeline_t *p;
    if (tscope_rt_pipeline_create(16, &p) || tscope_rt_pipeline_add_stage(p, a, NULL, wa, 0) ||
        (b && tscope_rt_pipeline_add_stage(p, b, NULL, wb, 0)) ||
        tscope_rt_pipeline_run(p, ptrs, n)) {
        fprintf(stderr, "bench_composition: pipeline failed\n");
        exit(1);
    }
    tscope_rt_pipeline_destroy(p);
}

static void run_pipeline(int a, int b, unsigned wa, unsigned wb, void **ptrs, size_t n)
{
    run_pipeline_fn(tasks[a].fn, b >= 0 ? tasks[b].fn : NULL, wa, wb, ptrs, n);
}

/* A probe running while run_stream times a stream, and its progress at the
 * window's start and end (the calibration's co-runner). */
static tscope_probe_t *window_probe;
static double window_p0, window_p1;

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
    if (window_probe)
        window_p0 = tscope_probe_progress(window_probe);
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
    if (window_probe)
        window_p1 = tscope_probe_progress(window_probe);
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
        if (secs >= run_s || len >= ((size_t)1 << 24))
            break;
        double grow = 1.2 * run_s / secs;
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

/* ---- calibration: the contention table (src/model/contention.c) ---------
 *
 * Each component is measured alone and next to synthetic co-runners (the
 * library's probes), never next to a configuration it predicts, and at sizes
 * between those the configurations are validated at (2^14.5 .. 2^17.5):
 *   alone, stream:K, cache:K  its time per element (a loop on this thread),
 *                             alone and next to K copies of each probe
 *   slows:P                   how much slower probe P runs next to it
 *   after-writer, after-cold  its time per element when another core has just
 *                             written the element (a writer: stores over it),
 *                             and when nobody has (one element at a time:
 *                             the two threads take turns, nothing co-runs)
 *   reader-after              a reader's (sums the element) time after it ran
 *                             on another core, against reader-writer and
 *                             reader-cold: how much of its element it leaves
 *                             written
 * and the machine: slows:P of a probe next to a copy of itself, the queue's
 * costs per element (a ~3 us arithmetic stage with an empty one after or
 * before it, against that stage alone) and the cores. */
enum { NCAL = 4 };
static size_t cal_sizes[NCAL];

static tscope_cmeas_t *cal;
static size_t ncal, capcal;

static void cal_add(const char *comp, const char *kind, double n, double v)
{
    if (ncal == capcal) {
        capcal = capcal ? 2 * capcal : 256;
        if (!(cal = realloc(cal, capcal * sizeof *cal)))
            exit(1);
    }
    tscope_cmeas_t *m = &cal[ncal++];
    memset(m, 0, sizeof *m);
    snprintf(m->component, sizeof m->component, "%s", comp);
    snprintf(m->kind, sizeof m->kind, "%s", kind);
    m->n = n;
    m->value = v;
}

static tscope_probe_t *probe_start(int kind, unsigned copies)
{
    tscope_probe_t *p;
    if (tscope_probe_start(kind, copies, &p)) {
        fprintf(stderr, "bench_composition: cannot start a probe\n");
        exit(1);
    }
    return p;
}

static double probe_rate(int kind, unsigned copies, double secs)
{
    double r = tscope_probe_rate(kind, copies, secs);
    if (!(r > 0)) {
        fprintf(stderr, "bench_composition: cannot start a probe\n");
        exit(1);
    }
    return r;
}

/* Elements of a calibration stream of component a at size n: ~80 ms of
 * work alone (qsort: at least 16 arrays). */
static size_t cal_length(const struct config *c, size_t n)
{
    size_t len = has_qsort(c) ? 16 : STREAM_INTS / n;
    double secs = run_stream(c, n, len) * (double)len;
    size_t want = secs > 0 ? (size_t)((double)len * 0.08 / secs) : len;
    if (want < len)
        want = len;
    if (has_qsort(c) && want > sorted_arrays(n))
        want = sorted_arrays(n);
    return want;
}

/* ~3 us of arithmetic without memory traffic: a stage whose queue costs
 * show (a stage that spins on the clock instead was slowed by the other
 * stage's polling, as latency-bound code is by a busy sibling vCPU here) */
static volatile unsigned long spin_sink;

static void spin_task(void *e, void *arg)
{
    (void)e;
    (void)arg;
    unsigned long x = 1;
    for (int i = 0; i < 2000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    spin_sink = x;
}

static void writer_op(struct element *el, const struct config *c, size_t i)
{
    if (has_qsort(c)) /* restores it: stores every integer */
        memcpy(el->data, pristine + i * el->n, el->n * sizeof *el->data);
    else
        for (size_t k = 0; k < el->n; k++)
            el->data[k] = (int)k;
}

static long reader_sink;

static void reader_op(struct element *el)
{
    long s = 0;
    for (size_t k = 0; k < el->n; k++)
        s += el->data[k];
    reader_sink += s;
}

/* Two threads taking turns over elements: the other thread runs "before"
 * on an element (0: nothing, 1: the writer, 2: component a), then this
 * thread runs "after" on it (0: component a, 1: the reader), timed.  Returns
 * seconds per element of the timed part. */
struct turns {
    const struct config *c;
    int before;
    _Atomic int turn; /* 1: the other thread's, 2: this one's, 3: stop */
    _Atomic size_t index;
};

static void *turns_main(void *arg)
{
    struct turns *t = arg;
    for (;;) {
        int v;
        while ((v = atomic_load(&t->turn)) == 2 || v == 0)
            ;
        if (v == 3)
            return NULL;
        size_t i = atomic_load(&t->index);
        if (t->before == 1)
            writer_op(&elems[i], t->c, i);
        else if (t->before == 2)
            tasks[t->c->a].fn(&elems[i], NULL);
        atomic_store(&t->turn, 2);
    }
}

static double run_turns(const struct config *c, size_t n, size_t len, int before, int after)
{
    size_t count = reset(c, n);
    if (len > count && has_qsort(c))
        len = count; /* each array sorted once */
    struct turns t = {c, before, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, turns_main, &t);
    double busy = 0;
    for (size_t k = 0; k < len; k++) {
        atomic_store(&t.index, k % count);
        atomic_store(&t.turn, 1);
        while (atomic_load(&t.turn) != 2)
            ;
        double t0 = bench_now_s();
        if (after == 0)
            tasks[c->a].fn(&elems[k % count], NULL);
        else
            reader_op(&elems[k % count]);
        busy += bench_now_s() - t0;
    }
    atomic_store(&t.turn, 3);
    pthread_join(th, NULL);
    return busy / (double)len;
}

/* One repetition of every calibration measurement. */
static void calibrate_once(unsigned maxt)
{
    double alone_rate[TSCOPE_NPROBES];
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        alone_rate[p] = probe_rate(p, 1, 0.1);
        char kind[32];
        snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
        cal_add("-", kind, 0, alone_rate[p] / probe_rate(p, 2, 0.1));
    }
    void **ptrs = malloc(30000 * sizeof *ptrs);
    if (!ptrs)
        exit(1);
    for (size_t i = 0; i < 30000; i++)
        ptrs[i] = &elems[0];
    double t0 = bench_now_s();
    run_pipeline_fn(spin_task, NULL, 1, 0, ptrs, 30000);
    double alone = bench_now_s() - t0;
    t0 = bench_now_s();
    run_pipeline_fn(spin_task, task_nop, 1, 1, ptrs, 30000);
    cal_add("-", "queue-out", 0, fmax(0, (bench_now_s() - t0 - alone) / 30000 * 1e9));
    t0 = bench_now_s();
    run_pipeline_fn(task_nop, spin_task, 1, 1, ptrs, 30000);
    cal_add("-", "queue-in", 0, fmax(0, (bench_now_s() - t0 - alone) / 30000 * 1e9));
    free(ptrs);
    cal_add("-", "cores", 0, (double)sysconf(_SC_NPROCESSORS_ONLN));
    for (int s = 0; s < NCAL; s++) {
        size_t n = cal_sizes[s];
        struct config plain = {0, 1, -1, 1, "", ""};
        size_t rlen = cal_length(&plain, n);
        cal_add("-", "reader-writer", (double)n, run_turns(&plain, n, rlen, 1, 1) * 1e9);
        cal_add("-", "reader-cold", (double)n, run_turns(&plain, n, rlen, 0, 1) * 1e9);
        for (int a = 0; a < 3; a++) {
            struct config c = {0, a, -1, 1, "", ""};
            const char *name = tasks[a].name;
            size_t len = cal_length(&c, n);
            cal_add(name, "alone", (double)n, run_stream(&c, n, len) * 1e9);
            for (int p = 0; p < TSCOPE_NPROBES; p++)
                for (unsigned k = 1; k < maxt && k <= TSCOPE_CONTENTION_MAX_COPIES; k++) {
                    /* the probe's rate alone right before: the machine's speed
                     * drifts (a rate taken once per repetition made ratios of
                     * 0.75 in its third) */
                    double ref = k == 1 ? probe_rate(p, 1, 0.06) : 0;
                    window_probe = probe_start(p, k);
                    double v = run_stream(&c, n, len);
                    double rate = (window_p1 - window_p0) / (v * (double)len) / k;
                    tscope_probe_stop(window_probe);
                    window_probe = NULL;
                    char kind[32];
                    snprintf(kind, sizeof kind, "%s:%u", tscope_probe_name(p), k);
                    cal_add(name, kind, (double)n, v * 1e9);
                    if (k == 1) {
                        snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
                        cal_add(name, kind, (double)n, ref / rate);
                    }
                }
            size_t tlen = len > 4000 ? 4000 : len;
            cal_add(name, "after-writer", (double)n, run_turns(&c, n, tlen, 1, 0) * 1e9);
            cal_add(name, "after-cold", (double)n, run_turns(&c, n, tlen, 0, 0) * 1e9);
            cal_add(name, "reader-after", (double)n, run_turns(&c, n, tlen, 2, 1) * 1e9);
        }
    }
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
    const char *creps = getenv("TSCOPE_BENCH_CAL_REPS");
    int cal_reps = creps ? atoi(creps) : 3;
    const char *run_ms = getenv("TSCOPE_BENCH_RUN_MS");
    if (run_ms && atof(run_ms) >= 1)
        run_s = atof(run_ms) / 1000;
    for (int s = 0; s < NCAL; s++) /* 2^14.5 .. 2^17.5: between the validated sizes */
        cal_sizes[s] = (size_t)round(sqrt(2.0) * (double)sizes[s]);
    char calpath[4096];
    double t_start = bench_now_s(), cal_secs = 0;
    if (replay) {
        if ((reps = load_raw(replay, cfg, nc, t_ns)) < 1)
            return 1;
        snprintf(calpath, sizeof calpath, "%s.contention", replay);
        char err[512];
        if (getenv("TSCOPE_BENCH_CALIBRATE")) { /* calibrate here, model the file's runs */
            if (setup_data()) {
                fprintf(stderr, "bench_composition: out of memory\n");
                return 1;
            }
            double c0 = bench_now_s();
            for (int k = 0; k < cal_reps; k++)
                calibrate_once(maxt);
            cal_secs = bench_now_s() - c0;
            fprintf(stderr, "calibration %.1f s\n", cal_secs);
        } else if (access(calpath, R_OK) == 0 &&
                   tscope_contention_read(calpath, &cal, &ncal, err, sizeof err)) {
            fprintf(stderr, "bench_composition: %s\n", err);
            return 1;
        }
    } else {
        if (setup_data()) {
            fprintf(stderr, "bench_composition: out of memory\n");
            return 1;
        }
        measure(cfg, nc, reps, t_ns);
        double c0 = bench_now_s();
        for (int k = 0; k < cal_reps; k++)
            calibrate_once(maxt);
        cal_secs = bench_now_s() - c0;
        if (raw) {
            save_raw(raw, cfg, nc, reps, t_ns);
            snprintf(calpath, sizeof calpath, "%s.contention", raw);
            if (tscope_contention_write(calpath, cal, ncal))
                fprintf(stderr, "bench_composition: writing %s failed\n", calpath);
        }
    }
    tscope_contention_t ct = {0};
    int have_ct = 0;
    if (ncal) {
        char err[512];
        if (tscope_contention_fit(cal, ncal, &ct, err, sizeof err)) {
            fprintf(stderr, "bench_composition: %s\n", err);
            return 1;
        }
        have_ct = 1;
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
            const char *est = getenv("TSCOPE_BENCH_ESTIMATOR");
            if (est && strcmp(est, "min") == 0)
                med = v[0];
            else if (est && strcmp(est, "q25") == 0)
                med = v[(reps - 1) / 4];
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
    if (have_ct) {
        double mid = (double)sizes[NSIZES / 2];
        fprintf(stderr, "contention table (at n = %g): queue in %.4g ns, out %.4g ns, %u cores\n",
                mid, ct.queue_in, ct.queue_out, ct.cores);
        bench_result("composition", "calibration", "queue_in_ns", ct.queue_in, "ns");
        bench_result("composition", "calibration", "queue_out_ns", ct.queue_out, "ns");
        for (size_t i = 0; i < ct.ncomp; i++) {
            const tscope_ccomp_t *c = &ct.comp[i];
            double h = tscope__contention_handover(c, mid), w = tscope__contention_writes(c, mid);
            fprintf(stderr, "  %-6s", c->name);
            for (int p = 0; p < TSCOPE_NPROBES; p++) {
                double load[TSCOPE_NPROBES] = {0};
                load[p] = 1;
                double sl = tscope__contention_slowdown(c, load, mid),
                       d = tscope__contention_demand(c, p, mid);
                char metric[64];
                fprintf(stderr, " %s: slowdown %.4g, demand %.4g;", tscope_probe_name(p), sl, d);
                snprintf(metric, sizeof metric, "slowdown_%s_1", tscope_probe_name(p));
                bench_result("composition", c->name, metric, sl, "factor");
                snprintf(metric, sizeof metric, "demand_%s", tscope_probe_name(p));
                bench_result("composition", c->name, metric, d, "copies");
            }
            fprintf(stderr, " handover %.4g ns; writes %.3g\n", h, w);
            bench_result("composition", c->name, "handover_ns", h, "ns");
            bench_result("composition", c->name, "writes", w, "fraction");
        }
    }
    fprintf(stderr, "%-34s %-44s %-44s %9s %9s %9s\n", "configuration", "modular model (composed)",
            "monolithic model (fitted)", "rel.err", "max", "plain");
    double target[64], target_plain[64];
    int ntarget = 0, worst = -1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < nc; c++) {
        tscope_model_t mod;
        char err[256], ms[256], mm[256];
        if (tscope_model_compose(cfg[c].expr, lookup, NULL, &mod, err, sizeof err)) {
            fprintf(stderr, "bench_composition: %s\n", err);
            return 1;
        }
        tscope_model_format(&mod, &pn, ms, sizeof ms);
        tscope_model_format(&mono[c], &pn, mm, sizeof mm);
        double sum = 0, mx = 0, sum_plain = 0, pred_big = 0;
        for (int s = 0; s < NSIZES; s++) {
            double n = (double)sizes[s], measured = e.series[c].points[s].mean, pred;
            if (tscope_model_compose_at(cfg[c].expr, lookup, NULL, have_ct ? &ct : NULL, n, &pred,
                                        NULL, 0, err, sizeof err)) {
                fprintf(stderr, "bench_composition: %s\n", err);
                return 1;
            }
            double rel = fabs(pred - measured) / measured;
            sum += rel;
            sum_plain += fabs(tscope_model_eval(&mod, &n) - measured) / measured;
            if (rel > mx)
                mx = rel;
            pred_big = pred;
        }
        fprintf(stderr, "%-34s %-44s %-44s %8.2f%% %8.2f%% %8.2f%%\n", cfg[c].name, ms, mm,
                100 * sum / NSIZES, 100 * mx, 100 * sum_plain / NSIZES);
        double big = (double)sizes[NSIZES - 1];
        double diff = fabs(tscope_model_eval(&mod, &big) - tscope_model_eval(&mono[c], &big)) /
                      fabs(tscope_model_eval(&mono[c], &big));
        bench_result("composition", cfg[c].name, "rel_error", sum / NSIZES, "fraction");
        bench_result("composition", cfg[c].name, "rel_error_plain", sum_plain / NSIZES, "fraction");
        bench_result("composition", cfg[c].name, "model_difference_largest", diff, "fraction");
        bench_result("composition", cfg[c].name, "rel_error_max", mx, "fraction");
        bench_result("composition", cfg[c].name, "measured_ns_per_element_largest",
                     e.series[c].points[NSIZES - 1].mean, "ns");
        bench_result("composition", cfg[c].name, "predicted_ns_per_element_largest", pred_big,
                     "ns");
        unsigned threads = cfg[c].kind == 0   ? 1
                           : cfg[c].kind == 1 ? cfg[c].t
                           : cfg[c].kind == 2 ? 2
                                              : 2 * cfg[c].t;
        if (cfg[c].kind != 0 && (long)threads <= cores) {
            if (worst < 0 || sum / NSIZES > target[worst])
                worst = c;
            target[c] = sum / NSIZES;
            target_plain[c] = sum_plain / NSIZES;
            ntarget++;
        } else {
            target[c] = -1;
        }
    }
    if (ntarget) {
        double v[64];
        int k = 0;
        for (int c = 0; c < nc; c++)
            if (target[c] >= 0)
                v[k++] = target[c];
        double med = bench_median(v, k);
        fprintf(stderr,
                "\n%d configurations of at most %ld threads (loops left out): median rel. error "
                "%.2f%%, worst %s %.2f%%\n",
                ntarget, cores, 100 * med, cfg[worst].name, 100 * target[worst]);
        bench_result("composition", "within_cores", "rel_error_median", med, "fraction");
        bench_result("composition", "within_cores", "rel_error_worst", target[worst], "fraction");
        int wp = -1;
        for (int c = 0, k2 = 0; c < nc; c++)
            if (target[c] >= 0) {
                v[k2++] = target_plain[c];
                if (wp < 0 || target_plain[c] > target_plain[wp])
                    wp = c;
            }
        double medp = bench_median(v, k);
        fprintf(stderr, "with the plain operators: median %.2f%%, worst %s %.2f%%\n", 100 * medp,
                cfg[wp].name, 100 * target_plain[wp]);
        bench_result("composition", "within_cores", "rel_error_plain_median", medp, "fraction");
        bench_result("composition", "within_cores", "rel_error_plain_worst", target_plain[wp],
                     "fraction");
    }
    if (!replay) {
        double total = bench_now_s() - t_start;
        fprintf(stderr, "calibration %.1f s of the benchmark's %.1f s (%d repetitions)\n", cal_secs,
                total, cal_reps);
        bench_result("composition", "calibration", "calibration_s", cal_secs, "s");
        bench_result("composition", "all", "benchmark_s", total, "s");
    }
    tscope_contention_free(&ct);
    free(cal);
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
