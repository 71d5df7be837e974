/* test_times.c - the three times of a task and of a type (self, running,
 * elapsed; docs/output-formats.md), on known trees:
 * - exact, with the manual clock: a task that yields at a taskwait while its
 *   children run, recursion nested on one thread (through the leaf fast path
 *   and through the task table), recursion folded in the tree;
 * - measured, with the real clock: busy-wait tasks of set lengths on two
 *   threads, one waiting for its children, checked against the test's own
 *   clock readings to within 2%, and no total above run time x threads. */
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "harness.h"
#include "profile/profile.h"

/* R (sort) runs 4, creates C1 and C2 (sort), yields at its taskwait; C1 and
 * C2 run 8 each on the same thread; R resumes and runs 4 more.  Recursion
 * through a yield: the children are not inside R's running time. */
static void taskwait_recursion(void)
{
    harness_init();
    tscope_type_t sort = type_named("sort");
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, sort, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    at(4);
    ASSERT_OK(tscope_task_create(2, 1, sort, 0, 1, 0));
    ASSERT_OK(tscope_task_create(3, 1, sort, 0, 1, 0));
    ASSERT_OK(tscope_task_yield(1));
    ASSERT_OK(tscope_task_begin(2, 0));
    at(12);
    ASSERT_OK(tscope_task_end(2));
    ASSERT_OK(tscope_task_begin(3, 0));
    at(20);
    ASSERT_OK(tscope_task_end(3));
    ASSERT_OK(tscope_task_resume(1));
    at(24);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());

    tscope_task_info_t r = task_info(1), c = task_info(2);
    ASSERT_NEAR(r.self_ns, 8, 0);
    ASSERT_NEAR(r.running_ns, 8, 0);
    ASSERT_NEAR(r.elapsed_ns, 24, 0);
    ASSERT_NEAR(c.self_ns, 8, 0);
    ASSERT_NEAR(c.running_ns, 8, 0);
    ASSERT_NEAR(c.elapsed_ns, 8, 0);
    tscope_type_stats_t st = type_stats(sort);
    ASSERT_EQ(st.calls, 3);
    ASSERT_NEAR(st.self_ns.sum, 24, 0);
    ASSERT_NEAR(st.running_ns.sum, 24, 0);
    ASSERT_NEAR(st.elapsed_ns.sum, 40, 0); /* 24 + 8 + 8: each task's own */
    ASSERT_NEAR(st.elapsed_ns.max, 24, 0);
    /* the older names excl_ns/incl_ns, which outside runtimes still use:
     * the same fields as self_ns/running_ns */
    ASSERT_NEAR(st.excl_ns.sum, 24, 0);
    ASSERT_NEAR(st.incl_ns.sum, 24, 0);
    ASSERT_EQ(st.self_ns.count, st.excl_ns.count);
    ASSERT_NEAR(r.excl_ns, 8, 0);
    ASSERT_NEAR(r.incl_ns, 8, 0);
    /* recursion once: every running segment is outside another sort
     * segment; the children's elapsed time lies inside R's */
    ASSERT_NEAR(st.running_total_ns, 24, 0);
    ASSERT_NEAR(st.elapsed_total_ns, 24, 0);
    ASSERT_OK(tscope_finalize());
}

/* W (wait) runs 4, creates C1 and C2 (leaf) and runs them nested at its
 * taskwait (libomp's way, through the OMPT tool): each is a switch of W
 * (tscope_task_switched_h, tscope_task_begin_nested_h), counted as a
 * yield, with W's times those of any task with nested children - the
 * switches change no time. */
static void switched_nested(void)
{
    harness_init();
    tscope_type_t wait = type_named("wait"), leaf = type_named("leaf");
    at(0);
    tscope_task_t *w = tscope_task_create_h(1, NULL, wait, 0, 0, 0);
    ASSERT_OK(tscope_task_begin_h(w));
    at(4);
    tscope_task_t *c1 = tscope_task_create_h(2, w, leaf, 0, 1, 0);
    tscope_task_t *c2 = tscope_task_create_h(3, w, leaf, 0, 1, 0);
    ASSERT_OK(tscope_task_switched_h(w));
    ASSERT_OK(tscope_task_begin_h(c1));
    at(12);
    ASSERT_OK(tscope_task_end_h(c1));
    ASSERT_OK(tscope_task_begin_nested_h(c2, w)); /* the begin and the switch in one */
    at(20);
    ASSERT_OK(tscope_task_end_h(c2));
    ASSERT_EQ(tscope_task_switched_h(c2), TSCOPE_EINVAL); /* ended */
    ASSERT_EQ(tscope_task_switched_h(NULL), TSCOPE_EINVAL);
    at(24);
    ASSERT_OK(tscope_task_end_h(w));
    ASSERT_OK(tscope_flush());

    tscope_type_stats_t ws = type_stats(wait), ls = type_stats(leaf);
    ASSERT_EQ(ws.calls, 1);
    ASSERT_EQ(ws.yields, 2);
    ASSERT_EQ(ls.calls, 2);
    ASSERT_EQ(ls.yields, 0);
    ASSERT_NEAR(ws.self_ns.sum, 8, 0);
    ASSERT_NEAR(ws.running_ns.sum, 24, 0); /* the children nested inside */
    ASSERT_NEAR(ws.elapsed_ns.sum, 24, 0);
    ASSERT_NEAR(ls.self_ns.sum, 16, 0);
    ASSERT_NEAR(ls.running_ns.sum, 16, 0);
    tscope_task_info_t r = task_info(1);
    ASSERT_EQ(r.yields, 2);
    ASSERT_NEAR(r.self_ns, 8, 0);
    ASSERT_NEAR(r.running_ns, 24, 0);
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.anomalies, 0);
    ASSERT_OK(tscope_finalize());
}

/* fib nested on one thread: F1 (begin/end, task table) inside F0, and a
 * START/END leaf F2 inside F1 (the leaf fast path).  Running sums count the
 * nested time three times; the totals count it once. */
static void nested_recursion(void)
{
    harness_init();
    tscope_type_t fib = type_named("fib");
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, fib, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    at(2);
    ASSERT_OK(tscope_task_create(2, 1, fib, 0, 1, 0));
    ASSERT_OK(tscope_task_begin(2, 0));
    at(5);
    ASSERT_OK(tscope_task_start(3, fib));
    at(9);
    ASSERT_OK(tscope_task_end(3));
    at(10);
    ASSERT_OK(tscope_task_end(2));
    at(12);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());

    tscope_type_stats_t st = type_stats(fib);
    ASSERT_EQ(st.calls, 3);
    ASSERT_NEAR(st.self_ns.sum, 12, 0);            /* 4 + 4 + 4 */
    ASSERT_NEAR(st.running_ns.sum, 12 + 8 + 4, 0); /* each task's own */
    ASSERT_NEAR(st.elapsed_ns.sum, 12 + 8 + 4, 0); /* each task's own */
    ASSERT_NEAR(st.running_total_ns, 12, 0);       /* the outermost only */
    ASSERT_NEAR(st.elapsed_total_ns, 12, 0);       /* the outermost only */
    ASSERT_NEAR(task_info(2).elapsed_ns, 8, 0);
    ASSERT_NEAR(task_info(3).elapsed_ns, 4, 0);

    /* the tree folds the recursion (default): one fib node, whose running
     * and elapsed time count the outer task once */
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    uint32_t fib_nodes = 0;
    for (uint32_t i = 1; i < p->nnodes; i++) {
        if (p->nodes[i].type != fib)
            continue;
        fib_nodes++;
        ASSERT_EQ(p->nodes[i].calls, 3);
        ASSERT_NEAR(p->nodes[i].self, 12, 0);
        ASSERT_NEAR(p->nodes[i].running, 12, 0);
        ASSERT_NEAR(p->nodes[i].elapsed, 12, 0);
    }
    ASSERT_EQ(fib_nodes, 1);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

/* Mutual recursion A -> B -> A -> B, one inside the other: the folded tree
 * has one node per type, but the inner B's ancestry holds a B. */
static void mutual_recursion(void)
{
    harness_init();
    tscope_type_t a = type_named("mutual_a"), b = type_named("mutual_b");
    uint64_t ids[] = {1, 2, 3, 4};
    tscope_type_t types[] = {a, b, a, b};
    for (int i = 0; i < 4; i++) {
        at((uint64_t)i);
        ASSERT_OK(tscope_task_create(ids[i], i ? ids[i - 1] : 0, types[i], 0, (unsigned)i, 0));
        ASSERT_OK(tscope_task_begin(ids[i], 0));
    }
    for (int i = 3; i >= 0; i--) {
        at((uint64_t)(7 - i));
        ASSERT_OK(tscope_task_end(ids[i]));
    }
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t sa = type_stats(a), sb = type_stats(b);
    ASSERT_NEAR(sa.running_total_ns, 7, 0); /* the outer A: 0 .. 7 */
    ASSERT_NEAR(sa.elapsed_total_ns, 7, 0);
    ASSERT_NEAR(sb.running_total_ns, 5, 0); /* the outer B: 1 .. 6 */
    ASSERT_NEAR(sb.elapsed_total_ns, 5, 0);
    ASSERT_NEAR(sb.elapsed_ns.sum, 5 + 1, 0); /* each B's own: 5 and 1 */
    ASSERT_OK(tscope_finalize());
}

/* ---- the real clock ---------------------------------------------------- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void busy(double ns)
{
    double until = now_ns() + ns;
    while (now_ns() < until)
        ;
}

#define MS 1e6
static tscope_type_t t_sort, t_leaf;
/* the test's own readings: begin and end of each task */
static double beg[8], fin[8];

/* a leaf of 20 ms, as a helper thread runs it */
static void *helper(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    beg[id] = now_ns();
    ASSERT_OK(tscope_task_begin(id, 0));
    busy(20 * MS);
    fin[id] = now_ns(); /* an event's time is read first thing in the call */
    ASSERT_OK(tscope_task_end(id));
    return NULL;
}

/* sort 1 runs 10 ms, creates sort 2 (20 ms, on a second thread) and leaf 3
 * (20 ms, on this thread after 1 yields), waits for both, runs 10 ms. */
static void measured(void)
{
    unsetenv("TASKSCOPE_CLOCK");
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("sort", &t_sort));
    ASSERT_OK(tscope_type_register("leaf", &t_leaf));
    double run0 = now_ns();
    ASSERT_OK(tscope_task_create(1, 0, t_sort, 0, 0, 0));
    beg[1] = now_ns();
    ASSERT_OK(tscope_task_begin(1, 0));
    busy(10 * MS);
    ASSERT_OK(tscope_task_create(2, 1, t_sort, 0, 1, 0));
    ASSERT_OK(tscope_task_create(3, 1, t_leaf, 0, 1, 0));
    double y = now_ns();
    ASSERT_OK(tscope_task_yield(1));
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, helper, (void *)(uintptr_t)2), 0);
    helper((void *)(uintptr_t)3);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    double rs = now_ns();
    ASSERT_OK(tscope_task_resume(1));
    busy(10 * MS);
    fin[1] = now_ns();
    ASSERT_OK(tscope_task_end(1));
    double run = now_ns() - run0;
    ASSERT_OK(tscope_flush());

    /* within 2% of what the test measured around the same calls */
    tscope_task_info_t r = task_info(1), s = task_info(2), l = task_info(3);
    double r_running = (y - beg[1]) + (fin[1] - rs);
    ASSERT_NEAR(r.self_ns, r_running, 0.02 * r_running);
    ASSERT_NEAR(r.running_ns, r_running, 0.02 * r_running);
    ASSERT_NEAR(r.elapsed_ns, fin[1] - beg[1], 0.02 * (fin[1] - beg[1]));
    ASSERT(r.elapsed_ns > r.running_ns + 15 * MS); /* the waiting is in elapsed only */
    for (int id = 2; id <= 3; id++) {
        tscope_task_info_t t = id == 2 ? s : l;
        double d = fin[id] - beg[id];
        ASSERT_NEAR(t.self_ns, d, 0.02 * d);
        ASSERT_NEAR(t.running_ns, d, 0.02 * d);
        ASSERT_NEAR(t.elapsed_ns, d, 0.02 * d);
    }
    /* per type: sort 2 is inside sort 1's elapsed time, not its running */
    tscope_type_stats_t st = type_stats(t_sort);
    ASSERT_EQ(st.calls, 2);
    ASSERT_NEAR(st.running_total_ns, r.running_ns + s.running_ns, 1);
    ASSERT_NEAR(st.elapsed_total_ns, r.elapsed_ns, 1);
    ASSERT_NEAR(st.elapsed_ns.sum, r.elapsed_ns + s.elapsed_ns, 1);
    /* no total exceeds run time x threads (2) */
    tscope_type_stats_t lt = type_stats(t_leaf);
    ASSERT(st.running_total_ns + lt.running_total_ns <= 2 * run);
    ASSERT(st.elapsed_total_ns <= run && lt.elapsed_total_ns <= run);
    ASSERT_OK(tscope_finalize());
}

int main(void)
{
    RUN(measured); /* first: the manual clock, once installed, stays */
    RUN(taskwait_recursion);
    RUN(nested_recursion);
    RUN(switched_nested);
    RUN(mutual_recursion);
    return 0;
}
