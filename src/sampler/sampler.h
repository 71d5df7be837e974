/* sampler.h - internals of the sampler (include/taskscope/sampler.h). */
#ifndef TSCOPE_SAMPLER_SAMPLER_H
#define TSCOPE_SAMPLER_SAMPLER_H

#include <stddef.h>
#include <stdio.h>

#include "core/config.h"
#include "profile/profile.h"
#include "taskscope/sampler.h"

/* lifecycle.c: after the consumer starts / before it stops. */
int tscope__sampler_start(void);
void tscope__sampler_stop(void);
/* output.c: samples.csv (p is unused: the rows are the sampler's). */
int tscope__sampler_write_csv(const struct tscope__profile *p, FILE *f);
size_t tscope__sampler_rows(void);
/* Every series' latest value, under the sampler's lock (fn must not call
 * the sampler): the live snapshot's "series". */
void tscope__sampler_each_latest(void (*fn)(void *ctx, const char *series, double value),
                                 void *ctx);

/* A built-in source: a source like any other (tscope_sample_fn, called
 * with the sampler lock held), which tscope__sampler_start registers in
 * the sampler's list by its name, before the sources registered through
 * tscope_sampler_source_register (place FIRST) or after them (LAST: it
 * derives from their series), after calling its start(); stop() closes what
 * it holds, at tscope__sampler_stop, which unregisters it.  The list of
 * built-ins is in sampler.c. */
enum { TSCOPE__SOURCE_FIRST = -1, TSCOPE__SOURCE_REGISTERED = 0, TSCOPE__SOURCE_LAST = 1 };
struct tscope__builtin_source {
    const char *name;
    int place;
    tscope_sample_fn sample;
    void (*start)(const struct tscope__config *cfg); /* NULL: nothing to do */
    void (*stop)(void);                              /* NULL: nothing to close */
};
/* sources.c: /proc, perf, PAPI (papi.c), RAPL or the power estimate */
extern const struct tscope__builtin_source tscope__source_system;
/* concurrency.c: the concurrency view */
extern const struct tscope__builtin_source tscope__source_concurrency;
/* node.c: the AllScale node metrics (after the runtimes' rt.active_threads) */
extern const struct tscope__builtin_source tscope__source_node;

/* For sources, on the sampler thread with the lock held: this sample's
 * time (monotonic seconds), and the latest values of the series the node
 * metrics read (rt.active_threads; power.package_w, else power.estimate_w,
 * *power_is_estimate then 1), NULL for a series not sampled yet. */
double tscope__sampler_now(void);
void tscope__sampler_node_inputs(const double **threads, const double **power,
                                 int *power_is_estimate);

/* papi.c: TASKSCOPE_PAPI_EVENTS (a comma-separated list; empty: none),
 * read with the system source. */
void tscope__papi_reset(const char *events);
void tscope__papi_sample(double now, tscope_sample_emit_fn emit, void *ctx);

/* The 1-based column of series in samples.csv, 0 when it has none (or no
 * rows): for the pictures' scripts (src/export/timeline.c). */
unsigned tscope__sampler_column(const char *series);

#endif
