/* sampler_cost.c - what the sampler costs a running program: the 1-D
 * stencil (bench/stencil.h) on 2 workers, profiling on, with the sampler
 * off and at 200 Hz (TASKSCOPE_SAMPLE_MS=5, or PERIOD_MS), alternately, REPS
 * times; the median of the per-repetition ratio and its 95% confidence
 * interval (order statistics: the VM's noise is not normal).
 *
 * usage: bench_sampler_cost [REPS] [SWEEPS] [PERIOD_MS]   (15, 400, 5)
 *   {"bench":"sampler","variant":"stencil_200hz","metric":"time_ratio",...}
 */
#include <stdio.h>

#include <taskscope/rt.h>

#include "bench.h"
#include "stencil.h"

static double timed(const char *period, int sweeps)
{
    setenv("TASKSCOPE_SAMPLE_MS", period, 1);
    tscope_init(0, 1);
    tscope_rt_init(2);
    double t = stencil(sweeps);
    tscope_rt_finalize();
    tscope_finalize();
    return t;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    int sweeps = argc > 2 ? atoi(argv[2]) : 400;
    int period = argc > 3 ? atoi(argv[3]) : 5;
    if (reps < 1 || reps > 64 || sweeps < 1 || period < 5)
        return 2;
    char ms[16], variant[32];
    snprintf(ms, sizeof ms, "%d", period);
    snprintf(variant, sizeof variant, "stencil_%ghz", 1000.0 / period);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    stencil_setup(16384);
    double off[64], on[64], ratio[64];
    timed("0", sweeps / 4 + 1); /* warm-up */
    for (int r = 0; r < reps; r++) {
        off[r] = timed("0", sweeps);
        on[r] = timed(ms, sweeps);
        ratio[r] = on[r] / off[r];
    }
    bench_result("sampler", "stencil_off", "time_s", bench_median(off, reps), "s");
    bench_result("sampler", variant, "time_s", bench_median(on, reps), "s");
    bench_result("sampler", variant, "time_ratio", bench_median(ratio, reps), "x");
    double lo, hi; /* how far the median may be from the true one, at 95% */
    bench_median_ci95(ratio, reps, &lo, &hi);
    bench_result("sampler", variant, "time_ratio_ci95_low", lo, "x");
    bench_result("sampler", variant, "time_ratio_ci95_high", hi, "x");
    stencil_teardown();
    return 0;
}
