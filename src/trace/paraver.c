/* paraver.c - the trace for Paraver (BSC): trace.prv (records), trace.pcf
 * (what states and event values mean) and trace.row (thread names); the
 * layout facts are in FORMATS.md.
 *
 * One node, one application, one task (the rank), one Paraver thread per
 * thread slot.  Per thread:
 *   - states: Running while a task stays on it; otherwise Yielded while a
 *     task that yielded on it (a taskwait, a suspension) has not resumed
 *     (anywhere), Idle when none has: a worker that runs other tasks in a
 *     taskwait is Running during them and Yielded between them.  A yield
 *     ends the task's stay (the replay's slice_end, then yielded()), so the
 *     tasks waiting to resume are kept in a map (id -> thread; as many
 *     entries as tasks are suspended at once), left at their resume (the
 *     next slice_begin of that task);
 *   - event 60000001 "Task type": the innermost running type at each change
 *     (0 when none), so Paraver colours the timeline by type;
 *   - event 60000100 + n: counter n, as integer x1000, rounded (Paraver
 *     values are unsigned integers: negative and NaN values become 0; the
 *     label says x1000); 60001000 + n: custom event n's payload;
 *   - communications for the dependency arrows, also between two stays on
 *     one thread (Paraver's reader takes them): logical = physical send at
 *     the end of the predecessor's stay, receive at the successor's first
 *     begin; size 1, tag the hazard: 1 RAW, 2 WAR, 3 WAW.
 *
 * Paraver wants the records sorted by time (a state by its begin, a
 * communication by its send); the replay gives them per thread in time
 * order but threads in file order, a state once it ended and arrows late.
 * So the records go, as fixed-size binary records keyed (time, emission
 * order), into a buffer of RUN_RECORDS; the buffer sorted (qsort) is either
 * the whole output or, when it fills up, a run appended to a temporary
 * file next to the output (STEM.runs.tmp).  At the end the runs are merged
 * (a k-way merge on a heap, MERGE_WAYS runs at a time: with more runs,
 * passes through STEM.merge.tmp first) into the .prv, which gets its
 * header then (the end time and thread count are known only after the
 * replay).  Memory is the buffer (20 MiB, plus qsort's scratch, at most as
 * much again), the merge's read buffers (64 x 40 KiB) and the map of
 * suspended tasks, whatever the trace's length; ties keep the
 * emission order, so the output does not depend on where runs were cut.
 * Temporary files are removed, and on an error the outputs too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "profile/u64map.h"

#define EV_TYPE 60000001u
#define EV_COUNTER 60000100u /* + counter id */
#define EV_CUSTOM 60001000u  /* + event id */
#define STATE_IDLE 0
#define STATE_RUNNING 1
#define STATE_YIELDED 2
#define UNTYPED 0xFFFFFFFFu /* the "Task type" value of untyped tasks */

#define RUN_RECORDS (1u << 19) /* 20 MiB of records sorted in memory */
#define MERGE_WAYS 64u         /* runs merged at once */
#define SOURCE_RECORDS 1024u   /* read buffer per run while merging */
#define OUT_BYTES (1u << 20)   /* the .prv's text buffer */

/* Test hooks (tests/test_trace_paraver.c): 0 = the defaults above; small
 * values make tiny traces spill and merge in several passes. */
extern uint32_t tscope__paraver_run_records, tscope__paraver_merge_ways;
uint32_t tscope__paraver_run_records, tscope__paraver_merge_ways;

enum { REC_STATE = 1, REC_EVENT = 2, REC_COMM = 3 };

/* One .prv record before sorting. */
struct rec {
    uint64_t t;      /* the key: a state's begin, an event's time, a send */
    uint64_t seq;    /* emission order: ties keep it */
    uint64_t t2;     /* a state's end, an event's value, a receive */
    uint32_t thread; /* Paraver thread (from 1); a communication's sender */
    uint32_t what;   /* the state, the event type, the receiving thread */
    uint32_t tag;    /* a communication's tag */
    uint32_t kind;   /* REC_* */
};

struct run {
    uint64_t off, n; /* in records, in the run file */
};

struct thread_state {
    uint32_t *types; /* the stack of running types */
    uint32_t n, cap;
    uint64_t since;     /* the current state began */
    uint32_t suspended; /* tasks that yielded here and have not resumed */
    int state;          /* STATE_* */
    int seen;
};

struct prv {
    /* the records */
    struct rec *buf;
    uint32_t nbuf, capbuf;
    uint64_t seq;
    struct run *runs;
    uint32_t nruns, capruns;
    FILE *runfile, *mergefile; /* opened at the first spill */
    const char *runpath, *mergepath;
    uint32_t ways;
    /* the threads and the ids used */
    struct thread_state *th;
    uint32_t nth;
    struct tscope__u64map waiting;       /* suspended task -> the thread it yielded on */
    uint8_t *counters, *customs, *types; /* flags by id */
    uint32_t ncounters, ncustoms, ntypes;
    /* the first failure: errno and the file it concerns (NULL: memory) */
    int failed, err_no;
    const char *err_path;
};

static void fail(struct prv *p, const char *path, int err_no)
{
    if (p->failed)
        return;
    p->failed = 1;
    p->err_path = path;
    p->err_no = err_no;
}

/* ---- sorting and merging ---- */

static int rec_cmp(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int rec_less(const struct rec *x, const struct rec *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

/* Opens (creating or emptying) a temporary file for runs. */
static FILE *open_temp(struct prv *p, const char *path)
{
    FILE *f = fopen(path, "w+b");
    if (!f)
        fail(p, path, errno);
    return f;
}

/* The full buffer, sorted, becomes a run in the run file. */
static int spill(struct prv *p)
{
    if (!p->runfile && !(p->runfile = open_temp(p, p->runpath)))
        return -1;
    if (p->nruns == p->capruns) {
        uint32_t cap = p->capruns ? p->capruns * 2 : 16;
        struct run *g = realloc(p->runs, cap * sizeof *g);
        if (!g) {
            fail(p, NULL, ENOMEM);
            return -1;
        }
        p->runs = g;
        p->capruns = cap;
    }
    qsort(p->buf, p->nbuf, sizeof *p->buf, rec_cmp);
    uint64_t off = p->nruns ? p->runs[p->nruns - 1].off + p->runs[p->nruns - 1].n : 0;
    if (fwrite(p->buf, sizeof *p->buf, p->nbuf, p->runfile) != p->nbuf) {
        fail(p, p->runpath, errno);
        return -1;
    }
    p->runs[p->nruns++] = (struct run){off, p->nbuf};
    p->nbuf = 0;
    return 0;
}

static int add(struct prv *p, const struct rec *r)
{
    if (p->failed)
        return -1;
    if (p->nbuf == p->capbuf && spill(p))
        return -1;
    p->buf[p->nbuf] = *r;
    p->buf[p->nbuf++].seq = p->seq++;
    return 0;
}

/* A sorted sequence being merged: a run in a file, read SOURCE_RECORDS at
 * a time, or the buffer in memory (fd -1). */
struct source {
    struct rec *buf;
    uint32_t n, at;
    int fd;
    uint64_t off, left; /* in records, still in the file */
};

/* 1 a record is at s->buf[s->at], 0 the source is done, -1 a read error. */
static int source_ready(struct source *s)
{
    if (s->at < s->n)
        return 1;
    if (!s->left)
        return 0;
    uint32_t k = s->left < SOURCE_RECORDS ? (uint32_t)s->left : SOURCE_RECORDS;
    size_t want = (size_t)k * sizeof *s->buf, got = 0;
    while (got < want) {
        ssize_t r =
            pread(s->fd, (char *)s->buf + got, want - got, (off_t)(s->off * sizeof *s->buf + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO; /* the file is shorter than its runs */
            return -1;
        }
        got += (size_t)r;
    }
    s->off += k;
    s->left -= k;
    s->n = k;
    s->at = 0;
    return 1;
}

/* Where merged records go: the next pass's file, or the .prv's text. */
struct sink_out {
    int (*put)(struct sink_out *o, const struct rec *r);
    FILE *f;
    const char *path;
    char *text; /* OUT_BYTES */
    size_t len;
    int failed, err_no;
};

static void heap_down(struct source **h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && rec_less(&h[l]->buf[h[l]->at], &h[m]->buf[h[m]->at]))
            m = l;
        if (l + 1 < n && rec_less(&h[l + 1]->buf[h[l + 1]->at], &h[m]->buf[h[m]->at]))
            m = l + 1;
        if (m == i)
            return;
        struct source *s = h[i];
        h[i] = h[m];
        h[m] = s;
        i = m;
    }
}

/* Merges the sources into o; 0, or -1 (a read error: errno set, or o's
 * failure). */
static int merge(struct source *src, uint32_t nsrc, struct sink_out *o)
{
    struct source *heap[MERGE_WAYS + 1];
    uint32_t n = 0;
    for (uint32_t i = 0; i < nsrc; i++) {
        int rc = source_ready(&src[i]);
        if (rc < 0)
            return -1;
        if (rc)
            heap[n++] = &src[i];
    }
    for (uint32_t i = n / 2; i-- > 0;)
        heap_down(heap, n, i);
    while (n) {
        struct source *s = heap[0];
        if (o->put(o, &s->buf[s->at++]))
            return -1;
        int rc = source_ready(s);
        if (rc < 0)
            return -1;
        if (!rc)
            heap[0] = heap[--n];
        heap_down(heap, n, 0);
    }
    return 0;
}

static int put_binary(struct sink_out *o, const struct rec *r)
{
    if (fwrite(r, sizeof *r, 1, o->f) == 1)
        return 0;
    o->failed = 1;
    o->err_no = errno;
    return -1;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_lit(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static int flush_text(struct sink_out *o)
{
    if (o->len && fwrite(o->text, 1, o->len, o->f) != o->len) {
        o->failed = 1;
        o->err_no = errno;
        return -1;
    }
    o->len = 0;
    return 0;
}

/* A record as a .prv line (cpu 0: unknown; appl 1, task 1). */
static int put_text(struct sink_out *o, const struct rec *r)
{
    if (OUT_BYTES - o->len < 256 && flush_text(o))
        return -1;
    char *p = o->text + o->len;
    *p++ = (char)('0' + r->kind);
    p = put_lit(p, ":0:1:1:");
    p = put_u64(p, r->thread);
    *p++ = ':';
    p = put_u64(p, r->t);
    *p++ = ':';
    switch (r->kind) {
    case REC_STATE: /* 1:cpu:appl:task:thread:begin:end:state */
        p = put_u64(p, r->t2);
        *p++ = ':';
        p = put_u64(p, r->what);
        break;
    case REC_EVENT: /* 2:cpu:appl:task:thread:time:type:value */
        p = put_u64(p, r->what);
        *p++ = ':';
        p = put_u64(p, r->t2);
        break;
    default: /* 3:...:lsend:psend:rcpu:rappl:rtask:rthread:lrecv:precv:size:tag */
        p = put_u64(p, r->t);
        p = put_lit(p, ":0:1:1:");
        p = put_u64(p, r->what);
        *p++ = ':';
        p = put_u64(p, r->t2);
        *p++ = ':';
        p = put_u64(p, r->t2);
        p = put_lit(p, ":1:");
        p = put_u64(p, r->tag);
        break;
    }
    *p++ = '\n';
    o->len = (size_t)(p - o->text);
    return 0;
}

/* Merges groups of runs of the run file into single runs until one pass
 * (with the buffer as one more source) can take them all; 0 or -1. */
static int reduce_runs(struct prv *p, struct source *src)
{
    while (p->nruns + 1 > p->ways) {
        if (!p->mergefile && !(p->mergefile = open_temp(p, p->mergepath)))
            return -1;
        if (fflush(p->runfile)) {
            fail(p, p->runpath, errno);
            return -1;
        }
        if (ftruncate(fileno(p->mergefile), 0) || fseeko(p->mergefile, 0, SEEK_SET)) {
            fail(p, p->mergepath, errno);
            return -1;
        }
        struct sink_out o = {put_binary, p->mergefile, p->mergepath, NULL, 0, 0, 0};
        uint32_t out = 0;
        uint64_t off = 0;
        for (uint32_t first = 0; first < p->nruns; first += p->ways) {
            uint32_t k = p->nruns - first < p->ways ? p->nruns - first : p->ways;
            uint64_t total = 0;
            for (uint32_t i = 0; i < k; i++) {
                src[i].fd = fileno(p->runfile);
                src[i].n = src[i].at = 0;
                src[i].off = p->runs[first + i].off;
                src[i].left = p->runs[first + i].n;
                total += src[i].left;
            }
            if (merge(src, k, &o)) {
                fail(p, o.failed ? p->mergepath : p->runpath, o.failed ? o.err_no : errno);
                return -1;
            }
            p->runs[out++] = (struct run){off, total};
            off += total;
        }
        p->nruns = out;
        FILE *f = p->runfile; /* the merged runs are the runs now */
        const char *path = p->runpath;
        p->runfile = p->mergefile;
        p->runpath = p->mergepath;
        p->mergefile = f;
        p->mergepath = path;
    }
    if (fflush(p->runfile)) {
        fail(p, p->runpath, errno);
        return -1;
    }
    return 0;
}

/* All records, sorted, as text into f (after its header). */
static int write_records(struct prv *p, FILE *f, const char *path)
{
    qsort(p->buf, p->nbuf, sizeof *p->buf, rec_cmp);
    struct sink_out o = {put_text, f, path, malloc(OUT_BYTES), 0, 0, 0};
    struct source *src = calloc(p->ways, sizeof *src);
    struct rec *rbuf = p->nruns ? malloc((size_t)p->ways * SOURCE_RECORDS * sizeof *rbuf) : NULL;
    if (!o.text || !src || (p->nruns && !rbuf)) {
        free(o.text);
        free(src);
        free(rbuf);
        fail(p, NULL, ENOMEM);
        return -1;
    }
    for (uint32_t i = 0; i < p->ways; i++)
        src[i].buf = rbuf ? rbuf + (size_t)i * SOURCE_RECORDS : NULL;
    int rc = 0;
    if (p->nruns && reduce_runs(p, src))
        rc = -1;
    uint32_t n = 0;
    for (; rc == 0 && n < p->nruns; n++) {
        src[n].fd = fileno(p->runfile);
        src[n].n = src[n].at = 0;
        src[n].off = p->runs[n].off;
        src[n].left = p->runs[n].n;
    }
    if (rc == 0) {
        src[n] = (struct source){p->buf, p->nbuf, 0, -1, 0, 0}; /* the buffer */
        if (merge(src, n + 1, &o) || flush_text(&o)) {
            fail(p, o.failed ? path : p->runpath, o.failed ? o.err_no : errno);
            rc = -1;
        }
    }
    free(o.text);
    free(src);
    free(rbuf);
    return rc;
}

/* ---- the replay's sink ---- */

static struct thread_state *thread_of(struct prv *p, uint32_t thread)
{
    if (thread >= p->nth) {
        uint32_t n = p->nth ? p->nth * 2 : 16;
        while (n <= thread)
            n *= 2;
        struct thread_state *g = realloc(p->th, n * sizeof *g);
        if (!g) {
            fail(p, NULL, ENOMEM);
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
            fail(p, NULL, ENOMEM);
            return -1;
        }
        memset(g + *n, 0, cap - *n);
        *flags = g;
        *n = cap;
    }
    (*flags)[id] = 1;
    return 0;
}

/* The "Task type" value of a type: 0 is Paraver's "end". */
static uint32_t type_value(uint32_t type)
{
    return type ? type : UNTYPED;
}

static int event(struct prv *p, uint32_t thread, uint64_t ns, uint32_t type, uint64_t value)
{
    struct rec r = {.t = ns, .t2 = value, .thread = thread + 1, .what = type, .kind = REC_EVENT};
    return add(p, &r);
}

/* Ends the thread's current state at ns (a record when it lasted). */
static int state_close(struct prv *p, uint32_t thread, struct thread_state *s, uint64_t ns)
{
    int rc = 0;
    if (ns > s->since) {
        struct rec r = {.t = s->since,
                        .t2 = ns,
                        .thread = thread + 1,
                        .what = (uint32_t)s->state,
                        .kind = REC_STATE};
        rc = add(p, &r);
    }
    s->since = ns;
    return rc;
}

/* A suspended task runs again (at ns, on this or another thread): the
 * thread it yielded on waits for one task less. */
static int resumed(struct prv *p, uint64_t task, uint64_t ns)
{
    uint32_t from;
    if (!p->waiting.count || !tscope__u64map_get(&p->waiting, task, &from))
        return 0;
    tscope__u64map_del(&p->waiting, task);
    struct thread_state *w = &p->th[from];
    if (--w->suspended || w->n || w->state != STATE_YIELDED)
        return 0;
    int rc = state_close(p, from, w, ns); /* nothing to wait for there */
    w->state = STATE_IDLE;
    return rc;
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    struct prv *p = ctx;
    struct thread_state *s = thread_of(p, thread);
    if (!s || mark(p, &p->types, &p->ntypes, type) || resumed(p, task, ns))
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
            fail(p, NULL, ENOMEM);
            return -1;
        }
        s->types = g;
        s->cap = cap;
    }
    s->types[s->n++] = type;
    return event(p, thread, ns, EV_TYPE, type_value(type));
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    (void)type;
    struct prv *p = ctx;
    struct thread_state *s = thread_of(p, thread);
    if (!s || s->n == 0)
        return s ? 0 : -1;
    s->n--;
    /* the enclosing stay's type again, or 0: nothing runs */
    if (event(p, thread, ns, EV_TYPE, s->n ? type_value(s->types[s->n - 1]) : 0))
        return -1;
    if (s->n)
        return 0;
    int rc = state_close(p, thread, s, ns);
    s->state = s->suspended ? STATE_YIELDED : STATE_IDLE;
    return rc;
}

/* The stay that just ended was a yield: the task waits to resume, and
 * with nothing running the thread waits, not idles. */
static int yielded(void *ctx, uint32_t thread, uint64_t ns, uint64_t task)
{
    struct prv *p = ctx;
    struct thread_state *s = thread_of(p, thread);
    int found;
    uint32_t *at = s ? tscope__u64map_upsert(&p->waiting, task, thread, &found) : NULL;
    if (!at) {
        fail(p, NULL, ENOMEM);
        return -1;
    }
    if (found) { /* yielded again without a resume the trace shows */
        if (*at == thread)
            return 0;
        p->th[*at].suspended--;
        *at = thread;
    }
    s->suspended++;
    if (s->n == 0 && s->state == STATE_IDLE && s->since == ns)
        s->state = STATE_YIELDED; /* slice_end just began the idle state */
    return 0;
}

static int flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)from_task;
    (void)to_task;
    if (kind != TSCOPE__FLOW_DEP)
        return 0;
    struct rec r = {.t = from_ns,
                    .t2 = to_ns,
                    .thread = from_thread + 1,
                    .what = to_thread + 1,
                    .tag = hazard,
                    .kind = REC_COMM};
    return add(ctx, &r);
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    struct prv *p = ctx;
    if (mark(p, &p->counters, &p->ncounters, id))
        return -1;
    double v = value * 1000.0;
    if (!(v >= 0 && v < 1.8e19)) /* unsigned values: negative and NaN as 0 */
        v = 0;
    return event(p, thread, ns, EV_COUNTER + id, (uint64_t)(v + 0.5));
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, uint64_t payload)
{
    struct prv *p = ctx;
    if (mark(p, &p->customs, &p->ncustoms, id))
        return -1;
    return event(p, thread, ns, EV_CUSTOM + id, payload);
}

/* ---- the .pcf and .row ---- */

/* A label on one line of its own: no line breaks or tabs, never empty (an
 * empty line ends a section of the .pcf, and Paraver's .row reader
 * mishandles one). */
static void put_label(FILE *f, const char *s, const char *kind, uint32_t id)
{
    if (!s || !*s) {
        fprintf(f, "%s %u", kind, id);
        return;
    }
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' || *s == '\t' ? ' ' : *s, f);
}

static int write_pcf(const struct prv *p, const struct tscope__trace *t, FILE *f)
{
    fprintf(f, "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
               "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
               "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n"
               "DEFAULT_SEMANTIC\n\nTHREAD_FUNC         State As Is\n\n\n"
               "STATES\n0    Idle\n1    Running\n2    Yielded (a task that yielded here waits to "
               "resume)\n\n\n"
               "STATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n2    {255,170,0}\n\n\n");
    fprintf(f, "EVENT_TYPE\n0    %u    Task type\nVALUES\n0      End\n", EV_TYPE);
    for (uint32_t id = 0; id < p->ntypes; id++) {
        if (!p->types[id])
            continue;
        fprintf(f, "%u      ", type_value(id));
        if (id)
            put_label(f, tscope__trace_name(t, TSCOPE__TABLE_TYPES, id), "type", id);
        else
            fputs("(untyped)", f);
        fputc('\n', f);
    }
    fprintf(f, "\n\n");
    for (uint32_t id = 0; id < p->ncounters; id++) {
        if (!p->counters[id])
            continue;
        fprintf(f, "EVENT_TYPE\n0    %u    ", EV_COUNTER + id);
        put_label(f, tscope__trace_name(t, TSCOPE__TABLE_COUNTERS, id), "counter", id);
        fprintf(f, " (x1000)\n\n\n");
    }
    for (uint32_t id = 0; id < p->ncustoms; id++) {
        if (!p->customs[id])
            continue;
        fprintf(f, "EVENT_TYPE\n0    %u    ", EV_CUSTOM + id);
        put_label(f, tscope__trace_name(t, TSCOPE__TABLE_EVENTS, id), "event", id);
        fprintf(f, " (payload)\n\n\n");
    }
    return ferror(f) ? -1 : 0;
}

static int write_row(const struct tscope__trace *t, uint32_t threads, FILE *f)
{
    fprintf(f, "LEVEL CPU SIZE 0\n\nLEVEL NODE SIZE 1\nnode\n\nLEVEL THREAD SIZE %u\n", threads);
    for (uint32_t th = 0; th < threads; th++) {
        put_label(f, tscope__trace_name(t, TSCOPE__TABLE_THREADS, th), "thread", th);
        fputc('\n', f);
    }
    fprintf(f, "\nLEVEL TASK SIZE 1\nrank %u\n\nLEVEL APPL SIZE 1\ntaskscope\n",
            tscope__trace_info(t)->rank);
    return ferror(f) ? -1 : 0;
}

/* Writes the .pcf (row 0) or the .row (row 1) at path (*made once it
 * exists); 0, or -1 with the failure recorded. */
static int write_small(struct prv *p, const struct tscope__trace *t, const char *path, int row,
                       uint32_t threads, int *made)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fail(p, path, errno);
        return -1;
    }
    *made = 1;
    int rc = row ? write_row(t, threads, f) : write_pcf(p, t, f);
    int saved = errno;
    if (fclose(f) && !rc) {
        rc = -1;
        saved = errno;
    }
    if (rc)
        fail(p, path, saved ? saved : EIO);
    return rc;
}

/* ---- the writer ---- */

/* stem + suffix, malloc'd. */
static char *with_suffix(const char *stem, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    char *s = malloc(n + m + 1);
    if (s) {
        memcpy(s, stem, n);
        memcpy(s + n, suffix, m + 1);
    }
    return s;
}

int tscope__trace_to_paraver(struct tscope__trace *t, const char *out,
                             struct tscope__replay_stats *st, char *err, size_t errlen)
{
    size_t n = strlen(out);
    if (n < 5 || strcmp(out + n - 4, ".prv") != 0) {
        snprintf(err, errlen, "%s: a Paraver trace's name ends in .prv", out);
        return -1;
    }
    memset(st, 0, sizeof *st);
    struct prv p = {0};
    char *pcf = with_suffix(out, n - 4, ".pcf"), *row = with_suffix(out, n - 4, ".row");
    char *runs = with_suffix(out, n - 4, ".runs.tmp"),
         *merged = with_suffix(out, n - 4, ".merge.tmp");
    p.capbuf = tscope__paraver_run_records ? tscope__paraver_run_records : RUN_RECORDS;
    p.ways = tscope__paraver_merge_ways >= 2 && tscope__paraver_merge_ways <= MERGE_WAYS
                 ? tscope__paraver_merge_ways
                 : MERGE_WAYS;
    p.buf = malloc((size_t)p.capbuf * sizeof *p.buf);
    p.runpath = runs;
    p.mergepath = merged;
    if (!pcf || !row || !runs || !merged || !p.buf || tscope__u64map_init(&p.waiting, 64)) {
        free(pcf);
        free(row);
        free(runs);
        free(merged);
        free(p.buf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* created first: a bad path fails before the replay */
    FILE *prv = fopen(out, "w");
    int rc = 0;
    if (!prv) {
        snprintf(err, errlen, "cannot create %s: %s", out, strerror(errno));
        rc = -1;
    }
    struct tscope__trace_sink sink = {&p,      slice_begin, slice_end, flow,
                                      counter, instant,     yielded,   NULL};
    if (rc == 0 && tscope__trace_replay(t, &sink, st, err, errlen))
        rc = -1;
    /* each thread's last state lasts until the end */
    for (uint32_t th = 0; rc == 0 && th < p.nth; th++)
        if (p.th[th].seen && state_close(&p, th, &p.th[th], st->end_ns))
            rc = -1;
    uint32_t threads = tscope__trace_info(t)->threads;
    for (uint32_t th = threads; th < p.nth; th++) /* slots past the scan's count */
        if (p.th[th].seen)
            threads = th + 1;
    if (!threads)
        threads = 1;
    if (rc == 0) {
        const struct tscope__trace_info *i = tscope__trace_info(t);
        time_t when = (time_t)(i->realtime_ns / 1000000000u);
        struct tm tm;
        gmtime_r(&when, &tm);
        fprintf(prv, "#Paraver (%02d/%02d/%02d at %02d:%02d):%llu_ns:1(%u):1:1(%u:1)\n", tm.tm_mday,
                tm.tm_mon + 1, tm.tm_year % 100, tm.tm_hour, tm.tm_min,
                (unsigned long long)st->end_ns, threads, threads);
        if (write_records(&p, prv, out))
            rc = -1;
    }
    if (prv) {
        int bad = fclose(prv);
        if (bad && rc == 0) {
            fail(&p, out, errno);
            rc = -1;
        }
    }
    int made_pcf = 0, made_row = 0;
    if (rc == 0 && write_small(&p, t, pcf, 0, threads, &made_pcf))
        rc = -1;
    if (rc == 0 && write_small(&p, t, row, 1, threads, &made_row))
        rc = -1;
    if (rc && p.failed) { /* the writer's failure, not the replay's message */
        if (p.err_path)
            snprintf(err, errlen, "writing %s failed: %s", p.err_path, strerror(p.err_no));
        else
            snprintf(err, errlen, "out of memory");
    }
    if (p.runfile) { /* the temporary files: only those made here */
        fclose(p.runfile);
        remove(p.runpath);
    }
    if (p.mergefile) {
        fclose(p.mergefile);
        remove(p.mergepath);
    }
    if (rc) { /* what this call wrote, and only that */
        if (prv)
            remove(out);
        if (made_pcf)
            remove(pcf);
        if (made_row)
            remove(row);
    }
    for (uint32_t th = 0; th < p.nth; th++)
        free(p.th[th].types);
    free(p.th);
    tscope__u64map_free(&p.waiting);
    free(p.types);
    free(p.counters);
    free(p.customs);
    free(p.buf);
    free(p.runs);
    free(pcf);
    free(row);
    free(runs);
    free(merged);
    return rc;
}
