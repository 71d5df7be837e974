/* config.h - the TASKSCOPE_* environment, parsed once at tscope_init().
 *
 * Every variable is described in one table in config.c (name, kind, accepted
 * values, default, meaning); docs/configuration.md lists the same table.  An
 * invalid value produces one warning line naming the variable and what it
 * accepts, and the default is used.
 */
#ifndef TSCOPE_CORE_CONFIG_H
#define TSCOPE_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>

#include "formats.h"

enum tscope__mode { TSCOPE__MODE_PROFILE = 0, TSCOPE__MODE_NAIVE = 1 };
/* Who aggregates the events, set by tscope_init (no variable): nobody with
 * the profiler off (the consumer hands the rings to the tools and the trace),
 * else each thread in its shard, in naive mode under one process-wide lock. */
enum tscope__aggregate { TSCOPE__AGG_NONE = 0, TSCOPE__AGG_THREAD = 1, TSCOPE__AGG_LOCKED = 2 };
enum tscope__full_policy { TSCOPE__FULL_WAIT = 0, TSCOPE__FULL_DROP = 1 };

/* The bits of tscope__config.outputs (TSCOPE__OUT_*) and trace_formats
 * (TSCOPE__TRACE_*) come from the list of formats. */

#define TSCOPE__FILTER_MAX_TYPES 64
#define TSCOPE__FILTER_TYPES_BYTES 1024 /* the names, each with its NUL */

struct tscope__config {
    int enable;
    int mode;
    int aggregate; /* enum tscope__aggregate, from profiler and mode */
    int full_policy;
    uint32_t ring_size; /* records per thread, power of two */
    uint32_t max_threads;
    uint32_t period_ms; /* consumer wake-up period */
    uint32_t batch;     /* records per ring per store-lock hold */
    uint64_t instance_cap;
    int tree_fold;       /* fold recursive paths of the task tree */
    int cpu_time;        /* each task's CPU time from the thread CPU clock (shard.c) */
    uint32_t tree_depth; /* deepest task-tree path; 0: no limit */
    double instance_sample;
    double duration_sample; /* fraction of tasks in the duration scatter plot */
    int filter_flags;       /* 0: any; else TSCOPE_TASK_* bits that must be set */
    uint32_t filter_depth_min, filter_depth_max;
    /* TASKSCOPE_FILTER_TYPES: filter_ntypes names back to back, each ended
     * by its NUL (tscope__config_filter_type); one array instead of 64 of
     * 256 bytes: every measured process copies the configuration three or
     * four times at its start, a page fault per 4 KiB of it */
    char filter_types[TSCOPE__FILTER_TYPES_BYTES];
    int filter_ntypes;
    char filter_file[1024]; /* TASKSCOPE_FILTER_FILE: "" none (core/filter.h) */
    char output_dir[1024];
    int outputs;              /* TSCOPE__OUT_* bits */
    int pictures;             /* 0: svg, 1: png (export/pictures.h) */
    int summary;              /* print the summary table at finalize */
    int quiet;                /* notes silenced (tscope__note): warnings and errors only */
    int verbose;              /* machine notes on every run, not once per machine */
    int profiler;             /* the built-in profiler consumes events */
    int trace;                /* the consumer writes the binary trace (src/trace) */
    int trace_formats;        /* TSCOPE__TRACE_* converted from it after the run */
    uint64_t trace_max_bytes; /* the trace stops (marked truncated) past this; 0: no limit */
    char summary_sort[16];
    uint32_t summary_rows;
    char clock[16];
    char tools[4096];                 /* colon-separated plugin list */
    uint32_t sample_ms;               /* sampler period; 0: no sampler thread */
    uint32_t sample_keep;             /* rows of the sampled time series */
    char live[280];                   /* TASKSCOPE_LIVE: HOST:PORT/SECRET of a dashboard; "": off */
    uint32_t live_ms;                 /* snapshot period */
    uint32_t live_queue;              /* snapshots queued before the oldest is dropped */
    double power_idle_w, power_max_w; /* the power estimate, per CPU */
    char policy[16];                  /* "none", "throttle", "optimize", "powercap" */
    uint32_t policy_period_ms;
    char throttle_type[256];          /* "": throughput */
    double power_low_w, power_high_w; /* the power-capping band */
    double score_w[3];                /* node.score: speed, efficiency, power weights */
    double optimize_w[3];             /* the optimiser: time, resources, energy weights */
    char papi_events[1024];           /* comma-separated PAPI event names */
};

/* Name i (< filter_ntypes) of TASKSCOPE_FILTER_TYPES. */
static inline const char *tscope__config_filter_type(const struct tscope__config *c, int i)
{
    const char *p = c->filter_types;
    while (i-- > 0)
        p += strlen(p) + 1;
    return p;
}

/* Fills *cfg from the environment; warnings go to `warn` (stderr normally).
 * Returns the number of warnings printed. */
int tscope__config_load(struct tscope__config *cfg, FILE *warn);

/* Parses a boolean word (1/0/true/false/yes/no/on/off, any case).
 * Returns 0 and sets *out, or -1 if the word is not a boolean. */
int tscope__parse_bool(const char *s, int *out);

/* One word of TASKSCOPE_OUTPUTS (n bytes at w: a format's word - formats.h -
 * or tasks, all, none): 0 with its bits added to *outputs, or -1. */
int tscope__config_output_word(const char *w, size_t n, int *outputs);
/* One word of TASKSCOPE_TRACE (a trace format's word, all, or a boolean
 * word, binary): 0 with *on set when it turns tracing on (never cleared)
 * and its bits added to *formats, or -1. */
int tscope__config_trace_word(const char *w, size_t n, int *on, int *formats);

/* value for the variable `name` (TASKSCOPE_...), checked by that
 * variable's own parser, as tscope__config_load would: 0 accepted, -1 not,
 * -2 no such variable; *accepted: its accepted values, as the docs say
 * them (so `taskscope run`'s options take exactly what the variables
 * take). */
int tscope__config_check(const char *name, const char *value, const char **accepted);

/* The TASKSCOPE_* variables in the environment that no part of taskscope
 * reads (the table above, the adapters', the launcher's, the bundled
 * plugins' and the tests' own, config.c): one warning line each on warn,
 * naming the closest known variable when one is close.  Does nothing when
 * TASKSCOPE_ENV_CHECKED is set (`taskscope run` checked before the
 * program started, and sets it) or when this process is not rank 0 of an
 * MPI job (the environment says so: one warning per job).  Returns the
 * number of warnings. */
int tscope__config_check_environ(FILE *warn);
/* Whether name (a whole TASKSCOPE_* name) is one taskscope reads. */
int tscope__config_known(const char *name);

/* closest.c: the edit distance between a (na bytes) and b (nb), swaps of
 * neighbours counted as one, case-insensitive; whether distance is close
 * enough for a word of len bytes to be a typo; and the name among names
 * (count, NULL entries skipped) closest to word (n bytes) when close
 * enough, else NULL. */
unsigned tscope__edit_distance(const char *a, size_t na, const char *b, size_t nb);
int tscope__close_enough(unsigned distance, size_t len);
const char *tscope__closest(const char *word, size_t n, const char *const *names, size_t count);

/* Writes the table of variables (name, default, accepted values, meaning) as
 * Markdown rows; used to keep docs/configuration.md honest. */
void tscope__config_describe(FILE *out);

#endif
