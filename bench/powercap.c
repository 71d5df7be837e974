/* powercap.c - the power-capping demonstration on the sampler's power (the
 * estimate where RAPL is missing, as on this VM): the stencil of
 * bench/stencil.h with 16 workers runs while the policy keeps the power in
 * a band by changing the thread cap.
 *
 * usage: bench_powercap [LOW_W] [HIGH_W] [SWEEPS]   (defaults: a band
 * around the estimate for half the CPUs busy, 20000: the policy moves the
 * cap one thread a period, so from 16 workers the run must last well over
 * 15 periods)
 * Prints the fraction of policy periods with the power inside the band
 * after it first entered it, the cap it ended at, and whether the power was
 * an estimate:
 *   {"bench":"powercap","variant":"stencil","metric":"inside_band_fraction",...}
 */
#include <stdio.h>
#include <unistd.h>

#include <taskscope/policy.h>
#include <taskscope/rt.h>

#include "bench.h"
#include "stencil.h"

int main(int argc, char **argv)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    /* the default model: ncpu x (2 W + 8 W x utilisation); half busy = ncpu x 6 W */
    double low = argc > 1 ? atof(argv[1]) : (double)ncpu * 5.0;
    double high = argc > 2 ? atof(argv[2]) : (double)ncpu * 7.5;
    int sweeps = argc > 3 ? atoi(argv[3]) : 20000;
    if (!(high > low) || sweeps < 10)
        return 2;
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "20", 1);
    setenv("TASKSCOPE_POWER_MODEL", "2,10", 1);
    stencil_setup(4096);
    tscope_init(0, 1);
    tscope_rt_init(16);
    if (tscope_powercap_start(100, low, high)) {
        fprintf(stderr, "bench_powercap: cannot start the policy\n");
        return 1;
    }
    double t = stencil(sweeps);
    tscope_powercap_status_t st;
    tscope_powercap_status(&st);
    tscope_rt_finalize();
    tscope_finalize();
    bench_result("powercap", "stencil", "time_s", t, "s");
    bench_result("powercap", "stencil", "band_low_w", low, "W");
    bench_result("powercap", "stencil", "band_high_w", high, "W");
    bench_result("powercap", "stencil", "periods", st.periods, "periods");
    /* the period in which the power first was inside the band */
    bench_result("powercap", "stencil", "periods_to_band",
                 st.after_first ? st.periods - st.after_first + 1 : 0, "periods");
    bench_result("powercap", "stencil", "inside_band_fraction",
                 st.after_first ? (double)st.inside_after / st.after_first : 0, "fraction");
    bench_result("powercap", "stencil", "final_cap", st.cap, "threads");
    bench_result("powercap", "stencil", "power_is_estimate", st.estimate, "bool");
    stencil_teardown();
    return 0;
}
