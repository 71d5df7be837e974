/* bench.h - helpers shared by the benchmarks: wall clock, JSON result lines
 * ({"bench":..,"variant":..,"metric":..,"value":..,"unit":..}). */
#ifndef TSCOPE_BENCH_BENCH_H
#define TSCOPE_BENCH_BENCH_H

#include <stdio.h>
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

#endif
