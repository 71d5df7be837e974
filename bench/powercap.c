/* powercap.c - the power-capping demonstration on the sampler's power (the
 * estimate where RAPL is missing, as on this VM): the stencil of
 * bench/stencil.h with 16 workers runs while the policy keeps the power in
 * a band by changing the thread cap.
 *
 * usage: bench_powercap [LOW_W] [HIGH_W] [SWEEPS]   (defaults: a band
 * around the estimate for half the CPUs busy, 20000: the policy moves the
 * cap one thread a period, so from 16 workers the run must last well over
 * 15 periods)
 * Two variants: stencil (alone) and stencil_loaded (beside another process
 * that keeps every CPU busy: the power cannot come down into the band by
 * capping this program, and the policy says so).
 * Prints the fraction of policy periods with the power inside the band
 * after it first entered it, the cap it ended at, whether the power was an
 * estimate, and the periods above the band at one thread:
 *   {"bench":"powercap","variant":"stencil","metric":"inside_band_fraction",...}
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <taskscope/policy.h>
#include <taskscope/rt.h>

#include "bench.h"
#include "stencil.h"

/* Busy loops on every CPU in a process of its own: another program's load,
 * which a power cap on this one cannot remove. */
static pid_t load_start(long ncpu)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    for (long i = 1; i < ncpu; i++)
        if (fork() == 0)
            break;
    for (volatile unsigned long x = 0;; x++)
        ;
}

static void load_stop(pid_t pid)
{
    if (pid > 0) {
        kill(-pid, SIGKILL);
        while (waitpid(-pid, NULL, 0) > 0 || errno == EINTR)
            ;
    }
}

static int run(const char *variant, double low, double high, int sweeps, long ncpu)
{
    pid_t load = -1;
    if (strcmp(variant, "stencil_loaded") == 0) {
        load = load_start(ncpu);
        if (load > 0)
            setpgid(load, load);
    }
    tscope_init(0, 1);
    tscope_rt_init(16);
    if (tscope_powercap_start(100, low, high)) {
        fprintf(stderr, "bench_powercap: cannot start the policy\n");
        load_stop(load);
        return 1;
    }
    double t = stencil(sweeps);
    tscope_powercap_status_t st;
    tscope_powercap_status(&st);
    tscope_rt_finalize();
    tscope_finalize();
    load_stop(load);
    bench_result("powercap", variant, "time_s", t, "s");
    bench_result("powercap", variant, "band_low_w", low, "W");
    bench_result("powercap", variant, "band_high_w", high, "W");
    bench_result("powercap", variant, "periods", st.periods, "periods");
    /* the period in which the power first was inside the band */
    bench_result("powercap", variant, "periods_to_band",
                 st.after_first ? st.periods - st.after_first + 1 : 0, "periods");
    bench_result("powercap", variant, "inside_band_fraction",
                 st.after_first ? (double)st.inside_after / st.after_first : 0, "fraction");
    bench_result("powercap", variant, "final_cap", st.cap, "threads");
    bench_result("powercap", variant, "power_is_estimate", st.estimate, "bool");
    /* periods the power stayed above the band with one thread left: the
     * load of others, which the policy says (stderr) it cannot cut */
    bench_result("powercap", variant, "above_band_at_one_thread_periods", st.above_at_floor,
                 "periods");
    return 0;
}

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
    /* alone, then beside another process that keeps every CPU busy */
    if (run("stencil", low, high, sweeps, ncpu) || run("stencil_loaded", low, high, sweeps, ncpu))
        return 1;
    return 0;
}
