/* model.h - empirical performance models (PMNF, Extra-P compatible) and
 * their composition for parallel patterns.  Library: libtaskscope-model.
 *
 * A model is a function of up to TSCOPE_MODEL_MAX_PARAMS parameters in the
 * performance model normal form
 *
 *     f(p) = c0 + sum_k c_k * prod_l p_l^(i_kl) * log2(p_l)^(j_kl)
 *
 * fitted to an "experiment": measurement series (one per call path and
 * metric), each a list of points (parameter coordinates) with repeated
 * values.  The default modeler selects exactly what Extra-P's default
 * modeler selects (the 42 single-term hypotheses, least squares,
 * leave-one-out cross-validation, SMAPE); see docs/modeling.md.
 *
 * Errors: functions return 0 or a negative TSCOPE_E* code; readers also
 * write a one-line message "FILE:LINE: problem" into err.
 */
#ifndef TASKSCOPE_MODEL_H
#define TASKSCOPE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "taskscope.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSCOPE_MODEL_MAX_PARAMS 4
#define TSCOPE_MODEL_MAX_TERMS 8

/* ---- experiments: what the readers produce ------------------------------ */

typedef struct tscope_mpoint {
    double coord[TSCOPE_MODEL_MAX_PARAMS];
    double *values; /* the repetitions */
    size_t nvalues, cap_values;
    double mean; /* of values; set by tscope_mexp_finish */
} tscope_mpoint_t;

typedef struct tscope_mseries {
    char *callpath, *metric;
    tscope_mpoint_t *points; /* in the order first seen */
    size_t npoints, cap_points;
} tscope_mseries_t;

typedef struct tscope_mexp {
    unsigned nparams;
    char *params[TSCOPE_MODEL_MAX_PARAMS];
    tscope_mseries_t *series; /* in the order first seen */
    size_t nseries, cap_series;
    /* the input file that declared params (for messages about a later file
     * whose parameters differ); NULL when tscope_mexp_param declared them */
    char *params_file;
} tscope_mexp_t;

typedef enum tscope_mformat {
    TSCOPE_MFORMAT_AUTO = 0, /* from the file's content */
    TSCOPE_MFORMAT_TEXT,     /* Extra-P text: PARAMETER, POINTS, REGION, METRIC, DATA */
    TSCOPE_MFORMAT_JSON,     /* Extra-P JSON, the old (id-linked) or the new layout */
    TSCOPE_MFORMAT_JSONL,    /* JSON Lines: {"params":{..},"metric":..,"callpath":..,"value":..} */
    TSCOPE_MFORMAT_TALPAS    /* Talpas: JSON-like lines with ';' between fields */
} tscope_mformat_t;

/* Parses "text", "json", "jsonl", "talpas" or "auto"; -1 if unknown. */
int tscope_mformat_parse(const char *name);

/* Zero-initialise before first use: tscope_mexp_t e = {0}. */
void tscope_mexp_free(tscope_mexp_t *e);
/* Declares a parameter (in order); its index or a negative error. */
int tscope_mexp_param(tscope_mexp_t *e, const char *name);
/* Adds n repetitions at one point of (callpath, metric); the series is
 * created when new.  Points at one coordinate are merged by
 * tscope_mexp_finish: before it, a repeated coordinate may show as separate
 * points.  0 or TSCOPE_ENOMEM / TSCOPE_EINVAL. */
int tscope_mexp_add(tscope_mexp_t *e, const char *callpath, const char *metric, const double *coord,
                    const double *values, size_t n);
/* Merges the points at one coordinate (values in the order added), then
 * computes the point means; call after the last add. */
void tscope_mexp_finish(tscope_mexp_t *e);
/* Reads a file into e (appends).  A later file must name the same
 * parameters as the first, in any order: they are matched by name.
 * Measurements and coordinates must be finite numbers; names are kept
 * whole, whatever their length.  On failure e may hold what was read
 * before the error; err always gets "FILE:LINE: problem" (or "FILE: JSON
 * path: problem", or "FILE: byte N: problem"). */
int tscope_mexp_read(tscope_mexp_t *e, const char *path, tscope_mformat_t format, char *err,
                     size_t errlen);

/* ---- models ------------------------------------------------------------- */

typedef struct tscope_mfactor {
    int16_t num, den; /* polynomial exponent num/den (0/1: none) */
    int16_t log;      /* exponent of log2 (0: none) */
} tscope_mfactor_t;

typedef struct tscope_mterm {
    double coef;
    tscope_mfactor_t f[TSCOPE_MODEL_MAX_PARAMS];
} tscope_mterm_t;

typedef struct tscope_model {
    unsigned nparams;
    double c0;
    unsigned nterms;
    tscope_mterm_t terms[TSCOPE_MODEL_MAX_TERMS];
    /* quality, as Extra-P reports it: with cross-validation RSS and SMAPE
     * are those of the left-out predictions; ar2 is NaN where the adjusted
     * R^2 is undefined (total sum of squares 0, or points <= terms + 1) */
    double rss, smape, ar2, re;
    size_t npoints;
    double lo[TSCOPE_MODEL_MAX_PARAMS], hi[TSCOPE_MODEL_MAX_PARAMS]; /* measured range */
    int multi_form; /* printed as Extra-P prints multi-parameter functions */
} tscope_model_t;

typedef struct tscope_mfit_opts {
    uint32_t struct_size;
    int crossvalidation; /* 1: leave-one-out (Extra-P's default) */
    unsigned max_terms;  /* 1: Extra-P's default; 2-3: multi-term search */
} tscope_mfit_opts_t;

/* Fits a model to a series of an experiment with nparams parameters (one:
 * the single-parameter modeler, more: the multi-parameter modeler).  opts
 * may be NULL (Extra-P's defaults).  Call tscope_mexp_finish first. */
int tscope_model_fit(const tscope_mseries_t *s, unsigned nparams, const tscope_mfit_opts_t *opts,
                     tscope_model_t *out);
/* Value of the model at coord[0 .. nparams). */
double tscope_model_eval(const tscope_model_t *m, const double *coord);
/* Extra-P's printed form ("-0.88 + 0.2 * x^(2)") with the given parameter
 * names; returns the length it needed (like snprintf). */
int tscope_model_format(const tscope_model_t *m, const char *const *params, char *buf, size_t len);
/* Parses that printed form back (coefficients and exponents).  0 or
 * TSCOPE_EINVAL with a message in err. */
int tscope_model_parse(const char *text, unsigned nparams, const char *const *params,
                       tscope_model_t *out, char *err, size_t errlen);

/* ---- composition -------------------------------------------------------- */

/* Looks up a component model by name; 0 or TSCOPE_ENOENT. */
typedef int (*tscope_model_lookup_fn)(void *data, const char *name, tscope_model_t *out);

/* Evaluates a composition expression of single-parameter models:
 *   NAME                 a component model
 *   tpool(T, E)          a task pool of T workers: E / T
 *   pipe(E1, E2, ...)    a pipeline: the stage of the highest asymptotic
 *                        order (leading term's exponent of p, then of
 *                        log2 p; equal orders: the larger over the measured
 *                        range)
 * nested freely.  0, or TSCOPE_EINVAL / TSCOPE_ENOENT with a message. */
int tscope_model_compose(const char *expr, tscope_model_lookup_fn lookup, void *data,
                         tscope_model_t *out, char *err, size_t errlen);
/* -1, 0, 1: a grows slower than, like, faster than b (pipe's order; the
 * last tie-break is the coefficients, so the order is total). */
int tscope_model_compare(const tscope_model_t *a, const tscope_model_t *b);

/* ---- contention: composition that knows what threads share ------------- */

/* The synthetic co-runners a calibration measures components next to
 * (src/model/probe.c): a memory-bandwidth stream, a cache-sharing probe and
 * a spinning one (arithmetic without memory traffic: the core's execution
 * resources, which two vCPUs or SMT siblings share, and what a polling
 * worker takes from its neighbour). */
enum { TSCOPE_PROBE_STREAM, TSCOPE_PROBE_CACHE, TSCOPE_PROBE_SPIN, TSCOPE_NPROBES };
#define TSCOPE_CONTENTION_MAX_COPIES 16

/* One measurement of a calibration, as a line of a measurements file
 * ("COMPONENT<tab>KIND<tab>N<tab>VALUE"; docs/modeling.md lists the kinds).
 * Component "-" holds what belongs to the machine, not to one component. */
typedef struct tscope_cmeas {
    char component[64];
    char kind[32];
    double n, value;
} tscope_cmeas_t;

/* What the calibration fitted for one component, each a single-parameter
 * model in the size (a constant where the measurements do not vary):
 *   sens[p][k-1]  its slowdown next to k copies of probe p (>= 1)
 *   demand[p]     how much it slows probe p, in copies of probe p (>= 0)
 *   handover      time added per element when its input was just written
 *                 on another core (>= 0; a constant 0 when not measured)
 *   writes        how much of its element it leaves written, 0 .. 1 */
typedef struct tscope_ccomp {
    char name[64];
    unsigned copies[TSCOPE_NPROBES];
    tscope_model_t sens[TSCOPE_NPROBES][TSCOPE_CONTENTION_MAX_COPIES];
    tscope_model_t demand[TSCOPE_NPROBES], handover, writes;
} tscope_ccomp_t;

typedef struct tscope_contention {
    double queue_in, queue_out; /* per element a stage pays to pop / push a queue */
    unsigned cores;             /* of the calibrated machine; 0: unknown */
    size_t ncomp;
    tscope_ccomp_t *comp;
} tscope_contention_t;

/* Reads a measurements file (lines as above, '#' comments).  *out is
 * malloc'ed.  0, or TSCOPE_EINVAL / TSCOPE_ENOMEM with "FILE:LINE: problem". */
int tscope_contention_read(const char *path, tscope_cmeas_t **out, size_t *n, char *err,
                           size_t errlen);
/* Writes measurements in that format; 0 or TSCOPE_EIO. */
int tscope_contention_write(const char *path, const tscope_cmeas_t *m, size_t n);
/* Fits the contention table of measurements.  0, or TSCOPE_EINVAL /
 * TSCOPE_ENOMEM with a message. */
int tscope_contention_fit(const tscope_cmeas_t *m, size_t n, tscope_contention_t *out, char *err,
                          size_t errlen);
void tscope_contention_free(tscope_contention_t *c);

/* Evaluates a composition at parameter value p, with contention when ct is
 * not NULL:
 *   tpool(T, E)      E / T, each worker slowed by what the other T-1 share
 *   pipe(E1, ...)    the slowest stage by value at p, each stage slowed by
 *                    the others (weighted by how busy they are), plus the
 *                    handover of its input and the queue's costs
 * Without ct the value is that of tscope_model_compose's model at p.  When
 * explain is not NULL it receives one line per component and pipeline
 * naming the terms used and their values.  0, or an error as
 * tscope_model_compose's. */
int tscope_model_compose_at(const char *expr, tscope_model_lookup_fn lookup, void *data,
                            const tscope_contention_t *ct, double p, double *value, char *explain,
                            size_t explainlen, char *err, size_t errlen);

/* Synthetic co-runners: copies threads of probe kind running until stopped
 * (each on its own buffer).  progress() is the work done so far by all copies
 * (in the probe's units: the stream's integers, the cache probe's accesses,
 * the spinning probe's steps);
 * divide a difference by its time for a rate. */
typedef struct tscope_probe tscope_probe_t;
/* "stream", "cache", "spin" (the measurements file's word), or NULL. */
const char *tscope_probe_name(int kind);
int tscope_probe_start(int kind, unsigned copies, tscope_probe_t **out);
double tscope_probe_progress(const tscope_probe_t *p);
/* Work per second of one copy of probe kind, with copies - 1 others and
 * nothing else of this process running, over secs (this thread sleeps);
 * -1 if the probe cannot start. */
double tscope_probe_rate(int kind, unsigned copies, double secs);
void tscope_probe_stop(tscope_probe_t *p);

#ifdef __cplusplus
}
#endif

#endif
