/* test_ring.c - the SPSC ring across wrap-around, and both full-ring
 * policies through the public API with a 64-record ring.  The threads
 * aggregate their own events; the ring gets their shadows for the trace
 * (on here), so a full ring with the drop policy costs the trace events,
 * counted, never the profile. */
#include <pthread.h>
#include <unistd.h>

#include "core/core.h"
#include "core/ring.h"
#include "harness.h"
#include "profile/store.h"

static void wrap_around(void)
{
    struct tscope__ring r;
    ASSERT_OK(tscope__ring_init(&r, 8, NULL));
    uint64_t next_read = 1;
    for (uint64_t v = 1; v <= 100; v++) {
        tscope__ring_slot(&r, r.head_local)->id = v;
        tscope__ring_publish(&r, 1);
        if (v % 3 == 0) { /* consume in bursts, so head and tail wrap at different times */
            uint64_t tail;
            uint64_t n = tscope__ring_readable(&r, &tail);
            ASSERT_EQ(n, 3);
            for (uint64_t k = 0; k < n; k++)
                ASSERT_U64_EQ(tscope__ring_slot(&r, tail + k)->id, next_read++);
            tscope__ring_release(&r, tail + n);
        }
    }
    ASSERT_EQ(next_read, 100);
    ASSERT_GT(r.head_local, 8 * 10); /* wrapped many times */
    tscope__ring_free(&r);
}

/* The trace on, in a folder of its own: every event's shadow in the ring. */
static void trace_on(void)
{
    static char dir[300];
    const char *tmp = getenv("TSCOPE_TEST_TMP") ? getenv("TSCOPE_TEST_TMP") : "/tmp";
    snprintf(dir, sizeof dir, "%s/tscope-test-ring-%ld", tmp, (long)getpid());
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_TRACE", "binary", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
}

static void drop_policy_counts_exactly(void)
{
    setenv("TASKSCOPE_RING_SIZE", "64", 1);
    setenv("TASKSCOPE_FULL_POLICY", "drop", 1);
    trace_on();
    harness_init();
    tscope_type_t t = type_named("dropper");
    /* the type's tree path made (under the store lock), the ring emptied */
    ASSERT_OK(tscope_task_start(1000, t));
    ASSERT_OK(tscope_task_end(1000));
    ASSERT_OK(tscope_flush());
    /* Holding the store lock keeps the consumer from releasing any slot. */
    pthread_mutex_lock(&tscope__g.store->lock);
    int dropped_rc = 0;
    for (uint64_t i = 1; i <= 100; i++) {
        int rc = tscope_task_start(i, t);
        if (rc == TSCOPE_EDROPPED)
            dropped_rc++;
        rc = tscope_task_end(i);
        if (rc == TSCOPE_EDROPPED)
            dropped_rc++;
    }
    pthread_mutex_unlock(&tscope__g.store->lock);
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events, 202);              /* the profile has every event */
    ASSERT_EQ(tot.events_dropped, 200 - 64); /* the trace lost what the ring could not hold */
    ASSERT_EQ(dropped_rc, 0);                /* which the program is not told */
    ASSERT_EQ(type_stats(t).calls, 101);
    ASSERT_OK(tscope_finalize());
}

static void wait_policy_loses_nothing(void)
{
    setenv("TASKSCOPE_RING_SIZE", "64", 1);
    setenv("TASKSCOPE_FULL_POLICY", "wait", 1);
    trace_on();
    harness_init();
    tscope_type_t t = type_named("waiter");
    for (uint64_t i = 1; i <= 20000; i++) {
        ASSERT_OK(tscope_task_start(i, t));
        ASSERT_OK(tscope_task_end(i));
    }
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events, 40000);
    ASSERT_EQ(tot.events_dropped, 0);
    ASSERT_EQ(type_stats(t).calls, 20000);
    ASSERT_OK(tscope_finalize());
}

int main(void)
{
    RUN(wrap_around);
    RUN(drop_policy_counts_exactly);
    RUN(wait_policy_loses_nothing);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'.*", getenv("TASKSCOPE_OUTPUT_DIR"),
             getenv("TASKSCOPE_OUTPUT_DIR")); /* the second run's folder: DIR.1 */
    ASSERT_EQ(system(cmd), 0);
    return 0;
}
