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

/* sources.c: the built-in sources.  reset() at each start (opens the perf
 * counters, looks for RAPL, says once what is missing); builtin() emits
 * every value it has; `now` is monotonic seconds. */
void tscope__sampler_builtin_reset(const struct tscope__config *cfg);
/* Closes the files and counters the built-in sources hold (at stop). */
void tscope__sampler_builtin_close(void);
void tscope__sampler_builtin(double now, tscope_sample_emit_fn emit, void *ctx);

/* papi.c: TASKSCOPE_PAPI_EVENTS (a comma-separated list; empty: none). */
void tscope__papi_reset(const char *events);
void tscope__papi_sample(double now, tscope_sample_emit_fn emit, void *ctx);

/* node.c: the AllScale node metrics (lock: the sampler's).  latest_*: this
 * sample's rt.active_threads and power, or NULL. */
void tscope__node_reset(void);
void tscope__node_sample(double now, const double *latest_threads, const double *latest_power,
                         int power_is_estimate, tscope_sample_emit_fn emit, void *ctx);

/* concurrency.c: the concurrency view (lock: the sampler's). */
void tscope__concurrency_reset(void);
void tscope__concurrency_sample(tscope_sample_emit_fn emit, void *ctx);
/* The 1-based column of series in samples.csv, 0 when it has none (or no
 * rows): for the pictures' scripts (src/export/timeline.c). */
unsigned tscope__sampler_column(const char *series);

#endif
