/* test_churn.c - thread churn: 20,000 short-lived threads (8 alive at a
 * time), one task each, lose nothing under the wait policy - their slots
 * are reused, and the type still counts 20,000 threads - and the totals
 * equal the sums over the threads; threads that
 * get no slot at all (TASKSCOPE_MAX_THREADS) have their events counted as
 * dropped.  Run under TSan with the concurrency tests. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "profile/profile.h"
#include "taskscope/taskscope.h"
#include "test.h"

enum { WAVES = 2500, WIDTH = 8, CROWD = 24 };

static tscope_type_t job;
static pthread_barrier_t crowd;

static void *one_job(void *arg)
{
    (void)arg;
    uint64_t id = tscope_task_id_next();
    tscope_task_start(id, job);
    tscope_task_end(id);
    return NULL;
}

static void *crowded_job(void *arg)
{
    pthread_barrier_wait(&crowd); /* all CROWD threads alive at once */
    one_job(arg);
    pthread_barrier_wait(&crowd); /* and none gives its slot back before all tried */
    return NULL;
}

/* Sum of the per-thread event counts of a snapshot. */
static uint64_t thread_events(const struct tscope__profile *p)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
        sum += p->threads[i].events;
    return sum;
}

static void churn(void)
{
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("job", &job));
    for (int w = 0; w < WAVES; w++) {
        pthread_t th[WIDTH];
        for (int i = 0; i < WIDTH; i++)
            ASSERT_INT_OP(pthread_create(&th[i], NULL, one_job, NULL), ==, 0);
        for (int i = 0; i < WIDTH; i++)
            pthread_join(th[i], NULL);
    }
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(job, &st));
    ASSERT_INT_OP(st.calls, ==, (uint64_t)WAVES * WIDTH);
    /* a type's threads are threads, not slots: every one counted once */
    ASSERT_INT_OP(st.threads, ==, (uint32_t)(WAVES * WIDTH));
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_INT_OP(tot.events_dropped, ==, 0);
    ASSERT_INT_OP(tot.events, ==, 2ull * WAVES * WIDTH);
    /* slots were reused: about as many as threads start per consumer round
     * (~100 here), not one per thread */
    ASSERT_INT_OP(tot.threads, <, WAVES * WIDTH / 10);
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_INT_OP(thread_events(p), ==, tot.events);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

/* More threads alive at once than TASKSCOPE_MAX_THREADS allows (run first:
 * only main has a slot): those without a slot lose their events, and every
 * one is counted. */
static void crowded(void)
{
    setenv("TASKSCOPE_MAX_THREADS", "4", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("job", &job));
    pthread_barrier_init(&crowd, NULL, CROWD);
    pthread_t th[CROWD];
    for (int i = 0; i < CROWD; i++)
        ASSERT_INT_OP(pthread_create(&th[i], NULL, crowded_job, NULL), ==, 0);
    for (int i = 0; i < CROWD; i++)
        pthread_join(th[i], NULL);
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(job, &st));
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_INT_OP(tot.threads, ==, 4);
    ASSERT_INT_OP(st.calls, ==, 3); /* main holds the fourth */
    ASSERT_INT_OP(st.threads, ==, 3);
    ASSERT_INT_OP(st.calls + tot.events_dropped / 2, ==, CROWD); /* each one counted */
    ASSERT_OK(tscope_finalize());
    pthread_barrier_destroy(&crowd);
    unsetenv("TASKSCOPE_MAX_THREADS");
}

int main(void)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    crowded();
    churn();
    printf("test_churn: ok\n");
    return 0;
}
