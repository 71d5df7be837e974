/* paraver.c - the trace for Paraver (BSC): trace.prv (records), trace.pcf
 * (what states and event values mean) and trace.row (thread names); the
 * layout facts are in FORMATS.md.
 *
 * One node, one application, one task (the rank), one Paraver thread per
 * thread slot.  Per thread:
 *   - states: Running while a task stays on it; Yielded from the moment its
 *     outermost task yielded (a taskwait, a suspension) until it runs a
 *     task again; Idle otherwise;
 *   - event 60000001 "Task type": the innermost running type at each change
 *     (0 when none), so Paraver colours the timeline by type;
 *   - event 60000101 + n: counter n, as integer x1000 (Paraver values are
 *     integers; the label says so); 60001001 + n: custom event n's payload;
 *   - communications for the dependency arrows (send at the end of the
 *     predecessor's stay, receive at the successor's first begin; size 1,
 *     tag the hazard: 1 RAW, 2 WAR, 3 WAW).
 * Paraver wants the records sorted by time; the replay gives them per
 * thread in time order but threads in file order and arrows late.  They go
 * to a temporary file with a fixed-width time key, sorted by coreutils'
 * sort (an external merge sort: bounded memory whatever the trace's size,
 * -S 64M), then written without the key under the header.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"

#define EV_TYPE 60000001u
#define EV_COUNTER 60000100u /* + counter id */
#define EV_CUSTOM 60001000u  /* + event id */
#define STATE_IDLE 0
#define STATE_RUNNING 1
#define STATE_YIELDED 2
#define UNTYPED 0xFFFFFFFFu /* the "Task type" value of untyped tasks */

struct pthread_state {
    uint32_t *types; /* the stack of running types */
    uint32_t n, cap;
    uint64_t since; /* the current state began */
    int state;      /* STATE_* */
    int seen;
};

struct prv {
    FILE *tmp;
    struct pthread_state *th;
    uint32_t nth;
    uint8_t *counters, *customs; /* ids used */
    uint32_t ncounters, ncustoms;
    uint8_t *types;
    uint32_t ntypes;
    uint64_t records[4]; /* by kind: 1 state, 2 event, 3 communication */
    int oom;
};

static struct pthread_state *thread_of(struct prv *p, uint32_t thread)
{
    if (thread >= p->nth) {
        uint32_t n = p->nth ? p->nth * 2 : 16;
        while (n <= thread)
            n *= 2;
        struct pthread_state *g = realloc(p->th, n * sizeof *g);
        if (!g) {
            p->oom = 1;
            return NULL;
        }
        memset(g + p->nth, 0, (n - p->nth) * sizeof *g);
        p->th = g;
        p->nth = n;
    }
    return &p->th[thread];
}

/* Marks id used in a table of flags. */
static int mark(struct prv *p, uint8_t **flags, uint32_t *n, uint32_t id)
{
    if (id >= *n) {
        uint32_t cap = *n ? *n * 2 : 64;
        while (cap <= id)
            cap *= 2;
        uint8_t *g = realloc(*flags, cap);
        if (!g) {
            p->oom = 1;
            return -1;
        }
        memset(g + *n, 0, cap - *n);
        *flags = g;
        *n = cap;
    }
    (*flags)[id] = 1;
    return 0;
}

/* A record line with its sort key (the time, 20 digits). */
static int put(struct prv *p, int kind, uint64_t key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put(struct prv *p, int kind, uint64_t key, const char *fmt, ...)
{
    fprintf(p->tmp, "%020llu:%d:", (unsigned long long)key, kind);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->tmp, fmt, ap);
    va_end(ap);
    fputc('\n', p->tmp);
    p->records[kind]++;
    return ferror(p->tmp) ? -1 : 0;
}

/* The "Task type" value of a type: 0 is Paraver's "end". */
static uint32_t type_value(uint32_t type)
{
    return type ? type : UNTYPED;
}

/* Ends the thread's current state at ns (a record when it lasted). */
static int state_close(struct prv *p, uint32_t thread, struct pthread_state *s, uint64_t ns)
{
    int rc = 0;
    if (ns > s->since)
        rc = put(p, 1, s->since, "0:1:1:%u:%llu:%llu:%d", thread + 1, (unsigned long long)s->since,
                 (unsigned long long)ns, s->state);
    s->since = ns;
    return rc;
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    struct prv *p = ctx;
    struct pthread_state *s = thread_of(p, thread);
    if (!s || mark(p, &p->types, &p->ntypes, type))
        return -1;
    if (!s->seen) { /* idle from the start */
        s->seen = 1;
        s->since = 0;
        s->state = STATE_IDLE;
    }
    if (s->n == 0) {
        if (state_close(p, thread, s, ns))
            return -1;
        s->state = STATE_RUNNING;
    }
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        uint32_t *g = realloc(s->types, cap * sizeof *g);
        if (!g) {
            p->oom = 1;
            return -1;
        }
        s->types = g;
        s->cap = cap;
    }
    s->types[s->n++] = type;
    return put(p, 2, ns, "0:1:1:%u:%llu:%u:%u", thread + 1, (unsigned long long)ns, EV_TYPE,
               type_value(type));
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    (void)type;
    struct prv *p = ctx;
    struct pthread_state *s = thread_of(p, thread);
    if (!s || s->n == 0)
        return s ? 0 : -1;
    s->n--;
    uint32_t now = s->n ? type_value(s->types[s->n - 1]) : 0;
    if (put(p, 2, ns, "0:1:1:%u:%llu:%u:%u", thread + 1, (unsigned long long)ns, EV_TYPE, now))
        return -1;
    if (s->n)
        return 0;
    int rc = state_close(p, thread, s, ns);
    s->state = STATE_IDLE;
    return rc;
}

/* The outermost stay ended by a yield: the thread waits, not idles. */
static int yielded(void *ctx, uint32_t thread, uint64_t ns, uint64_t task)
{
    (void)task;
    struct prv *p = ctx;
    struct pthread_state *s = thread_of(p, thread);
    if (!s)
        return -1;
    if (s->n == 0 && s->state == STATE_IDLE && s->since == ns)
        s->state = STATE_YIELDED; /* slice_end just began the idle state */
    return 0;
}

static int flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)from_task;
    (void)to_task;
    struct prv *p = ctx;
    if (kind != TSCOPE__FLOW_DEP)
        return 0;
    return put(p, 3, from_ns, "0:1:1:%u:%llu:%llu:0:1:1:%u:%llu:%llu:1:%u", from_thread + 1,
               (unsigned long long)from_ns, (unsigned long long)from_ns, to_thread + 1,
               (unsigned long long)to_ns, (unsigned long long)to_ns, hazard);
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    struct prv *p = ctx;
    if (mark(p, &p->counters, &p->ncounters, id))
        return -1;
    double v = value * 1000.0;
    if (!(v >= 0 && v < 1.8e19)) /* Paraver values are unsigned: negative and NaN as 0 */
        v = 0;
    return put(p, 2, ns, "0:1:1:%u:%llu:%u:%llu", thread + 1, (unsigned long long)ns,
               EV_COUNTER + id, (unsigned long long)(v + 0.5));
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload)
{
    struct prv *p = ctx;
    if (mark(p, &p->customs, &p->ncustoms, event))
        return -1;
    return put(p, 2, ns, "0:1:1:%u:%llu:%u:%llu", thread + 1, (unsigned long long)ns,
               EV_CUSTOM + event, (unsigned long long)payload);
}

/* A label without the characters .pcf lines cannot hold. */
static void put_label(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\t' ? ' ' : *s, f);
}

static const char *name_or(const struct tscope__trace *t, int table, uint32_t id, char *buf,
                           size_t len, const char *kind)
{
    const char *n = tscope__trace_name(t, table, id);
    if (n)
        return n;
    snprintf(buf, len, "%s %u", kind, id);
    return buf;
}

static int write_pcf(const struct prv *p, const struct tscope__trace *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
               "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
               "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n"
               "DEFAULT_SEMANTIC\n\nTHREAD_FUNC         State As Is\n\n\n"
               "STATES\n0    Idle\n1    Running\n2    Yielded (its task waits to resume)\n\n\n"
               "STATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n2    {255,170,0}\n\n\n");
    char buf[64];
    fprintf(f, "EVENT_TYPE\n0    %u    Task type\nVALUES\n0      End\n", EV_TYPE);
    for (uint32_t id = 0; id < p->ntypes; id++) {
        if (!p->types[id])
            continue;
        fprintf(f, "%u      ", type_value(id));
        put_label(f,
                  id ? name_or(t, TSCOPE__TABLE_TYPES, id, buf, sizeof buf, "type") : "(untyped)");
        fputc('\n', f);
    }
    fprintf(f, "\n\n");
    for (uint32_t id = 0; id < p->ncounters; id++) {
        if (!p->counters[id])
            continue;
        fprintf(f, "EVENT_TYPE\n0    %u    ", EV_COUNTER + id);
        put_label(f, name_or(t, TSCOPE__TABLE_COUNTERS, id, buf, sizeof buf, "counter"));
        fprintf(f, " (x1000)\n\n\n");
    }
    for (uint32_t id = 0; id < p->ncustoms; id++) {
        if (!p->customs[id])
            continue;
        fprintf(f, "EVENT_TYPE\n0    %u    ", EV_CUSTOM + id);
        put_label(f, name_or(t, TSCOPE__TABLE_EVENTS, id, buf, sizeof buf, "event"));
        fprintf(f, " (payload)\n\n\n");
    }
    return fclose(f) ? -1 : 0;
}

static int write_row(const struct tscope__trace *t, uint32_t threads, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const struct tscope__trace_info *i = tscope__trace_info(t);
    fprintf(f, "LEVEL CPU SIZE 0\n\nLEVEL NODE SIZE 1\nnode\n\nLEVEL THREAD SIZE %u\n", threads);
    char buf[64];
    for (uint32_t th = 0; th < threads; th++) {
        put_label(f, name_or(t, TSCOPE__TABLE_THREADS, th, buf, sizeof buf, "thread"));
        fputc('\n', f);
    }
    fprintf(f, "\nLEVEL TASK SIZE 1\nrank %u\n\nLEVEL APPL SIZE 1\ntaskscope\n", i->rank);
    return fclose(f) ? -1 : 0;
}

/* Sorts tmp into sorted with sort(1); 0 or -1. */
static int sort_file(const char *tmp, const char *sorted, const char *dir)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setenv("LC_ALL", "C", 1);
        execlp("sort", "sort", "-s", "-t:", "-k1,1", "-S", "64M", "-T", dir, "-o", sorted, tmp,
               (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Copies the sorted records into the .prv without their keys. */
static int write_prv(const char *sorted, const char *path, const struct tscope__trace *t,
                     uint32_t threads, uint64_t end_ns)
{
    FILE *in = fopen(sorted, "r"), *out = fopen(path, "w");
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return -1;
    }
    const struct tscope__trace_info *i = tscope__trace_info(t);
    time_t when = (time_t)(i->realtime_ns / 1000000000u);
    struct tm tm;
    gmtime_r(&when, &tm);
    fprintf(out, "#Paraver (%02d/%02d/%02d at %02d:%02d):%llu_ns:1(%u):1:1(%u:1)\n", tm.tm_mday,
            tm.tm_mon + 1, tm.tm_year % 100, tm.tm_hour, tm.tm_min, (unsigned long long)end_ns,
            threads, threads);
    char line[512];
    while (fgets(line, sizeof line, in)) {
        const char *rec = strchr(line, ':');
        if (rec)
            fputs(rec + 1, out);
    }
    int bad = ferror(in);
    fclose(in);
    return fclose(out) || bad ? -1 : 0;
}

int tscope__trace_to_paraver(struct tscope__trace *t, const char *out,
                             struct tscope__replay_stats *st, char *err, size_t errlen)
{
    size_t n = strlen(out);
    if (n < 5 || strcmp(out + n - 4, ".prv") != 0) {
        snprintf(err, errlen, "%s: a Paraver trace's name ends in .prv", out);
        return -1;
    }
    char stem[1100], pcf[1110], row[1110], tmp[1120], sorted[1120], dir[1100] = ".";
    snprintf(stem, sizeof stem, "%.*s", (int)(n - 4), out);
    snprintf(pcf, sizeof pcf, "%s.pcf", stem);
    snprintf(row, sizeof row, "%s.row", stem);
    snprintf(tmp, sizeof tmp, "%s.records.tmp", stem);
    snprintf(sorted, sizeof sorted, "%s.sorted.tmp", stem);
    const char *slash = strrchr(out, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - out), out);
    struct prv p = {0};
    p.tmp = fopen(tmp, "w");
    if (!p.tmp) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    struct tscope__trace_sink sink = {&p, slice_begin, slice_end, flow, counter, instant, yielded};
    int rc = tscope__trace_replay(t, &sink, st, err, errlen);
    /* each thread's last state lasts until the end */
    for (uint32_t th = 0; rc == 0 && th < p.nth; th++)
        if (p.th[th].seen)
            rc = state_close(&p, th, &p.th[th], st->end_ns);
    if (fclose(p.tmp) != 0 && rc == 0) {
        snprintf(err, errlen, "writing %s failed: %s", tmp, strerror(errno));
        rc = -1;
    } else if (rc == 0 && p.oom) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    uint32_t threads = tscope__trace_info(t)->threads;
    if (threads < p.nth && p.nth) /* slots the replay met past the scan's count */
        for (uint32_t th = threads; th < p.nth; th++)
            if (p.th[th].seen)
                threads = th + 1;
    if (!threads)
        threads = 1;
    if (rc == 0 && sort_file(tmp, sorted, dir)) {
        snprintf(err, errlen, "sorting %s failed (sort from coreutils)", tmp);
        rc = -1;
    }
    if (rc == 0 && write_prv(sorted, out, t, threads, st->end_ns)) {
        snprintf(err, errlen, "writing %s failed: %s", out, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && write_pcf(&p, t, pcf)) {
        snprintf(err, errlen, "writing %s failed: %s", pcf, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && write_row(t, threads, row)) {
        snprintf(err, errlen, "writing %s failed: %s", row, strerror(errno));
        rc = -1;
    }
    remove(tmp);
    remove(sorted);
    if (rc) {
        remove(out);
        remove(pcf);
        remove(row);
    }
    for (uint32_t th = 0; th < p.nth; th++)
        free(p.th[th].types);
    free(p.th);
    free(p.types);
    free(p.counters);
    free(p.customs);
    return rc;
}
