/* test_clock.c - the calibrated TSC agrees with CLOCK_MONOTONIC. */
#include <time.h>

#include "core/clock.h"
#include "test.h"

static void tsc_matches_monotonic(void)
{
    const char *why;
    int kind = tscope__clock_setup("auto", &why);
    if (kind != TSCOPE__CLOCK_TSC) {
        fprintf(stderr, "note: no invariant TSC here; checking the CLOCK_MONOTONIC path only\n");
        ASSERT_EQ(kind, TSCOPE__CLOCK_MONOTONIC);
        ASSERT_NEAR(tscope__clock_ns_per_tick(), 1.0, 0);
    }
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = tscope__clock_now(), n0 = tscope__mono_ns();
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        uint64_t t1 = tscope__clock_now(), n1 = tscope__mono_ns();
        double by_clock = tscope__clock_ns(t1 - t0), by_mono = (double)(n1 - n0);
        /* 0.5% of 50 ms: calibration over 10 ms must be that good */
        ASSERT_NEAR(by_clock, by_mono, by_mono * 0.005);
    }
}

static void monotonic_when_asked(void)
{
    const char *why;
    ASSERT_EQ(tscope__clock_setup("monotonic", &why), TSCOPE__CLOCK_MONOTONIC);
    ASSERT(why == NULL);
    ASSERT_NEAR(tscope__clock_ns(12345), 12345, 0);
    ASSERT_STR_EQ(tscope__clock_name(), "monotonic");
}

int main(void)
{
    RUN(tsc_matches_monotonic);
    RUN(monotonic_when_asked);
    return 0;
}
