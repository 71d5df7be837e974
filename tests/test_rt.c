/* test_rt.c - the bundled runtime: dependency order per hazard kind (results
 * and reported edges), nested tasks and taskwait, cancellation, thread cap
 * changes while running, exact task counts, clear errors for bad use; every
 * run checked by the validator plugin (each task's event sequence). */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "golden.h"
#include "harness.h"
#include "profile/store.h"
#include "taskscope/rt.h"

struct validator_results {
    uint64_t tasks, ended, cancelled, violations;
    char first[256];
};

static char validator_path[1100];

static void start(unsigned threads)
{
    const char *b = getenv("TSCOPE_BUILD_DIR");
    snprintf(validator_path, sizeof validator_path, "%s/tests/plugins/validator.so", b ? b : ".");
    setenv("TASKSCOPE_TOOLS", validator_path, 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_rt_init(threads));
}

/* Stops runtime and taskscope; checks the validator; returns its results. */
static struct validator_results stop(void)
{
    ASSERT_OK(tscope_rt_finalize());
    ASSERT_OK(tscope_finalize());
    void *dl = dlopen(validator_path, RTLD_NOW | RTLD_NOLOAD);
    ASSERT(dl != NULL);
    struct validator_results *r = dlsym(dl, "validator_results");
    ASSERT(r != NULL);
    if (r->violations)
        TEST_FAIL("%llu event-sequence violations, first: %s", (unsigned long long)r->violations,
                  r->first);
    ASSERT_EQ(r->tasks, r->ended + r->cancelled);
    return *r;
}

static void pause_us(long us)
{
    struct timespec p = {0, us * 1000};
    nanosleep(&p, NULL);
}

static void write_2(void *a);
static void write_3(void *a);
static void fib_task(void *arg);
struct fib {
    int n;
    long result;
};
static tscope_type_t t_fib;

/* ---- golden eventlog of a deterministic run (one worker) ---------------- */

static void eventlog_one_worker(void)
{
    char log[] = "/tmp/tscope-rtlog-XXXXXX";
    int fd = mkstemp(log);
    ASSERT(fd >= 0);
    close(fd);
    const char *b = getenv("TSCOPE_BUILD_DIR");
    char lib[1200];
    snprintf(lib, sizeof lib, "%s/tools/libtaskscope-tool-eventlog.so", b ? b : ".");
    setenv("TASKSCOPE_TOOLS", lib, 1);
    setenv("TASKSCOPE_EVENTLOG", log, 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    tscope__clock_use_manual(0); /* every event at time 0 */
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_rt_init(1));
    ASSERT_OK(tscope_type_register("fib", &t_fib));
    struct fib f = {3, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_fib, 0, 0, 0, NULL, 0};
    ASSERT_OK(tscope_rt_spawn(fib_task, &f, &o, NULL));
    int v = 0;
    tscope_rt_dep_t out = {&v, TSCOPE_RT_OUT}, in = {&v, TSCOPE_RT_IN};
    o.deps = &out;
    o.ndeps = 1;
    ASSERT_OK(tscope_rt_spawn(write_2, NULL, &o, NULL));
    o.deps = &in;
    ASSERT_OK(tscope_rt_spawn(write_3, NULL, &o, NULL));
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_EQ(f.result, 2);
    ASSERT_OK(tscope_rt_finalize());
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_TOOLS");
    char *text = test_slurp(log);
    ASSERT(text != NULL);
    unlink(log);
    /* the dependency address differs per run: mask it */
    for (char *p = strstr(text, "addr=0x"); p; p = strstr(p + 1, "addr=0x"))
        for (char *q = p + 5; *q && *q != ' ' && *q != '\n'; q++)
            *q = 'X';
    test_check_golden("eventlog_rt.txt", text);
    free(text);
}

/* ---- dependencies ---------------------------------------------------- */

static int x, seen_by_reader, seen_late;

static void write_1(void *a)
{
    (void)a;
    /* the reader must still wait (10 ms: 2 ms was beaten once by a loaded TSan run) */
    pause_us(10000);
    x = 1;
}
static void read_x(void *a)
{
    (void)a;
    seen_by_reader = x;
    pause_us(10000); /* the next writer must wait for this read */
    seen_late = x;
}
static void write_2(void *a)
{
    (void)a;
    x = 2;
}
static void write_3(void *a)
{
    (void)a;
    x = 3;
}

static void dependency_order(void)
{
    start(2);
    for (int rep = 0; rep < 20; rep++) {
        x = 0;
        tscope_rt_dep_t out = {&x, TSCOPE_RT_OUT}, in = {&x, TSCOPE_RT_IN},
                        inout = {&x, TSCOPE_RT_INOUT};
        tscope_rt_spawn_opts_t o = {sizeof o, 0, 0, 0, 0, &out, 1};
        ASSERT_OK(tscope_rt_spawn(write_1, NULL, &o, NULL));
        o.deps = &in;
        ASSERT_OK(tscope_rt_spawn(read_x, NULL, &o, NULL)); /* RAW after write_1 */
        o.deps = &out;
        ASSERT_OK(tscope_rt_spawn(write_2, NULL, &o, NULL)); /* WAR after read_x */
        o.deps = &inout;
        ASSERT_OK(tscope_rt_spawn(write_3, NULL, &o, NULL)); /* RAW+WAW after write_2 */
        ASSERT_OK(tscope_rt_taskwait());
        ASSERT_EQ(seen_by_reader, 1);
        ASSERT_EQ(seen_late, 1);
        ASSERT_EQ(x, 3);
    }
    ASSERT_OK(tscope_flush());
    /* edges reported: per repetition one RAW, one WAR, one RAW+WAW, all on &x
     * (unless a predecessor had already finished when its successor was
     * spawned, which the pauses above rule out for RAW and WAR) */
    struct tscope__store *s = tscope__g.store;
    int raw = 0, war = 0, waw = 0;
    for (uint32_t i = 0; i < s->ndeps; i++) {
        ASSERT_U64_EQ(s->deps[i].addr, (uint64_t)(uintptr_t)&x);
        ASSERT_EQ(s->deps[i].naddrs, 1);
        raw += s->deps[i].kind == TSCOPE_HAZARD_RAW;
        war += s->deps[i].kind == TSCOPE_HAZARD_WAR;
        waw += s->deps[i].kind == (TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAW); /* inout reads too */
    }
    ASSERT_EQ(raw, 20);
    ASSERT_EQ(war, 20);
    ASSERT_EQ(waw, 20);
    stop();
}

/* A reader of two addresses both written by one task, one of them named
 * twice: one edge, RAW on 2 addresses, reported with the first. */
static int y2;
static void write_xy(void *a)
{
    (void)a;
    pause_us(10000); /* still running when the reader is spawned */
    x = y2 = 1;
}

static void one_edge_per_pair(void)
{
    start(2);
    tscope_rt_dep_t outs[] = {{&x, TSCOPE_RT_OUT}, {&y2, TSCOPE_RT_OUT}};
    tscope_rt_dep_t ins[] = {{&y2, TSCOPE_RT_IN}, {&x, TSCOPE_RT_IN}, {&y2, TSCOPE_RT_IN}};
    tscope_rt_spawn_opts_t o = {sizeof o, 0, 0, 0, 0, outs, 2};
    ASSERT_OK(tscope_rt_spawn(write_xy, NULL, &o, NULL));
    o.deps = ins;
    o.ndeps = 3;
    ASSERT_OK(tscope_rt_spawn(write_2, NULL, &o, NULL));
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_OK(tscope_flush());
    struct tscope__store *s = tscope__g.store;
    ASSERT_EQ(s->ndeps, 1);
    ASSERT_EQ(s->deps[0].kind, TSCOPE_HAZARD_RAW);
    ASSERT_EQ(s->deps[0].naddrs, 2);
    ASSERT_U64_EQ(s->deps[0].addr, (uint64_t)(uintptr_t)&y2);
    stop();
}

/* ---- nesting and taskwait --------------------------------------------- */

static void fib_task(void *arg)
{
    struct fib *f = arg;
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    struct fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_fib, 0, TSCOPE_TASK_SPLITTABLE, 0, NULL, 0};
    ASSERT_OK(tscope_rt_spawn(fib_task, &a, &o, NULL));
    ASSERT_OK(tscope_rt_spawn(fib_task, &b, &o, NULL));
    ASSERT_OK(tscope_rt_taskwait());
    f->result = a.result + b.result;
}

static void nested_fib(void)
{
    start(2);
    ASSERT_OK(tscope_type_register("fib", &t_fib));
    struct fib f = {18, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_fib, 0, 0, 0, NULL, 0};
    ASSERT_OK(tscope_rt_spawn(fib_task, &f, &o, NULL));
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_EQ(f.result, 2584);
    /* fib(18) spawns 2 * fib(19) - 1 = 8361 tasks */
    tscope_rt_stats_t st;
    ASSERT_OK(tscope_rt_stats(&st));
    ASSERT_EQ(st.spawned, 8361);
    ASSERT_EQ(st.completed, 8361);
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t ts;
    ASSERT_OK(tscope_query_type(t_fib, &ts));
    ASSERT_EQ(ts.calls, 8361);
    ASSERT_EQ(ts.yields, (8361 - 1) / 2); /* every inner task waited once */
    struct validator_results r = stop();
    ASSERT_EQ(r.tasks, 8361);
    ASSERT_EQ(r.ended, 8361);
}

/* ---- cancellation ------------------------------------------------------ */

static _Atomic int gate, ran_cancelled, ran_after;

static void blocker(void *a)
{
    (void)a;
    while (!atomic_load(&gate))
        pause_us(100);
}
static void must_not_run(void *a)
{
    (void)a;
    atomic_store(&ran_cancelled, 1);
}
static void after(void *a)
{
    (void)a;
    atomic_store(&ran_after, 1);
}

static void cancellation(void)
{
    start(2);
    int y;
    tscope_rt_dep_t out = {&y, TSCOPE_RT_OUT};
    tscope_rt_spawn_opts_t o = {sizeof o, 0, 0, 0, 0, &out, 1};
    tscope_rt_task_t *b, *c, *d;
    ASSERT_OK(tscope_rt_spawn(blocker, NULL, &o, &b));
    ASSERT_OK(tscope_rt_spawn(must_not_run, NULL, &o, &c)); /* waits for the blocker */
    ASSERT_OK(tscope_rt_spawn(after, NULL, &o, &d));        /* waits for c */
    ASSERT_OK(tscope_rt_cancel(c));
    ASSERT_EQ(tscope_rt_cancel(c), TSCOPE_ESTATE); /* only once */
    atomic_store(&gate, 1);
    ASSERT_EQ(tscope_rt_wait(c), TSCOPE_ECANCELED);
    ASSERT_OK(tscope_rt_wait(d));
    ASSERT_OK(tscope_rt_wait(b));
    ASSERT_EQ(atomic_load(&ran_cancelled), 0);
    ASSERT_EQ(atomic_load(&ran_after), 1);         /* dependants of a cancelled task still run */
    ASSERT_EQ(tscope_rt_cancel(d), TSCOPE_ESTATE); /* finished */
    tscope_rt_release(b);
    tscope_rt_release(c);
    tscope_rt_release(d);
    tscope_rt_stats_t st;
    ASSERT_OK(tscope_rt_stats(&st));
    ASSERT_EQ(st.cancelled, 1);
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_cancelled, 1);
    struct validator_results r = stop();
    ASSERT_EQ(r.cancelled, 1);
    ASSERT_EQ(r.ended, 2);
}

/* ---- thread cap -------------------------------------------------------- */

static _Atomic unsigned used_mask;

static void note_worker(void *a)
{
    (void)a;
    atomic_fetch_or(&used_mask, 1u << tscope_rt_worker());
    pause_us(500);
}

static void thread_cap(void)
{
    start(4);
    ASSERT_EQ(tscope_rt_threads(), 4);
    ASSERT_EQ(tscope_rt_set_thread_cap(0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_rt_set_thread_cap(5), TSCOPE_EINVAL);
    ASSERT_OK(tscope_rt_set_thread_cap(1));
    ASSERT_EQ(tscope_rt_thread_cap(), 1);
    pause_us(5000); /* let running workers reach the cap check */
    atomic_store(&used_mask, 0);
    for (int i = 0; i < 40; i++)
        ASSERT_OK(tscope_rt_spawn(note_worker, NULL, NULL, NULL));
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_EQ(atomic_load(&used_mask), 1); /* only worker 0 ran tasks */
    ASSERT_OK(tscope_rt_set_thread_cap(4));
    atomic_store(&used_mask, 0);
    for (int i = 0; i < 200; i++)
        ASSERT_OK(tscope_rt_spawn(note_worker, NULL, NULL, NULL));
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_NE(atomic_load(&used_mask) & ~1u, 0); /* other workers joined in */
    stop();
}

/* ---- parallel for ------------------------------------------------------ */

static _Atomic int touched[10000];

static void touch(size_t b, size_t e, void *arg)
{
    ASSERT(e - b <= 64);
    for (size_t i = b; i < e; i++)
        atomic_fetch_add(&touched[i], *(int *)arg);
}

static void parallel_for(void)
{
    start(2);
    tscope_type_t t;
    ASSERT_OK(tscope_type_register("pfor", &t));
    int add = 3;
    ASSERT_OK(tscope_rt_parallel_for(0, 10000, 64, touch, &add, t));
    for (int i = 0; i < 10000; i++)
        ASSERT_EQ(atomic_load(&touched[i]), 3);
    ASSERT_OK(tscope_rt_parallel_for(5, 5, 64, touch, &add, t)); /* empty */
    ASSERT_EQ(tscope_rt_parallel_for(0, 10, 0, touch, &add, t), TSCOPE_EINVAL);
    ASSERT_OK(tscope_flush());
    /* 10000 split in halves down to <= 64: 256 processable leaves (10000/2^8
     * = 39.06), 255 splittable inner items; depths 0..8 */
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(t, &st));
    ASSERT_EQ(st.calls, 511);
    int processable = 0, deepest = 0;
    for (uint64_t i = 0; i < tscope__g.store->ninst; i++) {
        const struct tscope__instance *in = &tscope__g.store->inst[i];
        if (in->type != t)
            continue;
        processable += in->flags == TSCOPE_TASK_PROCESSABLE;
        deepest = in->depth > deepest ? in->depth : deepest;
    }
    ASSERT_EQ(processable, 256);
    ASSERT_EQ(deepest, 8);
    stop();
}

/* ---- pipelines and task pools -------------------------------------------- */

struct element {
    int value;
    _Atomic int stage_done[3];
};

static void stage_add(void *e, void *arg)
{
    struct element *el = e;
    int stage = *(int *)arg;
    for (int s = 0; s < stage; s++) /* earlier stages are done */
        ASSERT_EQ(atomic_load(&el->stage_done[s]), 1);
    ASSERT_EQ(atomic_load(&el->stage_done[stage]), 0);
    el->value += stage + 1;
    atomic_store(&el->stage_done[stage], 1);
}

static void pipeline_and_pool(void)
{
    start(1);
    static int stage_index[3] = {0, 1, 2};
    tscope_type_t ty[3];
    const char *names[3] = {"pipe_a", "pipe_b", "pipe_c"};
    tscope_rt_pipeline_t *p;
    ASSERT_EQ(tscope_rt_pipeline_create(0, &p), TSCOPE_EINVAL);
    ASSERT_OK(tscope_rt_pipeline_create(4, &p));
    ASSERT_EQ(tscope_rt_pipeline_run(p, NULL, 0), TSCOPE_ESTATE); /* no stage yet */
    unsigned workers[3] = {2, 1, 2};
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(tscope_type_register(names[i], &ty[i]));
        ASSERT_OK(tscope_rt_pipeline_add_stage(p, stage_add, &stage_index[i], workers[i], ty[i]));
    }
    ASSERT_EQ(tscope_rt_pipeline_add_stage(p, stage_add, NULL, 0, ty[0]), TSCOPE_EINVAL);
    enum { N = 1000 };
    static struct element els[N];
    static void *ptrs[N];
    for (int round = 0; round < 2; round++) { /* a pipeline can run again */
        for (int i = 0; i < N; i++) {
            els[i].value = 0;
            for (int s = 0; s < 3; s++)
                atomic_store(&els[i].stage_done[s], 0);
            ptrs[i] = &els[i];
        }
        ASSERT_OK(tscope_rt_pipeline_run(p, ptrs, N));
        for (int i = 0; i < N; i++)
            ASSERT_EQ(els[i].value, 6);
    }
    tscope_rt_pipeline_destroy(p);

    tscope_rt_pipeline_t *pool; /* a task pool: one stage, three workers */
    ASSERT_OK(tscope_rt_pipeline_create(8, &pool));
    ASSERT_OK(tscope_rt_pipeline_add_stage(pool, stage_add, &stage_index[0], 3, ty[0]));
    for (int i = 0; i < N; i++) {
        els[i].value = 0;
        atomic_store(&els[i].stage_done[0], 0);
    }
    ASSERT_OK(tscope_rt_pipeline_run(pool, ptrs, 500));
    for (int i = 0; i < N; i++)
        ASSERT_EQ(els[i].value, i < 500 ? 1 : 0);
    ASSERT_OK(tscope_rt_pipeline_run(pool, ptrs + 999, 1)); /* fewer elements than workers */
    ASSERT_EQ(els[999].value, 1);
    ASSERT_EQ(els[998].value, 0);
    tscope_rt_pipeline_destroy(pool);

    ASSERT_OK(tscope_flush());
    ASSERT_EQ(type_stats(ty[0]).calls, 2 * N + 500 + 1);
    ASSERT_EQ(type_stats(ty[1]).calls, 2 * N);
    ASSERT_EQ(type_stats(ty[2]).calls, 2 * N);
    /* each run has threads of its own: at least one from each of the four
     * runs did stage-0 work, at most all 2 + 2 + 3 + 3 of them */
    ASSERT_GE(type_stats(ty[0]).threads, 4);
    ASSERT_LE(type_stats(ty[0]).threads, 2 + 2 + 3 + 3);
    stop();
}

/* ---- waits that could never end --------------------------------------- */

static int self_rc, parent_rc, cycle_rc;
static tscope_rt_task_t *self_handle, *outer_handle;

static void dependant(void *a)
{
    (void)a;
}

static void waits_wrongly(void *a)
{
    (void)a;
    self_rc = tscope_rt_wait(self_handle); /* itself */
    static int z;
    tscope_rt_dep_t out = {&z, TSCOPE_RT_OUT};
    tscope_rt_spawn_opts_t o = {sizeof o, 0, 0, 0, 0, &out, 1};
    tscope_rt_task_t *later;
    /* a sibling-to-be that depends on a task depending on us: spawn a child
     * writing z, then a task reading z; waiting for the reader from a task
     * the reader depends on would never end */
    ASSERT_OK(tscope_rt_spawn(dependant, NULL, &o, NULL));
    ASSERT_OK(tscope_rt_spawn(dependant, NULL, &o, &later));
    tscope_rt_release(later);
}

static void inner_waits_outer(void *a)
{
    (void)a;
    parent_rc = tscope_rt_wait(outer_handle); /* an ancestor */
}

static void outer(void *a)
{
    (void)a;
    ASSERT_OK(tscope_rt_spawn(inner_waits_outer, NULL, NULL, NULL));
    tscope_rt_taskwait();
}

static _Atomic int gate2;
static tscope_rt_task_t *succ_handle;

static void pred_waits_for_successor(void *a)
{
    (void)a;
    while (!atomic_load(&gate2))
        pause_us(100);
    cycle_rc = tscope_rt_wait(succ_handle);
}

static void never_ending_waits(void)
{
    start(2);
    ASSERT_OK(tscope_rt_spawn(waits_wrongly, NULL, NULL, &self_handle));
    ASSERT_OK(tscope_rt_wait(self_handle));
    ASSERT_EQ(self_rc, TSCOPE_EINVAL);
    ASSERT_OK(tscope_rt_spawn(outer, NULL, NULL, &outer_handle));
    ASSERT_OK(tscope_rt_wait(outer_handle));
    ASSERT_EQ(parent_rc, TSCOPE_EINVAL);
    /* pred writes w; succ reads w, so it waits for pred; pred then waits for succ */
    static int w;
    tscope_rt_dep_t out = {&w, TSCOPE_RT_OUT}, in = {&w, TSCOPE_RT_IN};
    tscope_rt_spawn_opts_t o = {sizeof o, 0, 0, 0, 0, &out, 1};
    tscope_rt_task_t *pred;
    ASSERT_OK(tscope_rt_spawn(pred_waits_for_successor, NULL, &o, &pred));
    o.deps = &in;
    ASSERT_OK(tscope_rt_spawn(dependant, NULL, &o, &succ_handle));
    atomic_store(&gate2, 1);
    ASSERT_OK(tscope_rt_wait(pred));
    ASSERT_EQ(cycle_rc, TSCOPE_EINVAL); /* refused at once, not a hang */
    ASSERT_OK(tscope_rt_wait(succ_handle));
    tscope_rt_release(self_handle);
    tscope_rt_release(outer_handle);
    tscope_rt_release(pred);
    tscope_rt_release(succ_handle);
    stop();
}

/* ---- priorities ----------------------------------------------------------- */

static int order[40], norder;

static void record_order(void *a)
{
    order[norder++] = (int)(intptr_t)a; /* one worker: no race */
}

static void priorities(void)
{
    start(1);
    norder = 0;
    for (int i = 0; i < 40; i++) {
        tscope_rt_spawn_opts_t o = {sizeof o, 0, i % 2 ? 5 : 0, 0, 0, NULL, 0};
        ASSERT_OK(tscope_rt_spawn(record_order, (void *)(intptr_t)i, &o, NULL));
    }
    ASSERT_OK(tscope_rt_taskwait());
    ASSERT_EQ(norder, 40);
    for (int k = 0; k < 20; k++) /* the 20 tasks with a priority ran first */
        ASSERT_EQ(order[k] % 2, 1);
    stop();
}

/* ---- bad use ----------------------------------------------------------- */

static int foreign_rc;

static void *foreign_thread(void *a)
{
    (void)a;
    foreign_rc = tscope_rt_taskwait();
    return NULL;
}

static void bad_use(void)
{
    ASSERT_EQ(tscope_rt_spawn(after, NULL, NULL, NULL), TSCOPE_ESTATE); /* not running */
    ASSERT_EQ(tscope_rt_taskwait(), TSCOPE_ESTATE);
    start(2);
    ASSERT_EQ(tscope_rt_init(2), TSCOPE_ESTATE);
    ASSERT_EQ(tscope_rt_spawn(NULL, NULL, NULL, NULL), TSCOPE_EINVAL);
    tscope_rt_spawn_opts_t o = {4, 0, 0, 0, 0, NULL, 0}; /* struct_size too small */
    ASSERT_EQ(tscope_rt_spawn(after, NULL, &o, NULL), TSCOPE_EINVAL);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, foreign_thread, NULL));
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_EQ(foreign_rc, TSCOPE_ESTATE); /* not a worker: an error, not a hang */
    ASSERT_EQ(tscope_rt_cancel(NULL), TSCOPE_EINVAL);
    stop();
}

/* Whether a thread of this process has the OS name `name`. */
static int has_thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    ASSERT(d != NULL);
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        if (f)
            fclose(f);
        found = strcmp(comm, name) == 0;
    }
    closedir(d);
    return found;
}

/* 1 once a thread is named `name`, within 2 s (taskscope's own threads name
 * themselves as they start, not on the thread that starts them). */
static int thread_named_soon(const char *name)
{
    for (int i = 0; i < 2000; i++) {
        if (has_thread_named(name))
            return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* The threads taskscope and the runtime start carry names (top -H, gdb). */
static void thread_names(void)
{
    start(2);
    ASSERT(thread_named_soon("tscope-consumer"));
    ASSERT(has_thread_named("rt-worker-1"));
    ASSERT(!has_thread_named("rt-worker-2"));
    stop();
    ASSERT(!has_thread_named("rt-worker-1")); /* joined */
}

int main(void)
{
    RUN(eventlog_one_worker); /* first: task ids start at 1 */
    RUN(dependency_order);
    RUN(one_edge_per_pair);
    RUN(nested_fib);
    RUN(cancellation);
    RUN(thread_cap);
    RUN(parallel_for);
    RUN(pipeline_and_pool);
    RUN(never_ending_waits);
    RUN(priorities);
    RUN(bad_use);
    RUN(thread_names);
    return 0;
}
