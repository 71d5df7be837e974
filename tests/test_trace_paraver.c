/* test_trace_paraver.c - the Paraver writer (src/trace/paraver.c):
 * - the fixed log of trace_log.h: golden .prv (the date masked), .pcf and
 *   .row, and what the log implies asserted on its own: the states of each
 *   thread in order, one "Task type" event per stay's begin and end, the
 *   counter (x1000) and the custom event, one communication for the RAW
 *   arrow 2 -> 3, the names in the .pcf and .row, the header's date;
 * - a real run of the bundled runtime (two workers, fib with taskwaits,
 *   dependencies): records sorted by time; per kind as many as the replay
 *   hands a counting sink of its own; per thread the states back to back
 *   from 0 to the end, Running exactly while an outermost stay is open,
 *   Yielded only while a task that yielded there waits to resume, Idle
 *   never then; the same bytes when the records spill into runs merged in
 *   several passes (the writer's test hooks);
 * - a trace without events: the header alone;
 * - errors: a folder that does not exist, a name not ending in .prv, a
 *   write failing (a file size limit, in a child process): one line naming
 *   the file and the reason, and nothing left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "golden.h"
#include "harness.h"
#include "trace_log.h"
#include "trace/convert.h"
#include "trace/read.h"

/* paraver.c's test hooks: records per sorted run, runs merged at once */
extern uint32_t tscope__paraver_run_records, tscope__paraver_merge_ways;

#define EV_TYPE 60000001u
#define EV_COUNTER 60000100u
#define EV_CUSTOM 60001000u
#define MAXTH 16

/* ---- the .prv read back ---- */

struct ivl {
    uint64_t b, e;
    unsigned v; /* a state's value; an event's type */
    uint64_t value;
};

struct list {
    struct ivl *a;
    size_t n, cap;
};

static void push(struct list *l, struct ivl x)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->a = realloc(l->a, l->cap * sizeof *l->a);
        ASSERT(l->a != NULL);
    }
    l->a[l->n++] = x;
}

struct comm {
    unsigned from, to, tag;
    uint64_t send, recv, size;
};

struct prv {
    char date[32]; /* dd/mm/yy at hh:mm */
    unsigned long long end_ns;
    unsigned threads;
    uint64_t states[3], type_events, counter_events, custom_events, comms, comms_cross;
    struct list state[MAXTH], events[MAXTH]; /* per thread, in file order */
    struct comm comm[8];                     /* the first ones */
};

static void prv_free(struct prv *p)
{
    for (int i = 0; i < MAXTH; i++) {
        free(p->state[i].a);
        free(p->events[i].a);
    }
}

/* Reads path: every record well formed and in time order, each thread's
 * states back to back from 0 to the end. */
static void prv_read(const char *path, struct prv *p)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "r");
    ASSERT(f != NULL);
    char line[512];
    ASSERT(fgets(line, sizeof line, f) != NULL);
    int at = 0;
    ASSERT(sscanf(line, "#Paraver (%31[0-9/: at]):%llu_ns:1(%u):1:1(%*u:1)\n%n", p->date,
                  &p->end_ns, &p->threads, &at) == 3);
    ASSERT(p->threads >= 1 && p->threads <= MAXTH);
    char tail[64];
    snprintf(tail, sizeof tail, "):%llu_ns:1(%u):1:1(%u:1)\n", p->end_ns, p->threads, p->threads);
    ASSERT(strstr(line, tail) != NULL);
    uint64_t last = 0, state_end[MAXTH] = {0};
    size_t lines = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        ASSERT(strchr(line, '\n') != NULL);
        unsigned kind, th, v, th2, tag;
        unsigned long long t0, t1, t2, t3, size;
        ASSERT(sscanf(line, "%u:0:1:1:%u:%llu:", &kind, &th, &t0) == 3);
        ASSERT(th >= 1 && th <= p->threads);
        if (t0 < last)
            TEST_FAIL("%s: not sorted by time at record %zu: %s", path, lines, line);
        last = t0;
        ASSERT(t0 <= p->end_ns);
        if (kind == 1) {
            ASSERT(sscanf(line, "1:0:1:1:%u:%llu:%llu:%u\n", &th, &t0, &t1, &v) == 4);
            ASSERT(t0 < t1); /* Paraver drops empty states: none written */
            ASSERT(t1 <= p->end_ns);
            ASSERT(v <= 2);
            if (t0 != state_end[th - 1]) /* back to back: no gap, no overlap */
                TEST_FAIL("thread %u: a state at %llu after one ending at %llu", th, t0,
                          (unsigned long long)state_end[th - 1]);
            state_end[th - 1] = t1;
            p->states[v]++;
            push(&p->state[th - 1], (struct ivl){t0, t1, v, 0});
        } else if (kind == 2) {
            ASSERT(sscanf(line, "2:0:1:1:%u:%llu:%u:%llu\n", &th, &t0, &v, &t1) == 4);
            if (v == EV_TYPE)
                p->type_events++;
            else if (v >= EV_COUNTER && v < EV_CUSTOM)
                p->counter_events++;
            else if (v >= EV_CUSTOM)
                p->custom_events++;
            else
                TEST_FAIL("unknown event type in %s", line);
            push(&p->events[th - 1], (struct ivl){t0, t0, v, t1});
        } else {
            ASSERT_EQ(kind, 3);
            ASSERT(sscanf(line, "3:0:1:1:%u:%llu:%llu:0:1:1:%u:%llu:%llu:%llu:%u\n", &th, &t0, &t1,
                          &th2, &t2, &t3, &size, &tag) == 8);
            ASSERT_U64_EQ(t0, t1); /* logical = physical */
            ASSERT_U64_EQ(t2, t3);
            ASSERT(t0 <= t2); /* sent before received */
            ASSERT(th2 >= 1 && th2 <= p->threads);
            ASSERT(tag >= TSCOPE_DEP_RAW && tag <= TSCOPE_DEP_WAW);
            if (p->comms < 8)
                p->comm[p->comms] = (struct comm){th, th2, tag, t0, t2, size};
            p->comms++;
            p->comms_cross += th != th2;
        }
    }
    fclose(f);
    for (unsigned th = 0; th < p->threads; th++)
        ASSERT(state_end[th] == 0 || state_end[th] == p->end_ns); /* to the end */
}

static void expect_states(const struct prv *p, unsigned th, const struct ivl *want, size_t n)
{
    const struct list *l = &p->state[th - 1];
    ASSERT_EQ(l->n, n);
    for (size_t i = 0; i < n; i++)
        if (l->a[i].b != want[i].b || l->a[i].e != want[i].e || l->a[i].v != want[i].v)
            TEST_FAIL("thread %u state %zu: %llu-%llu %u, expected %llu-%llu %u", th, i,
                      (unsigned long long)l->a[i].b, (unsigned long long)l->a[i].e, l->a[i].v,
                      (unsigned long long)want[i].b, (unsigned long long)want[i].e, want[i].v);
}

static void expect_events(const struct prv *p, unsigned th, const struct ivl *want, size_t n)
{
    const struct list *l = &p->events[th - 1];
    ASSERT_EQ(l->n, n);
    for (size_t i = 0; i < n; i++)
        if (l->a[i].b != want[i].b || l->a[i].v != want[i].v || l->a[i].value != want[i].value)
            TEST_FAIL("thread %u event %zu: at %llu %u:%llu, expected at %llu %u:%llu", th, i,
                      (unsigned long long)l->a[i].b, l->a[i].v, (unsigned long long)l->a[i].value,
                      (unsigned long long)want[i].b, want[i].v, (unsigned long long)want[i].value);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The names in dir ending in suffix, counted. */
static int count_suffix(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    ASSERT(d != NULL);
    int n = 0;
    size_t k = strlen(suffix);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t m = strlen(e->d_name);
        n += m >= k && strcmp(e->d_name + m - k, suffix) == 0;
    }
    closedir(d);
    return n;
}

static void paths(const char *dir, const char *stem, char *prv, char *pcf, char *row, size_t len)
{
    snprintf(prv, len, "%s/%s.prv", dir, stem);
    snprintf(pcf, len, "%s/%s.pcf", dir, stem);
    snprintf(row, len, "%s/%s.row", dir, stem);
}

/* ---- the fixed log ---- */

static char fixed_trace[400];

static void fixed_log(void)
{
    trace_fixed_log("tscope-test-trace-paraver");
    snprintf(fixed_trace, sizeof fixed_trace, "%s/trace.tsct", trace_dir);
    char prv[400], pcf[400], row[400], err[400];
    paths(trace_dir, "trace", prv, pcf, row, sizeof prv);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_PARAVER, prv, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.slices, 5); /* root twice (the yield splits it), 2, 3 and the leaf 4 */
    ASSERT_U64_EQ(st.end_ns, 50);
    ASSERT_EQ(count_suffix(trace_dir, ".tmp"), 0);

    struct prv p;
    prv_read(prv, &p);
    ASSERT_EQ(p.end_ns, 50);
    ASSERT_EQ(p.threads, 2); /* 1 main, 2 worker-b */
    /* the date: the trace's realtime origin (UTC) */
    struct tscope__trace *t;
    if (tscope__trace_open(fixed_trace, &t, err, sizeof err))
        TEST_FAIL("%s", err);
    time_t when = (time_t)(tscope__trace_info(t)->realtime_ns / 1000000000u);
    tscope__trace_close(t);
    struct tm tm;
    gmtime_r(&when, &tm);
    char date[40];
    snprintf(date, sizeof date, "%02d/%02d/%02d at %02d:%02d", tm.tm_mday, tm.tm_mon + 1,
             tm.tm_year % 100, tm.tm_hour, tm.tm_min);
    ASSERT_STR_EQ(p.date, date);

    /* main: root runs 0-20 (the leaf inside it at 15-18), yields at 20 and
     * waits until its resume at 41, runs to its end at 50 */
    static const struct ivl main_states[] = {{0, 20, 1, 0}, {20, 41, 2, 0}, {41, 50, 1, 0}};
    expect_states(&p, 1, main_states, 3);
    /* worker-b: idle until task 2 at 21-30, idle a ns, task 3 at 31-40,
     * idle to the end */
    static const struct ivl b_states[] = {
        {0, 21, 0, 0}, {21, 30, 1, 0}, {30, 31, 0, 0}, {31, 40, 1, 0}, {40, 50, 0, 0}};
    expect_states(&p, 2, b_states, 5);
    ASSERT_EQ(p.states[0], 3);
    ASSERT_EQ(p.states[1], 4);
    ASSERT_EQ(p.states[2], 1);

    /* the innermost type at every change: the leaf's end shows root again */
    const struct ivl main_events[] = {{0, 0, EV_TYPE, t_root},
                                      {12, 0, EV_COUNTER + c_queue, 2500}, /* 2.5 x1000 */
                                      {12, 0, EV_CUSTOM + e_mark, 7},      /* the payload */
                                      {15, 0, EV_TYPE, t_leaf},
                                      {18, 0, EV_TYPE, t_root},
                                      {20, 0, EV_TYPE, 0},
                                      {41, 0, EV_TYPE, t_root},
                                      {50, 0, EV_TYPE, 0}};
    expect_events(&p, 1, main_events, sizeof main_events / sizeof main_events[0]);
    const struct ivl b_events[] = {{21, 0, EV_TYPE, t_child},
                                   {30, 0, EV_TYPE, 0},
                                   {31, 0, EV_TYPE, t_child},
                                   {40, 0, EV_TYPE, 0}};
    expect_events(&p, 2, b_events, 4);
    ASSERT_U64_EQ(p.type_events, 2 * st.slices);
    ASSERT_EQ(p.counter_events, 1);
    ASSERT_EQ(p.custom_events, 1);

    /* the RAW arrow 2 -> 3: both ran on worker-b, so the communication is
     * on one thread, from inside 2's stay (its end - 1) to 3's begin; the
     * creation arrows are no communications */
    ASSERT_EQ(p.comms, 1);
    ASSERT_EQ(p.comms_cross, 0);
    ASSERT_EQ(p.comm[0].from, 2);
    ASSERT_EQ(p.comm[0].to, 2);
    ASSERT_U64_EQ(p.comm[0].send, 29);
    ASSERT_U64_EQ(p.comm[0].recv, 31);
    ASSERT_U64_EQ(p.comm[0].size, 1);
    ASSERT_EQ(p.comm[0].tag, TSCOPE_DEP_RAW);
    prv_free(&p);

    /* the golden files, the date masked */
    char *text = test_slurp(prv);
    ASSERT(text != NULL);
    char *date_at = strchr(text, '(');
    ASSERT(date_at != NULL && strlen(date_at) > 18 && date_at[18] == ')');
    memcpy(date_at + 1, "dd/mm/yy at hh:mm", 17);
    test_check_golden("trace_fixed.prv", text);
    free(text);

    text = test_slurp(pcf);
    ASSERT(text != NULL);
    test_check_golden("trace_fixed.pcf", text);
    ASSERT(strstr(text, "STATES\n0    Idle\n1    Running\n2    Yielded") != NULL);
    ASSERT(strstr(text, "STATES_COLOR\n0    {") != NULL);
    ASSERT(strstr(text, "EVENT_TYPE\n0    60000001    Task type\nVALUES\n0      End\n") != NULL);
    char want[200];
    snprintf(want, sizeof want, "\n%u      root\n", t_root);
    ASSERT(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "\n%u      child \"quoted\"\n", t_child);
    ASSERT(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "\n%u      leaf\n", t_leaf);
    ASSERT(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "EVENT_TYPE\n0    %u    queue (x1000)\n", EV_COUNTER + c_queue);
    ASSERT(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "EVENT_TYPE\n0    %u    mark (payload)\n", EV_CUSTOM + e_mark);
    ASSERT(strstr(text, want) != NULL);
    ASSERT(strchr(text, '\t') == NULL); /* spaces, not tabs */
    free(text);

    text = test_slurp(row);
    ASSERT(text != NULL);
    test_check_golden("trace_fixed.row", text);
    ASSERT(strstr(text, "LEVEL THREAD SIZE 2\nmain\nworker-b\n") != NULL);
    ASSERT(strstr(text, "LEVEL NODE SIZE 1\n") != NULL);
    ASSERT(strstr(text, "LEVEL TASK SIZE 1\n") != NULL);
    ASSERT(strstr(text, "LEVEL APPL SIZE 1\n") != NULL);
    free(text);
}

/* ---- a real run ---- */

/* What the replay hands a sink, counted without Paraver's rules: stays,
 * dependency arrows, counters, instants; per thread the time an outermost
 * stay is open, and the intervals during which a task that yielded there
 * waits to resume. */
struct counts {
    uint64_t slices, deps, deps_cross, counters, instants, yields;
    uint32_t depth[MAXTH];
    uint64_t since[MAXTH], running[MAXTH];
    struct list waits[MAXTH];
    struct {
        uint64_t task, from;
        uint32_t thread;
    } open[4096];
    size_t nopen;
};

static int c_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)type;
    struct counts *c = ctx;
    ASSERT(thread < MAXTH);
    c->slices++;
    if (c->depth[thread]++ == 0)
        c->since[thread] = ns;
    for (size_t i = 0; i < c->nopen; i++)
        if (c->open[i].task == task) { /* it resumes */
            push(&c->waits[c->open[i].thread], (struct ivl){c->open[i].from, ns, 0, 0});
            c->open[i] = c->open[--c->nopen];
            break;
        }
    return 0;
}

static int c_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    (void)type;
    struct counts *c = ctx;
    ASSERT(c->depth[thread] > 0);
    if (--c->depth[thread] == 0)
        c->running[thread] += ns - c->since[thread];
    return 0;
}

static int c_yielded(void *ctx, uint32_t thread, uint64_t ns, uint64_t task)
{
    struct counts *c = ctx;
    ASSERT(c->nopen < sizeof c->open / sizeof c->open[0]);
    c->yields++;
    c->open[c->nopen].task = task;
    c->open[c->nopen].from = ns;
    c->open[c->nopen++].thread = thread;
    return 0;
}

static int c_flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                  uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)hazard;
    (void)from_ns;
    (void)to_ns;
    (void)from_task;
    (void)to_task;
    struct counts *c = ctx;
    if (kind == TSCOPE__FLOW_DEP) {
        c->deps++;
        c->deps_cross += from_thread != to_thread;
    }
    return 0;
}

static int c_counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double v)
{
    (void)thread;
    (void)ns;
    (void)id;
    (void)v;
    ((struct counts *)ctx)->counters++;
    return 0;
}

static int c_instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, uint64_t payload)
{
    (void)thread;
    (void)ns;
    (void)id;
    (void)payload;
    ((struct counts *)ctx)->instants++;
    return 0;
}

static int ivl_cmp(const void *a, const void *b)
{
    const struct ivl *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

/* The intervals merged into disjoint ones, in time order. */
static void merge_ivls(struct list *l)
{
    if (!l->n)
        return;
    qsort(l->a, l->n, sizeof *l->a, ivl_cmp);
    size_t k = 0;
    for (size_t i = 1; i < l->n; i++) {
        if (l->a[i].b <= l->a[k].e) {
            if (l->a[i].e > l->a[k].e)
                l->a[k].e = l->a[i].e;
        } else {
            l->a[++k] = l->a[i];
        }
    }
    l->n = k + 1;
}

static int covered(const struct list *l, uint64_t b, uint64_t e)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->a[i].b <= b && e <= l->a[i].e)
            return 1;
    return 0;
}

static int overlaps(const struct list *l, uint64_t b, uint64_t e)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->a[i].b < e && l->a[i].e > b)
            return 1;
    return 0;
}

static char rt_trace[400];

static void runtime_run(void)
{
    tscope_type_stats_t fib, dep;
    trace_runtime_log("tscope-test-trace-paraver-rt", &fib, &dep);
    snprintf(rt_trace, sizeof rt_trace, "%s/trace.tsct", trace_dir);
    char err[400];

    /* the replay into the counting sink */
    static struct counts c;
    struct tscope__trace_sink sink = {&c,        c_begin,   c_end,     c_flow,
                                      c_counter, c_instant, c_yielded, NULL};
    struct tscope__trace *t;
    if (tscope__trace_open(rt_trace, &t, err, sizeof err))
        TEST_FAIL("%s", err);
    unsigned threads = tscope__trace_info(t)->threads;
    struct tscope__replay_stats rst;
    if (tscope__trace_replay(t, &sink, &rst, err, sizeof err))
        TEST_FAIL("%s", err);
    tscope__trace_close(t);
    for (size_t i = 0; i < c.nopen; i++) /* never resumed: waits to the end */
        push(&c.waits[c.open[i].thread], (struct ivl){c.open[i].from, rst.end_ns, 0, 0});
    ASSERT_GT(c.deps, 0);
    ASSERT_GT(c.yields, 0); /* fib's taskwaits */

    char prv[400], pcf[400], row[400];
    paths(trace_dir, "trace", prv, pcf, row, sizeof prv);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(rt_trace, TSCOPE__FMT_PARAVER, prv, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT(memcmp(&st, &rst, sizeof st) == 0); /* the same replay */
    ASSERT_EQ(count_suffix(trace_dir, ".tmp"), 0);
    struct prv p;
    prv_read(prv, &p);
    ASSERT_U64_EQ(p.end_ns, st.end_ns);
    ASSERT_EQ(p.threads, threads);
    ASSERT_U64_EQ(p.type_events, 2 * st.slices);
    ASSERT_U64_EQ(p.type_events, 2 * c.slices);
    ASSERT_U64_EQ(p.comms, c.deps); /* every dependency arrow, creations none */
    ASSERT_U64_EQ(p.comms_cross, c.deps_cross);
    ASSERT_U64_EQ(p.counter_events, c.counters);
    ASSERT_U64_EQ(p.custom_events, c.instants);
    ASSERT_GT(p.states[1], 0);
    ASSERT_GT(p.states[2], 0);
    for (unsigned th = 0; th < threads && th < MAXTH; th++) {
        merge_ivls(&c.waits[th]);
        uint64_t running = 0;
        for (size_t i = 0; i < p.state[th].n; i++) {
            const struct ivl *s = &p.state[th].a[i];
            if (s->v == 1)
                running += s->e - s->b;
            else if (s->v == 2 && !covered(&c.waits[th], s->b, s->e))
                TEST_FAIL("thread %u: Yielded %llu-%llu while no task waits there", th + 1,
                          (unsigned long long)s->b, (unsigned long long)s->e);
            else if (s->v == 0 && overlaps(&c.waits[th], s->b, s->e))
                TEST_FAIL("thread %u: Idle %llu-%llu while a task waits there", th + 1,
                          (unsigned long long)s->b, (unsigned long long)s->e);
        }
        ASSERT_U64_EQ(running, c.running[th]);
        free(c.waits[th].a);
    }
    prv_free(&p);
    char *pcf_text = test_slurp(pcf);
    ASSERT(pcf_text != NULL);
    ASSERT(strstr(pcf_text, "      fib\n") != NULL);
    ASSERT(strstr(pcf_text, "      dep\n") != NULL);
    free(pcf_text);

    /* sorted in runs of 100 records merged 3 at a time: the same bytes */
    char dir[500], prv2[600], pcf2[600], row2[600];
    snprintf(dir, sizeof dir, "%s/spill", trace_dir);
    ASSERT_EQ(mkdir(dir, 0755), 0);
    paths(dir, "trace", prv2, pcf2, row2, sizeof prv2);
    tscope__paraver_run_records = 100;
    tscope__paraver_merge_ways = 3;
    int rc = tscope__trace_convert(rt_trace, TSCOPE__FMT_PARAVER, prv2, 0, &st, err, sizeof err);
    tscope__paraver_run_records = tscope__paraver_merge_ways = 0;
    if (rc)
        TEST_FAIL("%s", err);
    /* more than 3 runs: at least one pass before the last */
    ASSERT_GT(p.states[0] + p.states[1] + p.states[2] + p.type_events + p.comms, 3 * 100);
    ASSERT_EQ(count_suffix(dir, ".tmp"), 0);
    char *a = test_slurp(prv), *b = test_slurp(prv2);
    ASSERT(a != NULL && b != NULL);
    ASSERT(strcmp(a, b) == 0);
    free(a);
    free(b);
    a = test_slurp(pcf), b = test_slurp(pcf2);
    ASSERT(strcmp(a, b) == 0);
    free(a);
    free(b);
    a = test_slurp(row), b = test_slurp(row2);
    ASSERT(strcmp(a, b) == 0);
    free(a);
    free(b);
}

/* A trace without events: a header (one thread, ending at 0) and no
 * records; the .pcf names the states and the type event all the same. */
static void empty(void)
{
    outdir("tscope-test-trace-paraver-empty");
    trace_env("1");
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_finalize());
    char path[400], prv[400], pcf[400], row[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    paths(trace_dir, "trace", prv, pcf, row, sizeof prv);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_PARAVER, prv, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.slices, 0);
    char *text = test_slurp(prv);
    ASSERT(text != NULL);
    ASSERT(strstr(text, "):0_ns:1(1):1:1(1:1)\n") != NULL);
    ASSERT(strchr(text, '\n') == text + strlen(text) - 1); /* the header alone */
    free(text);
    text = test_slurp(pcf);
    ASSERT(text != NULL && strstr(text, "Task type\nVALUES\n0      End\n") != NULL);
    free(text);
    text = test_slurp(row);
    ASSERT(text != NULL && strstr(text, "LEVEL THREAD SIZE 1\n") != NULL);
    free(text);
}

/* ---- errors ---- */

/* A conversion under a file size limit of 4 KiB, in a child process: its
 * message on stdout (a pipe: the limit would cut a file). */
static int fsize_child(const char *trace, const char *out, const char *run_records)
{
    struct rlimit rl = {4096, 4096};
    signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
    tscope__paraver_run_records = (uint32_t)atoi(run_records);
    char err[1400];
    struct tscope__replay_stats st;
    int rc = tscope__trace_convert(trace, TSCOPE__FMT_PARAVER, out, 0, &st, err, sizeof err);
    printf("%s\n", err);
    return rc == -1 ? 0 : 3;
}

static void write_fails(const char *self, const char *run_records, const char *names)
{
    char dir[500], out[600], cmd[2000], text[2000];
    snprintf(dir, sizeof dir, "%s/fsize-%s", trace_dir, run_records);
    ASSERT_EQ(mkdir(dir, 0755), 0);
    snprintf(out, sizeof out, "%s/trace.prv", dir);
    snprintf(cmd, sizeof cmd, "'%s' fsize-child '%s' '%s' %s", self, rt_trace, out, run_records);
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = 0;
    ASSERT_EQ(pclose(p), 0);
    printf("test_trace_paraver: a failing write says: %s", text);
    char want[800];
    snprintf(want, sizeof want, "writing %s/trace%s failed: %s\n", dir, names, strerror(EFBIG));
    ASSERT_STR_EQ(text, want); /* one line: the file, the reason */
    /* nothing left behind: no output, no temporary file */
    DIR *d = opendir(dir);
    ASSERT(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            TEST_FAIL("%s left behind in %s", e->d_name, dir);
    closedir(d);
}

static void errors(const char *self)
{
    char prv[600], err[1400];
    struct tscope__replay_stats st;
    /* a folder that does not exist: said before any work */
    snprintf(prv, sizeof prv, "%s/no/such/folder/t.prv", trace_dir);
    ASSERT_EQ(tscope__trace_convert(rt_trace, TSCOPE__FMT_PARAVER, prv, 0, &st, err, sizeof err),
              -1);
    char want[1400];
    snprintf(want, sizeof want, "cannot create %s: %s", prv, strerror(ENOENT));
    ASSERT_STR_EQ(err, want);
    /* not a .prv name: refused, nothing written */
    snprintf(prv, sizeof prv, "%s/refused.txt", trace_dir);
    ASSERT_EQ(tscope__trace_convert(rt_trace, TSCOPE__FMT_PARAVER, prv, 0, &st, err, sizeof err),
              -1);
    snprintf(want, sizeof want, "%s: a Paraver trace's name ends in .prv", prv);
    ASSERT_STR_EQ(err, want);
    ASSERT(!exists(prv));
    snprintf(prv, sizeof prv, "%s/refused.pcf", trace_dir);
    ASSERT(!exists(prv));
    /* a write failing: the .prv itself, or (small runs) the runs' file */
    write_fails(self, "0", ".prv");
    write_fails(self, "100", ".runs.tmp");
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "fsize-child") == 0)
        return fsize_child(argv[2], argv[3], argv[4]);
    RUN(fixed_log);
    RUN(runtime_run);
    errors(argv[0]);
    RUN(empty);
    printf("test_trace_paraver: ok\n");
    return 0;
}
