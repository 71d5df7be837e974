/* clock.h - event timestamps.
 *
 * The hot path reads the TSC (rdtsc, ~9 ns here) when the CPU says it is
 * invariant (CPUID; the kernel's constant_tsc and nonstop_tsc); otherwise,
 * or when TASKSCOPE_CLOCK=monotonic, it reads CLOCK_MONOTONIC.  Timestamps stay in
 * ticks in records and in the store; tscope__clock_ns() converts with the
 * calibrated factor, which the consumer refines over the run (a longer
 * baseline gives a more exact factor).  A manual clock, set by tests, makes
 * times exact and reproducible.
 */
#ifndef TSCOPE_CORE_CLOCK_H
#define TSCOPE_CORE_CLOCK_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TSCOPE__HAVE_TSC 1
#else
#define TSCOPE__HAVE_TSC 0
#endif

enum tscope__clock_kind {
    TSCOPE__CLOCK_TSC = 0,
    TSCOPE__CLOCK_MONOTONIC = 1,
    TSCOPE__CLOCK_MANUAL = 2
};

extern int tscope__clock_kind;

uint64_t tscope__clock_now_slow(void);

static inline uint64_t tscope__clock_now(void)
{
#if TSCOPE__HAVE_TSC
    if (__builtin_expect(tscope__clock_kind == TSCOPE__CLOCK_TSC, 1))
        return __rdtsc();
#endif
    return tscope__clock_now_slow();
}

/* Chooses and calibrates the clock.  want: "auto", "tsc" or "monotonic".
 * Returns the kind chosen; *why is set to a static explanation when "tsc" was
 * asked for but is not usable. */
int tscope__clock_setup(const char *want, const char **why);
/* Refines the ticks->ns factor from the time elapsed since setup. */
void tscope__clock_refine(void);
/* Converts a tick count (a duration) to nanoseconds. */
double tscope__clock_ns(uint64_t ticks);
/* Nanoseconds per tick currently used. */
double tscope__clock_ns_per_tick(void);
/* "tsc", "monotonic" or "manual". */
const char *tscope__clock_name(void);
/* Monotonic nanoseconds (for the consumer's own timing). */
uint64_t tscope__mono_ns(void);
/* 1 if /proc/cpuinfo advertises an invariant TSC. */
int tscope__clock_tsc_invariant(void);

/* The clock of another process, to read its ticks (crash recovery); this
 * process does not read the clock afterwards. */
void tscope__clock_restore(int kind, double ns_per_tick);

/* Test hooks: switch to a manual clock (1 tick = 1 ns) and set its value. */
void tscope__clock_use_manual(uint64_t start);
void tscope__clock_manual_set(uint64_t now);
/* Test hook: the next tscope__clock_setup (tscope_init) chooses a real clock
 * again after a manual one. */
void tscope__clock_use_real(void);

#endif
