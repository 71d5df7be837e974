/* test_ring.c - the SPSC ring across wrap-around, and both full-ring
 * policies through the public API with a 64-record ring (the events go
 * through the rings to the consumer: TASKSCOPE_AGGREGATE=consumer; a
 * thread that aggregates its own puts only shadows there). */
#include <pthread.h>

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

static void drop_policy_counts_exactly(void)
{
    setenv("TASKSCOPE_RING_SIZE", "64", 1);
    setenv("TASKSCOPE_FULL_POLICY", "drop", 1);
    harness_init();
    tscope_type_t t = type_named("dropper");
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
    ASSERT_EQ(tot.events, 64);
    ASSERT_EQ(tot.events_dropped, 200 - 64);
    ASSERT_EQ(dropped_rc, 200 - 64);
    ASSERT_EQ(type_stats(t).calls, 32);
    ASSERT_OK(tscope_finalize());
}

static void wait_policy_loses_nothing(void)
{
    setenv("TASKSCOPE_RING_SIZE", "64", 1);
    setenv("TASKSCOPE_FULL_POLICY", "wait", 1);
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
    setenv("TASKSCOPE_AGGREGATE", "consumer", 1);
    RUN(wrap_around);
    RUN(drop_policy_counts_exactly);
    RUN(wait_policy_loses_nothing);
    return 0;
}
