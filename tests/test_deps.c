/* test_deps.c - the instance graph under its cap and the dependency graph:
 * - 200,001 tasks with TASKSCOPE_INSTANCE_CAP=10000: the tasks closest to
 *   the root are kept, the root's subtree stays exact in count and time,
 *   a dropped task answers TSCOPE_ENOTKEPT;
 * - a diamond and a chain of dependencies: the type-level edges by hazard,
 *   the per-task edges, tscope_query_deps, and both in profile.json;
 * - dependence API version 2: one edge per pair with several hazards and
 *   addresses, an exclusion, tscope_query_dep_edges, bad arguments;
 * - a critical path longer than profile.json keeps: its last steps. */
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "harness.h"
#include "profile/critpath.h"
#include "profile/profile.h"

/* p's profile.json as a string (free it). */
static char *json_of(const struct tscope__profile *p)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    ASSERT(f != NULL);
    ASSERT_OK(tscope__export_json(p, f));
    fclose(f);
    return json;
}

/* root (1) -> 1000 mids (depth 1) -> 199 leaves each (depth 2); mid k's
 * leaves alternate between START/END leaves and create/begin/end tasks. */
static void capped_graph_keeps_the_top(void)
{
    setenv("TASKSCOPE_INSTANCE_CAP", "10000", 1);
    harness_init();
    tscope_type_t tr = type_named("root"), tm = type_named("mid"), tl = type_named("leaf");
    uint64_t t = 0, next = 2, leaf_id = 0;
    at(t);
    ASSERT_OK(tscope_task_create(1, 0, tr, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    for (int m = 0; m < 1000; m++) {
        uint64_t mid = next++;
        at(++t);
        ASSERT_OK(tscope_task_create(mid, 1, tm, 0, 1, 0));
        ASSERT_OK(tscope_task_begin(mid, 0));
        for (int l = 0; l < 199; l++) {
            uint64_t id = next++;
            at(++t);
            if (l % 2) {
                ASSERT_OK(tscope_task_start(id, tl));
            } else {
                ASSERT_OK(tscope_task_create(id, mid, tl, 0, 2, 0));
                ASSERT_OK(tscope_task_begin(id, 0));
            }
            t += 2;
            at(t);
            ASSERT_OK(tscope_task_end(id));
            leaf_id = id;
        }
        at(++t);
        ASSERT_OK(tscope_task_end(mid));
    }
    at(++t);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());

    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_completed, 200001);
    ASSERT_EQ(tot.tasks_live, 0);
    ASSERT(tot.instances <= 10000);
    ASSERT_EQ(tot.instances + tot.instances_cut_off, 200001);
    tscope_subtree_t sub;
    ASSERT_OK(tscope_query_subtree(1, &sub));
    ASSERT_EQ(sub.tasks, 200001);
    /* self times: every leaf 2, every mid 2 (1 before, 1 after its leaves
     * minus nothing), the root t - self of all below */
    ASSERT_NEAR(sub.time_ns, (double)t, 0);
    ASSERT_EQ(sub.complete, 1);
    ASSERT_OK(tscope_query_subtree(2, &sub)); /* the first mid: kept */
    ASSERT_EQ(sub.tasks, 200);
    ASSERT_NEAR(sub.time_ns, 2 + 199 * 2 + 199 - 1, 1000);
    tscope_task_info_t ti;
    ASSERT_EQ(tscope_query_task(leaf_id, &ti), TSCOPE_ENOTKEPT);
    ASSERT_EQ(tscope_query_subtree(leaf_id, &sub), TSCOPE_ENOTKEPT);
    ASSERT_STR_EQ(tscope_err_name(TSCOPE_ENOTKEPT), "TSCOPE_ENOTKEPT");
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_INSTANCE_CAP");
}

/* A parent that ends before its child (no taskwait), cap 1: the parent is
 * kept, the child is not and is counted in the parent's instance after the
 * parent was settled. */
static void late_child_counts_in_kept_parent(void)
{
    setenv("TASKSCOPE_INSTANCE_CAP", "1", 1);
    harness_init();
    tscope_type_t tp = type_named("spawner"), tc = type_named("late");
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, tp, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    at(10);
    ASSERT_OK(tscope_task_create(2, 1, tc, 0, 1, 0));
    at(20);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_live, 1); /* the child; the parent is settled */
    tscope_subtree_t sub;
    ASSERT_OK(tscope_query_subtree(1, &sub));
    ASSERT_EQ(sub.tasks, 1);
    at(30);
    ASSERT_OK(tscope_task_begin(2, 0));
    at(37);
    ASSERT_OK(tscope_task_end(2));
    ASSERT_OK(tscope_flush());
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_live, 0);
    ASSERT_EQ(tot.instances, 1);
    ASSERT_EQ(tot.instances_cut_off, 1);
    ASSERT_OK(tscope_query_subtree(1, &sub));
    ASSERT_EQ(sub.tasks, 2);
    ASSERT_NEAR(sub.time_ns, 20 + 7, 0);
    tscope_task_info_t ti;
    ASSERT_EQ(tscope_query_task(2, &ti), TSCOPE_ENOTKEPT);
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_INSTANCE_CAP");
}

/* Cap 8: R -> A -> {B1..B6, C -> L}, then R -> X1, X2.  The graph fills
 * while C still runs: L is dropped and counts in C, which is left out when
 * it ends and counts in A.  The root's subtree stays exact. */
static void drop_while_the_parent_runs(void)
{
    setenv("TASKSCOPE_INSTANCE_CAP", "8", 1);
    harness_init();
    tscope_type_t ty = type_named("branch");
    uint64_t t = 0;
#define MK(id, parent)                                                                             \
    do {                                                                                           \
        ASSERT_OK(tscope_task_create(id, parent, ty, 0, 0, 0));                                    \
        ASSERT_OK(tscope_task_begin(id, 0));                                                       \
        at(++t);                                                                                   \
    } while (0)
#define END(id)                                                                                    \
    do {                                                                                           \
        ASSERT_OK(tscope_task_end(id));                                                            \
        at(++t);                                                                                   \
    } while (0)
    at(t);
    MK(1, 0);
    MK(2, 1);
    for (uint64_t i = 10; i < 16; i++) {
        MK(i, 2);
        END(i);
    }
    MK(3, 2);
    MK(20, 3);
    END(20);
    MK(30, 1);
    END(30);
    MK(31, 1);
    END(31);
    END(3);
    END(2);
    ASSERT_OK(tscope_task_end(1));
#undef MK
#undef END
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_completed, 12);
    ASSERT(tot.instances_cut_off > 0);
    tscope_subtree_t sub;
    ASSERT_OK(tscope_query_subtree(1, &sub));
    ASSERT_EQ(sub.tasks, 12);
    ASSERT_NEAR(sub.time_ns, (double)t, 0);
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_INSTANCE_CAP");
}

/* Diamond: a -> b (RAW), a -> c (RAW), b -> d (RAW), c -> d (WAR); chain:
 * x1 -> x2 -> x3 (WAW). */
static void diamond_and_chain(void)
{
    harness_init();
    tscope_type_t ta = type_named("a"), tb = type_named("b"), tc = type_named("c"),
                  td = type_named("d"), tx = type_named("x");
    int cell[4];
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, ta, 0, 0, 0));
    ASSERT_OK(tscope_task_create(2, 0, tb, 0, 0, 0));
    ASSERT_OK(tscope_dep_local(1, 2, &cell[0], TSCOPE_DEP_RAW));
    ASSERT_OK(tscope_task_create(3, 0, tc, 0, 0, 0));
    ASSERT_OK(tscope_dep_local(1, 3, &cell[0], TSCOPE_DEP_RAW));
    ASSERT_OK(tscope_task_create(4, 0, td, 0, 0, 0));
    ASSERT_OK(tscope_dep_local(2, 4, &cell[1], TSCOPE_DEP_RAW));
    ASSERT_OK(tscope_dep_local(3, 4, &cell[2], TSCOPE_DEP_WAR));
    for (uint64_t x = 11; x <= 13; x++) {
        ASSERT_OK(tscope_task_create(x, 0, tx, 0, 0, 0));
        if (x > 11)
            ASSERT_OK(tscope_dep_local(x - 1, x, &cell[3], TSCOPE_DEP_WAW));
    }
    uint64_t order[] = {1, 2, 3, 4, 11, 12, 13};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        at(10 * (i + 1));
        ASSERT_OK(tscope_task_begin(order[i], 0));
        at(10 * (i + 1) + 5);
        ASSERT_OK(tscope_task_end(order[i]));
    }
    ASSERT_OK(tscope_flush());

    tscope_dep_info_t pred[4], succ[4];
    size_t np, ns;
    ASSERT_OK(tscope_query_deps(4, pred, 4, &np, succ, 4, &ns));
    ASSERT_EQ(np, 2);
    ASSERT_EQ(ns, 0);
    ASSERT_EQ(pred[0].task, 2);
    ASSERT_EQ(pred[0].kind, TSCOPE_DEP_RAW);
    ASSERT_EQ(pred[1].task, 3);
    ASSERT_EQ(pred[1].kind, TSCOPE_DEP_WAR);
    ASSERT_OK(tscope_query_deps(1, NULL, 0, &np, succ, 1, &ns));
    ASSERT_EQ(np, 0);
    ASSERT_EQ(ns, 2); /* the full count, one filled */
    ASSERT_EQ(succ[0].task, 2);
    ASSERT_EQ(tscope_query_deps(99, NULL, 0, &np, NULL, 0, &ns), TSCOPE_ENOENT);

    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_EQ(p->ndeps, 6);
    /* by type pair, ordered: a->b RAW 1, a->c RAW 1, b->d RAW 1, c->d WAR 1, x->x WAW 2 */
    ASSERT_EQ(p->ndeptypes, 5);
    struct {
        uint32_t from, to;
        uint64_t raw, war, waw;
    } want[] = {{ta, tb, 1, 0, 0},
                {ta, tc, 1, 0, 0},
                {tb, td, 1, 0, 0},
                {tc, td, 0, 1, 0},
                {tx, tx, 0, 0, 2}};
    for (int i = 0; i < 5; i++) {
        const struct tscope__pdeptype *d = &p->deptypes[i];
        ASSERT_EQ(d->from, want[i].from);
        ASSERT_EQ(d->to, want[i].to);
        ASSERT_EQ(d->raw, want[i].raw);
        ASSERT_EQ(d->war, want[i].war);
        ASSERT_EQ(d->waw, want[i].waw);
        ASSERT_EQ(d->count, want[i].raw + want[i].war + want[i].waw);
    }
    char *json = json_of(p);
    char line[256];
    snprintf(line, sizeof line,
             "\n  {\"from_id\":%u,\"from\":\"c\",\"to_id\":%u,\"to\":\"d\",\"count\":1,"
             "\"raw\":0,\"war\":1,\"waw\":0,\"mutex\":0,\"remote\":0}",
             tc, td);
    ASSERT(strstr(json, line) != NULL);
    snprintf(line, sizeof line,
             "\"from_id\":%u,\"from\":\"x\",\"to_id\":%u,\"to\":\"x\",\"count\":2,"
             "\"raw\":0,\"war\":0,\"waw\":2,\"mutex\":0,\"remote\":0}",
             tx, tx);
    ASSERT(strstr(json, line) != NULL);
    snprintf(line, sizeof line,
             "\n  {\"from\":3,\"to\":4,\"hazards\":[\"WAR\"],\"addresses\":1,\"addr\":\"%p\","
             "\"remote\":false,\"from_rank\":0,\"to_rank\":0}",
             (void *)&cell[2]);
    ASSERT(strstr(json, line) != NULL);
    ASSERT(strstr(json, "\n  {\"from\":12,\"to\":13,\"hazards\":[\"WAW\"],\"addresses\":1,") !=
           NULL);
    snprintf(line, sizeof line,
             "{\"id\":4,\"parent\":0,\"type_id\":%u,\"thread\":0,\"state\":\"done\","
             "\"create_ns\":0,\"begin_ns\":40,\"end_ns\":45,\"self_ns\":5,"
             "\"running_ns\":5,\"elapsed_ns\":5}",
             td);
    ASSERT(strstr(json, line) != NULL);
    free(json);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

/* tscope_dep_edge: a pair with RAW and WAR on 3 addresses, a mutual
 * exclusion, both as recorded in the queries, the type counts and JSON. */
static void edges_per_pair(void)
{
    harness_init();
    tscope_type_t ta = type_named("a"), tb = type_named("b");
    int cell[2];
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, ta, 0, 0, 0));
    ASSERT_OK(tscope_task_create(2, 0, tb, 0, 0, 0));
    ASSERT_OK(tscope_task_create(3, 0, tb, 0, 0, 0));
    ASSERT_OK(tscope_dep_edge(1, ta, 2, tb, TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAR, 3, &cell[0]));
    ASSERT_OK(tscope_dep_edge(2, tb, 3, tb, TSCOPE_HAZARD_MUTEX, 1, &cell[1]));
    ASSERT_EQ(tscope_dep_edge(1, ta, 3, tb, 0, 1, &cell[0]), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_dep_edge(1, ta, 3, tb, 0x10, 1, &cell[0]), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_dep_edge(1, ta, 3, tb, TSCOPE_HAZARD_RAW, 0, &cell[0]), TSCOPE_EINVAL);
    for (uint64_t t = 1; t <= 3; t++) {
        at(10 * t);
        ASSERT_OK(tscope_task_begin(t, 0));
        at(10 * t + 5);
        ASSERT_OK(tscope_task_end(t));
    }
    ASSERT_OK(tscope_flush());

    tscope_dep_edge_info_t pred[2], succ[2];
    size_t np, ns;
    ASSERT_OK(tscope_query_dep_edges(2, pred, 2, &np, succ, 2, &ns));
    ASSERT_EQ(np, 1);
    ASSERT_EQ(ns, 1);
    ASSERT_EQ(pred[0].task, 1);
    ASSERT_EQ(pred[0].hazards, TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAR);
    ASSERT_EQ(pred[0].naddrs, 3);
    ASSERT(pred[0].addr == (uint64_t)(uintptr_t)&cell[0]);
    ASSERT_EQ(pred[0].remote, 0);
    ASSERT_EQ(succ[0].task, 3);
    ASSERT_EQ(succ[0].hazards, TSCOPE_HAZARD_MUTEX);
    tscope_dep_info_t v1[2];
    ASSERT_OK(tscope_query_deps(2, v1, 2, &np, v1 + 1, 1, &ns));
    ASSERT_EQ(v1[0].kind, TSCOPE_DEP_RAW); /* version 1: the first ordering hazard */
    ASSERT_EQ(v1[1].kind, 0);              /* an exclusion orders nothing */

    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_EQ(p->ndeps, 2);
    ASSERT_EQ(p->deps[0].naddrs, 3);
    ASSERT_EQ(p->ndeptypes, 2);
    const struct tscope__pdeptype *ab = &p->deptypes[0], *bb = &p->deptypes[1];
    ASSERT_EQ(ab->count, 1); /* one edge, counted under both hazards */
    ASSERT_EQ(ab->raw, 1);
    ASSERT_EQ(ab->war, 1);
    ASSERT_EQ(ab->waw, 0);
    ASSERT_EQ(bb->count, 1);
    ASSERT_EQ(bb->mutex, 1);
    ASSERT_EQ(bb->raw + bb->war + bb->waw, 0);
    char *json = json_of(p);
    char line[256];
    snprintf(line, sizeof line,
             "{\"from\":1,\"to\":2,\"hazards\":[\"RAW\",\"WAR\"],\"addresses\":3,\"addr\":\"%p\"",
             (void *)&cell[0]);
    ASSERT(strstr(json, line) != NULL);
    ASSERT(strstr(json, "{\"from\":2,\"to\":3,\"hazards\":[\"mutex\"],\"addresses\":1,") != NULL);
    ASSERT(strstr(json, "\"count\":1,\"raw\":1,\"war\":1,\"waw\":0,\"mutex\":0,") != NULL);
    free(json);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

/* A critical path longer than profile.json keeps: 6,000 tasks in a row,
 * each depending on the one before (the path: the root's creation of the
 * first, then every task); the JSON keeps the last TSCOPE__CP_STEPS_KEPT
 * steps and counts the others in steps_cut_off. */
static void long_path_is_cut_in_json(void)
{
    harness_init();
    tscope_type_t tr = type_named("root"), tt = type_named("step");
    int cell;
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, tr, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    uint64_t t = 10;
    for (uint64_t x = 2; x < 6002; x++) {
        at(t);
        ASSERT_OK(tscope_task_create(x, 1, tt, 0, 0, 0));
        if (x > 2)
            ASSERT_OK(tscope_dep_edge(x - 1, tt, x, tt, TSCOPE_HAZARD_RAW, 1, &cell));
        ASSERT_OK(tscope_task_begin(x, 0));
        at(t + 5);
        ASSERT_OK(tscope_task_end(x));
        t += 10;
    }
    at(t);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    struct tscope__critpath cp;
    ASSERT_OK(tscope__critpath_find(p, &cp));
    ASSERT(cp.nsteps > TSCOPE__CP_STEPS_KEPT);
    uint32_t total = cp.nsteps;
    uint64_t last = cp.steps[total - 1].id;
    tscope__critpath_free(&cp);
    char *json = json_of(p);
    char want[64];
    snprintf(want, sizeof want, "\"steps_cut_off\":%u,", total - TSCOPE__CP_STEPS_KEPT);
    ASSERT(strstr(json, want) != NULL);
    const char *steps = strstr(json, "\"steps\":[");
    ASSERT(steps != NULL);
    uint32_t kept = 0;
    for (const char *q = steps; (q = strstr(q + 1, "{\"task\":")) && q < strstr(steps, "]");)
        kept++;
    ASSERT_EQ(kept, TSCOPE__CP_STEPS_KEPT);
    snprintf(want, sizeof want, "{\"task\":%llu,", (unsigned long long)last);
    ASSERT(strstr(steps, want) != NULL); /* the path's end is kept */
    free(json);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

int main(void)
{
    RUN(capped_graph_keeps_the_top);
    RUN(late_child_counts_in_kept_parent);
    RUN(drop_while_the_parent_runs);
    RUN(diamond_and_chain);
    RUN(edges_per_pair);
    RUN(long_path_is_cut_in_json);
    return 0;
}
