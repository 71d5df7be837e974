/* trace_log.h - the fixed event log of the trace tests (manual clock, two
 * threads): every record kind, a yield, a leaf, a dependency, a counter and
 * a custom event.  trace_fixed_log(PART) writes it to
 * $TSCOPE_TEST_TMP/PART/trace.tsct (default /tmp) and leaves the path of the
 * folder in trace_dir.
 *
 * main:     create 1 (root), begin 1 @0; create 2, 3 (child) @10, dep 2 -> 3
 *           RAW @10; counter queue 2.5, event mark 7 @12; leaf 4 @15-18;
 *           yield 1 @20; resume 1 @41; end 1 @50
 * worker-b: task 2 @21-30, task 3 @31-40
 *
 * trace_fixed_log_h(PART) writes the same log with the task events on
 * handles (taskscope.h, tscope_task_*_h), on threads that aggregate their
 * own tasks: the trace must come out the same.
 *
 * trace_runtime_log(PART, &fib, &dep) writes a real run the same way: the
 * bundled runtime on two workers, fib(15) (tasks that wait for their
 * children) and 40 tasks with dependencies over 4 cells (RAW, WAR, WAW
 * between workers), on the real clock; the types' statistics come back.
 */
#ifndef TSCOPE_TESTS_TRACE_LOG_H
#define TSCOPE_TESTS_TRACE_LOG_H

#include <pthread.h>

#include "core/core.h"
#include "harness.h"
#include "taskscope/rt.h"

static char trace_dir[256];

/* A fresh output folder for one part of the test. */
static inline const char *outdir(const char *part)
{
    snprintf(trace_dir, sizeof trace_dir, "%s/%s",
             getenv("TSCOPE_TEST_TMP") ? getenv("TSCOPE_TEST_TMP") : "/tmp", part);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", trace_dir);
    ASSERT_EQ(system(cmd), 0);
    setenv("TASKSCOPE_OUTPUT_DIR", trace_dir, 1);
    return trace_dir;
}

static inline void trace_env(const char *value)
{
    setenv("TASKSCOPE_TRACE", value, 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1); /* no sampler counters in the log */
}

/* ---- the fixed log ---- */

struct expect {
    int kind;
    uint64_t id, arg, t;
    uint16_t type;
};

static uint16_t t_root, t_child, t_leaf;
static tscope_counter_t c_queue;
static tscope_event_t e_mark;
static int marker;

static inline void *worker_b(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("worker-b"));
    at(21);
    ASSERT_OK(tscope_task_begin(2, 0));
    at(30);
    ASSERT_OK(tscope_task_end(2));
    at(31);
    ASSERT_OK(tscope_task_begin(3, 0));
    at(40);
    ASSERT_OK(tscope_task_end(3));
    return NULL;
}

static tscope_task_t *h_task[5]; /* the handle variant's tasks 1..4 */

static inline void *worker_b_h(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("worker-b"));
    at(21);
    ASSERT_OK(tscope_task_begin_h(h_task[2]));
    at(30);
    ASSERT_OK(tscope_task_end_h(h_task[2]));
    at(31);
    ASSERT_OK(tscope_task_begin_h(h_task[3]));
    at(40);
    ASSERT_OK(tscope_task_end_h(h_task[3]));
    return NULL;
}

static inline void trace_fixed_log_as(const char *part, int handles)
{
    outdir(part);
    trace_env("1");
    setenv("TASKSCOPE_OUTPUTS", "json", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    tscope__clock_use_manual(1000);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_EQ(tscope__g.cfg.aggregate, TSCOPE__AGG_THREAD);
    t_root = (uint16_t)type_named("root");
    t_child = (uint16_t)type_named("child \"quoted\"");
    t_leaf = (uint16_t)type_named("leaf");
    ASSERT_OK(tscope_counter_register("queue", &c_queue));
    ASSERT_OK(tscope_event_register("mark", &e_mark));
    at(0);
    if (handles) {
        ASSERT((h_task[1] = tscope_task_create_h(1, NULL, t_root, 0, 0, 0)) != NULL);
        ASSERT_OK(tscope_task_begin_h(h_task[1]));
    } else {
        ASSERT_OK(tscope_task_create(1, 0, t_root, 0, 0, 0));
        ASSERT_OK(tscope_task_begin(1, 0));
    }
    at(10);
    if (handles) {
        ASSERT((h_task[2] = tscope_task_create_h(2, h_task[1], t_child, 0, 1, 3)) != NULL);
        ASSERT((h_task[3] = tscope_task_create_h(3, h_task[1], t_child, 0, 1, -2)) != NULL);
    } else {
        ASSERT_OK(tscope_task_create(2, 1, t_child, 0, 1, 3));
        ASSERT_OK(tscope_task_create(3, 1, t_child, 0, 1, -2));
    }
    ASSERT_OK(tscope_dep_local(2, 3, &marker, TSCOPE_DEP_RAW));
    at(12);
    ASSERT_OK(tscope_counter_sample(c_queue, 2.5));
    ASSERT_OK(tscope_custom_event(e_mark, 7));
    at(15);
    if (handles) {
        ASSERT((h_task[4] = tscope_task_start_h(4, t_leaf)) != NULL);
        at(18);
        ASSERT_OK(tscope_task_end_h(h_task[4]));
        at(20);
        ASSERT_OK(tscope_task_yield_h(h_task[1]));
    } else {
        ASSERT_OK(tscope_task_start(4, t_leaf));
        at(18);
        ASSERT_OK(tscope_task_end(4));
        at(20);
        ASSERT_OK(tscope_task_yield(1));
    }
    /* the flushes fix the order of the threads' chunks in the file (main,
     * worker-b, main), which the consumer's rounds would otherwise decide */
    ASSERT_OK(tscope_flush());
    pthread_t b;
    ASSERT_EQ(pthread_create(&b, NULL, handles ? worker_b_h : worker_b, NULL), 0);
    ASSERT_EQ(pthread_join(b, NULL), 0);
    ASSERT_OK(tscope_flush());
    at(41);
    if (handles) {
        ASSERT_OK(tscope_task_resume_h(h_task[1]));
        at(50);
        ASSERT_OK(tscope_task_end_h(h_task[1]));
    } else {
        ASSERT_OK(tscope_task_resume(1));
        at(50);
        ASSERT_OK(tscope_task_end(1));
    }
    ASSERT_OK(tscope_finalize());
}

static inline void trace_fixed_log(const char *part)
{
    trace_fixed_log_as(part, 0);
}

static inline void trace_fixed_log_h(const char *part)
{
    trace_fixed_log_as(part, 1);
}

static tscope_type_t trace_t_fib, trace_t_dep;
static int trace_cells[4];

static inline void trace_fib_task(void *arg)
{
    intptr_t n = (intptr_t)arg;
    if (n < 2)
        return;
    tscope_rt_spawn_opts_t o = {.struct_size = sizeof o, .type = trace_t_fib};
    ASSERT_OK(tscope_rt_spawn(trace_fib_task, (void *)(n - 1), &o, NULL));
    ASSERT_OK(tscope_rt_spawn(trace_fib_task, (void *)(n - 2), &o, NULL));
    ASSERT_OK(tscope_rt_taskwait());
}

static inline void trace_dep_task(void *arg)
{
    (void)arg;
}

static inline void trace_runtime_log(const char *part, tscope_type_stats_t *fib,
                                     tscope_type_stats_t *dep)
{
    outdir(part);
    trace_env("1");
    setenv("TASKSCOPE_OUTPUTS", "json", 1);
    tscope__clock_use_real(); /* after a manual clock */
    ASSERT_OK(tscope_init(0, 1));
    ASSERT(strcmp(tscope__clock_name(), "manual") != 0);
    trace_t_fib = type_named("fib");
    trace_t_dep = type_named("dep");
    ASSERT_OK(tscope_rt_init(2));
    tscope_rt_spawn_opts_t o = {.struct_size = sizeof o, .type = trace_t_fib};
    ASSERT_OK(tscope_rt_spawn(trace_fib_task, (void *)(intptr_t)15, &o, NULL));
    for (int i = 0; i < 40; i++) {
        tscope_rt_dep_t d[2] = {{&trace_cells[i % 4], TSCOPE_RT_INOUT},
                                {&trace_cells[(i + 1) % 4], TSCOPE_RT_IN}};
        tscope_rt_spawn_opts_t od = {
            .struct_size = sizeof od, .type = trace_t_dep, .deps = d, .ndeps = 2};
        ASSERT_OK(tscope_rt_spawn(trace_dep_task, NULL, &od, NULL));
    }
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_OK(tscope_rt_finalize());
    ASSERT_OK(tscope_flush());
    *fib = type_stats(trace_t_fib);
    *dep = type_stats(trace_t_dep);
    ASSERT_OK(tscope_finalize());
    ASSERT_GT(fib->calls, 1000);
    ASSERT_EQ(dep->calls, 40);
}

#endif
