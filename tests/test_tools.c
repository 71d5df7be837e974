/* test_tools.c - the tools interface: two plugins at once (one synchronous,
 * one batched) receive exactly the events produced, in load order, also
 * from handle tasks that their threads aggregate (shadow records); a missing
 * file, another ABI version, a wrong declared version and a failing init each
 * give one warning line and the program runs on; golden eventlog output
 * (from a fresh process: the ids it shows depend on what ran before);
 * a NULL plugin handle is rejected by every function that takes one. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "golden.h"
#include "harness.h"
#include "taskscope/tool.h"
#include "tool/tools.h"

struct counting_results {
    _Atomic uint64_t count[TSCOPE_TOOL_EVENT_COUNT];
    _Atomic uint64_t on_producer;
    _Atomic int finalized;
    uint64_t last_time_ns;
    _Atomic uintptr_t dep_addr_sum;
};

static const char *build_dir(void)
{
    const char *b = getenv("TSCOPE_BUILD_DIR");
    return b ? b : ".";
}

static char *plugin(const char *name)
{
    static char paths[8][1024];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 1024, "%s/tests/plugins/%s.so", build_dir(), name);
    return p;
}

static struct counting_results *results_of(const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!dl)
        TEST_FAIL("%s was not loaded by taskscope", path);
    struct counting_results *r = dlsym(dl, "counting_results");
    ASSERT(r != NULL);
    return r;
}

/* The file's text, "" if it cannot be read (free it). */
static char *slurp(const char *path)
{
    char *t = test_slurp(path);
    return t ? t : strdup("");
}

static tscope_type_t t_work;
static int use_handles; /* the task events on handles (taskscope.h, _h) */

/* A leaf task, by id or on a handle. */
static void leaf(uint64_t id)
{
    if (use_handles) {
        tscope_task_t *h = tscope_task_start_h(id, t_work);
        ASSERT(h != NULL);
        ASSERT_OK(tscope_task_end_h(h));
    } else {
        ASSERT_OK(tscope_task_start(id, t_work));
        ASSERT_OK(tscope_task_end(id));
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < 5; i++)
        leaf(900 + i);
    return NULL;
}

/* A fixed mix of every event kind; returns nothing, the counts are known. */
static int dep_target; /* the address every dependency event names */

static void produce_events(void)
{
    t_work = type_named("tool_work");
    tscope_counter_t c;
    ASSERT_OK(tscope_counter_register("tool_counter", &c));
    tscope_event_t e;
    ASSERT_OK(tscope_event_register("tool_event", &e));
    for (uint64_t i = 1; i <= 10; i++) { /* 10 creates, begins, ends */
        at(i * 10);
        leaf(i);
    }
    for (uint64_t i = 11; i <= 15; i++) { /* 5 creates, queued, begins, yields, resumes, ends */
        if (use_handles) {
            tscope_task_t *h = tscope_task_create_h(i, NULL, t_work, TSCOPE_TASK_SPLITTABLE, 1, 2);
            ASSERT(h != NULL);
            ASSERT_OK(tscope_task_queued_h(h));
            ASSERT_OK(tscope_task_begin_h(h));
            ASSERT_OK(tscope_task_yield_h(h));
            ASSERT_OK(tscope_task_resume_h(h));
            ASSERT_OK(tscope_task_end_h(h));
            continue;
        }
        ASSERT_OK(tscope_task_create(i, 0, t_work, TSCOPE_TASK_SPLITTABLE, 1, 2));
        ASSERT_OK(tscope_task_queued(i));
        ASSERT_OK(tscope_task_begin(i, 0));
        ASSERT_OK(tscope_task_yield(i));
        ASSERT_OK(tscope_task_resume(i));
        ASSERT_OK(tscope_task_end(i));
    }
    int *x = &dep_target;
    ASSERT_OK(tscope_dep_local(11, 12, x, TSCOPE_DEP_RAW));
    ASSERT_OK(tscope_dep_local(12, 13, x, TSCOPE_DEP_WAR));
    ASSERT_OK(tscope_dep_local(13, 14, x, TSCOPE_DEP_WAW));
    ASSERT_OK(tscope_dep_remote(14, 0, 15, 1, x, TSCOPE_DEP_OUT));
    for (int i = 0; i < 4; i++)
        ASSERT_OK(tscope_counter_sample(c, i * 0.5));
    ASSERT_OK(tscope_custom_event(e, 7));
    ASSERT_OK(tscope_custom_event(e, 8));
    pthread_t th; /* 5 more start/end on another thread: thread_begin/end */
    ASSERT_OK(pthread_create(&th, NULL, worker, NULL));
    ASSERT_OK(pthread_join(th, NULL));
}

static void check_counts(struct counting_results *r)
{
    const uint64_t want[TSCOPE_TOOL_EVENT_COUNT] = {
        [TSCOPE_TOOL_EVENT_INIT] = 1,         [TSCOPE_TOOL_EVENT_FINALIZE] = 1,
        [TSCOPE_TOOL_EVENT_THREAD_BEGIN] = 2, [TSCOPE_TOOL_EVENT_THREAD_END] = 1,
        [TSCOPE_TOOL_EVENT_TASK_CREATE] = 20, [TSCOPE_TOOL_EVENT_TASK_QUEUED] = 5,
        [TSCOPE_TOOL_EVENT_TASK_BEGIN] = 20,  [TSCOPE_TOOL_EVENT_TASK_END] = 20,
        [TSCOPE_TOOL_EVENT_TASK_CANCEL] = 0,  [TSCOPE_TOOL_EVENT_TASK_YIELD] = 5,
        [TSCOPE_TOOL_EVENT_TASK_RESUME] = 5,  [TSCOPE_TOOL_EVENT_DEP_LOCAL] = 3,
        [TSCOPE_TOOL_EVENT_DEP_REMOTE] = 1,   [TSCOPE_TOOL_EVENT_COUNTER] = 4,
        [TSCOPE_TOOL_EVENT_CUSTOM] = 2,       [TSCOPE_TOOL_EVENT_DEP_EDGE] = 3,
    };
    for (int ev = 0; ev < TSCOPE_TOOL_EVENT_COUNT; ev++)
        if (atomic_load(&r->count[ev]) != want[ev])
            TEST_FAIL("event %d: %llu deliveries, expected %llu", ev,
                      (unsigned long long)atomic_load(&r->count[ev]), (unsigned long long)want[ev]);
    ASSERT_EQ(atomic_load(&r->finalized), 1);
    ASSERT(atomic_load(&r->dep_addr_sum) == 4 * (uintptr_t)&dep_target); /* the addresses too */
}

static void two_plugins_sync_and_batched(void)
{
    char order[] = "/tmp/tscope-order-XXXXXX";
    int fd = mkstemp(order);
    ASSERT(fd >= 0);
    close(fd);
    char list[2100];
    snprintf(list, sizeof list, "%s:%s", plugin("counting_a"), plugin("counting_b"));
    setenv("TASKSCOPE_TOOLS", list, 1);
    setenv("counting_a_DELIVERY", "sync", 1);
    setenv("counting_b_DELIVERY", "batched", 1);
    setenv("COUNTING_ORDER_FILE", order, 1);
    harness_init();
    ASSERT(tscope__g.cfg.aggregate == TSCOPE__AGG_THREAD);
    produce_events();
    ASSERT_OK(tscope_flush()); /* batched delivery happens on the consumer thread now */
    ASSERT_OK(tscope_finalize());
    struct counting_results *a = results_of(plugin("counting_a"));
    struct counting_results *b = results_of(plugin("counting_b"));
    check_counts(a);
    check_counts(b);
    /* sync: every task/dep/counter/custom event ran on the thread that
     * produced it (88: each local edge as dep_edge and dep_local), and so did
     * finalize and the worker's thread_end (2);
     * batched: none of them did (they ran on the consumer) */
    ASSERT_EQ(atomic_load(&a->on_producer), 90);
    ASSERT_EQ(atomic_load(&b->on_producer), 2);
    char *o = slurp(order);
    ASSERT_STR_EQ(o, "counting_a init\ncounting_b init\n");
    free(o);
    unlink(order);
    /* the built-in profiler saw the same events */
    ASSERT_EQ(type_stats(t_work).calls, 20);
    unsetenv("TASKSCOPE_TOOLS");
    unsetenv("COUNTING_ORDER_FILE");
}

/* The same with handle tasks on threads that aggregate them: each event
 * reaches the tools once, sync on the thread, batched through the ring. */
static void two_plugins_on_handles(void)
{
    use_handles = 1;
    two_plugins_sync_and_batched();
    use_handles = 0;
}

/* TASKSCOPE_PROFILER=0: the tools get every event, the profiler nothing. */
static void tools_without_profiler(void)
{
    const char *modes[2] = {"sync", "batched"};
    for (int m = 0; m < 2; m++) {
        setenv("TASKSCOPE_TOOLS", plugin("counting_a"), 1);
        setenv("counting_a_DELIVERY", modes[m], 1);
        setenv("TASKSCOPE_PROFILER", "0", 1);
        harness_init();
        produce_events();
        ASSERT_OK(tscope_finalize());
        check_counts(results_of(plugin("counting_a")));
        tscope_totals_t tot;
        ASSERT_OK(tscope_query_totals(&tot));
        ASSERT_EQ(tot.events, 0);
        ASSERT_EQ(type_stats(t_work).calls, 0);
        unsetenv("TASKSCOPE_PROFILER");
        unsetenv("TASKSCOPE_TOOLS");
    }
}

static void bad_plugins_warn_and_run_on(void)
{
    char list[8000];
    snprintf(list, sizeof list, "%s:%s:%s:%s:%s", plugin("no_such_plugin"), plugin("bad_abi"),
             plugin("wrong_version"), plugin("failing_init"), plugin("counting_a"));
    setenv("TASKSCOPE_TOOLS", list, 1);
    setenv("counting_a_DELIVERY", "batched", 1);
    char errpath[] = "/tmp/tscope-stderr-XXXXXX";
    int fd = mkstemp(errpath);
    ASSERT(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    harness_init();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    produce_events(); /* wrong_version and failing_init would abort if called */
    ASSERT_OK(tscope_finalize());
    check_counts(results_of(plugin("counting_a")));
    char *err = slurp(errpath);
    unlink(errpath);
    int lines = 0;
    for (char *p = err; *p; p++)
        lines += *p == '\n';
    if (lines != 4)
        TEST_FAIL("expected 4 warning lines, got:\n%s", err);
    ASSERT(strstr(err, "cannot load tool '") && strstr(err, "no_such_plugin.so"));
    ASSERT(strstr(err, "bad_abi.so was built for another tools interface (tscope_tool_init_v2), "
                       "this taskscope loads tscope_tool_init_v1 of ABI versions 1 to 2; running "
                       "without it"));
    ASSERT(strstr(err, "wrong_version.so: it declares tools ABI version 99"));
    ASSERT(strstr(err, "failing_init.so: its init returned -7 (input/output error)"));
    free(err);
    unsetenv("TASKSCOPE_TOOLS");
}

static char *eventlog_run(const char *delivery)
{
    char path[] = "/tmp/tscope-eventlog-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    char lib[1100];
    snprintf(lib, sizeof lib, "%s/tools/libtaskscope-tool-eventlog.so", build_dir());
    setenv("TASKSCOPE_TOOLS", lib, 1);
    setenv("TASKSCOPE_EVENTLOG", path, 1);
    setenv("TASKSCOPE_EVENTLOG_DELIVERY", delivery, 1);
    harness_init();
    tscope_type_t t = type_named("logged");
    tscope_counter_t c;
    ASSERT_OK(tscope_counter_register("logged_counter", &c));
    at(5);
    ASSERT_OK(tscope_task_create(1, 0, t, TSCOPE_TASK_SPLITTABLE, 0, 3));
    ASSERT_OK(tscope_task_queued(1));
    at(10);
    ASSERT_OK(tscope_task_begin(1, 0));
    at(12);
    ASSERT_OK(tscope_task_start(2, t));
    ASSERT_OK(tscope_counter_sample(c, 2.5));
    at(20);
    ASSERT_OK(tscope_task_end(2));
    ASSERT_OK(tscope_task_yield(1));
    ASSERT_OK(tscope_dep_local(2, 1, NULL, TSCOPE_DEP_RAW));
    at(30);
    ASSERT_OK(tscope_task_resume(1));
    ASSERT_OK(tscope_task_cancel(1));
    at(40);
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_TOOLS");
    char *text = slurp(path);
    unlink(path);
    return text;
}

/* The eventlog names type and counter ids, which the process-wide
 * registries hand out in registration order (and keep over init and
 * finalize): what ran before in this process would shift them.  So the run
 * for the golden file is this program again, started fresh with the single
 * argument "eventlog_golden_fresh" (which may also be given by hand). */
static void eventlog_golden_fresh(void)
{
    char *batched = eventlog_run("batched");
    char *sync = eventlog_run("sync");
    ASSERT_STR_EQ(batched, sync); /* one thread: same order either way */
    test_check_golden("eventlog.txt", batched);
    free(batched);
    free(sync);
}

static void eventlog_golden(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT(n > 0);
    self[n] = 0;
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        execl(self, self, "eventlog_golden_fresh", (char *)NULL);
        _exit(127);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        TEST_FAIL("%s eventlog_golden_fresh: %s %d", self,
                  WIFEXITED(status) ? "exit status" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static _Atomic int null_test_calls;

static void null_test_begin(const tscope_tool_ctx_t *ctx, uint64_t task, tscope_type_t type)
{
    (void)ctx;
    (void)task;
    (void)type;
    atomic_fetch_add(&null_test_calls, 1);
}

/* api->set_callback (tscope__tools_set_callback) answers TSCOPE_EINVAL for
 * a NULL handle in either delivery and registers nothing (a NULL entry
 * would be dereferenced at the next delivery); the internal functions that
 * take a handle ignore NULL: forget(NULL) keeps the other plugins'
 * callbacks, lifecycle(NULL) calls nothing. */
static void null_handle_is_rejected(void)
{
    tscope__tools_reset();
    tscope_tool_callback_t cb = (tscope_tool_callback_t)null_test_begin;
    for (int ev = 0; ev < TSCOPE_TOOL_EVENT_COUNT; ev++) {
        ASSERT_EQ(tscope__tools_set_callback(NULL, (tscope_tool_event_t)ev, cb, TSCOPE_TOOL_SYNC),
                  TSCOPE_EINVAL);
        ASSERT_EQ(
            tscope__tools_set_callback(NULL, (tscope_tool_event_t)ev, cb, TSCOPE_TOOL_BATCHED),
            TSCOPE_EINVAL);
    }
    ASSERT_EQ(tscope__tools_sync_mask, 0);
    ASSERT_EQ(tscope__tools_batched_mask, 0);

    static tscope_tool_handle_t h; /* a plugin's handle, as load.c fills it */
    memset(&h, 0, sizeof h);
    h.reg.struct_size = sizeof h.reg;
    ASSERT_EQ(tscope__tools_set_callback(&h, TSCOPE_TOOL_EVENT_TASK_BEGIN, cb, TSCOPE_TOOL_SYNC),
              TSCOPE_TOOL_ALWAYS);
    ASSERT_EQ(tscope__tools_set_callback(NULL, TSCOPE_TOOL_EVENT_TASK_BEGIN, cb, TSCOPE_TOOL_SYNC),
              TSCOPE_EINVAL);
    uint32_t begin_bit = 1u << TSCOPE_TOOL_EVENT_TASK_BEGIN;
    ASSERT_EQ(tscope__tools_sync_mask, begin_bit);
    tscope__tools_forget(NULL);
    ASSERT_EQ(tscope__tools_sync_mask, begin_bit);
    tscope__tools_lifecycle(NULL, 1, NULL, 0);
    tscope__tools_lifecycle(NULL, 0, NULL, 0);
    /* the one registered callback is delivered exactly once per begin */
    struct tscope__rec rec;
    memset(&rec, 0, sizeof rec);
    rec.kind = TSCOPE__REC_BEGIN;
    rec.id = 5;
    tscope__tools_deliver(TSCOPE_TOOL_SYNC, 0, &rec, NULL);
    ASSERT_EQ(atomic_load(&null_test_calls), 1);
    tscope__tools_forget(&h);
    ASSERT_EQ(tscope__tools_sync_mask, 0);
    tscope__tools_reset();
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "eventlog_golden_fresh") == 0) {
        RUN(eventlog_golden_fresh);
        return 0;
    }
    if (argc > 1)
        TEST_FAIL("usage: %s [eventlog_golden_fresh]", argv[0]);
    RUN(null_handle_is_rejected);
    RUN(two_plugins_sync_and_batched);
    RUN(two_plugins_on_handles);
    RUN(tools_without_profiler);
    RUN(bad_plugins_warn_and_run_on);
    RUN(eventlog_golden);
    return 0;
}
