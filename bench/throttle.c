/* throttle.c - the thread-throttling demonstration (APEX's 1-D stencil
 * experiment, scaled to this machine): a 1-D Jacobi stencil on the bundled
 * runtime with many more workers than cores, run with every fixed thread
 * cap 1, 2, 4, .. W, and with the throttling policy tuning the cap while it
 * runs (starting from all W workers).
 *
 * usage: bench_throttle [WORKERS] [REPS] [SWEEPS] [BLOCK]   (16, 3, 36000, 4096)
 * BLOCK: grid points per task (64 tasks per sweep).
 * Prints per variant the median time, and for "throttled" the cap it
 * converged to and its time against the best fixed cap and against no
 * throttling (all workers):
 *   {"bench":"throttle","variant":"stencil","metric":"time_vs_best_fixed",...}
 * Measurement is on in every variant, outputs off: the policy counts the
 * tasks finished in the profile (it steers the runtime only through its
 * thread-cap parameter, docs/policy.md), and every variant pays the same
 * measurement, so the comparison is still about the runtime.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <taskscope/policy.h>
#include <taskscope/rt.h>

#include "bench.h"
#include "stencil.h"

int main(int argc, char **argv)
{
    unsigned workers = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    int sweeps = argc > 3 ? atoi(argv[3]) : 36000;
    size_t points = argc > 4 ? (size_t)atol(argv[4]) : 4096;
    if (workers < 2 || workers > 1024 || reps < 1 || reps > 32 || sweeps < 10 || points < 16)
        return 2;
    stencil_setup(points);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    setenv("TASKSCOPE_POLICY", "none", 1);
    unsigned ncaps = 0, caps[16];
    for (unsigned c = 1; c < workers; c *= 2)
        caps[ncaps++] = c;
    caps[ncaps++] = workers;
    double fixed[16][32], throttled[32];
    unsigned converged_cap[32], evals[32], retunes[32], cut[32];
    for (int r = 0; r < reps; r++) {
        for (unsigned c = 0; c < ncaps; c++) {
            tscope_init(0, 1);
            tscope_rt_init(workers);
            tscope_rt_set_thread_cap(caps[c]);
            fixed[c][r] = stencil(sweeps);
            tscope_rt_finalize();
            tscope_finalize();
        }
        tscope_init(0, 1);
        tscope_rt_init(workers);
        if (tscope_throttle_start(200, NULL)) {
            fprintf(stderr, "bench_throttle: cannot start the throttling policy\n");
            return 1;
        }
        throttled[r] = stencil(sweeps);
        tscope_throttle_status_t st;
        tscope_throttle_status(&st);
        converged_cap[r] = st.converged ? st.best : st.cap;
        evals[r] = st.evals;
        retunes[r] = st.retunes;
        cut[r] = st.cut;
        tscope_rt_finalize();
        tscope_finalize();
    }
    double best = INFINITY, all = 0;
    for (unsigned c = 0; c < ncaps; c++) {
        double m = bench_median(fixed[c], reps);
        char v[32];
        snprintf(v, sizeof v, "fixed_cap_%u", caps[c]);
        bench_result("throttle", v, "time_s", m, "s");
        if (m < best)
            best = m;
        if (caps[c] == workers)
            all = m;
    }
    double throttled_copy[32];
    memcpy(throttled_copy, throttled, sizeof throttled);
    double t = bench_median(throttled, reps);
    bench_result("throttle", "stencil_throttled", "time_s", t, "s");
    bench_result("throttle", "stencil", "time_vs_best_fixed", t / best, "x");
    bench_result("throttle", "stencil", "time_vs_unthrottled", t / all, "x");
    for (int r = 0; r < reps; r++) {
        char v[32];
        snprintf(v, sizeof v, "stencil_rep%d", r);
        bench_result("throttle", v, "converged_cap", converged_cap[r], "threads");
        bench_result("throttle", v, "periods_measured", evals[r], "periods");
        bench_result("throttle", v, "periods_cut_short", cut[r], "periods");
        bench_result("throttle", v, "retunes", retunes[r], "searches");
        bench_result("throttle", v, "time_s", throttled_copy[r], "s");
    }
    stencil_teardown();
    return 0;
}
