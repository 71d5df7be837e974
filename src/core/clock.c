/* clock.c - clock selection and TSC calibration (see clock.h).
 *
 * Calibration pairs a TSC read with a CLOCK_MONOTONIC read (the TSC is read
 * before and after, the pair with the smallest gap wins) at setup and again
 * after spinning CALIBRATE_NS (a pair is exact to ~50 ns: 1e-3 of 50 us).
 * Every measured program pays this at its start, so it spins instead of
 * sleeping (a 0.25 ms nanosleep took 0.35-0.4 ms here) and asks the CPU
 * (CPUID) whether its TSC is invariant instead of reading /proc/cpuinfo
 * (0.16-0.25 ms).  tscope__clock_refine() recomputes the factor over the
 * whole baseline since setup each time that baseline has doubled, and at
 * every call once it is 20 ms long (the consumer calls it every round, the
 * finalize's drain included), so a run of a few milliseconds already
 * converts with a factor good to ~1e-5.
 * The factor is an atomic double: the consumer writes it, any thread
 * converts with it.
 */
#include "clock.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>
#if TSCOPE__HAVE_TSC
#include <cpuid.h>
#endif

int tscope__clock_kind = TSCOPE__CLOCK_MONOTONIC;

static _Atomic double ns_per_tick = 1.0;
static _Atomic uint64_t manual_now;
static uint64_t base_ticks, base_ns;
static uint64_t calibrated_ns; /* the baseline the factor was computed over */

#define CALIBRATE_NS 50000u /* the first baseline, spun at setup */

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

/* CPUID 0x80000007, EDX bit 8: the TSC runs at a constant rate in every
 * P-, C- and T-state (what the kernel shows as constant_tsc and
 * nonstop_tsc). */
int tscope__clock_tsc_invariant(void)
{
#if TSCOPE__HAVE_TSC
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u ||
        !__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
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
            *why = "the CPU does not advertise an invariant TSC (constant_tsc, nonstop_tsc)";
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
    do
        tsc_pair(&t1, &n1);
    while (n1 - base_ns < CALIBRATE_NS);
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
