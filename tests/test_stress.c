/* test_stress.c - several producer threads with nested tasks, yields and
 * tasks handed to another thread to resume, while a query thread reads the
 * store; exact task and event counts with the wait policy (run under TSan
 * by the test command). */
#include <pthread.h>
#include <stdatomic.h>

#include "taskscope/taskscope.h"
#include "test.h"

enum { PRODUCERS = 4, ITERS = 20000, HANDOFFS = 2000 };

static tscope_type_t t_outer, t_inner, t_moved;
static _Atomic int producers_done;
static _Atomic int sending_done[PRODUCERS]; /* producer i will hand over no more */

/* A one-slot mailbox per producer pair: producer i hands tasks to i ^ 1. */
static _Atomic uint64_t mailbox[PRODUCERS];

static void *producer(void *arg)
{
    int me = (int)(intptr_t)arg;
    int handed = 0, received = 0;
    for (int i = 0; i < ITERS; i++) {
        uint64_t outer = tscope_task_id_next(), inner = tscope_task_id_next();
        ASSERT_OK(tscope_task_start(outer, t_outer));
        ASSERT_OK(tscope_task_create(inner, outer, t_inner, 0, 1, 0));
        ASSERT_OK(tscope_task_queued(inner));
        ASSERT_OK(tscope_task_begin(inner, 0));
        if (i % 10 == 0) {
            ASSERT_OK(tscope_task_yield(inner));
            ASSERT_OK(tscope_task_resume(inner));
        }
        ASSERT_OK(tscope_task_end(inner));
        ASSERT_OK(tscope_task_end(outer));
        /* hand a yielded task over to the partner thread */
        if (handed < HANDOFFS && atomic_load(&mailbox[me ^ 1]) == 0) {
            uint64_t moved = tscope_task_id_next();
            ASSERT_OK(tscope_task_create(moved, 0, t_moved, 0, 0, 0));
            ASSERT_OK(tscope_task_begin(moved, 0));
            ASSERT_OK(tscope_task_yield(moved));
            atomic_store(&mailbox[me ^ 1], moved);
            handed++;
        }
        uint64_t got = atomic_exchange(&mailbox[me], 0);
        if (got) {
            ASSERT_OK(tscope_task_resume(got));
            ASSERT_OK(tscope_task_end(got));
            received++;
        }
    }
    atomic_store(&sending_done[me], 1);
    /* take what the partner still sends, until it has stopped sending */
    for (;;) {
        int partner_done = atomic_load(&sending_done[me ^ 1]);
        uint64_t got = atomic_exchange(&mailbox[me], 0);
        if (got) {
            ASSERT_OK(tscope_task_resume(got));
            ASSERT_OK(tscope_task_end(got));
        } else if (partner_done) {
            break;
        }
    }
    atomic_fetch_add(&producers_done, 1);
    (void)received;
    return (void *)(intptr_t)handed;
}

static void *querier(void *arg)
{
    (void)arg;
    uint64_t last_events = 0, last_calls = 0;
    while (atomic_load(&producers_done) < PRODUCERS) {
        tscope_totals_t tot;
        ASSERT_OK(tscope_query_totals(&tot));
        ASSERT_GE(tot.events, last_events); /* copies are consistent and grow */
        last_events = tot.events;
        tscope_type_stats_t st;
        ASSERT_OK(tscope_query_type(t_outer, &st));
        ASSERT_GE(st.calls, last_calls);
        ASSERT_LE(st.calls, (uint64_t)PRODUCERS * ITERS);
        last_calls = st.calls;
        tscope_type_stats_t all[8];
        size_t n;
        ASSERT_OK(tscope_query_types(all, 8, &n));
        ASSERT_GE(n, 3);
    }
    return NULL;
}

static void exact_counts_under_load(void)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_RING_SIZE", "1024", 1); /* small: producers do wait */
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("outer", &t_outer));
    ASSERT_OK(tscope_type_register("inner", &t_inner));
    ASSERT_OK(tscope_type_register("moved", &t_moved));
    pthread_t th[PRODUCERS], q;
    ASSERT_OK(pthread_create(&q, NULL, querier, NULL));
    for (int i = 0; i < PRODUCERS; i++)
        ASSERT_OK(pthread_create(&th[i], NULL, producer, (void *)(intptr_t)i));
    uint64_t handed = 0;
    for (int i = 0; i < PRODUCERS; i++) {
        void *r;
        ASSERT_OK(pthread_join(th[i], &r));
        handed += (uint64_t)(intptr_t)r;
    }
    ASSERT_OK(pthread_join(q, NULL));
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t outer, inner, moved;
    ASSERT_OK(tscope_query_type(t_outer, &outer));
    ASSERT_OK(tscope_query_type(t_inner, &inner));
    ASSERT_OK(tscope_query_type(t_moved, &moved));
    ASSERT_EQ(outer.calls, PRODUCERS * ITERS);
    ASSERT_EQ(inner.calls, PRODUCERS * ITERS);
    ASSERT_EQ(inner.yields, PRODUCERS * ITERS / 10);
    ASSERT_GT(handed, 0);
    ASSERT_EQ(moved.calls, handed);
    ASSERT_EQ(moved.yields, handed);
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    uint64_t per_iter = 2 + 4 + 2; /* start/end, create/queued/begin/end, 2 when yielding */
    uint64_t expected = (uint64_t)PRODUCERS * ITERS * (per_iter - 2) +
                        (uint64_t)PRODUCERS * ITERS / 10 * 2 + handed * 5;
    ASSERT_U64_EQ(tot.events, expected);
    ASSERT_EQ(tot.events_dropped, 0);
    ASSERT_EQ(tot.anomalies, 0);
    ASSERT_EQ(tot.tasks_completed, 2 * PRODUCERS * ITERS + handed);
    ASSERT_OK(tscope_finalize());
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_unfinished, 0);
    ASSERT_EQ(tot.threads, PRODUCERS + 1);
}

int main(void)
{
    RUN(exact_counts_under_load);
    return 0;
}
