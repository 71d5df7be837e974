/* powercap.c - the built-in power-capping policy (include/taskscope/policy.h).
 *
 * A periodic policy on the thread-cap parameter (policy.h: the first
 * registered "*.thread_cap", whichever runtime's), steered and read only
 * through the parameter registry, fed by the sampler's power series:
 * above the band's top one thread fewer (a cap above the CPU count goes to
 * the CPU count at once: those threads cannot raise the power, and taking
 * them one a period only delayed the cut), below its bottom one more,
 * inside nothing (the band is the hysteresis, so the cap does not oscillate
 * when the power sits inside it).  Where RAPL is missing the power is the
 * sampler's estimate, and the status says so.  When the power stays above
 * the band with the program at one thread, other processes make it: the
 * policy says so once (and counts those periods) instead of failing
 * silently.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "taskscope/policy.h"
#include "taskscope/sampler.h"

static struct {
    pthread_mutex_t lock;
    int active, entered, floor_run, floor_said;
    double low, high, last_t;
    tscope_powercap_status_t st;
    char param[64]; /* the thread-cap parameter */
    unsigned workers, cpus;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The thread cap now, or 0 when its parameter is gone (the runtime ended). */
static unsigned cap_now(void)
{
    double v;
    return tscope_param_get(P.param, &v) == 0 && v >= 1 ? (unsigned)v : 0;
}

static void powercap_policy(void *data, double elapsed)
{
    (void)data;
    (void)elapsed;
    double w, t;
    int estimate = 0;
    if (tscope_sampler_latest("power.package_w", &w, &t)) {
        if (tscope_sampler_latest("power.estimate_w", &w, &t))
            return; /* no power yet */
        estimate = 1;
    }
    pthread_mutex_lock(&P.lock);
    if (t == P.last_t) { /* nothing new since the last period */
        pthread_mutex_unlock(&P.lock);
        return;
    }
    P.last_t = t;
    P.st.power_w = w;
    P.st.estimate = estimate;
    P.st.periods++;
    int inside = w >= P.low && w <= P.high;
    P.st.inside += inside;
    if (inside)
        P.entered = 1;
    if (P.entered) {
        P.st.after_first++;
        P.st.inside_after += inside;
    }
    unsigned cap = cap_now();
    /* above the band with one thread left: what remains is not ours */
    if (cap == 1 && w > P.high) {
        P.st.above_at_floor++;
        if (++P.floor_run == 3 && !P.floor_said++) {
            double self = -1, sys = -1, tt;
            tscope_sampler_latest("proc.cpu_cores_used", &self, &tt);
            tscope_sampler_latest("sys.cpu_utilization", &sys, &tt);
            fprintf(stderr,
                    "taskscope: powercap: the power stays above the band (%.1f W > %.1f W) with "
                    "the program down to one thread: the rest is other processes' load (this "
                    "process uses %.2f of %u CPUs, the machine %.0f%%); the band cannot be kept "
                    "from here\n",
                    w, P.high, self, P.cpus, sys * 100);
        }
    } else {
        P.floor_run = 0;
    }
    if (cap) {
        if (w > P.high && cap > 1) /* threads beyond the CPUs cannot raise the power: */
            cap = cap > P.cpus ? P.cpus : cap - 1; /* drop them at once */
        else if (w < P.low && cap < P.workers)
            cap++;
        if (cap != cap_now() && tscope_param_set(P.param, cap) == 0)
            P.st.cap = cap;
    }
    pthread_mutex_unlock(&P.lock);
}

/* The band as parameters "powercap.low_w" and "powercap.high_w" (a
 * dashboard's sliders): low must stay below high. */
static int set_band(double v, void *data)
{
    int high = data != NULL, rc = 0;
    pthread_mutex_lock(&P.lock);
    if (!P.active)
        rc = TSCOPE_ESTATE;
    else if (high ? !(v > P.low) : !(v < P.high))
        rc = TSCOPE_EINVAL;
    else if (high)
        P.high = v;
    else
        P.low = v;
    pthread_mutex_unlock(&P.lock);
    return rc;
}

static double get_band(void *data)
{
    pthread_mutex_lock(&P.lock);
    double v = data ? P.high : P.low;
    pthread_mutex_unlock(&P.lock);
    return v;
}

static void band_params(int on)
{
    static const char *const names[2] = {"powercap.low_w", "powercap.high_w"};
    for (int i = 0; i < 2; i++) {
        if (!on) {
            tscope_param_unregister(names[i]);
            continue;
        }
        tscope_param_desc_t d = {.struct_size = sizeof d,
                                 .name = names[i],
                                 .kind = TSCOPE_PARAM_REAL,
                                 .min = 0,
                                 .max = 1e6,
                                 .set = set_band,
                                 .get = get_band,
                                 .data = i ? (void *)&P : NULL};
        tscope_param_register(&d); /* a name taken already: that one stays */
    }
}

int tscope_powercap_start(unsigned period_ms, double low_w, double high_w)
{
    tscope_param_desc_t d;
    char param[sizeof P.param];
    if (!(low_w >= 0) || !(high_w > low_w))
        return TSCOPE_EINVAL;
    if (tscope_param_thread_cap(param, sizeof param) || tscope_param_describe(param, &d))
        return TSCOPE_ENOENT;
    pthread_mutex_lock(&P.lock);
    if (P.active) {
        pthread_mutex_unlock(&P.lock);
        return TSCOPE_EINVAL;
    }
    memset(&P.st, 0, sizeof P.st);
    memcpy(P.param, param, sizeof P.param);
    P.st.cap = cap_now();
    P.low = low_w;
    P.high = high_w;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    P.cpus = ncpu > 1 ? (unsigned)ncpu : 1;
    P.entered = 0;
    P.floor_run = P.floor_said = 0;
    P.last_t = -1;
    P.workers = (unsigned)d.max;
    P.active = 1;
    pthread_mutex_unlock(&P.lock);
    int rc = tscope_policy_add("powercap", period_ms, powercap_policy, NULL);
    if (rc) {
        pthread_mutex_lock(&P.lock);
        P.active = 0;
        pthread_mutex_unlock(&P.lock);
    } else {
        band_params(1);
    }
    return rc;
}

int tscope_powercap_status(tscope_powercap_status_t *out)
{
    if (!out)
        return TSCOPE_EINVAL;
    pthread_mutex_lock(&P.lock);
    *out = P.st;
    int rc = P.active ? 0 : TSCOPE_ESTATE;
    pthread_mutex_unlock(&P.lock);
    return rc;
}

void tscope_powercap_stop(void)
{
    pthread_mutex_lock(&P.lock);
    int active = P.active;
    P.active = 0;
    pthread_mutex_unlock(&P.lock);
    if (active) {
        band_params(0);
        tscope_policy_remove("powercap");
    }
}
