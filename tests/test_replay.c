/* test_replay.c - self/running times for nesting, yields, resumes on
 * another thread, cancellation, unfinished and implicitly created tasks,
 * through the public API with a manual clock (exact expected values). */
#include <pthread.h>

#include "harness.h"

static void nesting(void)
{
    harness_init();
    tscope_type_t tp = type_named("nest_parent"), tc = type_named("nest_child");
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, tp, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    at(10);
    ASSERT_OK(tscope_task_create(2, 1, tc, 0, 1, 0));
    ASSERT_OK(tscope_task_begin(2, 0));
    at(30);
    ASSERT_OK(tscope_task_end(2));
    at(40);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());
    tscope_task_info_t p = task_info(1), c = task_info(2);
    ASSERT_EQ(p.state, TSCOPE_TASK_DONE);
    ASSERT_NEAR(p.self_ns, 20, 0);
    ASSERT_NEAR(p.running_ns, 40, 0);
    ASSERT_NEAR(c.self_ns, 20, 0);
    ASSERT_NEAR(c.running_ns, 20, 0);
    ASSERT_EQ(c.parent, 1);
    ASSERT_EQ(c.depth, 1);
    tscope_type_stats_t st = type_stats(tp);
    ASSERT_EQ(st.calls, 1);
    ASSERT_NEAR(st.self_ns.sum, 20, 0);
    ASSERT_NEAR(st.running_ns.sum, 40, 0);
    tscope_subtree_t sub;
    ASSERT_OK(tscope_query_subtree(1, &sub));
    ASSERT_EQ(sub.tasks, 2);
    ASSERT_NEAR(sub.time_ns, 40, 0);
    ASSERT_EQ(sub.complete, 1);
    ASSERT_OK(tscope_finalize());
}

static void yield_and_resume_same_thread(void)
{
    harness_init();
    tscope_type_t ta = type_named("yielder"), tb = type_named("filler");
    at(0);
    ASSERT_OK(tscope_task_start(10, ta));
    at(10);
    ASSERT_OK(tscope_task_yield(10));
    ASSERT_OK(tscope_task_start(11, tb)); /* runs while 10 waits: not nested in it */
    at(25);
    ASSERT_OK(tscope_task_end(11));
    ASSERT_OK(tscope_task_resume(10));
    at(30);
    ASSERT_OK(tscope_task_end(10));
    ASSERT_OK(tscope_flush());
    tscope_task_info_t a = task_info(10), b = task_info(11);
    ASSERT_NEAR(a.self_ns, 15, 0);
    ASSERT_NEAR(a.running_ns, 15, 0);
    ASSERT_EQ(a.yields, 1);
    ASSERT_NEAR(b.self_ns, 15, 0);
    ASSERT_EQ(b.parent, 0); /* 10 had yielded: 11 is a root task */
    ASSERT_EQ(type_stats(ta).yields, 1);
    ASSERT_OK(tscope_finalize());
}

static tscope_type_t t_migrant;

static void *resume_elsewhere(void *arg)
{
    (void)arg;
    at(20);
    ASSERT_OK(tscope_task_resume(20));
    at(35);
    ASSERT_OK(tscope_task_end(20));
    return NULL;
}

static void resume_on_another_thread(void)
{
    harness_init();
    t_migrant = type_named("migrant");
    at(0);
    ASSERT_OK(tscope_task_create(20, 0, t_migrant, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(20, 0));
    at(10);
    ASSERT_OK(tscope_task_yield(20));
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, resume_elsewhere, NULL));
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(tscope_flush());
    tscope_task_info_t x = task_info(20);
    ASSERT_EQ(x.state, TSCOPE_TASK_DONE);
    ASSERT_NEAR(x.self_ns, 25, 0);
    ASSERT_NEAR(x.running_ns, 25, 0);
    tscope_type_stats_t st = type_stats(t_migrant);
    ASSERT_EQ(st.calls, 1);
    ASSERT_EQ(st.threads, 2);
    ASSERT_EQ(st.yields, 1);
    ASSERT_OK(tscope_finalize());
}

static void cancellation(void)
{
    harness_init();
    tscope_type_t tp = type_named("canceller"), tq = type_named("cancelled");
    at(0);
    ASSERT_OK(tscope_task_start(30, tp));
    ASSERT_OK(tscope_task_create(31, 30, tq, 0, 1, 0)); /* never runs */
    ASSERT_OK(tscope_task_cancel(31));
    ASSERT_OK(tscope_task_create(32, 30, tq, 0, 1, 0));
    at(10);
    ASSERT_OK(tscope_task_begin(32, 0));
    at(15);
    ASSERT_OK(tscope_task_cancel(32)); /* running here: ends it */
    at(20);
    ASSERT_OK(tscope_task_end(30));
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t q = type_stats(tq), p = type_stats(tp);
    ASSERT_EQ(q.created, 2);
    ASSERT_EQ(q.cancelled, 2);
    ASSERT_EQ(q.calls, 0);
    ASSERT_NEAR(p.self_ns.sum, 15, 0); /* 20 minus the 5 the running child took */
    ASSERT_EQ(task_info(32).state, TSCOPE_TASK_CANCELLED);
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_cancelled, 2);
    ASSERT_OK(tscope_finalize());
}

static void unfinished_at_finalize(void)
{
    harness_init();
    tscope_type_t tu = type_named("unfinished");
    at(0);
    ASSERT_OK(tscope_task_start(40, tu));
    at(100);
    ASSERT_OK(tscope_finalize());
    tscope_type_stats_t st = type_stats(tu);
    ASSERT_EQ(st.unfinished, 1);
    ASSERT_EQ(st.calls, 0);
    tscope_task_info_t ti = task_info(40);
    ASSERT_EQ(ti.state, TSCOPE_TASK_UNFINISHED);
    ASSERT_NEAR(ti.running_ns, 100, 0);
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_unfinished, 1);
}

static void implicit_begin_has_running_parent(void)
{
    harness_init();
    tscope_type_t tp = type_named("outer"), tc = type_named("inner");
    at(0);
    ASSERT_OK(tscope_task_create(50, 0, tp, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(50, 0));
    at(5);
    ASSERT_OK(tscope_task_begin(51, tc)); /* never created: implicit */
    at(8);
    ASSERT_OK(tscope_task_end(51));
    at(9);
    ASSERT_OK(tscope_task_end(50));
    ASSERT_OK(tscope_flush());
    ASSERT_EQ(task_info(51).parent, 50);
    ASSERT_NEAR(task_info(50).self_ns, 6, 0);
    tscope_stats_t kids;
    ASSERT_OK(tscope_query_children(50, &kids));
    ASSERT_EQ(kids.count, 1);
    ASSERT_NEAR(kids.mean, 3, 0);
    ASSERT_OK(tscope_finalize());
}

static void live_task_query(void)
{
    harness_init();
    tscope_type_t t = type_named("live");
    at(0);
    ASSERT_OK(tscope_task_create(60, 0, t, TSCOPE_TASK_SPLITTABLE, 3, 7));
    ASSERT_OK(tscope_flush());
    tscope_task_info_t ti = task_info(60);
    ASSERT_EQ(ti.state, TSCOPE_TASK_LIVE);
    ASSERT_EQ(ti.flags, TSCOPE_TASK_SPLITTABLE);
    ASSERT_EQ(ti.depth, 3);
    ASSERT_EQ(ti.priority, 7);
    ASSERT_OK(tscope_finalize());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_live, 1); /* created, never ran */
}

int main(void)
{
    RUN(nesting);
    RUN(yield_and_resume_same_thread);
    RUN(resume_on_another_thread);
    RUN(cancellation);
    RUN(unfinished_at_finalize);
    RUN(implicit_begin_has_running_parent);
    RUN(live_task_query);
    return 0;
}
