/* test_reorder.c - the store gets one thread's events before earlier events
 * of another thread (as the consumer can apply them) and must still give
 * the same answers one round later. */
#include "core/config.h"
#include "profile/store.h"
#include "test.h"

static struct tscope__rec rec(uint8_t kind, uint64_t ts, uint64_t id, uint64_t arg, uint16_t type)
{
    return (struct tscope__rec){.ts = ts, .id = id, .arg = arg, .type = type, .kind = kind};
}

static struct tscope__store *new_store(void)
{
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    struct tscope__store *s = tscope__store_new(&cfg, 0);
    ASSERT(s != NULL);
    return s;
}

static void apply(struct tscope__store *s, uint32_t thread, struct tscope__rec r)
{
    tscope__store_apply(s, thread, &r, NULL);
}

/* Finds the tree node for path parent-type -> type below the root. */
static uint32_t node_of(struct tscope__store *s, uint32_t parent, uint16_t type)
{
    for (uint32_t i = 1; i < s->nnodes; i++)
        if (s->nodes[i].parent == parent && s->nodes[i].type == type)
            return i;
    return TSCOPE__NONE;
}

/* Thread 1 runs task 7 completely before thread 0's create (parent 5) is
 * applied: the create still decides the parent, because nothing is settled
 * until a full round has passed. */
static void create_applied_after_the_task_ran(void)
{
    struct tscope__store *s = new_store();
    apply(s, 0, rec(TSCOPE__REC_CREATE, 0, 5, 0, 1));
    apply(s, 0, rec(TSCOPE__REC_BEGIN, 1, 5, 0, 0));
    /* round 1: thread 1's ring first */
    apply(s, 1, rec(TSCOPE__REC_BEGIN, 20, 7, 0, 2));
    apply(s, 1, rec(TSCOPE__REC_END, 50, 7, 0, 0));
    tscope__store_end_round(s);
    /* round 2: thread 0's create of 7 (it happened at ts 10) */
    apply(s, 0, rec(TSCOPE__REC_CREATE, 10, 7, 5, 2));
    apply(s, 0, rec(TSCOPE__REC_END, 60, 5, 0, 0));
    tscope__store_end_round(s);
    tscope__store_end_round(s);
    uint32_t n5 = node_of(s, 0, 1);
    ASSERT(n5 != TSCOPE__NONE);
    uint32_t n7 = node_of(s, n5, 2);
    ASSERT(n7 != TSCOPE__NONE); /* 7 sits below 5, not below the root */
    ASSERT(node_of(s, 0, 2) == TSCOPE__NONE);
    ASSERT_EQ(s->nodes[n7].calls, 1);
    ASSERT_EQ(s->nodes[n7].self, 30);
    ASSERT_EQ(s->types[2].calls, 1);
    ASSERT_EQ(s->types[2].created, 1);
    ASSERT_EQ(s->anomalies, 0);
    ASSERT_EQ(s->live, 0);
    tscope__store_free(s);
}

/* Thread 2's resume and end of task 9 are applied before thread 1's begin
 * and yield: the segments still add up. */
static void resume_applied_before_yield(void)
{
    struct tscope__store *s = new_store();
    apply(s, 0, rec(TSCOPE__REC_CREATE, 0, 9, 0, 3));
    apply(s, 2, rec(TSCOPE__REC_RESUME, 40, 9, 0, 0));
    apply(s, 2, rec(TSCOPE__REC_END, 70, 9, 0, 0));
    tscope__store_end_round(s);
    ASSERT_EQ(s->types[3].calls, 0); /* the yield has not been seen: not settled */
    apply(s, 1, rec(TSCOPE__REC_BEGIN, 10, 9, 0, 0));
    apply(s, 1, rec(TSCOPE__REC_YIELD, 25, 9, 0, 0));
    tscope__store_end_round(s);
    tscope__store_end_round(s);
    ASSERT_EQ(s->types[3].calls, 1);
    ASSERT_EQ(s->types[3].running.sum, 45); /* 15 on thread 1 + 30 on thread 2 */
    ASSERT_EQ(s->types[3].self.sum, 45);
    ASSERT_EQ(s->types[3].threads, 2);
    ASSERT_EQ(s->anomalies, 0);
    tscope__store_free(s);
}

/* A begin without any create is settled as implicitly created one round
 * later, with the task it was begun inside as parent. */
static void implicit_after_one_round(void)
{
    struct tscope__store *s = new_store();
    apply(s, 0, rec(TSCOPE__REC_START, 0, 1, 0, 1));
    apply(s, 0, rec(TSCOPE__REC_BEGIN, 5, 2, 0, 2));
    apply(s, 0, rec(TSCOPE__REC_END, 7, 2, 0, 0));
    apply(s, 0, rec(TSCOPE__REC_END, 9, 1, 0, 0));
    ASSERT_EQ(s->types[1].calls, 1); /* START tasks settle at once */
    ASSERT_EQ(s->types[2].calls, 0);
    tscope__store_end_round(s);
    ASSERT_EQ(s->types[2].calls, 0); /* a create could still come */
    tscope__store_end_round(s);
    ASSERT_EQ(s->types[2].calls, 1);
    uint32_t n1 = node_of(s, 0, 1);
    ASSERT(n1 != TSCOPE__NONE && node_of(s, n1, 2) != TSCOPE__NONE);
    ASSERT_EQ(s->types[1].self.sum, 7);
    tscope__store_free(s);
}

/* Improper use is counted, never crashes: end of an unknown task, end on a
 * thread where the task is not running, a second begin. */
static void anomalies_are_counted(void)
{
    struct tscope__store *s = new_store();
    apply(s, 0, rec(TSCOPE__REC_END, 1, 99, 0, 0));
    apply(s, 0, rec(TSCOPE__REC_START, 2, 5, 0, 1));
    apply(s, 1, rec(TSCOPE__REC_END, 3, 5, 0, 0));
    apply(s, 0, rec(TSCOPE__REC_CREATE, 4, 6, 0, 1));
    apply(s, 0, rec(TSCOPE__REC_BEGIN, 5, 6, 0, 0));
    apply(s, 0, rec(TSCOPE__REC_BEGIN, 6, 6, 0, 0));
    ASSERT_EQ(s->anomalies, 3);
    tscope__store_complete(s, 10);
    ASSERT_EQ(s->unfinished, 2);
    tscope__store_free(s);
}

/* Runs a fixed sequence with leaf pairs either through the leaf fast path
 * (batched) or record by record; returns the store for comparison. */
static struct tscope__store *leaf_sequence(int fast)
{
    struct tscope__store *s = new_store();
    uint64_t ts = 0, id = 100;
    apply(s, 0, rec(TSCOPE__REC_START, ts++, 1, 0, 1)); /* a parent on thread 0 */
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 5; k++) {
            uint16_t type = k < 3 ? 2 : 3;    /* a run of type 2, then type 3 */
            uint32_t thread = k == 4 ? 1 : 0; /* the last one at root level on thread 1 */
            struct tscope__rec a = rec(TSCOPE__REC_START, ts, id, 0, type);
            ts += 3 + (uint64_t)k;
            struct tscope__rec b = rec(TSCOPE__REC_END, ts++, id++, 0, 0);
            if (fast) {
                ASSERT_OK(tscope__store_apply_leaf(s, thread, &a, &b));
            } else {
                tscope__store_apply(s, thread, &a, NULL);
                tscope__store_apply(s, thread, &b, NULL);
            }
        }
        apply(s, 0, rec(TSCOPE__REC_COUNTER, ts++, 0, 0, 1)); /* another record flushes */
    }
    apply(s, 0, rec(TSCOPE__REC_END, ts++, 1, 0, 0));
    tscope__store_end_round(s);
    return s;
}

static void leaf_batches_equal_the_slow_path(void)
{
    struct tscope__store *a = leaf_sequence(1), *b = leaf_sequence(0);
    for (uint16_t t = 1; t <= 3; t++) {
        ASSERT_EQ(a->types[t].calls, b->types[t].calls);
        ASSERT_EQ(a->types[t].created, b->types[t].created);
        ASSERT_EQ(a->types[t].self.sum, b->types[t].self.sum);
        ASSERT_EQ(a->types[t].running.min, b->types[t].running.min);
        ASSERT_EQ(a->types[t].running.max, b->types[t].running.max);
        ASSERT(a->types[t].self.sumsq == b->types[t].self.sumsq);
        ASSERT_EQ(a->types[t].threads, b->types[t].threads);
    }
    ASSERT_EQ(a->types[2].calls, 9);
    ASSERT_EQ(a->types[3].calls, 6);
    ASSERT_EQ(a->types[3].threads, 2);
    ASSERT_EQ(a->nnodes, b->nnodes);
    for (uint32_t i = 0; i < a->nnodes; i++) {
        ASSERT_EQ(a->nodes[i].calls, b->nodes[i].calls);
        ASSERT_EQ(a->nodes[i].self, b->nodes[i].self);
    }
    ASSERT_EQ(a->nedges, b->nedges);
    for (uint32_t i = 0; i < a->nedges; i++)
        ASSERT_EQ(a->edges[i].count, b->edges[i].count);
    ASSERT_EQ(a->events, b->events);
    ASSERT_EQ(a->completed, b->completed);
    ASSERT_EQ(a->ninst, b->ninst);
    tscope__store_free(a);
    tscope__store_free(b);
}

/* A task that waits for its children (yield, resume) on the thread it began
 * on is settled at its end: every record about it and every create of its
 * children came through that thread's ring.  One resumed on another thread
 * waits a round, as a create of a child made on the first thread may still
 * be unread. */
static void taskwait_on_one_thread_settles_at_end(void)
{
    for (int moved = 0; moved < 2; moved++) {
        struct tscope__store *s = new_store();
        apply(s, 0, rec(TSCOPE__REC_CREATE, 0, 5, 0, 1));
        apply(s, 0, rec(TSCOPE__REC_BEGIN, 10, 5, 0, 0));
        apply(s, 0, rec(TSCOPE__REC_CREATE, 20, 6, 5, 2));
        apply(s, 0, rec(TSCOPE__REC_YIELD, 30, 5, 0, 0));
        apply(s, 0, rec(TSCOPE__REC_BEGIN, 40, 6, 0, 0));
        apply(s, 0, rec(TSCOPE__REC_END, 70, 6, 0, 0));
        apply(s, moved, rec(TSCOPE__REC_RESUME, 80, 5, 0, 0));
        apply(s, moved, rec(TSCOPE__REC_END, 100, 5, 0, 0));
        ASSERT_EQ(s->types[2].calls, 1); /* the child: settled at its end */
        ASSERT_EQ(s->types[1].calls, moved ? 0 : 1);
        tscope__store_end_round(s);
        tscope__store_end_round(s);
        ASSERT_EQ(s->types[1].calls, 1);
        ASSERT_EQ(s->types[1].self.sum, 40); /* 10-30 and 80-100 */
        ASSERT_EQ(s->types[1].yields, 1);
        uint32_t n5 = node_of(s, 0, 1);
        ASSERT(n5 != TSCOPE__NONE && node_of(s, n5, 2) != TSCOPE__NONE); /* 6 below 5 */
        ASSERT_EQ(s->anomalies, 0);
        ASSERT_EQ(s->live, 0);
        tscope__store_free(s);
    }
}

/* A START task that yields, with the id of an ended task still in the
 * table: the resume finds the START task, not the older one. */
static void reused_id_yields(void)
{
    struct tscope__store *s = new_store();
    apply(s, 0, rec(TSCOPE__REC_BEGIN, 10, 7, 0, 1));
    apply(s, 0, rec(TSCOPE__REC_END, 20, 7, 0, 0));
    apply(s, 1, rec(TSCOPE__REC_START, 30, 7, 0, 2));
    apply(s, 1, rec(TSCOPE__REC_YIELD, 40, 7, 0, 0));
    apply(s, 1, rec(TSCOPE__REC_RESUME, 50, 7, 0, 0));
    apply(s, 1, rec(TSCOPE__REC_END, 60, 7, 0, 0));
    for (int i = 0; i < 3; i++)
        tscope__store_end_round(s);
    tscope__store_complete(s, 100);
    ASSERT_EQ(s->types[1].calls, 1);
    ASSERT_EQ(s->types[1].running.sum, 10);
    ASSERT_EQ(s->types[2].calls, 1);
    ASSERT_EQ(s->types[2].unfinished, 0);
    ASSERT_EQ(s->types[2].yields, 1);
    ASSERT_EQ(s->types[2].running.sum, 20);
    ASSERT_EQ(s->anomalies, 0);
    tscope__store_free(s);
}

/* Tasks still running at the end: what they ran until then is in their
 * type's totals and their thread's share, not in the statistics of single
 * tasks; a task whose begin was lost (only a resume came, the drop policy)
 * adds its running, no elapsed time from an unknown begin, and no thread
 * share (clock at 10^12: an elapsed time from 0 was that clock). */
static void unfinished_in_the_totals(void)
{
    const uint64_t base = 1000000000000ull;
    struct tscope__store *s = new_store();
    apply(s, 0, rec(TSCOPE__REC_START, base + 10, 7, 0, 1)); /* ends at 30: a call */
    apply(s, 0, rec(TSCOPE__REC_END, base + 30, 7, 0, 0));
    apply(s, 0, rec(TSCOPE__REC_START, base + 40, 8, 0, 1)); /* still running at 100 */
    apply(s, 1, rec(TSCOPE__REC_CREATE, base + 50, 9, 0, 2));
    apply(s, 2, rec(TSCOPE__REC_RESUME, base + 60, 9, 0, 0)); /* its begin lost */
    for (int i = 0; i < 3; i++)
        tscope__store_end_round(s);
    tscope__store_complete(s, base + 100);
    ASSERT_EQ(s->types[1].calls, 1);
    ASSERT_EQ(s->types[1].unfinished, 1);
    ASSERT_EQ(s->types[1].self.n, 1);
    ASSERT_EQ(s->types[1].self.sum, 20);
    ASSERT_EQ(s->types[1].self_unfinished, 60);
    ASSERT_EQ(s->types[1].running_total, 80);
    ASSERT_EQ(s->types[1].elapsed_total, 80);
    ASSERT(s->nstacks > 0 && s->stacks[0].ntypes > 1);
    ASSERT_EQ(s->stacks[0].types[1].calls, 1);
    ASSERT_EQ(s->stacks[0].types[1].self, 80);
    ASSERT_EQ(s->types[2].unfinished, 1);
    ASSERT_EQ(s->types[2].self_unfinished, 40);
    ASSERT_EQ(s->types[2].running_total, 40);
    ASSERT_EQ(s->types[2].elapsed_total, 0);
    for (uint32_t t = 0; t < s->nstacks; t++)
        ASSERT(s->stacks[t].ntypes <= 2 || s->stacks[t].types[2].elapsed == 0);
    tscope__store_free(s);
}

/* The recursion rule of the running total does not depend on whether a
 * task's create is applied before its begin, when the begin names the
 * type (the bundled runtime does): a same-type child nested in it counts
 * once either way. */
static uint64_t nested_running_total(int create_first)
{
    struct tscope__store *s = new_store();
    if (create_first)
        apply(s, 0, rec(TSCOPE__REC_CREATE, 5, 2, 0, 1));
    apply(s, 1, rec(TSCOPE__REC_BEGIN, 10, 2, 0, 1));
    apply(s, 1, rec(TSCOPE__REC_START, 11, 3, 0, 1));
    apply(s, 1, rec(TSCOPE__REC_END, 12, 3, 0, 0));
    apply(s, 1, rec(TSCOPE__REC_END, 20, 2, 0, 0));
    if (!create_first)
        apply(s, 0, rec(TSCOPE__REC_CREATE, 5, 2, 0, 1));
    for (int i = 0; i < 3; i++)
        tscope__store_end_round(s);
    tscope__store_complete(s, 100);
    ASSERT_EQ(s->types[1].calls, 2);
    uint64_t total = s->types[1].running_total;
    tscope__store_free(s);
    return total;
}

static void running_total_whatever_the_order(void)
{
    ASSERT_EQ(nested_running_total(1), 10);
    ASSERT_EQ(nested_running_total(0), 10);
}

int main(void)
{
    RUN(leaf_batches_equal_the_slow_path);
    RUN(create_applied_after_the_task_ran);
    RUN(resume_applied_before_yield);
    RUN(implicit_after_one_round);
    RUN(anomalies_are_counted);
    RUN(taskwait_on_one_thread_settles_at_end);
    RUN(reused_id_yields);
    RUN(running_total_whatever_the_order);
    RUN(unfinished_in_the_totals);
    return 0;
}
