/* clock.c - clock selection and TSC calibration (see clock.h).
 *
 * Calibration pairs a TSC read with a CLOCK_MONOTONIC read (the TSC is read
 * before and after, the pair with the smallest gap wins) at setup and again
 * 0.25 ms later (a pair is exact to ~50 ns: 2e-4 of 0.25 ms; the pause is
 * paid by every measured program at its start, so it is short: it was 2 ms,
 * a tenth of a trivial program's run); tscope__clock_refine() recomputes
 * the factor over the whole baseline since setup each time that baseline
 * has doubled, and at every call once it is 20 ms long, so a run of a few
 * milliseconds already converts with a factor good to ~1e-5.
 * The factor is an atomic double: the consumer writes it, any thread
 * converts with it.
 */
#include "clock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int tscope__clock_kind = TSCOPE__CLOCK_MONOTONIC;

static _Atomic double ns_per_tick = 1.0;
static _Atomic uint64_t manual_now;
static uint64_t base_ticks, base_ns;
static uint64_t calibrated_ns; /* the baseline the factor was computed over */

uint64_t tscope__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tscope__clock_now_slow(void)
{
    if (tscope__clock_kind == TSCOPE__CLOCK_MANUAL)
        return atomic_load_explicit(&manual_now, memory_order_relaxed);
    return tscope__mono_ns();
}

int tscope__clock_tsc_invariant(void)
{
#if TSCOPE__HAVE_TSC
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return 0;
#endif
}

#if TSCOPE__HAVE_TSC
/* One (tsc, ns) pair taken as close together as this machine allows. */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = __rdtsc();
        uint64_t n = tscope__mono_ns();
        uint64_t b = __rdtsc();
        if (b - a < best_gap) {
            best_gap = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}
#endif

int tscope__clock_setup(const char *want, const char **why)
{
    *why = NULL;
    if (tscope__clock_kind == TSCOPE__CLOCK_MANUAL)
        return tscope__clock_kind; /* a test installed a manual clock */
    int use_tsc = 0;
    if (!want || strcmp(want, "monotonic") != 0) {
#if TSCOPE__HAVE_TSC
        use_tsc = tscope__clock_tsc_invariant();
        if (!use_tsc)
            *why = "the CPU does not advertise constant_tsc and nonstop_tsc";
#else
        *why = "this architecture has no TSC";
#endif
        if (want && strcmp(want, "auto") == 0)
            *why = NULL; /* auto falls back silently */
    }
    atomic_store(&ns_per_tick, 1.0);
    if (!use_tsc) {
        tscope__clock_kind = TSCOPE__CLOCK_MONOTONIC;
        return tscope__clock_kind;
    }
#if TSCOPE__HAVE_TSC
    uint64_t t1 = 0, n1 = 0;
    tsc_pair(&base_ticks, &base_ns);
    struct timespec pause = {0, 250 * 1000};
    nanosleep(&pause, NULL);
    tsc_pair(&t1, &n1);
    calibrated_ns = 0;
    if (t1 > base_ticks && n1 > base_ns) {
        atomic_store(&ns_per_tick, (double)(n1 - base_ns) / (double)(t1 - base_ticks));
        calibrated_ns = n1 - base_ns;
    }
    tscope__clock_kind = TSCOPE__CLOCK_TSC;
#endif
    return tscope__clock_kind;
}

void tscope__clock_refine(void)
{
#if TSCOPE__HAVE_TSC
    if (tscope__clock_kind != TSCOPE__CLOCK_TSC)
        return;
    uint64_t t = 0, n = 0;
    tsc_pair(&t, &n);
    /* over a baseline twice the last one's, or of at least 20 ms */
    if (t > base_ticks && n > base_ns &&
        (n - base_ns >= 2 * calibrated_ns || n - base_ns >= 20000000u)) {
        atomic_store(&ns_per_tick, (double)(n - base_ns) / (double)(t - base_ticks));
        calibrated_ns = n - base_ns;
    }
#endif
}

double tscope__clock_ns(uint64_t ticks)
{
    return (double)ticks * atomic_load_explicit(&ns_per_tick, memory_order_relaxed);
}

double tscope__clock_ns_per_tick(void)
{
    return atomic_load_explicit(&ns_per_tick, memory_order_relaxed);
}

const char *tscope__clock_name(void)
{
    switch (tscope__clock_kind) {
    case TSCOPE__CLOCK_TSC:
        return "tsc";
    case TSCOPE__CLOCK_MANUAL:
        return "manual";
    default:
        return "monotonic";
    }
}

void tscope__clock_use_manual(uint64_t start)
{
    tscope__clock_kind = TSCOPE__CLOCK_MANUAL;
    atomic_store(&ns_per_tick, 1.0);
    atomic_store(&manual_now, start);
}

void tscope__clock_use_real(void)
{
    if (tscope__clock_kind == TSCOPE__CLOCK_MANUAL)
        tscope__clock_kind = TSCOPE__CLOCK_MONOTONIC; /* the next setup chooses again */
}

void tscope__clock_manual_set(uint64_t now)
{
    atomic_store_explicit(&manual_now, now, memory_order_relaxed);
}

void tscope__clock_restore(int kind, double ns_per_tick_saved)
{
    tscope__clock_kind = kind;
    atomic_store(&ns_per_tick, ns_per_tick_saved);
}
