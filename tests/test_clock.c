/* test_clock.c - the calibrated TSC agrees with CLOCK_MONOTONIC. */
#include <time.h>

#include "core/clock.h"
#include "test.h"

/* A (clock ticks, monotonic ns) pair read close together: retried while a
 * preemption separates the two reads by more than 20 us. */
static void pair(uint64_t *ticks, uint64_t *ns)
{
    for (int i = 0; i < 1000; i++) {
        uint64_t a = tscope__mono_ns();
        *ticks = tscope__clock_now();
        uint64_t b = tscope__mono_ns();
        *ns = a + (b - a) / 2;
        if (b - a < 20000)
            return;
    }
    TEST_FAIL("could not read the two clocks within 20 us of each other");
}

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
        uint64_t t0, n0, t1, n1;
        pair(&t0, &n0);
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        pair(&t1, &n1);
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
