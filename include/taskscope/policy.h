/* policy.h - runtime adaptation: named parameters that a runtime or an
 * application exposes, and tuners that search a parameter space for the
 * best value of a scalar objective.
 *
 * Parameters: a runtime registers each knob it lets others turn (the
 * bundled runtime: "rt.thread_cap", "rt.schedule"; the OMPT adapter:
 * "omp.thread_cap") with its kind, range and setter/getter; policies, the
 * CLI and the dashboard change behaviour only through tscope_param_set.  The registry works without
 * tscope_init and is thread-safe; setters run on the caller's thread under no taskscope lock.
 *
 * Tuners: an ask/tell session.  tscope_tuner_next gives the next point to
 * try, tscope_tuner_report tells the objective measured there (smaller is
 * better), until tscope_tuner_converged; tscope_tuner_best gives the best
 * point seen.  Integer and choice dimensions are searched on their grid.
 */
#ifndef TASKSCOPE_POLICY_H
#define TASKSCOPE_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "taskscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- parameters --------------------------------------------------------- */

typedef enum tscope_param_kind {
    TSCOPE_PARAM_INT = 1, /* integer values in [min, max] */
    TSCOPE_PARAM_REAL,    /* real values in [min, max] */
    TSCOPE_PARAM_CHOICE   /* one of choices[0 .. nchoices): the value is the index */
} tscope_param_kind_t;

typedef struct tscope_param_desc {
    uint32_t struct_size;
    const char *name; /* copied; "component.knob" by convention */
    tscope_param_kind_t kind;
    double min, max;                      /* INT and REAL */
    const char *const *choices;           /* CHOICE: copied */
    unsigned nchoices;                    /* CHOICE */
    int (*set)(double value, void *data); /* 0 or a negative TSCOPE_E* code */
    double (*get)(void *data);
    void *data;
} tscope_param_desc_t;

/* Registers a parameter.  TSCOPE_EINVAL for an incomplete description, an
 * empty range or a name already registered; TSCOPE_ENOMEM. */
int tscope_param_register(const tscope_param_desc_t *desc);
/* 0 or TSCOPE_ENOENT.  Calls into the parameter's setter or getter that
 * other threads have begun (a policy, the live dashboard) return first, so
 * none runs after this returns; one from inside its own setter does not
 * wait for itself. */
int tscope_param_unregister(const char *name);
/* Sets a value: TSCOPE_ENOENT for an unknown name, TSCOPE_EINVAL for a
 * value outside the range or not an integer (INT, CHOICE), else what the
 * setter returns.  The error text says which bound (tscope_param_last_error
 * on this thread). */
int tscope_param_set(const char *name, double value);
/* Sets a CHOICE parameter by the choice's name. */
int tscope_param_set_choice(const char *name, const char *choice);
int tscope_param_get(const char *name, double *value);
/* The description of a registered parameter (strings stay valid until it
 * is unregistered). */
int tscope_param_describe(const char *name, tscope_param_desc_t *out);
/* Names of all parameters, in registration order: fills up to cap and sets
 * *count to the number registered. */
int tscope_param_list(const char **names, size_t cap, size_t *count);
/* The thread cap, by convention: a runtime that lets policies change how
 * many threads run its work registers an INT parameter named
 * "COMPONENT.thread_cap" with the range [1, all its threads], whose setter
 * takes effect at the runtime's next safe point.  The built-in throttling,
 * optimising and power-capping policies steer whichever is registered
 * first, without knowing the runtime. */
#define TSCOPE_THREAD_CAP_SUFFIX ".thread_cap"
/* The name of the first registered thread-cap parameter, into name (size
 * bytes): 0, TSCOPE_ENOENT when none is registered, TSCOPE_ELIMIT when it
 * does not fit, TSCOPE_EINVAL for no buffer. */
int tscope_param_thread_cap(char *name, size_t size);
/* A one-line description of this thread's last failed tscope_param_* call. */
const char *tscope_param_last_error(void);

/* ---- tuners ------------------------------------------------------------- */

typedef enum tscope_tuner_kind {
    TSCOPE_TUNER_EXHAUSTIVE = 1, /* every grid point, in order */
    TSCOPE_TUNER_RANDOM,         /* uniformly random points */
    TSCOPE_TUNER_HILL_CLIMB,     /* neighbour steps, moving only on a clear gain */
    TSCOPE_TUNER_NELDER_MEAD,    /* the downhill simplex */
    TSCOPE_TUNER_PRO,            /* parallel rank order (Active Harmony, APEX) */
    TSCOPE_TUNER_ANNEALING       /* simulated annealing */
} tscope_tuner_kind_t;

#define TSCOPE_TUNER_MAX_DIMS 8

typedef struct tscope_tune_dim {
    double min, max;
    double step; /* > 0: the values are min + k * step (integers, choices: 1) */
} tscope_tune_dim_t;

typedef struct tscope_tuner_opts {
    uint32_t struct_size;
    unsigned max_evals;  /* 0: 100 (exhaustive: the grid size) */
    uint64_t seed;       /* random, annealing, start points; 0: a fixed default */
    double hysteresis;   /* hill climbing: a move needs a relative gain above this (0.05) */
    const double *start; /* NULL: the middle of every dimension; copied */
    unsigned passes;     /* exhaustive: 2 walks the grid there and back, and a point's
                            objective is the mean of its two measurements (a linear drift
                            in time cancels: both sum to the same time); 0, 1: once */
} tscope_tuner_opts_t;

typedef struct tscope_tuner tscope_tuner_t;

/* Creates a session; opts may be NULL.  TSCOPE_EINVAL for a bad dimension
 * (min > max, a real dimension for exhaustive search without a step). */
int tscope_tuner_create(tscope_tuner_kind_t kind, const tscope_tune_dim_t *dims, unsigned ndims,
                        const tscope_tuner_opts_t *opts, tscope_tuner_t **out);
void tscope_tuner_destroy(tscope_tuner_t *t);
/* The next point to measure (ndims values, on the grid).  TSCOPE_ESTATE
 * when converged or when the last point has not been reported. */
int tscope_tuner_next(tscope_tuner_t *t, double *point);
/* The objective measured at the point last given by next (smaller is
 * better; NaN counts as the worst). */
int tscope_tuner_report(tscope_tuner_t *t, double objective);
/* 1 when the search is over (its rule, or max_evals reached). */
int tscope_tuner_converged(const tscope_tuner_t *t);
/* The best point reported so far and its objective; TSCOPE_ESTATE before
 * the first report. */
int tscope_tuner_best(const tscope_tuner_t *t, double *point, double *objective);
/* Objective evaluations so far. */
unsigned tscope_tuner_evals(const tscope_tuner_t *t);
/* "nelder_mead" and so on; -1 for an unknown name. */
int tscope_tuner_kind_parse(const char *name);

/* ---- policies ----------------------------------------------------------- */

/* A periodic policy runs on taskscope's policy thread every period_ms
 * (from tscope_policy_add until tscope_policy_remove or tscope_finalize);
 * `elapsed_s` is the time since its previous run (0 on the first).  It may
 * query the introspection API and the sampler and set parameters. */
typedef void (*tscope_policy_fn)(void *data, double elapsed_s);

/* TSCOPE_EINVAL: no name, a name in use, a period below 1 ms;
 * TSCOPE_ESTATE: taskscope is not initialised. */
int tscope_policy_add(const char *name, unsigned period_ms, tscope_policy_fn fn, void *data);
int tscope_policy_remove(const char *name);

/* A triggered policy runs on taskscope's consumer thread when it applies an
 * event of the given kind (and id; 0: any): a custom event, a counter
 * sample, or the begin of a task of a type.  Delay bound: the consumer's
 * period (TASKSCOPE_PERIOD_MS) plus one batch, or sooner when a ring fills
 * up.  It runs outside the store lock (it may query) and must not call
 * tscope_flush or tscope_finalize.  Removed with tscope_policy_remove. */
typedef enum tscope_trigger_kind {
    TSCOPE_TRIGGER_CUSTOM = 1, /* id: the tscope_event_t */
    TSCOPE_TRIGGER_COUNTER,    /* id: the tscope_counter_t */
    TSCOPE_TRIGGER_TASK_BEGIN  /* id: the tscope_type_t (begin or start events) */
} tscope_trigger_kind_t;

typedef struct tscope_trigger_info {
    uint32_t struct_size;
    tscope_trigger_kind_t kind;
    uint32_t id;      /* event, counter or type */
    uint32_t thread;  /* the thread it happened on */
    uint64_t task;    /* TASK_BEGIN: the task */
    uint64_t payload; /* CUSTOM: the payload */
    double value;     /* COUNTER: the value */
} tscope_trigger_info_t;

typedef void (*tscope_trigger_fn)(void *data, const tscope_trigger_info_t *info);

/* TSCOPE_EINVAL: no name, a name in use, an unknown kind; TSCOPE_ESTATE:
 * taskscope is not initialised. */
int tscope_policy_on(const char *name, tscope_trigger_kind_t kind, uint32_t id,
                     tscope_trigger_fn fn, void *data);

/* The built-in thread-throttling policy (TASKSCOPE_POLICY=throttle starts it
 * when a runtime registers its thread cap: tscope_rt_init, the OMPT
 * adapter's first parallel region): every period it measures the
 * throughput (tasks finished per second, from the profile) or, with a task
 * type, that type's mean self time, and tunes the thread-cap
 * parameter (tscope_param_thread_cap) over the powers
 * of two from all workers down to 1 and back (each cap measured twice, a
 * point more than 20% worse than the best after a quarter period cut
 * short); once converged it keeps the cap with the best mean and re-tunes
 * only when the objective drifts by more than 20%. */
typedef struct tscope_throttle_status {
    int converged;
    unsigned cap;     /* the cap it set last */
    unsigned best;    /* the best cap found (valid when converged) */
    unsigned evals;   /* periods measured */
    double objective; /* the last measurement (tasks/s, or ns per task); the best one's
                         from convergence until the next whole period */
    unsigned retunes; /* searches started again after a drift */
    unsigned cut;     /* of the evals, points cut short (clearly worse after a quarter period) */
} tscope_throttle_status_t;

/* Starts the throttling policy now (on the thread-cap parameter, which must
 * be registered: TSCOPE_ENOENT otherwise).  type_name NULL: maximise
 * throughput (the profiler must be on: TASKSCOPE_PROFILER=0 counts no
 * finished task). */
int tscope_throttle_start(unsigned period_ms, const char *type_name);
/* The AllScale multi-objective optimiser (TASKSCOPE_POLICY=optimize,
 * TASKSCOPE_OPTIMIZE_WEIGHTS=TIME,RESOURCES,ENERGY): the same loop as
 * throttling, minimising w_time x time per task + w_resources x threads /
 * workers + w_energy x energy per task (each relative to its first
 * measurement; energy from the sampler's energy.estimate_j, left out where
 * there is none) with Nelder-Mead over the cap 1 .. workers.  Its status is
 * tscope_throttle_status's (objective: the weighted value); it is stopped
 * by tscope_throttle_stop.  One of the two runs at a time. */
int tscope_optimize_start(unsigned period_ms, double w_time, double w_resources, double w_energy);
/* For runtimes, once their parameters are registered: starts the policies
 * that TASKSCOPE_POLICY selects (today "throttle", with
 * TASKSCOPE_POLICY_PERIOD_MS and TASKSCOPE_THROTTLE_TYPE).  0 when none is
 * selected or taskscope is not initialised; a failure prints one line.
 * "powercap" uses TASKSCOPE_POWER_BAND (see below). */
int tscope_policy_autostart(void);
int tscope_throttle_status(tscope_throttle_status_t *out);
void tscope_throttle_stop(void);

/* The built-in power-capping policy (TASKSCOPE_POLICY=powercap with
 * TASKSCOPE_POWER_BAND=LOW,HIGH): every period it reads the sampler's
 * power (power.package_w, or power.estimate_w where there is no RAPL) and
 * lowers the thread-cap parameter (tscope_param_thread_cap) by one above
 * HIGH, raises it by one below LOW and
 * leaves it alone in between (the band is the hysteresis). */
typedef struct tscope_powercap_status {
    unsigned cap;            /* the cap it set last */
    double power_w;          /* the last power read */
    unsigned periods;        /* periods with a power value */
    unsigned inside;         /* of those, inside [LOW, HIGH] */
    unsigned after_first;    /* periods since the power first entered the band */
    unsigned inside_after;   /* of those, inside the band */
    int estimate;            /* 1: the power is the sampler's estimate */
    unsigned above_at_floor; /* periods above HIGH with the cap at one thread already: the
                                power is not this program's to cut (other processes' load;
                                said once on stderr after 3 such periods in a row) */
} tscope_powercap_status_t;

int tscope_powercap_start(unsigned period_ms, double low_w, double high_w);
int tscope_powercap_status(tscope_powercap_status_t *out);
void tscope_powercap_stop(void);

#ifdef __cplusplus
}
#endif

#endif
