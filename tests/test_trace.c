/* test_trace.c - the binary trace (src/trace) and its Chrome JSON:
 * - a fixed event log (manual clock, two threads) read back record by
 *   record, exactly as emitted, and converted: golden file, and the JSON
 *   checked as Perfetto would read it (chrome_check);
 * - a real run of the bundled runtime (two workers): the JSON checked, its
 *   tasks per type equal to the profile's calls;
 * - the trace cut by TASKSCOPE_TRACE_MAX_MB and by a failing write (a file
 *   size limit): a valid file marked truncated, the profile complete;
 * - a corrupt trace: one message naming the file, no crash;
 * - 10^7 events converted in bounded memory (peak RSS of the conversion
 *   against one of 10^6). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden.h"
#include "harness.h"
#include "trace_log.h"
#include "trace/convert.h"
#include "trace/read.h"

#ifdef TSCOPE_HAVE_JANSSON
#include <jansson.h>
#endif

/* The digits after the first `after` in text become one "N". */
static void mask_digits(char *text, const char *after)
{
    char *p = strstr(text, after);
    ASSERT(p != NULL);
    p += strlen(after);
    char *q = p;
    while (*q >= '0' && *q <= '9')
        q++;
    ASSERT(q > p);
    *p = 'N';
    memmove(p + 1, q, strlen(q) + 1);
}

/* The fixed log read back (ids: the id-based events; else the handles'). */
static void fixed_log_check(int handles)
{
    if (handles)
        trace_fixed_log_h("tscope-test-trace-fixed-h");
    else
        trace_fixed_log("tscope-test-trace-fixed");
    char path[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    struct tscope__trace *t;
    if (tscope__trace_open(path, &t, err, sizeof err))
        TEST_FAIL("%s", err);
    const struct tscope__trace_info *info = tscope__trace_info(t);
    ASSERT_EQ(info->status, TSCOPE__TRACE_COMPLETE);
    ASSERT_EQ(info->cut, 0);
    ASSERT_EQ(info->has_end, 1);
    ASSERT_EQ(info->end_events, 16); /* the EXT is not an event */
    ASSERT_EQ(info->end_lost, 0);
    ASSERT_STR_EQ(tscope__trace_name(t, TSCOPE__TABLE_TYPES, t_child), "child \"quoted\"");
    ASSERT_STR_EQ(tscope__trace_name(t, TSCOPE__TABLE_COUNTERS, c_queue), "queue");
    ASSERT_STR_EQ(tscope__trace_name(t, TSCOPE__TABLE_EVENTS, e_mark), "mark");

    static const struct expect main_log[] = {
        {TSCOPE__REC_CREATE, 1, 0, 0, 0},     {TSCOPE__REC_BEGIN, 1, 0, 0, 0},
        {TSCOPE__REC_CREATE, 2, 1, 10, 0},    {TSCOPE__REC_CREATE, 3, 1, 10, 0},
        {TSCOPE__REC_DEP_LOCAL, 2, 3, 10, 0}, {TSCOPE__REC_EXT, 0, 0, 10, 0},
        {TSCOPE__REC_COUNTER, 0, 0, 12, 0},   {TSCOPE__REC_CUSTOM, 0, 7, 12, 0},
        {TSCOPE__REC_START, 4, 0, 15, 0},     {TSCOPE__REC_END, 4, 0, 18, 0},
        {TSCOPE__REC_YIELD, 1, 0, 20, 0},     {TSCOPE__REC_RESUME, 1, 0, 41, 0},
        {TSCOPE__REC_END, 1, 0, 50, 0}};
    static const struct expect b_log[] = {{TSCOPE__REC_BEGIN, 2, 0, 21, 0},
                                          {TSCOPE__REC_END, 2, 0, 30, 0},
                                          {TSCOPE__REC_BEGIN, 3, 0, 31, 0},
                                          {TSCOPE__REC_END, 3, 0, 40, 0}};
    size_t nm = 0, nb = 0;
    uint32_t main_slot = UINT32_MAX, b_slot = UINT32_MAX, thread;
    struct tscope__rec rec;
    int rc;
    while ((rc = tscope__trace_next(t, &thread, &rec)) == 1) {
        const char *tname = tscope__trace_name(t, TSCOPE__TABLE_THREADS, thread);
        ASSERT(tname != NULL);
        const struct expect *x;
        if (strcmp(tname, "main") == 0) {
            ASSERT(main_slot == UINT32_MAX || main_slot == thread);
            main_slot = thread;
            ASSERT(nm < sizeof main_log / sizeof main_log[0]);
            x = &main_log[nm++];
        } else {
            ASSERT_STR_EQ(tname, "worker-b");
            b_slot = thread;
            ASSERT(nb < sizeof b_log / sizeof b_log[0]);
            x = &b_log[nb++];
        }
        ASSERT_EQ(rec.kind, x->kind);
        ASSERT_NEAR(tscope__trace_ns(info, rec.ts), (double)x->t, 0);
        if (rec.kind == TSCOPE__REC_EXT) {
            ASSERT_U64_EQ(rec.id, (uintptr_t)&marker);
            continue;
        }
        if (rec.kind == TSCOPE__REC_COUNTER) {
            double v;
            memcpy(&v, &rec.arg, sizeof v);
            ASSERT_NEAR(v, 2.5, 0);
            ASSERT_EQ(rec.type, c_queue);
            continue;
        }
        if (rec.kind == TSCOPE__REC_CUSTOM) {
            ASSERT_EQ(rec.type, e_mark);
            ASSERT_U64_EQ(rec.arg, 7);
            continue;
        }
        ASSERT_U64_EQ(rec.id, x->id);
        if (rec.kind == TSCOPE__REC_CREATE) {
            ASSERT_EQ(rec.flags, 0); /* a shadow's mark stays out of the trace */
            ASSERT_U64_EQ(rec.arg, x->arg);
            ASSERT_EQ(rec.type, x->id == 1 ? t_root : t_child);
            ASSERT_EQ(rec.prio, x->id == 1 ? 0 : x->id == 2 ? 3 : -2);
            ASSERT_EQ(rec.depth, x->id == 1 ? 0 : 1);
        }
        if (rec.kind == TSCOPE__REC_DEP_LOCAL) {
            ASSERT_U64_EQ(rec.arg, 3);
            ASSERT_EQ(rec.flags, TSCOPE_DEP_RAW);
        }
        if (rec.kind == TSCOPE__REC_START)
            ASSERT_EQ(rec.type, t_leaf);
    }
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(nm, sizeof main_log / sizeof main_log[0]);
    ASSERT_EQ(nb, sizeof b_log / sizeof b_log[0]);
    ASSERT(b_slot != main_slot);
    tscope__trace_close(t);

    char json[400];
    snprintf(json, sizeof json, "%s/trace.json", trace_dir);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_CHROME, json, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.tasks, 4);
    ASSERT_EQ(st.slices, 5); /* root twice (a yield splits it), 2, 3, 4 */
    ASSERT_EQ(st.flows, 3);  /* creations of 2 and 3, the RAW 2 -> 3 */
    ASSERT_EQ(st.flows_lost, 0);
    ASSERT_EQ(st.unmatched, 0);
    ASSERT_EQ(st.counters, 1);
    ASSERT_EQ(st.instants, 1);
    ASSERT_U64_EQ(st.end_ns, 50);
    /* the golden file, with what differs per run (pid, wall clock) masked */
    char *text = test_slurp(json);
    ASSERT(text != NULL);
    mask_digits(text, "\"realtime_origin_ns\":");
    mask_digits(text, "(pid ");
    test_check_golden("trace_fixed.json", text);
    free(text);

    /* compressed: the same bytes once gunzipped */
    char gz[400], cmd[1000];
    snprintf(gz, sizeof gz, "%s/trace.json.gz", trace_dir);
#ifdef TSCOPE_HAVE_ZLIB
    if (tscope__trace_convert(path, TSCOPE__FMT_CHROME, gz, 1, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    snprintf(cmd, sizeof cmd, "gzip -dc '%s' | cmp -s - '%s'", gz, json);
    ASSERT_EQ(system(cmd), 0);
#else
    ASSERT_EQ(tscope__trace_convert(path, TSCOPE__FMT_CHROME, gz, 1, &st, err, sizeof err), -1);
    ASSERT(strstr(err, "built without zlib") != NULL);
    (void)cmd;
#endif
}

/* The picture of the fixed log: one line per stay (thread, lane, begin and
 * end in ms, type), and a script that names the types. */
static void fixed_log_picture(void)
{
    char path[400], gp[400], csv[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    snprintf(gp, sizeof gp, "%s/timeline.gp", trace_dir);
    snprintf(csv, sizeof csv, "%s/timeline.csv", trace_dir);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_TIMELINE, gp, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    char *text = test_slurp(csv);
    ASSERT(text != NULL);
    char want[5][80];
    snprintf(want[0], 80, "0,1,1.5e-05,1.8e-05,%u\n", t_leaf); /* in root: lane 1 */
    snprintf(want[1], 80, "0,0,0,2e-05,%u\n", t_root);         /* root until its yield */
    snprintf(want[2], 80, "1,0,2.1e-05,3e-05,%u\n", t_child);  /* on worker-b */
    snprintf(want[3], 80, "1,0,3.1e-05,4e-05,%u\n", t_child);
    snprintf(want[4], 80, "0,0,4.1e-05,5e-05,%u\n", t_root);
    const char *at = text;
    for (int k = 0; k < 5; k++) { /* in file order: the chunks main, worker-b, main */
        const char *hit = strstr(at, want[k]);
        if (!hit)
            TEST_FAIL("timeline.csv lacks (in order) %s in:\n%s", want[k], text);
        at = hit + strlen(want[k]);
    }
    free(text);
    text = test_slurp(gp);
    ASSERT(strstr(text, "title 'child \"quoted\"'") != NULL);
    ASSERT(strstr(text, "set output 'timeline.svg'") != NULL);
    free(text);
}

/* ---- the Chrome JSON as a viewer reads it ---- */

#ifdef TSCOPE_HAVE_JANSSON
struct slice {
    double b, e;
};

struct track {
    int64_t pid, tid;
    struct slice *s;
    size_t n, cap;
    size_t open[256]; /* the stack: indexes into s */
    int depth;
    double last;
};

static struct track *track_of(struct track **tr, size_t *n, int64_t pid, int64_t tid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*tr)[i].pid == pid && (*tr)[i].tid == tid)
            return &(*tr)[i];
    *tr = realloc(*tr, (*n + 1) * sizeof **tr);
    ASSERT(*tr != NULL);
    memset(&(*tr)[*n], 0, sizeof **tr);
    (*tr)[*n].pid = pid;
    (*tr)[*n].tid = tid;
    (*tr)[*n].last = -1;
    return &(*tr)[(*n)++];
}

/* Whether a slice on the track encloses ts. */
static int bound(const struct track *t, double ts)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i].b <= ts && ts <= t->s[i].e)
            return 1;
    return 0;
}

struct named_count {
    char name[300];
    uint64_t tasks;
    uint64_t *ids;
    size_t nids, cap;
};

/* Checks what Perfetto relies on: B/E nested and in time order per thread,
 * every slice inside its parent, every flow with one start bound to a
 * slice and one end bound to a slice; counts the distinct tasks per slice
 * name into counts[] (names[] given).  Returns the number of flows. */
static size_t chrome_check(const char *path, struct named_count *counts, size_t ncounts)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        TEST_FAIL("%s:%d: %s", path, jerr.line, jerr.text);
    json_t *evs = json_object_get(root, "traceEvents");
    ASSERT(json_is_array(evs));
    struct track *tr = NULL;
    size_t ntr = 0;
    size_t i;
    json_t *ev;
    /* pass 1: slices */
    json_array_foreach(evs, i, ev)
    {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        ASSERT(ph != NULL);
        ASSERT(json_is_integer(json_object_get(ev, "pid")));
        if (strcmp(ph, "M") == 0 || strcmp(ph, "C") == 0 || strcmp(ph, "s") == 0 ||
            strcmp(ph, "f") == 0)
            continue;
        ASSERT(json_is_integer(json_object_get(ev, "tid")));
        double ts = json_number_value(json_object_get(ev, "ts"));
        struct track *t = track_of(&tr, &ntr, json_integer_value(json_object_get(ev, "pid")),
                                   json_integer_value(json_object_get(ev, "tid")));
        ASSERT(ts >= t->last); /* monotonic per thread */
        t->last = ts;
        if (strcmp(ph, "B") == 0) {
            ASSERT(t->depth < 256);
            if (t->n == t->cap) {
                t->cap = t->cap ? 2 * t->cap : 64;
                t->s = realloc(t->s, t->cap * sizeof *t->s);
                ASSERT(t->s != NULL);
            }
            t->s[t->n] = (struct slice){ts, -1};
            t->open[t->depth++] = t->n++;
            const char *name = json_string_value(json_object_get(ev, "name"));
            json_t *task = json_object_get(json_object_get(ev, "args"), "task");
            ASSERT(name != NULL && json_is_integer(task));
            for (size_t c = 0; c < ncounts; c++) {
                if (strcmp(counts[c].name, name) != 0)
                    continue;
                uint64_t id = (uint64_t)json_integer_value(task);
                size_t k = 0;
                while (k < counts[c].nids && counts[c].ids[k] != id)
                    k++;
                if (k < counts[c].nids)
                    break;
                if (counts[c].nids == counts[c].cap) {
                    counts[c].cap = counts[c].cap ? 2 * counts[c].cap : 64;
                    counts[c].ids = realloc(counts[c].ids, counts[c].cap * sizeof(uint64_t));
                    ASSERT(counts[c].ids != NULL);
                }
                counts[c].ids[counts[c].nids++] = id;
                counts[c].tasks++;
            }
        } else if (strcmp(ph, "E") == 0) {
            ASSERT(t->depth > 0);
            struct slice *s = &t->s[t->open[--t->depth]];
            s->e = ts;
            ASSERT(s->e >= s->b);
            if (t->depth > 0) { /* inside its parent */
                const struct slice *parent = &t->s[t->open[t->depth - 1]];
                ASSERT(parent->b <= s->b);
            }
        } else {
            ASSERT(strcmp(ph, "i") == 0);
        }
    }
    for (size_t k = 0; k < ntr; k++)
        ASSERT_EQ(tr[k].depth, 0);
    /* pass 2: flows */
    size_t flows = 0, ends = 0;
    json_array_foreach(evs, i, ev)
    {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        if (strcmp(ph, "s") != 0 && strcmp(ph, "f") != 0)
            continue;
        if (ph[0] == 's')
            flows++;
        else {
            ends++;
            ASSERT_STR_EQ(json_string_value(json_object_get(ev, "bp")), "e");
        }
        struct track *t = track_of(&tr, &ntr, json_integer_value(json_object_get(ev, "pid")),
                                   json_integer_value(json_object_get(ev, "tid")));
        if (!bound(t, json_number_value(json_object_get(ev, "ts"))))
            TEST_FAIL("%s: flow %s %lld at ts %.3f is not inside a slice of tid %lld", path, ph,
                      (long long)json_integer_value(json_object_get(ev, "id")),
                      json_number_value(json_object_get(ev, "ts")), (long long)t->tid);
    }
    ASSERT_EQ(flows, ends);
    /* each id once as a start and once as an end */
    json_t *seen = json_object();
    json_array_foreach(evs, i, ev)
    {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        if (strcmp(ph, "s") != 0 && strcmp(ph, "f") != 0)
            continue;
        char key[64];
        snprintf(key, sizeof key, "%s%lld", ph,
                 (long long)json_integer_value(json_object_get(ev, "id")));
        ASSERT(json_object_get(seen, key) == NULL);
        json_object_set_new(seen, key, json_true());
    }
    json_decref(seen);
    for (size_t k = 0; k < ntr; k++)
        free(tr[k].s);
    free(tr);
    json_decref(root);
    return flows;
}
#endif

static void fixed_log_json(void)
{
#ifdef TSCOPE_HAVE_JANSSON
    struct named_count c[3] = {{.name = "root"}, {.name = "child \"quoted\""}, {.name = "leaf"}};
    char json[400];
    snprintf(json, sizeof json, "%s/trace.json", trace_dir);
    ASSERT_EQ(chrome_check(json, c, 3), 3);
    ASSERT_EQ(c[0].tasks, 1);
    ASSERT_EQ(c[1].tasks, 2);
    ASSERT_EQ(c[2].tasks, 1);
    for (int k = 0; k < 3; k++)
        free(c[k].ids);
#else
    printf("test_trace: the Chrome JSON checks are skipped: built without jansson\n");
#endif
}

/* ---- a real run: the bundled runtime on two workers ---- */

static void runtime_run(void)
{
    tscope_type_stats_t fib, dep;
    trace_runtime_log("tscope-test-trace-rt", &fib, &dep);

    char path[400], json[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    snprintf(json, sizeof json, "%s/trace.json", trace_dir);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_CHROME, json, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.unmatched, 0);
    ASSERT_EQ(st.flows_lost, 0);
    ASSERT_U64_EQ(st.tasks, fib.calls + dep.calls);
    ASSERT_GT(st.end_ns, 10000); /* real times: fib(15) runs far longer than 10 us */
    /* the dependency records the runtime wrote: each is one arrow */
    struct tscope__trace *t;
    if (tscope__trace_open(path, &t, err, sizeof err))
        TEST_FAIL("%s", err);
    uint64_t ndeps = 0;
    uint32_t thread;
    struct tscope__rec rec;
    while (tscope__trace_next(t, &thread, &rec) == 1)
        ndeps += rec.kind == TSCOPE__REC_DEP_LOCAL;
    tscope__trace_close(t);
    ASSERT_GT(ndeps, 40);
#ifdef TSCOPE_HAVE_JANSSON
    struct named_count c[2] = {{.name = "fib"}, {.name = "dep"}};
    size_t flows = chrome_check(json, c, 2);
    ASSERT_U64_EQ(c[0].tasks, fib.calls);
    ASSERT_U64_EQ(c[1].tasks, dep.calls);
    ASSERT_U64_EQ(flows, st.flows);
    /* every task has a creation arrow, from a running task (main spawns
     * outside any: no arrow there), and every dependency one */
    ASSERT_U64_EQ(st.flows + st.flows_unbound, fib.calls + dep.calls + ndeps);
    free(c[0].ids);
    free(c[1].ids);
#endif
}

/* ---- cut short ---- */

static tscope_type_t t_many;

/* n leaf tasks and n explicit ones, with the real clock; returns the
 * profile's calls. */
static uint64_t many_tasks(uint64_t n)
{
    tscope__clock_use_real();
    ASSERT_OK(tscope_init(0, 1));
    t_many = type_named("many");
    for (uint64_t i = 1; i <= n; i++) {
        ASSERT_OK(tscope_task_start(2 * i, t_many));
        ASSERT_OK(tscope_task_end(2 * i));
        ASSERT_OK(tscope_task_create(2 * i + 1, 0, t_many, 0, 0, 0));
        ASSERT_OK(tscope_task_begin(2 * i + 1, 0));
        ASSERT_OK(tscope_task_end(2 * i + 1));
    }
    ASSERT_OK(tscope_flush());
    uint64_t calls = type_stats(t_many).calls;
    ASSERT_OK(tscope_finalize());
    return calls;
}

/* Reads the whole trace: its status, and how many records it held. */
static uint64_t read_all(const char *path, uint32_t *status)
{
    char err[400];
    struct tscope__trace *t;
    if (tscope__trace_open(path, &t, err, sizeof err))
        TEST_FAIL("%s", err);
    *status = tscope__trace_info(t)->status;
    uint32_t thread;
    struct tscope__rec rec;
    uint64_t n = 0;
    int rc;
    while ((rc = tscope__trace_next(t, &thread, &rec)) == 1)
        n++;
    if (rc < 0)
        TEST_FAIL("%s", tscope__trace_error(t));
    tscope__trace_close(t);
    return n;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    ASSERT_EQ(stat(path, &sb), 0);
    return (uint64_t)sb.st_size;
}

/* TASKSCOPE_TRACE_MAX_MB: the trace stops at 1 MiB, marked; the profile
 * has every task. */
static void size_limit(void)
{
    outdir("tscope-test-trace-limit");
    trace_env("1");
    setenv("TASKSCOPE_TRACE_MAX_MB", "1", 1);
    setenv("TASKSCOPE_OUTPUTS", "json", 1);
    uint64_t calls = many_tasks(200000);
    unsetenv("TASKSCOPE_TRACE_MAX_MB");
    ASSERT_U64_EQ(calls, 400000);
    char path[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    ASSERT_LE(file_size(path), 1u << 20);
    uint32_t status;
    uint64_t n = read_all(path, &status);
    ASSERT_EQ(status, TSCOPE__TRACE_LIMIT);
    ASSERT_GT(n, 100000); /* 1 MiB of it */
    ASSERT(n < 1000000);  /* of 1,000,000 */
    snprintf(path, sizeof path, "%s/profile.json", trace_dir);
    ASSERT_GT(file_size(path), 0);
}

/* A write that fails (a file size limit: EFBIG, as a full disk gives
 * ENOSPC), in a child process of this program: the trace ends at its last
 * whole chunk, marked, with one line on stderr; the profile is written. */
static int fsize_child(void)
{
    struct rlimit rl = {512 * 1024, 512 * 1024};
    signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
    uint64_t calls = many_tasks(200000);
    return calls == 400000 ? 0 : 3;
}

static void write_fails(const char *self)
{
    outdir("tscope-test-trace-full");
    trace_env("1");
    setenv("TASKSCOPE_OUTPUTS", "json", 1);
    char log[400], cmd[1200];
    snprintf(log, sizeof log, "%s.stderr", trace_dir);
    snprintf(cmd, sizeof cmd, "'%s' fsize-child 2>'%s'", self, log);
    ASSERT_EQ(system(cmd), 0);
    char *text = test_slurp(log);
    ASSERT(text != NULL);
    ASSERT(strstr(text, "trace.tsct: write failed after") != NULL);
    ASSERT(strstr(text, "File too large") != NULL);
    ASSERT(strstr(text, "the profile is still written") != NULL);
    free(text);
    char path[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    ASSERT_LE(file_size(path), 512 * 1024);
    uint32_t status;
    uint64_t n = read_all(path, &status);
    ASSERT_EQ(status, TSCOPE__TRACE_FULL);
    ASSERT_GT(n, 10000);
    snprintf(path, sizeof path, "%s/profile.json", trace_dir);
    ASSERT_GT(file_size(path), 0);
    /* still converts, saying it is truncated */
    char json[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    snprintf(json, sizeof json, "%s/trace.json", trace_dir);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_CHROME, json, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    text = test_slurp(json);
    ASSERT(strstr(text, "\"trace_status\":\"truncated: a write failed (disk full)\"") != NULL);
    free(text);
}

/* Damaged files: one message naming the file; a file cut inside a chunk
 * reads up to its last whole chunk. */
static void damaged(void)
{
    trace_fixed_log("tscope-test-trace-damaged");
    char path[400], bad[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    snprintf(bad, sizeof bad, "%s/bad.tsct", trace_dir);
    char *good = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    ASSERT(f != NULL);
    good = malloc(1 << 20);
    len = fread(good, 1, 1 << 20, f);
    fclose(f);
    /* the first EVENTS chunk: its first record's kind byte made unknown */
    size_t off = 32;
    while (off + 8 <= len && tscope__le32_get((unsigned char *)good + off) != 3)
        off += 8 + tscope__le32_get((unsigned char *)good + off + 4);
    ASSERT(off + 8 < len);
    const unsigned char *p = (unsigned char *)good + off + 8;
    uint64_t thread;
    ASSERT_EQ(tscope__varint_get(&p, p + 10, &thread), 0);
    size_t kind_at = (size_t)(p - (unsigned char *)good) + 8;
    char saved = good[kind_at];
    good[kind_at] = (char)0xEE;
    f = fopen(bad, "wb");
    fwrite(good, 1, len, f);
    fclose(f);
    struct tscope__replay_stats st;
    char json[400];
    snprintf(json, sizeof json, "%s/bad.json", trace_dir);
    ASSERT_EQ(tscope__trace_convert(bad, TSCOPE__FMT_CHROME, json, 0, &st, err, sizeof err), -1);
    ASSERT(strstr(err, bad) != NULL);
    ASSERT(strstr(err, "a corrupt record (kind 238)") != NULL);
    ASSERT(access(json, F_OK) != 0); /* no partial output left (issue 30) */
    good[kind_at] = saved;
    /* not a trace */
    f = fopen(json, "w");
    ASSERT(f != NULL);
    fputs("{}\n", f);
    fclose(f);
    ASSERT_EQ(tscope__trace_convert(json, TSCOPE__FMT_CHROME, json, 0, &st, err, sizeof err), -1);
    ASSERT(strstr(err, "not a taskscope trace") != NULL);
    /* cut inside the last chunk: what is whole still converts */
    f = fopen(bad, "wb");
    fwrite(good, 1, len - 5, f);
    fclose(f);
    struct tscope__trace *t;
    if (tscope__trace_open(bad, &t, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(tscope__trace_info(t)->cut, 1);
    tscope__trace_close(t);
    if (tscope__trace_convert(bad, TSCOPE__FMT_CHROME, json, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_GT(st.records, 0);
    free(good);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "fsize-child") == 0)
        return fsize_child();
    fixed_log_check(0);
    fixed_log_json();
    fixed_log_picture();
    fixed_log_check(1); /* the same trace from handles on threads that aggregate */
    runtime_run();
    size_limit();
    write_fails(argv[0]);
    damaged();
    printf("test_trace: ok\n");
    return 0;
}
