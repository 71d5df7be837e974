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
 * self: R = 100 - 30 - 10 = 60, A = 30 - 5 = 25, A1 = 5, B = 30 - 10 = 20,
 *       B1 = 10, C = 10
 * subtree(R) = 60 + 25 + 5 + 20 + 10 + 10 = 130 over 6 tasks
 * children(R): running A 30, B 30, C 10 -> mean 70/3, stddev sqrt(800/9)
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

    ASSERT_NEAR(task_info(1).self_ns, 60, 0);
    ASSERT_NEAR(task_info(3).self_ns, 25, 0);
    ASSERT_NEAR(task_info(2).self_ns, 20, 0);
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
    ASSERT_NEAR(mid.self_ns.sum, 55, 0);
    ASSERT_NEAR(mid.running_ns.mean, 70.0 / 3, 1e-9);

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
    ASSERT_NEAR(p->nodes[3].self, 15, 0);
    ASSERT_NEAR(p->nodes[2].running, 70, 0);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

/* A recursion a -> b -> a -> b -> c, each task nested in the one before
 * (start/end on one thread, 10 ns of own work each), run `times` times.
 * Returns the snapshot (caller frees). */
static tscope_type_t r_a, r_b, r_c;

static struct tscope__profile *recursion(int times)
{
    harness_init();
    r_a = type_named("r_a");
    r_b = type_named("r_b");
    r_c = type_named("r_c");
    tscope_type_t chain[5] = {r_a, r_b, r_a, r_b, r_c};
    uint64_t t = 0, id = 1;
    for (int rep = 0; rep < times; rep++) {
        for (int i = 0; i < 5; i++) {
            at(t += 10);
            ASSERT_OK(tscope_task_start(id + (uint64_t)i, chain[i]));
        }
        for (int i = 5; i-- > 0;) {
            at(t += 10);
            ASSERT_OK(tscope_task_end(id + (uint64_t)i));
        }
        id += 5;
    }
    ASSERT_OK(tscope_flush());
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_OK(tscope_finalize());
    return p;
}

/* The path index of `type` below node `parent`, or -1. */
static int child_node(const struct tscope__profile *p, uint32_t parent, tscope_type_t type)
{
    for (uint32_t i = 1; i < p->nnodes; i++)
        if (p->nodes[i].parent == parent && p->nodes[i].type == type)
            return (int)i;
    return -1;
}

static void tree_folding(void)
{
    /* folded (the default): root, a, a/b, a/b/c; the inner a and b count in
     * the outer nodes; the type-level edges stay exact */
    struct tscope__profile *p = recursion(3);
    ASSERT_EQ(p->nnodes, 4);
    int na = child_node(p, 0, r_a), nb = child_node(p, (uint32_t)na, r_b);
    ASSERT(na > 0 && nb > 0 && child_node(p, (uint32_t)nb, r_c) > 0);
    ASSERT_EQ(p->nodes[na].calls, 6);
    ASSERT_EQ(p->nodes[nb].calls, 6);
    ASSERT_NEAR(p->nodes[na].self, 6 * 20, 0); /* each task: 10 ns before and after its child */
    uint64_t ab = 0, ba = 0, bc = 0;
    for (uint32_t i = 0; i < p->nedges; i++) {
        const struct tscope__pedge *e = &p->edges[i];
        if (e->from == r_a && e->to == r_b)
            ab = e->count;
        if (e->from == r_b && e->to == r_a)
            ba = e->count;
        if (e->from == r_b && e->to == r_c)
            bc = e->count;
    }
    ASSERT_EQ(ab, 6);
    ASSERT_EQ(ba, 3);
    ASSERT_EQ(bc, 3);
    tscope__profile_free(p);

    /* unfolded: one node per path */
    setenv("TASKSCOPE_TREE_FOLD", "0", 1);
    p = recursion(2);
    ASSERT_EQ(p->nnodes, 6);
    tscope__profile_free(p);

    /* unfolded, depth 3: a, a/b, a/b/a; the inner b counts in a/b/b's place
     * at depth 3 (below a/b), c below a/b too */
    setenv("TASKSCOPE_TREE_DEPTH", "3", 1);
    p = recursion(1);
    na = child_node(p, 0, r_a);
    nb = child_node(p, (uint32_t)na, r_b);
    ASSERT(child_node(p, (uint32_t)nb, r_a) > 0);
    ASSERT(child_node(p, (uint32_t)nb, r_b) > 0);
    ASSERT(child_node(p, (uint32_t)nb, r_c) > 0);
    ASSERT_EQ(p->nnodes, 6);
    for (uint32_t i = 1; i < p->nnodes; i++)
        ASSERT(p->nodes[i].parent == 0 || p->nodes[p->nodes[i].parent].parent == 0 ||
               p->nodes[p->nodes[p->nodes[i].parent].parent].parent == 0);
    tscope__profile_free(p);
    unsetenv("TASKSCOPE_TREE_FOLD");
    unsetenv("TASKSCOPE_TREE_DEPTH");
}

int main(void)
{
    RUN(hand_built_set);
    RUN(tree_folding);
    return 0;
}
