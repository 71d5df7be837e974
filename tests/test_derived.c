/* test_derived.c - type graph, path tree and derived metrics (subtree time
 * over threads, children statistics) on a hand-built task set whose answers
 * are worked out in the comments. */
#include <pthread.h>

#include "harness.h"
#include "profile/profile.h"

/*
 * Thread 0                         Thread 1
 *  R  [0, 100)  creates A, B, C      B  [10, 40)  (child of R)
 *  A  [20, 50)  nested in R            B1 [15, 25) nested in B (child of B)
 *  A1 [30, 35)  nested in A
 *  C  [60, 70)  nested in R
 *
 * exclusive: R = 100 - 30 - 10 = 60, A = 30 - 5 = 25, A1 = 5, B = 30 - 10 = 20,
 *            B1 = 10, C = 10
 * subtree(R) = 60 + 25 + 5 + 20 + 10 + 10 = 130 over 6 tasks
 * children(R): inclusive A 30, B 30, C 10 -> mean 70/3, stddev sqrt(800/9)
 * type graph: root->root_t 1, root_t->mid 3 (A, B, C), mid->leaf 2 (A1, B1)
 */
static tscope_type_t t_root, t_mid, t_leaf;

static void *thread1(void *arg)
{
    (void)arg;
    at(10);
    ASSERT_OK(tscope_task_begin(2, 0));
    at(15);
    ASSERT_OK(tscope_task_create(21, 2, t_leaf, 0, 2, 0));
    ASSERT_OK(tscope_task_begin(21, 0));
    at(25);
    ASSERT_OK(tscope_task_end(21));
    at(40);
    ASSERT_OK(tscope_task_end(2));
    return NULL;
}

static void hand_built_set(void)
{
    harness_init();
    t_root = type_named("d_root");
    t_mid = type_named("d_mid");
    t_leaf = type_named("d_leaf");
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, t_root, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    ASSERT_OK(tscope_task_create(2, 1, t_mid, 0, 1, 0));
    ASSERT_OK(tscope_task_create(3, 1, t_mid, 0, 1, 0));
    ASSERT_OK(tscope_task_create(4, 1, t_mid, 0, 1, 0));
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, thread1, NULL));
    ASSERT_OK(pthread_join(th, NULL)); /* its clock steps happen before ours continue */
    at(20);
    ASSERT_OK(tscope_task_begin(3, 0));
    at(30);
    ASSERT_OK(tscope_task_create(31, 3, t_leaf, 0, 2, 0));
    ASSERT_OK(tscope_task_begin(31, 0));
    at(35);
    ASSERT_OK(tscope_task_end(31));
    at(50);
    ASSERT_OK(tscope_task_end(3));
    at(60);
    ASSERT_OK(tscope_task_begin(4, 0));
    at(70);
    ASSERT_OK(tscope_task_end(4));
    at(100);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());

    ASSERT_NEAR(task_info(1).excl_ns, 60, 0);
    ASSERT_NEAR(task_info(3).excl_ns, 25, 0);
    ASSERT_NEAR(task_info(2).excl_ns, 20, 0);
    ASSERT_EQ(task_info(2).thread, task_info(21).thread);
    ASSERT_NE(task_info(2).thread, task_info(1).thread);
    tscope_subtree_t sub;
    ASSERT_OK(tscope_query_subtree(1, &sub));
    ASSERT_EQ(sub.tasks, 6);
    ASSERT_NEAR(sub.time_ns, 130, 0);
    ASSERT_OK(tscope_query_subtree(3, &sub));
    ASSERT_EQ(sub.tasks, 2);
    ASSERT_NEAR(sub.time_ns, 30, 0);
    tscope_stats_t kids;
    ASSERT_OK(tscope_query_children(1, &kids));
    ASSERT_EQ(kids.count, 3);
    ASSERT_NEAR(kids.mean, 70.0 / 3, 1e-9);
    ASSERT_NEAR(kids.stddev, sqrt(800.0 / 9), 1e-9);
    ASSERT_NEAR(kids.min, 10, 0);
    ASSERT_NEAR(kids.max, 30, 0);
    ASSERT_OK(tscope_query_children(31, &kids));
    ASSERT_EQ(kids.count, 0);

    tscope_type_stats_t mid = type_stats(t_mid);
    ASSERT_EQ(mid.calls, 3);
    ASSERT_EQ(mid.threads, 2);
    ASSERT_NEAR(mid.excl_ns.sum, 55, 0);
    ASSERT_NEAR(mid.incl_ns.mean, 70.0 / 3, 1e-9);

    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    uint64_t root_to_root = 0, root_to_mid = 0, mid_to_leaf = 0;
    for (uint32_t i = 0; i < p->nedges; i++) {
        const struct tscope__pedge *e = &p->edges[i];
        if (e->from == TSCOPE__PROFILE_ROOT && e->to == t_root)
            root_to_root = e->count;
        else if (e->from == t_root && e->to == t_mid)
            root_to_mid = e->count;
        else if (e->from == t_mid && e->to == t_leaf)
            mid_to_leaf = e->count;
        else
            TEST_FAIL("unexpected edge %u -> %u", e->from, e->to);
    }
    ASSERT_EQ(root_to_root, 1);
    ASSERT_EQ(root_to_mid, 3);
    ASSERT_EQ(mid_to_leaf, 2);
    /* tree: root, R, R/mid, R/mid/leaf - one path node each */
    ASSERT_EQ(p->nnodes, 4);
    ASSERT_EQ(p->nodes[3].calls, 2);
    ASSERT_NEAR(p->nodes[3].excl, 15, 0);
    ASSERT_NEAR(p->nodes[2].incl, 70, 0);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

int main(void)
{
    RUN(hand_built_set);
    return 0;
}
