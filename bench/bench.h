/* bench.h - helpers shared by the benchmarks: wall clock, JSON result lines
 * ({"bench":..,"variant":..,"metric":..,"value":..,"unit":..}). */
#ifndef TSCOPE_BENCH_BENCH_H
#define TSCOPE_BENCH_BENCH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_result(const char *bench, const char *variant, const char *metric,
                                double value, const char *unit)
{
    printf(
        "{\"bench\":\"%s\",\"variant\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\"}\n",
        bench, variant, metric, value, unit);
    fflush(stdout);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A distribution-free 95% confidence interval of the median of v[0..n)
 * (sorts v): the order statistics k and n-1-k (0-based), k = the largest
 * with P(Binomial(n, 1/2) < k+1) <= 2.5% in the normal approximation, which
 * is close for n >= 20.  With fewer than 6 values it is the whole range. */
static inline void bench_median_ci95(double *v, int n, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    int k = (int)floor(((double)n - 1.96 * sqrt((double)n)) / 2.0 - 0.5);
    if (k < 0 || n < 6)
        k = 0;
    *lo = v[k];
    *hi = v[n - 1 - k];
}

#endif
