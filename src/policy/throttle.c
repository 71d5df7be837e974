/* throttle.c - the built-in thread-throttling policy (APEX's throttling)
 * and the AllScale multi-objective optimiser (include/taskscope/policy.h).
 *
 * The optimiser is the same loop with another objective and search: the
 * weighted sum of time per task, threads in use / workers and energy per
 * task (each relative to its first measurement), minimised by Nelder-Mead
 * over the cap 1 .. W.
 *
 * A periodic policy on the thread-cap parameter (policy.h: the first
 * registered "*.thread_cap", the bundled runtime's or the OMPT adapter's;
 * W is its maximum), steered only through the parameter registry, so it
 * works on any runtime that registers one.  Each period it measures the
 * objective over the period just ended (tasks finished per second, from
 * the profile's totals, maximised; or a task type's mean self time,
 * minimised) and reports it to a tuner: for throttling an exhaustive
 * search over the powers of two from all workers down to 1 and back up
 * (log2(W) + 1 points, each measured twice, so that a drift of the
 * program's speed over time cancels and the noise of one period halves; it
 * cannot stop on a plateau the way a climb with hysteresis does), then it
 * keeps the best.  The first period after the start is not measured: a
 * program's first fraction of a second ran 1-4% faster than the rest here,
 * which favoured the first cap measured.  The policy runs four times a
 * period: a point whose objective after a quarter of a period is already
 * more than 20% worse than the best so far is cut short, so the search
 * spends little time at caps far too small (or far too large).  Converged,
 * it keeps the best cap; when the objective then drifts more than 20% from
 * the best value for three periods in a row (the program changed phase) it
 * tunes again.  A period without finished tasks says nothing and is not
 * reported.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "policy.h"
#include "taskscope/policy.h"
#include "taskscope/sampler.h"

static struct {
    pthread_mutex_t lock;
    int active;
    int optimize;        /* the AllScale optimiser: Nelder-Mead over 1..W, weighted objective */
    double w[3], ref[3]; /* weights and references (the first measurement) of time,
                            resources, energy */
    double base_energy, base_t;
    tscope_tuner_t *tuner;
    char param[64];     /* the thread-cap parameter */
    tscope_type_t type; /* 0: throughput */
    unsigned workers, kmax, cap, best;
    double period; /* seconds per measurement; the policy runs every quarter */
    double sofar;  /* seconds measured at the current point */
    unsigned cut;  /* points cut short */
    int warm;      /* the first period (at start) is over */
    int converged, drift;
    unsigned evals, retunes;
    double objective, best_objective;
    int reweighted; /* the weights changed (optimize.w_*): search again */
    uint64_t base_done, base_calls;
    double base_self;
    int have_base;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The tuner's point to a cap: the optimiser's grid is the cap itself;
 * throttling's is j = 0 .. kmax for cap = 2^(kmax - j), so that the
 * exhaustive search starts at all workers and halves. */
static unsigned cap_of(double j, unsigned workers)
{
    if (T.optimize)
        return (unsigned)j;
    double c = pow(2, T.kmax - j);
    return c >= workers ? workers : (unsigned)c;
}

/* The energy used so far (J): RAPL-based power integrated by the caller is
 * not kept, so the sampler's cumulative estimate, or NAN. */
static double energy_now(void)
{
    double e;
    return tscope_sampler_latest("energy.estimate_j", &e, NULL) == 0 ? e : NAN;
}

/* Tasks finished so far (the profile's count: any runtime's tasks). */
static uint64_t tasks_done(void)
{
    tscope_totals_t tot;
    return tscope_query_totals(&tot) == 0 ? tot.tasks_completed : 0;
}

static void baseline(void)
{
    T.base_done = tasks_done();
    T.base_energy = energy_now();
    if (T.type) {
        tscope_type_stats_t ts;
        if (tscope_query_type(T.type, &ts) == 0) {
            T.base_calls = ts.calls;
            T.base_self = ts.self_ns.sum;
        }
    }
    T.have_base = 1;
    T.sofar = 0;
}

/* The objective as the status shows it: tasks per second, not its negative. */
static double shown(double f)
{
    return !T.type && !T.optimize ? -f : f;
}

/* The objective over the period just ended (smaller is better); NAN when
 * the period says nothing. */
static double measure(double elapsed)
{
    if (!T.have_base || elapsed <= 0)
        return NAN;
    if (T.type) {
        tscope_type_stats_t ts;
        if (tscope_query_type(T.type, &ts) || ts.calls == T.base_calls)
            return NAN;
        return (ts.self_ns.sum - T.base_self) / (double)(ts.calls - T.base_calls);
    }
    uint64_t completed = tasks_done();
    if (completed <= T.base_done)
        return NAN;
    double done = (double)(completed - T.base_done);
    if (!T.optimize)
        return -done / elapsed; /* maximise throughput */
    /* AllScale: weighted time per task, resources in use, energy per task,
     * each relative to its first measurement */
    double v[3] = {elapsed / done, (double)T.cap / T.workers,
                   (energy_now() - T.base_energy) / done};
    double f = 0;
    for (int i = 0; i < 3; i++) {
        if (!(v[i] > 0) || !isfinite(v[i]) || T.w[i] == 0)
            continue; /* no energy data: that term is left out */
        if (!(T.ref[i] > 0))
            T.ref[i] = v[i];
        f += T.w[i] * v[i] / T.ref[i];
    }
    return f;
}

static void set_cap(unsigned cap)
{
    if (tscope_param_set(T.param, cap) == 0)
        T.cap = cap;
}

static int restart_tuner(void)
{
    tscope_tuner_destroy(T.tuner);
    T.tuner = NULL;
    tscope_tune_dim_t dim = {0, T.kmax, 1};
    double start = 0;
    if (T.optimize) {
        dim = (tscope_tune_dim_t){1, T.workers, 1};
        start = T.workers;
    }
    tscope_tuner_opts_t o = {sizeof o, 64, 1, 0.05, &start, 2};
    T.converged = 0;
    T.drift = 0;
    return tscope_tuner_create(T.optimize ? TSCOPE_TUNER_NELDER_MEAD : TSCOPE_TUNER_EXHAUSTIVE,
                               &dim, 1, &o, &T.tuner);
}

/* While tuning: 1 (and counted) when the point measured so far, objective
 * f over at least a fifth of a period, is more than 20% worse than the
 * best: it is cut short. */
static int clearly_worse(double f)
{
    double p, best;
    if (T.sofar < T.period * 0.2 || tscope_tuner_best(T.tuner, &p, &best) || !isfinite(best) ||
        !(f - best > 0.2 * fabs(best)))
        return 0;
    T.cut++;
    return 1;
}

/* Runs four times a period; a measurement spans from the baseline to now. */
static void throttle_policy(void *data, double elapsed)
{
    (void)data;
    pthread_mutex_lock(&T.lock);
    if (T.reweighted && restart_tuner() == 0) { /* another objective: a new search */
        T.reweighted = 0;
        T.have_base = 0;
        T.retunes++;
    }
    T.sofar += elapsed;
    double f = measure(T.sofar);
    int done = T.sofar >= T.period * 0.9; /* runs every quarter: allow for jitter */
    if (T.have_base && !isnan(f) && done && !T.warm) {
        T.warm = 1; /* the first period is a warm-up, not a measurement */
        baseline();
        pthread_mutex_unlock(&T.lock);
        return;
    }
    if (T.have_base && !isnan(f)) {
        if (!T.converged) {
            done = done || clearly_worse(f);
            if (done) {
                T.objective = shown(f);
                tscope_tuner_report(T.tuner, f);
                T.evals++;
            }
        } else if (done) {
            T.objective = shown(f);
            if (fabs(f - T.best_objective) > 0.2 * fabs(T.best_objective)) {
                if (++T.drift >= 3 && restart_tuner() == 0) {
                    T.have_base = 0; /* a new search from all workers */
                    T.retunes++;
                }
            } else {
                T.drift = 0;
            }
        }
    }
    if ((!T.have_base || (done && !isnan(f))) && !T.converged && T.tuner) {
        double j;
        if (tscope_tuner_next(T.tuner, &j) == 0) {
            set_cap(cap_of(j, T.workers));
        } else { /* converged: keep the best */
            double fb;
            tscope_tuner_best(T.tuner, &j, &fb);
            T.converged = 1;
            T.best = cap_of(j, T.workers);
            T.best_objective = fb;
            T.objective = shown(fb);
            set_cap(T.best);
        }
    }
    if (!T.have_base || done) /* a new point, or a period without finished tasks */
        baseline();
    pthread_mutex_unlock(&T.lock);
}

static int start(unsigned period_ms, const char *type_name, int optimize, const double *w);

int tscope_throttle_start(unsigned period_ms, const char *type_name)
{
    return start(period_ms, type_name, 0, NULL);
}

int tscope_optimize_start(unsigned period_ms, double w_time, double w_resources, double w_energy)
{
    if (!(w_time >= 0) || !(w_resources >= 0) || !(w_energy >= 0) ||
        w_time + w_resources + w_energy <= 0)
        return TSCOPE_EINVAL;
    const double w[3] = {w_time, w_resources, w_energy};
    return start(period_ms, NULL, 1, w);
}

/* The optimiser's weights as parameters "optimize.w_time", "_resources",
 * "_energy" (a dashboard's sliders): a change makes the next run search
 * again; the three may not all be 0. */
static const char *const weight_names[3] = {"optimize.w_time", "optimize.w_resources",
                                            "optimize.w_energy"};

static int set_weight(double v, void *data)
{
    int i = (int)(intptr_t)data, rc = 0;
    pthread_mutex_lock(&T.lock);
    double sum = v;
    for (int k = 0; k < 3; k++)
        sum += k == i ? 0 : T.w[k];
    if (!T.active || !T.optimize)
        rc = TSCOPE_ESTATE;
    else if (!(sum > 0))
        rc = TSCOPE_EINVAL;
    else if (T.w[i] != v) {
        T.w[i] = v;
        T.reweighted = 1;
    }
    pthread_mutex_unlock(&T.lock);
    return rc;
}

static double get_weight(void *data)
{
    pthread_mutex_lock(&T.lock);
    double v = T.w[(int)(intptr_t)data];
    pthread_mutex_unlock(&T.lock);
    return v;
}

static void weight_params(int on)
{
    for (int i = 0; i < 3; i++) {
        if (!on) {
            tscope_param_unregister(weight_names[i]);
            continue;
        }
        tscope_param_desc_t d = {.struct_size = sizeof d,
                                 .name = weight_names[i],
                                 .kind = TSCOPE_PARAM_REAL,
                                 .min = 0,
                                 .max = 10,
                                 .set = set_weight,
                                 .get = get_weight,
                                 .data = (void *)(intptr_t)i};
        tscope_param_register(&d); /* a name taken already: that one stays */
    }
}

static int start(unsigned period_ms, const char *type_name, int optimize, const double *w)
{
    tscope_param_desc_t d;
    char param[sizeof T.param];
    if (tscope_param_thread_cap(param, sizeof param) || tscope_param_describe(param, &d))
        return TSCOPE_ENOENT;
    if (period_ms < 1)
        return TSCOPE_EINVAL;
    pthread_mutex_lock(&T.lock);
    if (T.active) {
        pthread_mutex_unlock(&T.lock);
        return TSCOPE_EINVAL;
    }
    T.type = 0;
    if (type_name && *type_name && tscope_type_register(type_name, &T.type)) {
        pthread_mutex_unlock(&T.lock);
        return TSCOPE_EINVAL;
    }
    memcpy(T.param, param, sizeof T.param);
    T.workers = (unsigned)d.max;
    T.optimize = optimize;
    for (int i = 0; i < 3; i++) {
        T.w[i] = w ? w[i] : 0;
        T.ref[i] = 0;
    }
    T.kmax = 0;
    while ((1u << T.kmax) < T.workers)
        T.kmax++;
    T.evals = T.retunes = T.cut = 0;
    T.warm = 0;
    T.period = period_ms / 1000.0;
    T.best = 0;
    T.objective = NAN;
    T.have_base = 0;
    T.reweighted = 0;
    int rc = restart_tuner();
    if (!rc)
        T.active = 1;
    pthread_mutex_unlock(&T.lock);
    if (rc)
        return rc;
    rc = tscope_policy_add("throttle", period_ms >= 4 ? period_ms / 4 : 1, throttle_policy, NULL);
    if (rc) {
        pthread_mutex_lock(&T.lock);
        T.active = 0;
        pthread_mutex_unlock(&T.lock);
    } else if (optimize) {
        weight_params(1);
    }
    return rc;
}

int tscope_throttle_status(tscope_throttle_status_t *out)
{
    if (!out)
        return TSCOPE_EINVAL;
    pthread_mutex_lock(&T.lock);
    int rc = T.active ? 0 : TSCOPE_ESTATE;
    out->converged = T.converged;
    out->cap = T.cap;
    out->best = T.best;
    out->evals = T.evals;
    out->objective = T.objective;
    out->retunes = T.retunes;
    out->cut = T.cut;
    pthread_mutex_unlock(&T.lock);
    return rc;
}

void tscope_throttle_stop(void)
{
    pthread_mutex_lock(&T.lock);
    int active = T.active, optimize = T.optimize;
    T.active = 0;
    pthread_mutex_unlock(&T.lock);
    if (!active)
        return;
    if (optimize)
        weight_params(0);
    tscope_policy_remove("throttle"); /* waits for a run in progress */
    pthread_mutex_lock(&T.lock);
    tscope_tuner_destroy(T.tuner);
    T.tuner = NULL;
    pthread_mutex_unlock(&T.lock);
}

int tscope_policy_autostart(void)
{
    if (!tscope__g.initialised || strcmp(tscope__g.cfg.policy, "none") == 0)
        return 0;
    const struct tscope__config *c = &tscope__g.cfg;
    int rc;
    if (strcmp(c->policy, "throttle") == 0)
        rc = tscope_throttle_start(c->policy_period_ms, c->throttle_type);
    else if (strcmp(c->policy, "optimize") == 0)
        rc = tscope_optimize_start(c->policy_period_ms, c->optimize_w[0], c->optimize_w[1],
                                   c->optimize_w[2]);
    else /* "powercap": the configuration accepts no other value */
        rc = tscope_powercap_start(c->policy_period_ms, c->power_low_w, c->power_high_w);
    if (rc)
        fprintf(stderr, "taskscope: policy: cannot start %s: %s\n", tscope__g.cfg.policy,
                tscope_strerror(rc));
    return rc;
}
