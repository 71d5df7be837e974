/* acc.h - exact accumulators for durations, Welford for counter values.
 *
 * Durations are accumulated in integer clock ticks: count, sum, min, max and
 * the sum of squares in 128 bits.  Adding a sample is four integer operations
 * and no division, and mean and variance are exact up to the final
 * conversion to double (tests compare against a two-pass reference).
 */
#ifndef TSCOPE_PROFILE_ACC_H
#define TSCOPE_PROFILE_ACC_H

#include <math.h>
#include <stdint.h>

#include "taskscope/taskscope.h"

struct tscope__acc {
    uint64_t n, sum, min, max;
    unsigned __int128 sumsq;
};

static inline void tscope__acc_add(struct tscope__acc *a, uint64_t v)
{
    if (a->n == 0 || v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->n++;
    a->sum += v;
    a->sumsq += (unsigned __int128)v * v;
}

/* Adds all samples of src to a. */
static inline void tscope__acc_merge(struct tscope__acc *a, const struct tscope__acc *src)
{
    if (!src->n)
        return;
    if (a->n == 0 || src->min < a->min)
        a->min = src->min;
    if (src->max > a->max)
        a->max = src->max;
    a->n += src->n;
    a->sum += src->sum;
    a->sumsq += src->sumsq;
}

/* Converts to statistics in ns, scaling ticks by ns_per_tick. */
static inline tscope_stats_t tscope__acc_stats(const struct tscope__acc *a, double ns_per_tick)
{
    tscope_stats_t s = {0};
    s.count = a->n;
    if (a->n == 0)
        return s;
    s.sum = (double)a->sum * ns_per_tick;
    s.min = (double)a->min * ns_per_tick;
    s.max = (double)a->max * ns_per_tick;
    s.mean = s.sum / (double)a->n;
    /* n*sumsq - sum^2 is exact in 128 bits for realistic runs; fall back to
     * long double when it would overflow. */
    unsigned __int128 n = a->n, sum = a->sum;
    long double var_ticks;
    if (sum <= ((unsigned __int128)1 << 63) && n <= ((unsigned __int128)1 << 40) &&
        a->sumsq <= ((unsigned __int128)1 << 86)) {
        unsigned __int128 num = n * a->sumsq - sum * sum;
        var_ticks = (long double)num / ((long double)a->n * (long double)a->n);
    } else {
        long double m = (long double)a->sum / a->n;
        var_ticks = (long double)a->sumsq / a->n - m * m;
        if (var_ticks < 0)
            var_ticks = 0;
    }
    s.stddev = (double)sqrtl(var_ticks) * ns_per_tick;
    return s;
}

/* Counter values: Welford's running mean and variance. */
struct tscope__welford {
    uint64_t n;
    double mean, m2, min, max, last;
};

static inline void tscope__welford_add(struct tscope__welford *w, double v)
{
    if (w->n == 0 || v < w->min)
        w->min = v;
    if (w->n == 0 || v > w->max)
        w->max = v;
    w->n++;
    double d = v - w->mean;
    w->mean += d / (double)w->n;
    w->m2 += d * (v - w->mean);
    w->last = v;
}

/* a and b together (Chan et al.'s pairwise update); `last` is b's when b
 * has samples (the caller orders them). */
static inline struct tscope__welford tscope__welford_merge(struct tscope__welford a,
                                                           struct tscope__welford b)
{
    if (b.n == 0)
        return a;
    if (a.n == 0)
        return b;
    struct tscope__welford m;
    m.n = a.n + b.n;
    double d = b.mean - a.mean, na = (double)a.n, nb = (double)b.n, n = (double)m.n;
    m.mean = a.mean + d * nb / n;
    m.m2 = a.m2 + b.m2 + d * d * na * nb / n;
    m.min = a.min < b.min ? a.min : b.min;
    m.max = a.max > b.max ? a.max : b.max;
    m.last = b.last;
    return m;
}

static inline tscope_counter_stats_t tscope__welford_stats(const struct tscope__welford *w)
{
    tscope_counter_stats_t s = {0};
    s.count = w->n;
    if (w->n == 0)
        return s;
    s.min = w->min;
    s.max = w->max;
    s.mean = w->mean;
    s.stddev = sqrt(w->m2 / (double)w->n);
    s.last = w->last;
    return s;
}

#endif
