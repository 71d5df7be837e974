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
 * - a job of three ranks (a child process each, manual clock) with
 *   messages, the same type, counter and event names under different ids
 *   and a type only one rank has: the header's tasks and threads, every
 *   message a communication from the sender's task:thread at the send to
 *   the receiver's at the receive (size, tag; a collective's tag 2^31), its
 *   ends marked with the Message event, the dependency's communication
 *   kept, the ends left unmatched on purpose counted, each name once in the
 *   .pcf and each thread's type events naming its tasks' types, the .row's
 *   names; the same bytes for the paths reversed and for records spilled
 *   into runs; a rank missing, a rank's trace twice (no message joined), a
 *   job of one trace (the trace's .prv and .pcf), errors;
 * - errors: a folder that does not exist, a name not ending in .prv, a
 *   write failing (a file size limit, in a child process): one line naming
 *   the file and the reason, and nothing left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* ---- a job of three ranks ---- */

#define JOB_RANKS 3
#define JOB_TASKS 4   /* the most Paraver tasks a job here has */
#define JOB_THREADS 4 /* the most threads a task here has */
#define EV_MESSAGE 60000002u
#define COLLECTIVE_TAG 2147483648u

static char job_dir[300], job_trace[JOB_RANKS][600];
static tscope_type_t jt_alpha, jt_beta, jt_only;

/* Rank 1's second thread: two receives from rank 0 (tag 5) in a beta
 * task, a send to rank 2 with tag 2 (a dependency's tag too) in an alpha
 * task. */
static void *job_receiver(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("recv-thread"));
    at(20);
    ASSERT_OK(tscope_task_start(20, jt_beta));
    at(22);
    ASSERT_OK(tscope_message(0, 100, 5, TSCOPE_MSG_RECV));
    at(24);
    ASSERT_OK(tscope_message(0, 200, 5, TSCOPE_MSG_RECV));
    at(30);
    ASSERT_OK(tscope_task_end(20));
    at(40);
    ASSERT_OK(tscope_task_start(21, jt_alpha));
    at(45);
    ASSERT_OK(tscope_message(2, 64, 2, TSCOPE_MSG_SEND));
    at(50);
    ASSERT_OK(tscope_task_end(21));
    return NULL;
}

/* One rank of the job, in a child process (manual clock, 1 tick = 1 ns):
 *   rank 0 (main): alpha 1 @10-20 sends 100 B and 200 B to rank 1 (tag 5)
 *                  @12 and @14, counter queue 1.5 @13, a RAW dependency
 *                  1 -> 2; beta 2 @30-40: event mark 9 @32, its share of
 *                  a collective from rank 2 (8 B) @35, a send to rank 2
 *                  (tag 9) @38 that rank 2 never receives;
 *   rank 1 (main): only-one 10 @10-18 receives from rank 0 (tag 7) @15,
 *                  never sent; recv-thread: job_receiver;
 *   rank 2 (main): beta 30 @10-20, the collective's share to rank 0 @12,
 *                  counters queue 2.0 @13 and spare 3.0 @14, event mark 11
 *                  @16; alpha 31 @50-60 receives rank 1's 64 B @55.
 * The ranks register the types in different orders (rank 1 has a type of
 * its own), and the counters and events too: their ids differ. */
static void job_rank(int r, const char *dir)
{
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    trace_env("1");
    setenv("TASKSCOPE_OUTPUTS", "json", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    tscope__clock_use_manual(1000);
    ASSERT_OK(tscope_init(r, JOB_RANKS));
    tscope_counter_t queue, spare;
    tscope_event_t mark, other;
    static int cell;
    if (r == 0) {
        jt_alpha = type_named("alpha");
        jt_beta = type_named("beta");
        ASSERT_OK(tscope_counter_register("queue", &queue));
        ASSERT_OK(tscope_event_register("mark", &mark));
        at(10);
        ASSERT_OK(tscope_task_start(1, jt_alpha));
        at(12);
        ASSERT_OK(tscope_message(1, 100, 5, TSCOPE_MSG_SEND));
        at(13);
        ASSERT_OK(tscope_counter_sample(queue, 1.5));
        at(14);
        ASSERT_OK(tscope_message(1, 200, 5, TSCOPE_MSG_SEND));
        at(15);
        ASSERT_OK(tscope_task_create(2, 1, jt_beta, 0, 1, 0));
        ASSERT_OK(tscope_dep_local(1, 2, &cell, TSCOPE_DEP_RAW));
        at(20);
        ASSERT_OK(tscope_task_end(1));
        at(30);
        ASSERT_OK(tscope_task_begin(2, 0));
        at(32);
        ASSERT_OK(tscope_custom_event(mark, 9));
        at(35);
        ASSERT_OK(tscope_message(2, 8, 0, TSCOPE_MSG_RECV | TSCOPE_MSG_COLLECTIVE));
        at(38);
        ASSERT_OK(tscope_message(2, 16, 9, TSCOPE_MSG_SEND));
        at(40);
        ASSERT_OK(tscope_task_end(2));
    } else if (r == 1) {
        jt_only = type_named("only-one");
        jt_beta = type_named("beta");
        jt_alpha = type_named("alpha");
        at(10);
        ASSERT_OK(tscope_task_start(10, jt_only));
        at(15);
        ASSERT_OK(tscope_message(0, 4, 7, TSCOPE_MSG_RECV));
        at(18);
        ASSERT_OK(tscope_task_end(10));
        ASSERT_OK(tscope_flush());
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, job_receiver, NULL), 0);
        ASSERT_EQ(pthread_join(th, NULL), 0);
        ASSERT_OK(tscope_flush());
    } else {
        jt_beta = type_named("beta");
        jt_alpha = type_named("alpha");
        ASSERT_OK(tscope_counter_register("spare", &spare));
        ASSERT_OK(tscope_counter_register("queue", &queue));
        ASSERT_OK(tscope_event_register("other", &other));
        ASSERT_OK(tscope_event_register("mark", &mark));
        at(10);
        ASSERT_OK(tscope_task_start(30, jt_beta));
        at(12);
        ASSERT_OK(tscope_message(0, 8, 0, TSCOPE_MSG_SEND | TSCOPE_MSG_COLLECTIVE));
        at(13);
        ASSERT_OK(tscope_counter_sample(queue, 2.0));
        at(14);
        ASSERT_OK(tscope_counter_sample(spare, 3.0));
        at(16);
        ASSERT_OK(tscope_custom_event(mark, 11));
        at(20);
        ASSERT_OK(tscope_task_end(30));
        at(50);
        ASSERT_OK(tscope_task_start(31, jt_alpha));
        at(55);
        ASSERT_OK(tscope_message(1, 64, 2, TSCOPE_MSG_RECV));
        at(60);
        ASSERT_OK(tscope_task_end(31));
    }
    ASSERT_OK(tscope_finalize());
}

/* Writes the job's traces into job_dir, a child process per rank, one after
 * the other; job_trace[r] is rank r's.  Run first: names registered in
 * this process would keep their ids in the children (a name registered
 * again keeps its id), and the ranks' ids must differ. */
static void job_traces(void)
{
    outdir("tscope-test-trace-paraver-job");
    snprintf(job_dir, sizeof job_dir, "%s", trace_dir);
    const char *base = job_dir;
    ASSERT_EQ(mkdir(base, 0755), 0);
    for (int r = 0; r < JOB_RANKS; r++) {
        char dir[400];
        snprintf(dir, sizeof dir, "%s/in-%d", base, r);
        fflush(NULL);
        pid_t kid = fork();
        ASSERT(kid >= 0);
        if (kid == 0) {
            job_rank(r, dir);
            _exit(0);
        }
        int status = 0;
        ASSERT_EQ(waitpid(kid, &status, 0), kid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL("rank %d's process failed (status %d)", r, status);
        /* several ranks: the trace is in the rank's folder of the run */
        snprintf(job_trace[r], sizeof job_trace[r], "%s/rank-%d/trace.tsct", dir, r);
        if (!exists(job_trace[r]))
            TEST_FAIL("no trace at %s", job_trace[r]);
    }
}

/* ---- the job's .prv read back ---- */

struct jcomm {
    unsigned from_task, from_thread, to_task, to_thread;
    uint64_t send, recv, size, tag;
};

struct jprv {
    char date[32];
    unsigned long long end_ns;
    unsigned cpus, ntasks, threads[JOB_TASKS + 1]; /* by task, from 1 */
    struct list state[JOB_TASKS + 1][JOB_THREADS + 1], events[JOB_TASKS + 1][JOB_THREADS + 1];
    struct jcomm comm[16];
    size_t ncomm;
};

static void jprv_free(struct jprv *p)
{
    for (int k = 0; k <= JOB_TASKS; k++)
        for (int th = 0; th <= JOB_THREADS; th++) {
            free(p->state[k][th].a);
            free(p->events[k][th].a);
        }
}

/* The colon-separated numbers of a record line; their count. */
static int fields(const char *line, uint64_t *f, int max)
{
    int n = 0;
    for (const char *s = line;;) {
        char *end;
        ASSERT(*s >= '0' && *s <= '9');
        ASSERT(n < max);
        f[n++] = strtoull(s, &end, 10);
        if (*end == '\n')
            return n;
        ASSERT(*end == ':');
        s = end + 1;
    }
}

/* A record's object: cpu 0, application 1, a task and one of its threads. */
static void check_object(const struct jprv *p, const uint64_t *f, const char *line)
{
    if (f[0] != 0 || f[1] != 1 || f[2] < 1 || f[2] > p->ntasks || f[3] < 1 ||
        f[3] > p->threads[f[2]])
        TEST_FAIL("no such object in %s", line);
}

/* Reads path: the header's layout, every record well formed, naming a
 * task and thread the header has, in time order; each thread's states
 * back to back from its rank's origin to the end. */
static void jprv_read(const char *path, struct jprv *p)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "r");
    ASSERT(f != NULL);
    char line[512];
    ASSERT(fgets(line, sizeof line, f) != NULL);
    int at = 0;
    ASSERT(sscanf(line, "#Paraver (%31[0-9/: at]):%llu_ns:1(%u):1:%u(%n", p->date, &p->end_ns,
                  &p->cpus, &p->ntasks, &at) == 4);
    ASSERT(at > 0 && p->ntasks >= 1 && p->ntasks <= JOB_TASKS);
    const char *s = line + at;
    unsigned total = 0;
    for (unsigned k = 1; k <= p->ntasks; k++) {
        int used = 0;
        ASSERT(sscanf(s, "%u:1%n", &p->threads[k], &used) == 1 && used > 0);
        ASSERT(p->threads[k] >= 1 && p->threads[k] <= JOB_THREADS);
        total += p->threads[k];
        s += used;
        ASSERT(*s == (k == p->ntasks ? ')' : ','));
        s++;
    }
    ASSERT_STR_EQ(s, "\n");
    ASSERT_EQ(p->cpus, total); /* a cpu per thread */
    uint64_t last = 0;
    while (fgets(line, sizeof line, f)) {
        uint64_t v[16];
        int n = fields(line, v, 16);
        ASSERT(n >= 6);
        check_object(p, v + 1, line);
        if (v[5] < last)
            TEST_FAIL("%s: not sorted by time at %s", path, line);
        last = v[5];
        unsigned task = (unsigned)v[3], th = (unsigned)v[4];
        if (v[0] == 1) { /* 1:cpu:appl:task:thread:begin:end:state */
            ASSERT_EQ(n, 8);
            ASSERT(v[5] < v[6] && v[6] <= p->end_ns && v[7] <= 2);
            struct list *l = &p->state[task][th];
            if (l->n && l->a[l->n - 1].e != v[5]) /* back to back */
                TEST_FAIL("task %u thread %u: a state at %llu after one ending at %llu", task, th,
                          (unsigned long long)v[5], (unsigned long long)l->a[l->n - 1].e);
            push(l, (struct ivl){v[5], v[6], (unsigned)v[7], 0});
        } else if (v[0] == 2) { /* 2:cpu:appl:task:thread:time:type:value */
            ASSERT_EQ(n, 8);
            push(&p->events[task][th], (struct ivl){v[5], v[5], (unsigned)v[6], v[7]});
        } else { /* 3:...:lsend:psend:rcpu:rappl:rtask:rthread:lrecv:precv:size:tag */
            ASSERT_EQ(v[0], 3);
            ASSERT_EQ(n, 15);
            ASSERT_U64_EQ(v[5], v[6]); /* logical = physical */
            check_object(p, v + 7, line);
            ASSERT_U64_EQ(v[11], v[12]);
            ASSERT(p->ncomm < sizeof p->comm / sizeof p->comm[0]);
            p->comm[p->ncomm++] = (struct jcomm){task, th,    (unsigned)v[9], (unsigned)v[10],
                                                 v[5], v[11], v[13],          v[14]};
        }
    }
    fclose(f);
    for (unsigned k = 1; k <= p->ntasks; k++)
        for (unsigned th = 1; th <= p->threads[k]; th++) {
            const struct list *l = &p->state[k][th];
            ASSERT(l->n == 0 || l->a[l->n - 1].e == p->end_ns); /* to the end */
        }
}

/* The label of event type in the .pcf text ("" when it has none). */
static const char *pcf_label(const char *pcf, unsigned type)
{
    static char label[200];
    char head[64];
    snprintf(head, sizeof head, "EVENT_TYPE\n0    %u    ", type);
    const char *at = strstr(pcf, head);
    label[0] = 0;
    if (at)
        sscanf(at + strlen(head), "%199[^\n]", label);
    return label;
}

static int count_of(const char *text, const char *s)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, s)) != NULL; at += strlen(s))
        n++;
    return n;
}

/* The "Task type" values the .pcf names: value -> name (at most 8). */
struct type_names {
    unsigned value[8];
    char name[8][40];
    int n;
};

static void pcf_types(const char *pcf, struct type_names *t)
{
    const char *head = "EVENT_TYPE\n0    60000001    Task type\nVALUES\n0      End\n";
    const char *s = strstr(pcf, head);
    ASSERT(s != NULL);
    s += strlen(head);
    t->n = 0;
    while (*s != '\n') {
        int used = 0;
        ASSERT(t->n < 8);
        ASSERT(sscanf(s, "%u      %39[^\n]%n", &t->value[t->n], t->name[t->n], &used) == 2);
        ASSERT(s[used] == '\n');
        for (int i = 0; i < t->n; i++) { /* each value, and each name, once */
            ASSERT(t->value[i] != t->value[t->n]);
            ASSERT(strcmp(t->name[i], t->name[t->n]) != 0);
        }
        t->n++;
        s += used + 1;
    }
}

static const char *type_name_of(const struct type_names *t, uint64_t value)
{
    if (value == 0)
        return "End";
    for (int i = 0; i < t->n; i++)
        if (t->value[i] == value)
            return t->name[i];
    TEST_FAIL("Task type value %llu is not in the .pcf", (unsigned long long)value);
}

/* The thread's events of one type in order, as "time name" lines (type
 * values by their .pcf name), ns relative to off. */
static void expect_types(const struct jprv *p, unsigned task, unsigned th,
                         const struct type_names *t, uint64_t off, const char *want)
{
    char got[400] = "";
    const struct list *l = &p->events[task][th];
    for (size_t i = 0; i < l->n; i++)
        if (l->a[i].v == EV_TYPE)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%llu %s\n",
                     (unsigned long long)(l->a[i].b - off), type_name_of(t, l->a[i].value));
    if (strcmp(got, want) != 0)
        TEST_FAIL("task %u thread %u types:\n%s\nexpected:\n%s", task, th, got, want);
}

/* Exactly one event of type at ns on task:th, with value. */
static void expect_event(const struct jprv *p, unsigned task, unsigned th, uint64_t ns,
                         unsigned type, uint64_t value)
{
    const struct list *l = &p->events[task][th];
    int n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->a[i].b == ns && l->a[i].v == type && l->a[i].value == value;
    if (n != 1)
        TEST_FAIL("task %u thread %u: %d events %u:%llu at %llu, expected 1", task, th, n, type,
                  (unsigned long long)value, (unsigned long long)ns);
}

static int events_of_type(const struct jprv *p, unsigned type)
{
    int n = 0;
    for (int k = 0; k <= JOB_TASKS; k++)
        for (int th = 0; th <= JOB_THREADS; th++)
            for (size_t i = 0; i < p->events[k][th].n; i++)
                n += p->events[k][th].a[i].v == type;
    return n;
}

/* Exactly one communication c in p. */
static void expect_comm(const struct jprv *p, struct jcomm c)
{
    int n = 0;
    for (size_t i = 0; i < p->ncomm; i++)
        n += memcmp(&p->comm[i], &c, sizeof c) == 0;
    if (n != 1)
        TEST_FAIL("%d communications %u:%u @%llu -> %u:%u @%llu, %llu B, tag %llu; expected 1", n,
                  c.from_task, c.from_thread, (unsigned long long)c.send, c.to_task, c.to_thread,
                  (unsigned long long)c.recv, (unsigned long long)c.size,
                  (unsigned long long)c.tag);
}

/* Converts the traces paths[0..n) as a job to dir/stem.prv; 0 or -1
 * (message in err). */
static int job_convert(const char *const *paths, int n, const char *dir, const char *stem,
                       struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                       size_t errlen)
{
    char prv[600];
    snprintf(prv, sizeof prv, "%s/%s.prv", dir, stem);
    return tscope__trace_job_to_paraver(paths, n, prv, st, unmatched, err, errlen);
}

/* The three files of stem1 and stem2 in dir hold the same bytes. */
static void same_files(const char *dir, const char *stem1, const char *stem2)
{
    static const char *const ext[] = {"prv", "pcf", "row"};
    for (int i = 0; i < 3; i++) {
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/%s.%s", dir, stem1, ext[i]);
        snprintf(b, sizeof b, "%s/%s.%s", dir, stem2, ext[i]);
        char *x = test_slurp(a), *y = test_slurp(b);
        ASSERT(x != NULL && y != NULL);
        if (strcmp(x, y) != 0)
            TEST_FAIL("%s and %s differ", a, b);
        free(x);
        free(y);
    }
}

static void job(void)
{
    const char *dir = job_dir;
    char err[1400];

    /* the ranks' own ids: one name, different ids (else nothing to unify) */
    uint64_t rt[JOB_RANKS], off[JOB_RANKS], origin = UINT64_MAX;
    uint32_t alpha[JOB_RANKS] = {0}, queue[JOB_RANKS] = {0};
    for (int r = 0; r < JOB_RANKS; r++) {
        struct tscope__trace *t;
        if (tscope__trace_open(job_trace[r], &t, err, sizeof err))
            TEST_FAIL("%s", err);
        const struct tscope__trace_info *i = tscope__trace_info(t);
        ASSERT_EQ(i->rank, r);
        ASSERT_EQ(i->nranks, JOB_RANKS);
        rt[r] = i->realtime_ns;
        if (rt[r] < origin)
            origin = rt[r];
        for (uint32_t id = 0; id < 16; id++) {
            const char *name = tscope__trace_name(t, TSCOPE__TABLE_TYPES, id);
            if (name && strcmp(name, "alpha") == 0)
                alpha[r] = id;
            name = tscope__trace_name(t, TSCOPE__TABLE_COUNTERS, id);
            if (name && strcmp(name, "queue") == 0)
                queue[r] = id;
        }
        tscope__trace_close(t);
    }
    ASSERT(alpha[0] != alpha[1] && alpha[0] != alpha[2]);
    ASSERT(queue[0] != queue[2]);
    for (int r = 0; r < JOB_RANKS; r++)
        off[r] = rt[r] - origin; /* each rank's origin on the job's clock */

    const char *in[JOB_RANKS] = {job_trace[0], job_trace[1], job_trace[2]};
    struct tscope__replay_stats st;
    uint64_t unmatched = 99;
    if (job_convert(in, JOB_RANKS, dir, "job", &st, &unmatched, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(count_suffix(dir, ".tmp"), 0);
    ASSERT_U64_EQ(st.messages, 10); /* every end, in the three ranks */
    ASSERT_U64_EQ(unmatched, 2);    /* rank 0's send with tag 9, rank 1's receive with tag 7 */
    /* rank 0's arrows (2's creation in 1, the dependency), the messages */
    ASSERT_U64_EQ(st.flows, 2 + 4);
    uint64_t end = 40 + off[0];
    end = 50 + off[1] > end ? 50 + off[1] : end;
    end = 60 + off[2] > end ? 60 + off[2] : end;
    ASSERT_U64_EQ(st.end_ns, end);

    char prv[600];
    snprintf(prv, sizeof prv, "%s/job.prv", dir);
    struct jprv p;
    jprv_read(prv, &p);
    /* one application of three tasks, rank order: 1, 2 and 1 threads */
    ASSERT_EQ(p.ntasks, 3);
    ASSERT_EQ(p.threads[1], 1);
    ASSERT_EQ(p.threads[2], 2);
    ASSERT_EQ(p.threads[3], 1);
    ASSERT_EQ(p.cpus, 4);
    ASSERT_U64_EQ(p.end_ns, end);
    time_t when = (time_t)(origin / 1000000000u); /* the earliest rank's date */
    struct tm tm;
    gmtime_r(&when, &tm);
    char date[40];
    snprintf(date, sizeof date, "%02d/%02d/%02d at %02d:%02d", tm.tm_mday, tm.tm_mon + 1,
             tm.tm_year % 100, tm.tm_hour, tm.tm_min);
    ASSERT_STR_EQ(p.date, date);

    /* the messages joined, each from the sender's thread at the send to the
     * receiver's at the receive; the dependency within rank 0 (from inside
     * 1's stay to 2's begin) keeps its tag */
    ASSERT_EQ(p.ncomm, 5);
    expect_comm(&p, (struct jcomm){1, 1, 2, 2, 12 + off[0], 22 + off[1], 100, 5});
    expect_comm(&p, (struct jcomm){1, 1, 2, 2, 14 + off[0], 24 + off[1], 200, 5});
    expect_comm(&p, (struct jcomm){2, 2, 3, 1, 45 + off[1], 55 + off[2], 64, 2});
    expect_comm(&p, (struct jcomm){3, 1, 1, 1, 12 + off[2], 35 + off[0], 8, COLLECTIVE_TAG});
    expect_comm(&p, (struct jcomm){1, 1, 1, 1, 19 + off[0], 30 + off[0], 1, TSCOPE_DEP_RAW});
    /* a message's ends marked: what tells its tag 2 from a WAR's */
    ASSERT_EQ(events_of_type(&p, EV_MESSAGE), 8);
    expect_event(&p, 1, 1, 12 + off[0], EV_MESSAGE, 1);
    expect_event(&p, 2, 2, 22 + off[1], EV_MESSAGE, 2);
    expect_event(&p, 1, 1, 14 + off[0], EV_MESSAGE, 1);
    expect_event(&p, 2, 2, 24 + off[1], EV_MESSAGE, 2);
    expect_event(&p, 2, 2, 45 + off[1], EV_MESSAGE, 1);
    expect_event(&p, 3, 1, 55 + off[2], EV_MESSAGE, 2);
    expect_event(&p, 3, 1, 12 + off[2], EV_MESSAGE, 3);
    expect_event(&p, 1, 1, 35 + off[0], EV_MESSAGE, 4);

    /* the types unified by name: listed once each, and every rank's
     * threads show the names their tasks have */
    char pcf[600];
    snprintf(pcf, sizeof pcf, "%s/job.pcf", dir);
    char *text = test_slurp(pcf);
    ASSERT(text != NULL);
    struct type_names tn;
    pcf_types(text, &tn);
    ASSERT_EQ(tn.n, 3);
    ASSERT_EQ(count_of(text, "      alpha\n"), 1);
    ASSERT_EQ(count_of(text, "      beta\n"), 1);
    ASSERT_EQ(count_of(text, "      only-one\n"), 1);
    expect_types(&p, 1, 1, &tn, off[0], "10 alpha\n20 End\n30 beta\n40 End\n");
    expect_types(&p, 2, 1, &tn, off[1], "10 only-one\n18 End\n");
    expect_types(&p, 2, 2, &tn, off[1], "20 beta\n30 End\n40 alpha\n50 End\n");
    expect_types(&p, 3, 1, &tn, off[2], "10 beta\n20 End\n50 alpha\n60 End\n");
    /* counters and custom events unified by name too */
    ASSERT_EQ(count_of(text, "    queue (x1000)\n"), 1);
    ASSERT_EQ(count_of(text, "    spare (x1000)\n"), 1);
    ASSERT_EQ(count_of(text, "    mark (payload)\n"), 1);
    ASSERT_EQ(count_of(text, "(payload)\n"), 1); /* rank 2's "other" was never used */
    ASSERT_EQ(p.events[1][1].n, 4 + 3 + 1 + 1);  /* types, joined message ends, queue, mark */
    ASSERT_EQ(p.events[3][1].n, 4 + 2 + 2 + 1);  /* types, message ends, queue and spare, mark */
    unsigned q = 0, s = 0, m = 0;
    for (size_t i = 0; i < p.events[3][1].n; i++) {
        const struct ivl *e = &p.events[3][1].a[i];
        if (e->b == 13 + off[2])
            q = e->v;
        else if (e->b == 14 + off[2])
            s = e->v;
        else if (e->b == 16 + off[2])
            m = e->v;
    }
    ASSERT_STR_EQ(pcf_label(text, q), "queue (x1000)");
    ASSERT_STR_EQ(pcf_label(text, s), "spare (x1000)");
    ASSERT_STR_EQ(pcf_label(text, m), "mark (payload)");
    expect_event(&p, 1, 1, 13 + off[0], q, 1500); /* rank 0's queue: the same event type */
    expect_event(&p, 3, 1, 13 + off[2], q, 2000);
    expect_event(&p, 3, 1, 14 + off[2], s, 3000);
    expect_event(&p, 1, 1, 32 + off[0], m, 9);
    expect_event(&p, 3, 1, 16 + off[2], m, 11);
    char want[1400];
    snprintf(want, sizeof want, "EVENT_TYPE\n0    %u    Message (", EV_MESSAGE);
    ASSERT_EQ(count_of(text, want), 1);
    ASSERT(strstr(text, "VALUES\n1      Send\n2      Receive\n3      Collective send\n"
                        "4      Collective receive\n") != NULL);
    ASSERT(strchr(text, '\t') == NULL);
    free(text);

    /* the states: each thread Idle from its rank's origin, Running while a
     * task stays on it */
    static const struct ivl recv_states[] = {
        {0, 20, 0, 0}, {20, 30, 1, 0}, {30, 40, 0, 0}, {40, 50, 1, 0}};
    const struct list *l = &p.state[2][2];
    ASSERT(l->n == 4 || l->n == 5); /* Idle after 50 unless rank 1 ends the job */
    for (size_t i = 0; i < 4; i++) {
        ASSERT_U64_EQ(l->a[i].b, recv_states[i].b + off[1]);
        ASSERT_U64_EQ(l->a[i].e, recv_states[i].e + off[1]);
        ASSERT_EQ(l->a[i].v, recv_states[i].v);
    }
    ASSERT_U64_EQ(p.state[1][1].a[0].b, off[0]);
    ASSERT_U64_EQ(p.state[3][1].a[0].b, off[2]);
    jprv_free(&p);

    /* every thread named with its rank, every task */
    char row[600];
    snprintf(row, sizeof row, "%s/job.row", dir);
    text = test_slurp(row);
    ASSERT(text != NULL);
    ASSERT_STR_EQ(text, "LEVEL CPU SIZE 0\n\nLEVEL NODE SIZE 1\nnode\n\n"
                        "LEVEL THREAD SIZE 4\nrank 0: main\nrank 1: main\nrank 1: recv-thread\n"
                        "rank 2: main\n\nLEVEL TASK SIZE 3\nrank 0\nrank 1\nrank 2\n\n"
                        "LEVEL APPL SIZE 1\ntaskscope\n");
    free(text);

    /* the paths in another order: the same bytes */
    const char *reversed[JOB_RANKS] = {job_trace[2], job_trace[1], job_trace[0]};
    if (job_convert(reversed, JOB_RANKS, dir, "reversed", &st, &unmatched, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_U64_EQ(unmatched, 2);
    same_files(dir, "job", "reversed");
    /* sorted in runs of 8 records merged 3 at a time: the same bytes */
    tscope__paraver_run_records = 8;
    tscope__paraver_merge_ways = 3;
    int rc = job_convert(in, JOB_RANKS, dir, "spilled", &st, &unmatched, err, sizeof err);
    tscope__paraver_run_records = tscope__paraver_merge_ways = 0;
    if (rc)
        TEST_FAIL("%s", err);
    same_files(dir, "job", "spilled");
    ASSERT_EQ(count_suffix(dir, ".tmp"), 0);

    /* rank 2 missing: the messages between 0 and 1 joined, those to and
     * from 2 and the two on purpose unmatched */
    if (job_convert(in, 2, dir, "two", &st, &unmatched, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_U64_EQ(unmatched, 4);
    uint64_t o0 = rt[0] < rt[1] ? 0 : rt[0] - rt[1], o1 = rt[1] < rt[0] ? 0 : rt[1] - rt[0];
    snprintf(prv, sizeof prv, "%s/two.prv", dir);
    jprv_read(prv, &p);
    ASSERT_EQ(p.ntasks, 2);
    ASSERT_EQ(p.ncomm, 3);
    expect_comm(&p, (struct jcomm){1, 1, 2, 2, 12 + o0, 22 + o1, 100, 5});
    expect_comm(&p, (struct jcomm){1, 1, 2, 2, 14 + o0, 24 + o1, 200, 5});
    expect_comm(&p, (struct jcomm){1, 1, 1, 1, 19 + o0, 30 + o0, 1, TSCOPE_DEP_RAW});
    jprv_free(&p);

    /* one rank's trace twice: two tasks of rank 0, by the paths' order; a
     * peer would name either, so no message is joined */
    const char *twice[2] = {job_trace[0], job_trace[0]};
    if (job_convert(twice, 2, dir, "twice", &st, &unmatched, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_U64_EQ(st.messages, 8);
    ASSERT_U64_EQ(unmatched, 8);
    snprintf(prv, sizeof prv, "%s/twice.prv", dir);
    jprv_read(prv, &p);
    ASSERT_EQ(p.ntasks, 2);
    ASSERT_EQ(p.ncomm, 2); /* the dependency, in each */
    expect_comm(&p, (struct jcomm){1, 1, 1, 1, 19, 30, 1, TSCOPE_DEP_RAW});
    expect_comm(&p, (struct jcomm){2, 1, 2, 1, 19, 30, 1, TSCOPE_DEP_RAW});
    ASSERT_EQ(events_of_type(&p, EV_MESSAGE), 0);
    jprv_free(&p);
    snprintf(row, sizeof row, "%s/twice.row", dir);
    text = test_slurp(row);
    ASSERT(text != NULL && strstr(text, "LEVEL TASK SIZE 2\nrank 0\nrank 0\n") != NULL);
    free(text);

    /* a job of one trace: the same records and names as the trace alone
     * (it has no messages); only the .row says the rank */
    char fixed_prv[400], fixed_pcf[400], fixed_row[400];
    paths(dir, "fixed", fixed_prv, fixed_pcf, fixed_row, sizeof fixed_prv);
    struct tscope__replay_stats st1;
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_PARAVER, fixed_prv, 0, &st1, err,
                              sizeof err))
        TEST_FAIL("%s", err);
    const char *one[1] = {fixed_trace};
    if (job_convert(one, 1, dir, "one", &st, &unmatched, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT(memcmp(&st, &st1, sizeof st) == 0);
    ASSERT_U64_EQ(unmatched, 0);
    char *a = test_slurp(fixed_prv), *b;
    snprintf(prv, sizeof prv, "%s/one.prv", dir);
    b = test_slurp(prv);
    ASSERT(a != NULL && b != NULL);
    ASSERT_STR_EQ(a, b);
    free(a);
    free(b);
    a = test_slurp(fixed_pcf);
    snprintf(pcf, sizeof pcf, "%s/one.pcf", dir);
    b = test_slurp(pcf);
    ASSERT(a != NULL && b != NULL);
    ASSERT_STR_EQ(a, b);
    free(a);
    free(b);
    snprintf(row, sizeof row, "%s/one.row", dir);
    text = test_slurp(row);
    ASSERT(text != NULL && strstr(text, "THREAD SIZE 2\nrank 0: main\nrank 0: worker-b\n"));
    free(text);

    /* errors: one line, nothing written */
    ASSERT_EQ(job_convert(in, 0, dir, "none", &st, &unmatched, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s/none.prv: no rank's trace to convert", dir);
    ASSERT_STR_EQ(err, want);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-such-trace.tsct", dir);
    const char *with_missing[2] = {job_trace[0], missing};
    ASSERT_EQ(job_convert(with_missing, 2, dir, "missing", &st, &unmatched, err, sizeof err), -1);
    ASSERT(strstr(err, missing) != NULL && strchr(err, '\n') == NULL);
    snprintf(prv, sizeof prv, "%s/missing.prv", dir);
    ASSERT(!exists(prv));
    snprintf(prv, sizeof prv, "%s/job.txt", dir);
    ASSERT_EQ(tscope__trace_job_to_paraver(in, JOB_RANKS, prv, &st, &unmatched, err, sizeof err),
              -1);
    snprintf(want, sizeof want, "%s: a Paraver trace's name ends in .prv", prv);
    ASSERT_STR_EQ(err, want);
    ASSERT(!exists(prv));
    snprintf(prv, sizeof prv, "%s/no/such/folder/job.prv", dir);
    ASSERT_EQ(tscope__trace_job_to_paraver(in, JOB_RANKS, prv, &st, &unmatched, err, sizeof err),
              -1);
    snprintf(want, sizeof want, "cannot create %s: %s", prv, strerror(ENOENT));
    ASSERT_STR_EQ(err, want);
    ASSERT_EQ(count_suffix(dir, ".tmp"), 0);
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
    RUN(job_traces);
    RUN(fixed_log);
    RUN(runtime_run);
    errors(argv[0]);
    RUN(empty);
    RUN(job);
    printf("test_trace_paraver: ok\n");
    return 0;
}
