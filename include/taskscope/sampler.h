/* sampler.h - third-person sampling: a taskscope thread that every
 * TASKSCOPE_SAMPLE_MS reads what the machine and the runtime are doing (CPU,
 * memory, network, I/O, load, perf software counters, power or its
 * estimate, and what registered sources report) and records each value as a
 * taskscope counter and in a bounded time series (samples.csv at finalize).
 * docs/sampling.md lists the series.
 */
#ifndef TASKSCOPE_SAMPLER_H
#define TASKSCOPE_SAMPLER_H

#include <stddef.h>

#include "taskscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A source calls emit(ctx, series, value) once per value it has. */
typedef void (*tscope_sample_emit_fn)(void *ctx, const char *series, double value);
/* Called on the sampler thread each period; `seconds` since the previous
 * call (0 on the first), for rates. */
typedef void (*tscope_sample_fn)(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx);

/* Adds a source (a runtime's state, an application's gauges), called after
 * the built-in /proc-perf-power and concurrency sources and before the node
 * metrics, in registration order.  Works before and after tscope_init;
 * TSCOPE_EINVAL for a name already used (while taskscope runs, the built-in
 * ones hold "taskscope.system", "taskscope.concurrency", "taskscope.node"). */
int tscope_sampler_source_register(const char *name, tscope_sample_fn fn, void *data);
int tscope_sampler_source_unregister(const char *name);

/* The latest value of a series and its time (s since tscope_init);
 * TSCOPE_ENOENT for a series never sampled. */
int tscope_sampler_latest(const char *series, double *value, double *time_s);
/* Takes one sample now, on the calling thread (tests, and policies that
 * want a fresh value).  TSCOPE_ESTATE when taskscope is not initialised. */
int tscope_sampler_sample_now(void);

#ifdef __cplusplus
}
#endif

#endif
