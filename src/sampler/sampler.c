/* sampler.c - the sampler thread, its sources and the bounded time series
 * (include/taskscope/sampler.h).
 *
 * Every TASKSCOPE_SAMPLE_MS the thread calls every source under the sampler
 * lock, in the list's order: the built-in ones register like any other
 * source at each start (`builtins` below: /proc, perf, PAPI and power
 * (sources.c), the concurrency view (concurrency.c) first, the node metrics
 * (node.c) after the sources registered through
 * tscope_sampler_source_register, whose series they read).  A
 * value becomes a taskscope counter sample (counter named like the series,
 * recorded through the sampler thread's own ring like any thread's event)
 * and a cell of the time series: one row per sample, one column per series
 * (a series first seen later has no value in earlier rows).  The rows are
 * bounded by TASKSCOPE_SAMPLE_KEEP: when full, every second row is dropped
 * and from then on only every second sample is kept (then every fourth...),
 * so the whole run stays covered in bounded memory.  At finalize the rows
 * are written as samples.csv.
 *
 * Locks: sampler_lock guards sources, series and rows; it is never held
 * while taking the store lock (counter samples go through the ring).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/names.h"
#include "sampler.h"
#include "taskscope/sampler.h"

enum { MAX_SOURCES = 64, MAX_SERIES = 128, ROW = 2 + MAX_SERIES };

struct source {
    char name[64];
    int place; /* TSCOPE__SOURCE_*: the list is sorted by it */
    tscope_sample_fn fn;
    void *data;
    double last; /* monotonic seconds of its previous call; 0: never */
};

/* The built-in sources, in the order they are called (within their place). */
static const struct tscope__builtin_source *const builtins[] = {
    &tscope__source_system, &tscope__source_concurrency, &tscope__source_node};
#define NBUILTINS (sizeof builtins / sizeof builtins[0])

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int running, stop;
    struct source sources[MAX_SOURCES];
    unsigned nsources;
    char names[MAX_SERIES][64];
    tscope_counter_t counters[MAX_SERIES];
    double latest[MAX_SERIES], latest_t[MAX_SERIES];
    unsigned nseries;
    unsigned hint; /* the series after the one emitted last: sources emit in
                    * the same order every sample, so this is usually it */
    double *rows;  /* keep x ROW: time, the number of series then, their values */
    size_t nrows, keep;
    unsigned stride, skipped; /* keep one sample in `stride` */
    double cur[MAX_SERIES];   /* the row being sampled */
    /* the series the node metrics read, looked up again only when new
     * series appear (nseries then differs from looked_up) */
    int threads_at, power_at, power_estimate;
    unsigned looked_up;
    double t0, now; /* now: the sample being taken */
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Adds a source after the others of its place.  Lock held. */
static int add_locked(const char *name, int place, tscope_sample_fn fn, void *data)
{
    if (!name || !*name || strlen(name) >= sizeof S.sources[0].name || !fn)
        return TSCOPE_EINVAL;
    for (unsigned i = 0; i < S.nsources; i++)
        if (strcmp(S.sources[i].name, name) == 0)
            return TSCOPE_EINVAL;
    if (S.nsources == MAX_SOURCES)
        return TSCOPE_ELIMIT;
    unsigned at = S.nsources;
    while (at > 0 && S.sources[at - 1].place > place)
        at--;
    memmove(&S.sources[at + 1], &S.sources[at], (S.nsources - at) * sizeof S.sources[0]);
    struct source *s = &S.sources[at];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->place = place;
    s->fn = fn;
    s->data = data;
    s->last = 0;
    S.nsources++;
    return 0;
}

static int remove_locked(const char *name)
{
    for (unsigned i = 0; name && i < S.nsources; i++)
        if (strcmp(S.sources[i].name, name) == 0) {
            memmove(&S.sources[i], &S.sources[i + 1], (S.nsources - i - 1) * sizeof S.sources[0]);
            S.nsources--;
            return 0;
        }
    return TSCOPE_ENOENT;
}

int tscope_sampler_source_register(const char *name, tscope_sample_fn fn, void *data)
{
    pthread_mutex_lock(&S.lock);
    int rc = add_locked(name, TSCOPE__SOURCE_REGISTERED, fn, data);
    pthread_mutex_unlock(&S.lock);
    return rc;
}

int tscope_sampler_source_unregister(const char *name)
{
    pthread_mutex_lock(&S.lock);
    int rc = remove_locked(name);
    pthread_mutex_unlock(&S.lock);
    return rc;
}

double tscope__sampler_now(void)
{
    return S.now;
}

/* emit(): lock held by the caller (sample_locked). */
static void emit(void *ctx, const char *series, double value)
{
    double now = *(double *)ctx;
    unsigned i = S.hint;
    if (i >= S.nseries || strcmp(S.names[i], series) != 0)
        for (i = 0; i < S.nseries && strcmp(S.names[i], series) != 0;)
            i++;
    if (i == S.nseries) {
        if (S.nseries == MAX_SERIES || strlen(series) >= sizeof S.names[0])
            return;
        snprintf(S.names[i], sizeof S.names[i], "%s", series);
        S.counters[i] = 0;
        if (tscope_counter_register(series, &S.counters[i]) == 0)
            tscope__names_add_attrs(&tscope__counters, S.counters[i], TSCOPE__COUNTER_SAMPLED);
        S.nseries++;
    }
    S.hint = i + 1;
    S.cur[i] = value;
    S.latest[i] = value;
    S.latest_t[i] = now - S.t0;
    if (S.counters[i] && isfinite(value))
        tscope_counter_sample(S.counters[i], value);
}

/* Keeps the row of this sample (only the series that exist: a sample at
 * 200 Hz touches as little memory as it can, since the program's threads
 * evict it between samples and every line comes back from memory). */
static void keep_row(double now)
{
    if (S.keep == 0)
        return;
    if (!S.rows && !(S.rows = malloc(S.keep * ROW * sizeof *S.rows))) /* on the sampler's thread */
        return;
    if (++S.skipped < S.stride)
        return;
    S.skipped = 0;
    if (S.nrows == S.keep) { /* full: keep every second row, sample half as often */
        for (size_t r = 0; r < S.nrows / 2; r++)
            memcpy(&S.rows[r * ROW], &S.rows[(2 * r + 1) * ROW], ROW * sizeof *S.rows);
        S.nrows /= 2;
        S.stride *= 2;
    }
    double *row = &S.rows[S.nrows++ * ROW];
    row[0] = now - S.t0;
    row[1] = S.nseries;
    memcpy(row + 2, S.cur, S.nseries * sizeof *row);
}

static void look_up_node_inputs(void)
{
    S.threads_at = S.power_at = -1;
    S.power_estimate = 0;
    for (unsigned i = 0; i < S.nseries; i++) {
        if (strcmp(S.names[i], "rt.active_threads") == 0)
            S.threads_at = (int)i;
        else if (strcmp(S.names[i], "power.package_w") == 0)
            S.power_at = (int)i, S.power_estimate = 0;
        else if (S.power_at < 0 && strcmp(S.names[i], "power.estimate_w") == 0)
            S.power_at = (int)i, S.power_estimate = 1;
    }
    S.looked_up = S.nseries;
}

void tscope__sampler_node_inputs(const double **threads, const double **power,
                                 int *power_is_estimate)
{
    if (S.looked_up != S.nseries) /* the latest values, this sample or earlier */
        look_up_node_inputs();
    *threads = S.threads_at >= 0 ? &S.latest[S.threads_at] : NULL;
    *power = S.power_at >= 0 ? &S.latest[S.power_at] : NULL;
    *power_is_estimate = S.power_estimate;
}

static void sample_locked(void)
{
    double now = S.now = mono_s();
    for (unsigned i = 0; i < S.nseries; i++)
        S.cur[i] = NAN; /* a series that gets no value this time; new ones get theirs */
    for (unsigned i = 0; i < S.nsources; i++) {
        struct source *s = &S.sources[i];
        s->fn(s->data, s->last > 0 ? now - s->last : 0, emit, &now);
        s->last = now;
    }
    keep_row(now);
}

int tscope_sampler_sample_now(void)
{
    if (!tscope__g.initialised)
        return TSCOPE_ESTATE;
    pthread_mutex_lock(&S.lock);
    sample_locked();
    pthread_mutex_unlock(&S.lock);
    return 0;
}

void tscope__sampler_each_latest(void (*fn)(void *ctx, const char *series, double value), void *ctx)
{
    pthread_mutex_lock(&S.lock);
    for (unsigned i = 0; i < S.nseries; i++)
        fn(ctx, S.names[i], S.latest[i]);
    pthread_mutex_unlock(&S.lock);
}

int tscope_sampler_latest(const char *series, double *value, double *time_s)
{
    pthread_mutex_lock(&S.lock);
    int rc = TSCOPE_ENOENT;
    for (unsigned i = 0; series && i < S.nseries; i++)
        if (strcmp(S.names[i], series) == 0) {
            if (value)
                *value = S.latest[i];
            if (time_s)
                *time_s = S.latest_t[i];
            rc = 0;
        }
    pthread_mutex_unlock(&S.lock);
    return rc;
}

static void *sampler_main(void *arg)
{
    (void)arg;
    tscope_thread_register("taskscope-sampler");
    uint32_t period = tscope__g.cfg.sample_ms;
    pthread_mutex_lock(&S.lock);
    while (!S.stop) {
        sample_locked();
        struct timespec until = tscope__deadline_aligned((uint64_t)period * 1000000u);
        while (!S.stop && pthread_cond_timedwait(&S.wake, &S.lock, &until) == 0)
            ;
    }
    sample_locked(); /* the end of the run: a program shorter than the period gets two rows */
    pthread_mutex_unlock(&S.lock);
    tscope_thread_unregister();
    return NULL;
}

int tscope__sampler_start(void)
{
    pthread_mutex_lock(&S.lock);
    free(S.rows);
    S.keep = tscope__g.cfg.sample_keep;
    S.rows = NULL; /* made with the first row kept */
    S.nrows = 0;
    S.looked_up = (unsigned)-1;
    S.stride = 1;
    S.skipped = 0;
    S.nseries = 0;
    S.t0 = mono_s();
    S.stop = 0;
    for (unsigned i = 0; i < S.nsources; i++)
        S.sources[i].last = 0;
    for (unsigned i = 0; i < NBUILTINS; i++) {
        const struct tscope__builtin_source *b = builtins[i];
        if (b->start)
            b->start(&tscope__g.cfg);
        remove_locked(b->name); /* a start without a stop (a forked child's init) */
        add_locked(b->name, b->place, b->sample, NULL);
    }
    pthread_mutex_unlock(&S.lock);
    if (!tscope__g.cfg.sample_ms)
        return 0;
    if (tscope__thread_start(&S.thread, sampler_main, NULL, "tscope-sampler")) {
        fprintf(stderr, "taskscope: warning: cannot start the sampler thread; no samples\n");
        return TSCOPE_ENOMEM;
    }
    S.running = 1;
    return 0;
}

void tscope__sampler_stop(void)
{
    if (S.running) {
        tscope__thread_stop(S.thread, &S.lock, &S.wake, &S.stop);
        S.running = 0;
    }
    pthread_mutex_lock(&S.lock);
    for (unsigned i = 0; i < NBUILTINS; i++) {
        if (builtins[i]->stop)
            builtins[i]->stop();
        remove_locked(builtins[i]->name);
    }
    pthread_mutex_unlock(&S.lock);
}

int tscope__sampler_write_csv(const struct tscope__profile *p, FILE *f)
{
    (void)p;
    pthread_mutex_lock(&S.lock);
    fprintf(f, "time_s");
    for (unsigned i = 0; i < S.nseries; i++)
        fprintf(f, ",%s", S.names[i]);
    fputc('\n', f);
    for (size_t r = 0; r < S.nrows; r++) {
        const double *row = &S.rows[r * ROW];
        fprintf(f, "%.6f", row[0]);
        for (unsigned i = 0; i < S.nseries; i++) {
            if (i < (unsigned)row[1] && isfinite(row[2 + i]))
                fprintf(f, ",%.9g", row[2 + i]);
            else
                fputc(',', f);
        }
        fputc('\n', f);
    }
    pthread_mutex_unlock(&S.lock);
    return ferror(f) ? TSCOPE_EIO : 0;
}

size_t tscope__sampler_rows(void)
{
    pthread_mutex_lock(&S.lock);
    size_t n = S.nrows;
    pthread_mutex_unlock(&S.lock);
    return n;
}

unsigned tscope__sampler_column(const char *series)
{
    unsigned col = 0;
    pthread_mutex_lock(&S.lock);
    for (unsigned i = 0; i < S.nseries && !col; i++)
        if (strcmp(S.names[i], series) == 0)
            col = S.nrows ? i + 2 : 0; /* column 1 is time_s */
    pthread_mutex_unlock(&S.lock);
    return col;
}
