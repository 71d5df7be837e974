/* test_cpu_time.c - each task's CPU time (TASKSCOPE_CPU_TIME, shard.c's
 * cpu_switch), with the real clocks:
 * - a type whose tasks spin and one whose tasks sleep for the same wall
 *   time: the spinning type's CPU time is (nearly) its self time, the
 *   sleeping type's far below it;
 * - a task that yields on one thread and is resumed on another (an untied
 *   task that moved): its CPU time is the sum of both segments';
 * - a task with a child nested on its thread: the child's CPU time is not
 *   in its parent's (self CPU time, as self time), nor is that of a child
 *   cancelled while it ran;
 * - the outputs: profile.json's "cpu_time" and "cpu_ns", types.csv's cpu
 *   columns, `taskscope report`'s cpu column (the reader) - and without
 *   the variable none of them. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/profile.h"
#include "taskscope/taskscope.h"
#include "test.h"

#define MS 1000000ull

static uint64_t clock_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The test's own readings of a spinning type's segments, from before the
 * event that opens one to after the event that closes it: their wall time
 * and their thread's CPU time.  On a loaded machine a spinning thread waits
 * for a core now and then: its CPU time is then less than its wall time,
 * for taskscope as for the test. */
struct own {
    uint64_t wall, cpu, w0, c0;
};

static void own_open(struct own *o)
{
    o->w0 = clock_ns(CLOCK_MONOTONIC);
    o->c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void own_close(struct own *o) /* one thread at a time: the other waits in pthread_join */
{
    o->cpu += clock_ns(CLOCK_THREAD_CPUTIME_ID) - o->c0;
    o->wall += clock_ns(CLOCK_MONOTONIC) - o->w0;
}

static void spin(uint64_t ns)
{
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
    while (clock_ns(CLOCK_MONOTONIC) - w0 < ns) {
    }
}

static struct own own_spinning, own_moved, own_inner;

static void pause_for(uint64_t ns)
{
    struct timespec t = {0, (long)ns};
    while (nanosleep(&t, &t) != 0) {
    }
}

static void *resume_elsewhere(void *arg)
{
    (void)arg;
    own_open(&own_moved);
    ASSERT_OK(tscope_task_resume(100));
    spin(15 * MS);
    ASSERT_OK(tscope_task_end(100));
    own_close(&own_moved);
    return NULL;
}

static const struct tscope__ptype *type_of(const struct tscope__profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (strcmp(p->types[i].name, name) == 0)
            return &p->types[i];
    TEST_FAIL("no type %s in the profile", name);
    return NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        TEST_FAIL("cannot open %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* A spinning type's CPU time: what the test's own readings of its segments
 * say (to 10% and 1 ms: taskscope's part and the clocks' steps), and at
 * least 80% of its self time when those readings say its threads had a
 * core (on a loaded machine, 85% of the share they say). */
static void spins_on_cpu(const struct tscope__ptype *t, const struct own *o)
{
    if (fabs(t->cpu.sum - (double)o->cpu) > 0.1 * (double)o->cpu + 1.0 * MS)
        TEST_FAIL("%s: CPU time %.3f ms, the test's own reading %.3f ms", t->name, t->cpu.sum / 1e6,
                  (double)o->cpu / 1e6);
    double own = o->wall ? (double)o->cpu / (double)o->wall : 0;
    double want = own >= 0.9 ? 0.8 : 0.85 * own;
    double got = t->self.sum > 0 ? t->cpu.sum / t->self.sum : 0;
    if (got < want)
        TEST_FAIL("%s: CPU time %.3f ms is %.1f%% of self time %.3f ms (expected >= %.0f%%; "
                  "the test's own readings %.1f%%)",
                  t->name, t->cpu.sum / 1e6, 100 * got, t->self.sum / 1e6, 100 * want, 100 * own);
    ASSERT(t->cpu.sum <= t->self.sum * 1.05 + 0.5 * MS); /* never more than it ran */
}

static void one_run(int cpu_time, const char *dir)
{
    own_spinning = own_moved = own_inner = (struct own){0, 0, 0, 0};
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_OUTPUTS", "json,csv", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_QUIET", "1", 1);
    if (cpu_time)
        setenv("TASKSCOPE_CPU_TIME", "1", 1);
    else
        unsetenv("TASKSCOPE_CPU_TIME");
    ASSERT_OK(tscope_init(0, 1));
    tscope_type_t spinning, sleeping, moved, outer, inner;
    ASSERT_OK(tscope_type_register("spinning", &spinning));
    ASSERT_OK(tscope_type_register("sleeping", &sleeping));
    ASSERT_OK(tscope_type_register("moved", &moved));
    ASSERT_OK(tscope_type_register("outer", &outer));
    ASSERT_OK(tscope_type_register("inner", &inner));
    tscope_type_t waits, dropped;
    ASSERT_OK(tscope_type_register("waits", &waits));
    ASSERT_OK(tscope_type_register("dropped", &dropped));
    uint64_t id = 1;
    for (int i = 0; i < 4; i++) {
        own_open(&own_spinning);
        ASSERT_OK(tscope_task_start(id, spinning));
        spin(15 * MS);
        ASSERT_OK(tscope_task_end(id++));
        own_close(&own_spinning);
        ASSERT_OK(tscope_task_start(id, sleeping));
        pause_for(15 * MS);
        ASSERT_OK(tscope_task_end(id++));
    }
    /* outer sleeps 10 ms around a child that spins 10 ms on its thread */
    ASSERT_OK(tscope_task_start(50, outer));
    pause_for(5 * MS);
    own_open(&own_inner);
    ASSERT_OK(tscope_task_start(51, inner));
    spin(10 * MS);
    ASSERT_OK(tscope_task_end(51));
    own_close(&own_inner);
    pause_for(5 * MS);
    ASSERT_OK(tscope_task_end(50));
    /* waits sleeps 10 ms around a child that spins 10 ms and is cancelled */
    ASSERT_OK(tscope_task_start(60, waits));
    pause_for(5 * MS);
    ASSERT_OK(tscope_task_create(61, 60, dropped, 0, 1, 0));
    ASSERT_OK(tscope_task_begin(61, 0));
    spin(10 * MS);
    ASSERT_OK(tscope_task_cancel(61));
    pause_for(5 * MS);
    ASSERT_OK(tscope_task_end(60));
    /* 15 ms here, yield, 15 ms on another thread */
    ASSERT_OK(tscope_task_create(100, 0, moved, 0, 0, 0));
    own_open(&own_moved);
    ASSERT_OK(tscope_task_begin(100, 0));
    spin(15 * MS);
    ASSERT_OK(tscope_task_yield(100));
    own_close(&own_moved);
    pthread_t th;
    ASSERT(pthread_create(&th, NULL, resume_elsewhere, NULL) == 0);
    ASSERT(pthread_join(th, NULL) == 0);

    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_EQ(p->cpu_time, cpu_time);
    const struct tscope__ptype *sp = type_of(p, "spinning"), *sl = type_of(p, "sleeping"),
                               *mv = type_of(p, "moved"), *ou = type_of(p, "outer"),
                               *in = type_of(p, "inner");
    ASSERT_EQ(sp->calls, 4);
    ASSERT_EQ(sl->calls, 4);
    ASSERT_EQ(mv->calls, 1);
    ASSERT(sl->self.sum >= 4 * 15 * MS);
    if (cpu_time) {
        ASSERT_EQ(sp->cpu.count, 4);
        ASSERT_EQ(sl->cpu.count, 4);
        ASSERT_EQ(mv->cpu.count, 1);
        spins_on_cpu(sp, &own_spinning);
        ASSERT(sp->cpu.min > 0 && sp->cpu.min <= sp->cpu.mean && sp->cpu.mean <= sp->cpu.max);
        ASSERT(sl->cpu.sum < 0.2 * sl->self.sum);
        /* both segments: one alone is half of it */
        ASSERT(mv->self.sum >= 30 * MS);
        spins_on_cpu(mv, &own_moved);
        /* the child's CPU time is its own, not its parent's */
        spins_on_cpu(in, &own_inner);
        ASSERT(ou->self.sum >= 10 * MS);
        ASSERT(ou->cpu.sum < 0.2 * ou->self.sum);
        const struct tscope__ptype *wa = type_of(p, "waits");
        ASSERT_EQ(wa->calls, 1);
        ASSERT_EQ(type_of(p, "dropped")->cancelled, 1);
        ASSERT(wa->self.sum >= 10 * MS);
        if (wa->cpu.sum >= 0.2 * wa->self.sum)
            TEST_FAIL("waits: CPU time %.3f ms of self time %.3f ms (its cancelled child's?)",
                      wa->cpu.sum / 1e6, wa->self.sum / 1e6);
    } else {
        ASSERT_EQ(sp->cpu.count, 0);
        ASSERT(sp->cpu.sum == 0);
    }
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());

    char path[1200];
    snprintf(path, sizeof path, "%s/profile.json", dir);
    const char *json = slurp(path);
    ASSERT_EQ(strstr(json, "\"cpu_time\":true") != NULL, cpu_time);
    ASSERT_EQ(strstr(json, "\"cpu_ns\":{") != NULL, cpu_time);
    snprintf(path, sizeof path, "%s/types.csv", dir);
    const char *csv = slurp(path);
    ASSERT_EQ(strstr(csv, ",cpu_sum_ns,cpu_min_ns,cpu_max_ns,cpu_mean_ns,cpu_stddev_ns\n") != NULL,
              cpu_time);
    /* taskscope report reads it back: the column only with it */
    const char *build = getenv("TSCOPE_BUILD_DIR");
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "%s/taskscope report %s/profile.json > %s/report.txt 2>&1",
             build ? build : ".", dir, dir);
    ASSERT(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/report.txt", dir);
    const char *report = slurp(path);
    ASSERT_EQ(strstr(report, "cpu total ms") != NULL, cpu_time);
    ASSERT_EQ(strstr(report, "cpu/self") != NULL, cpu_time);
    if (cpu_time) { /* the spinning row: its CPU time as profile.json says it */
        const char *row = strstr(report, "\nspinning ");
        ASSERT(row != NULL);
        ASSERT(strstr(row, "%") != NULL);
    }
}

int main(void)
{
    char tmpl[] = "/tmp/tscope_cpu_XXXXXX";
    char *tmp = mkdtemp(tmpl);
    ASSERT(tmp != NULL);
    char on[1100], off[1100], cmd[2300];
    snprintf(on, sizeof on, "%s/on", tmp);
    snprintf(off, sizeof off, "%s/off", tmp);
    one_run(1, on);
    one_run(0, off);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ASSERT(system(cmd) == 0);
    printf("test_cpu_time: ok\n");
    return 0;
}
