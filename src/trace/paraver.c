/* paraver.c - traces for Paraver (BSC): trace.prv (records), trace.pcf
 * (what states and event values mean) and trace.row (object names); the
 * layout facts are in FORMATS.md.
 *
 * One writer for a job's ranks and for one trace, which is a job of one
 * rank whose messages are left out: one node, one application, a Paraver
 * task per rank in rank order (traces that claim one rank - the same trace
 * given twice - in the order of the paths; a rank past the trace's nranks
 * is just a number), each with a Paraver thread per thread slot of its
 * trace (at least 1).  The ranks are replayed one after the other in task
 * order, each rank's times moved onto the common clock of the earliest
 * (job.h; nothing moves for one trace); while records are sorted a thread
 * is known by one number across the job (its rank's first number + its
 * slot), mapped back to task:thread when the record is written.  The
 * output does not depend on the order of the paths.  Per thread:
 *   - states: Running while a task stays on it; otherwise Yielded while a
 *     task that yielded on it (a taskwait, a suspension) has not resumed
 *     (anywhere), Idle when none has: a worker that runs other tasks in a
 *     taskwait is Running during them and Yielded between them.  A yield
 *     ends the task's stay (the replay's slice_end, then yielded()), so the
 *     tasks waiting to resume are kept in a map (id -> thread; as many
 *     entries as tasks of the rank are suspended at once), left at their
 *     resume (the next slice_begin of that task).  A thread is Idle from
 *     its rank's origin (0 for the earliest rank) until its first stay, and
 *     its last state lasts until the job's end;
 *   - event 60000001 "Task type": the innermost running type at each change
 *     (0 when none), so Paraver colours the timeline by type;
 *   - event 60000100 + n: counter n, as integer x1000, rounded (Paraver
 *     values are unsigned integers: negative and NaN values become 0; the
 *     label says x1000); 60001000 + n: custom event n's payload;
 *   - communications for the dependency arrows, also between two stays on
 *     one thread (Paraver's reader takes them): logical = physical send at
 *     the end of the predecessor's stay, receive at the successor's first
 *     begin; size 1, tag the hazard bits: 1 RAW, 2 WAR, 4 WAW, 8 mutex (a
 *     mutual exclusion, drawn in the order the two ran), or their sum;
 *   - a job's messages, each send joined to its receive (job.h): a
 *     communication from the sender's thread at the send (logical =
 *     physical) to the receiver's thread at the receive, size the bytes
 *     sent, tag the MPI tag, or 2^31 for a collective's share (above any
 *     MPI tag, which is at most INT_MAX).  As an MPI tag may be 1..3 too,
 *     each end also gets event 60000002 "Message" on its thread at its time
 *     (1 send, 2 receive, 3 collective send, 4 collective receive): a
 *     communication with that event at its send is a message, one without
 *     it a dependency.  Ends without a partner are counted, not drawn; when
 *     two traces claim one rank no message is joined (a peer rank would
 *     name either) and every end is counted.
 * Each trace has its own type, counter and custom event ids; the job's
 * values are unified by name: the first task's ids keep their numbers (so
 * one trace's values are its ids), a name that another rank brings first
 * keeps its id when no other name has that value, else takes the next free
 * one; the .pcf names each value once.
 *
 * Paraver wants the records sorted by time (a state by its begin, a
 * communication by its send); the replay gives them per thread in time
 * order but threads in file order, a state once it ended and arrows late,
 * and the messages come at the end, once every rank is replayed.  So the
 * records go, as fixed-size binary records keyed (time, emission order),
 * through an external sort (extsort.h: a buffer of RUN_RECORDS, runs in
 * STEM.runs.tmp next to the output, merged MERGE_WAYS at a time) into the
 * .prv, which gets its header first (the end time and thread counts are
 * known only after the replays).  Memory is the sort's buffer (20 MiB, plus
 * qsort's scratch, at most as much again), its read buffers (64 x 40 KiB),
 * the map of suspended tasks and the tables of names, plus a job's message
 * ends (40 bytes each, kept until they are joined at the end), whatever the
 * traces' length; ties keep the emission order, so the output does not
 * depend on where runs were cut.  The three files are written under
 * temporary names and renamed once all three are whole (core/outfile.h);
 * on an error nothing is left, temporary or not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "core/outfile.h"
#include "extsort.h"
#include "job.h"
#include "put.h"
#include "profile/u64map.h"
#include "taskscope/taskscope.h"

#define EV_TYPE 60000001u
#define EV_MESSAGE 60000002u /* at a message's ends: MSG_EV_* */
#define EV_COUNTER 60000100u /* + counter id */
#define EV_CUSTOM 60001000u  /* + event id */
#define STATE_IDLE 0
#define STATE_RUNNING 1
#define STATE_YIELDED 2
#define UNTYPED 0xFFFFFFFFu        /* the "Task type" value of untyped tasks */
#define COLLECTIVE_TAG 2147483648u /* a collective's share: no MPI tag is 2^31 */
#define MSG_EV_SEND 1u
#define MSG_EV_RECV 2u
#define MSG_EV_COLL_SEND 3u
#define MSG_EV_COLL_RECV 4u
#define THREADS_MAX 0x10000u /* thread slots of one trace (read.c) */

#define RUN_RECORDS (1u << 19)              /* 20 MiB of records sorted in memory */
#define MERGE_WAYS TSCOPE__EXTSORT_WAYS_MAX /* runs merged at once */
#define OUT_BYTES (1u << 20)                /* the .prv's text buffer */

/* Test hooks (tests/test_trace_paraver.c): 0 = the defaults above; small
 * values make tiny traces spill and merge in several passes. */
extern uint32_t tscope__paraver_run_records, tscope__paraver_merge_ways;
uint32_t tscope__paraver_run_records, tscope__paraver_merge_ways;

/* What a record is: the low 2 bits of its order. */
enum { REC_MSG = 0, REC_STATE = 1, REC_EVENT = 2, REC_COMM = 3 };
#define KIND_BITS 2

/* One .prv record before sorting (40 bytes). */
struct rec {
    uint64_t t;      /* the key: a state's begin, an event's time, a send */
    uint64_t order;  /* emission order << KIND_BITS | the kind: ties keep it */
    uint64_t t2;     /* a state's end, an event's value, a receive */
    uint32_t thread; /* the job's thread number (from 0); a communication's sender */
    uint32_t what;   /* the state, the event type, the receiving thread */
    uint32_t tag;    /* a communication's tag */
    uint32_t msg;    /* REC_MSG: its send's index in the job's messages (the size) */
};

struct thread_state {
    uint32_t *types; /* the stack of running types */
    uint32_t n, cap;
    uint64_t since;     /* the current state began */
    uint32_t suspended; /* tasks that yielded here and have not resumed */
    int state;          /* STATE_* */
    int seen;
};

/* A rank of the job: a Paraver task. */
struct member {
    struct tscope__trace *t;
    uint64_t offset; /* ns added to its times */
    uint32_t rank;
    int pos;                /* in the paths: ties of rank keep it */
    uint32_t base, threads; /* its threads are the job's base .. base + threads - 1 */
};

/* A job's thread as Paraver numbers it (both from 1). */
struct place {
    uint32_t task, thread;
};

/* Who named a value of the job first: a trace and its id (t NULL: the
 * value is unused). */
struct named {
    const struct tscope__trace *t;
    uint32_t id;
};

/* The ids of one table (types, counters, custom events) unified by name. */
struct ids {
    int table; /* TSCOPE__TABLE_* */
    struct named *by_value;
    uint32_t nvalues, top; /* top: the highest value used + 1 */
    uint32_t *hash;        /* (name, or id when unnamed) -> value + 1; 0 empty */
    uint32_t nhash, hashed;
    uint32_t *local; /* the rank being replayed: id -> value + 1; 0 not yet */
    uint32_t nlocal;
};

struct prv {
    /* the records, sorted by (time, emission order) */
    struct tscope__extsort sort;
    uint64_t seq;
    /* the job: its ranks in task order, their threads; job 0: one trace */
    struct member *m;
    int n, job;
    uint32_t threads;
    /* the rank being replayed */
    const struct tscope__trace *t;
    uint64_t offset;
    uint32_t rank, base, hi; /* hi: its highest thread slot used + 1 */
    int first;               /* the first task: its ids are the values */
    /* the job's threads, by their number, and the ids used */
    struct thread_state *th;
    uint32_t nth;
    struct tscope__u64map waiting; /* suspended task -> the thread it yielded on */
    struct ids types, counters, customs;
    /* a job's message ends, and the communications made of them */
    struct tscope__msgs msgs;
    uint64_t joined;
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

/* Makes arr (of *cap elements of size bytes) hold index, the new elements
 * zeroed; the array, or NULL out of memory (arr and *cap kept, the failure
 * recorded). */
static void *ensure(struct prv *p, void *arr, uint32_t *cap, uint32_t index, size_t size)
{
    if (index < *cap)
        return arr;
    uint64_t n = *cap ? *cap : 16;
    while (n <= index)
        n *= 2;
    char *g = n <= UINT32_MAX ? realloc(arr, (size_t)n * size) : NULL;
    if (!g) {
        fail(p, NULL, ENOMEM);
        return NULL;
    }
    memset(g + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
    *cap = (uint32_t)n;
    return g;
}

/* ---- the records, sorted ---- */

static int rec_cmp(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Keeps r, of kind REC_*, as the next record emitted. */
static int add(struct prv *p, const struct rec *r, unsigned kind)
{
    if (p->failed)
        return -1;
    struct rec x = *r;
    x.order = p->seq++ << KIND_BITS | kind;
    if (tscope__extsort_add(&p->sort, &x)) {
        fail(p, p->sort.err_path, p->sort.err_no);
        return -1;
    }
    return 0;
}

/* The .prv's text, written through a buffer. */
struct sink_out {
    FILE *f;
    char *text; /* OUT_BYTES */
    size_t len;
    int failed, err_no;
    const struct place *places;     /* the job's threads as task:thread */
    const struct tscope__msg *msgs; /* the joined messages' ends */
};

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

/* cpu 0 (unknown), appl 1, the thread's task and its number in it. */
static char *put_object(char *p, const struct place *at)
{
    p = tscope__put_str(p, "0:1:");
    p = tscope__put_u64(p, at->task);
    *p++ = ':';
    return tscope__put_u64(p, at->thread);
}

/* A record as a .prv line. */
static int put_text(void *ctx, const void *rec)
{
    struct sink_out *o = ctx;
    const struct rec *r = rec;
    if (OUT_BYTES - o->len < 256 && flush_text(o))
        return -1;
    unsigned kind = (unsigned)(r->order & ((1u << KIND_BITS) - 1));
    char *p = o->text + o->len;
    *p++ = (char)('0' + (kind == REC_MSG ? REC_COMM : kind));
    *p++ = ':';
    p = put_object(p, &o->places[r->thread]);
    *p++ = ':';
    p = tscope__put_u64(p, r->t);
    *p++ = ':';
    switch (kind) {
    case REC_STATE: /* 1:cpu:appl:task:thread:begin:end:state */
        p = tscope__put_u64(p, r->t2);
        *p++ = ':';
        p = tscope__put_u64(p, r->what);
        break;
    case REC_EVENT: /* 2:cpu:appl:task:thread:time:type:value */
        p = tscope__put_u64(p, r->what);
        *p++ = ':';
        p = tscope__put_u64(p, r->t2);
        break;
    default: /* 3:...:lsend:psend:rcpu:rappl:rtask:rthread:lrecv:precv:size:tag */
        p = tscope__put_u64(p, r->t);
        *p++ = ':';
        p = put_object(p, &o->places[r->what]);
        *p++ = ':';
        p = tscope__put_u64(p, r->t2);
        *p++ = ':';
        p = tscope__put_u64(p, r->t2);
        *p++ = ':';
        p = tscope__put_u64(p, kind == REC_MSG ? o->msgs[r->msg].bytes : 1); /* a dependency: 1 */
        *p++ = ':';
        p = tscope__put_u64(p, r->tag);
        break;
    }
    *p++ = '\n';
    o->len = (size_t)(p - o->text);
    return 0;
}

/* All records, sorted, as text into f (after its header), the job's
 * threads named by places. */
static int write_records(struct prv *p, FILE *f, const char *path, const struct place *places)
{
    struct sink_out o = {f, malloc(OUT_BYTES), 0, 0, 0, places, p->msgs.m};
    if (!o.text) {
        fail(p, NULL, ENOMEM);
        return -1;
    }
    int rc = 0;
    if (tscope__extsort_each(&p->sort, put_text, &o) || flush_text(&o)) {
        if (o.failed)
            fail(p, path, o.err_no);
        else
            fail(p, p->sort.err_path, p->sort.err_no);
        rc = -1;
    }
    free(o.text);
    return rc;
}

/* ---- the ids unified by name ---- */

static const char *ids_name(const struct ids *d, uint32_t value)
{
    return tscope__trace_name(d->by_value[value].t, d->table, d->by_value[value].id);
}

/* FNV-1a of the name; an unnamed id is known by its number. */
static uint64_t name_hash(const char *name, uint32_t id)
{
    if (!name)
        return tscope__mix64((uint64_t)id + 1);
    uint64_t h = 14695981039346656037ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

/* The hash slot of (name, id): the value + 1 found there, or 0 where it
 * goes. */
static uint32_t *ids_slot(const struct ids *d, const char *name, uint32_t id)
{
    uint32_t mask = d->nhash - 1;
    for (uint32_t i = (uint32_t)name_hash(name, id) & mask;; i = (i + 1) & mask) {
        uint32_t *s = &d->hash[i];
        if (!*s)
            return s;
        const char *known = ids_name(d, *s - 1);
        if (name ? known && strcmp(known, name) == 0 : !known && d->by_value[*s - 1].id == id)
            return s;
    }
}

/* Room for one more name in the hash (at most half full); 0 or -1. */
static int ids_hash_room(struct prv *p, struct ids *d)
{
    if ((uint64_t)(d->hashed + 1) * 2 <= d->nhash)
        return 0;
    uint32_t *old = d->hash, nold = d->nhash;
    uint32_t n = nold ? nold * 2 : 64;
    uint32_t *g = n > nold ? calloc(n, sizeof *g) : NULL;
    if (!g) {
        fail(p, NULL, ENOMEM);
        return -1;
    }
    d->hash = g;
    d->nhash = n;
    for (uint32_t i = 0; i < nold; i++)
        if (old[i]) {
            uint32_t v = old[i] - 1;
            *ids_slot(d, ids_name(d, v), d->by_value[v].id) = old[i];
        }
    free(old);
    return 0;
}

/* The job's value of the replayed rank's id in d (type 0, untyped, is 0
 * everywhere); 0 with *value set, or -1 (memory). */
static int unify(struct prv *p, struct ids *d, uint32_t id, uint32_t *value)
{
    if (id < d->nlocal && d->local[id]) {
        *value = d->local[id] - 1;
        return 0;
    }
    uint32_t v = id, *slot = NULL;
    if (d->table != TSCOPE__TABLE_TYPES || id != 0) {
        if (ids_hash_room(p, d))
            return -1;
        slot = ids_slot(d, tscope__trace_name(p->t, d->table, id), id);
        if (*slot && !p->first)
            v = *slot - 1; /* a name known already */
        else if (!p->first && id < d->nvalues && d->by_value[id].t)
            v = d->top; /* its id is another name's value */
    }
    struct named *byv = ensure(p, d->by_value, &d->nvalues, v, sizeof *byv);
    uint32_t *loc = byv ? ensure(p, d->local, &d->nlocal, id, sizeof *loc) : NULL;
    if (byv)
        d->by_value = byv;
    if (!loc)
        return -1;
    d->local = loc;
    if (!byv[v].t) { /* a new value: named here */
        byv[v] = (struct named){p->t, id};
        if (v >= d->top)
            d->top = v + 1;
    }
    if (slot && !*slot) {
        *slot = v + 1;
        d->hashed++;
    }
    loc[id] = v + 1;
    *value = v;
    return 0;
}

static void ids_free(struct ids *d)
{
    free(d->by_value);
    free(d->hash);
    free(d->local);
}

/* ---- the replay's sink ---- */

/* The job's number of the replayed rank's thread slot. */
static uint32_t job_thread(struct prv *p, uint32_t thread)
{
    if (thread >= p->hi)
        p->hi = thread + 1;
    return p->base + thread;
}

static struct thread_state *thread_of(struct prv *p, uint32_t g)
{
    struct thread_state *th = ensure(p, p->th, &p->nth, g, sizeof *th);
    if (!th)
        return NULL;
    p->th = th;
    return &th[g];
}

/* The "Task type" value of a type: 0 is Paraver's "end". */
static uint32_t type_value(uint32_t type)
{
    return type ? type : UNTYPED;
}

/* An event on the job's thread g. */
static int event(struct prv *p, uint32_t g, uint64_t ns, uint32_t type, uint64_t value)
{
    struct rec r = {.t = ns, .t2 = value, .thread = g, .what = type};
    return add(p, &r, REC_EVENT);
}

/* Ends the thread's current state at ns (a record when it lasted). */
static int state_close(struct prv *p, uint32_t g, struct thread_state *s, uint64_t ns)
{
    int rc = 0;
    if (ns > s->since) {
        struct rec r = {.t = s->since, .t2 = ns, .thread = g, .what = (uint32_t)s->state};
        rc = add(p, &r, REC_STATE);
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
    uint32_t g = job_thread(p, thread), value;
    ns += p->offset;
    struct thread_state *s = thread_of(p, g);
    if (!s || unify(p, &p->types, type, &value) || resumed(p, task, ns))
        return -1;
    if (!s->seen) { /* idle from its rank's start */
        s->seen = 1;
        s->since = p->offset;
        s->state = STATE_IDLE;
    }
    if (s->n == 0) {
        if (state_close(p, g, s, ns))
            return -1;
        s->state = STATE_RUNNING;
    }
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        uint32_t *grown = realloc(s->types, cap * sizeof *grown);
        if (!grown) {
            fail(p, NULL, ENOMEM);
            return -1;
        }
        s->types = grown;
        s->cap = cap;
    }
    s->types[s->n++] = value;
    return event(p, g, ns, EV_TYPE, type_value(value));
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    (void)type;
    struct prv *p = ctx;
    uint32_t g = job_thread(p, thread);
    ns += p->offset;
    struct thread_state *s = thread_of(p, g);
    if (!s || s->n == 0)
        return s ? 0 : -1;
    s->n--;
    /* the enclosing stay's type again, or 0: nothing runs */
    if (event(p, g, ns, EV_TYPE, s->n ? type_value(s->types[s->n - 1]) : 0))
        return -1;
    if (s->n)
        return 0;
    int rc = state_close(p, g, s, ns);
    s->state = s->suspended ? STATE_YIELDED : STATE_IDLE;
    return rc;
}

/* The stay that just ended was a yield: the task waits to resume, and
 * with nothing running the thread waits, not idles. */
static int yielded(void *ctx, uint32_t thread, uint64_t ns, uint64_t task)
{
    struct prv *p = ctx;
    uint32_t g = job_thread(p, thread);
    ns += p->offset;
    struct thread_state *s = thread_of(p, g);
    int found;
    uint32_t *at = s ? tscope__u64map_upsert(&p->waiting, task, g, &found) : NULL;
    if (!at) {
        fail(p, NULL, ENOMEM);
        return -1;
    }
    if (found) { /* yielded again without a resume the trace shows */
        if (*at == g)
            return 0;
        p->th[*at].suspended--;
        *at = g;
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
    struct prv *p = ctx;
    struct rec r = {.t = from_ns + p->offset,
                    .t2 = to_ns + p->offset,
                    .thread = job_thread(p, from_thread),
                    .what = job_thread(p, to_thread),
                    .tag = hazard};
    return add(p, &r, REC_COMM);
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    struct prv *p = ctx;
    uint32_t v;
    if (unify(p, &p->counters, id, &v))
        return -1;
    double x = value * 1000.0;
    if (!(x >= 0 && x < 1.8e19)) /* unsigned values: negative and NaN as 0 */
        x = 0;
    return event(p, job_thread(p, thread), ns + p->offset, EV_COUNTER + v, (uint64_t)(x + 0.5));
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, uint64_t payload)
{
    struct prv *p = ctx;
    uint32_t v;
    if (unify(p, &p->customs, id, &v))
        return -1;
    return event(p, job_thread(p, thread), ns + p->offset, EV_CUSTOM + v, payload);
}

/* A message's end, kept until every rank is replayed. */
static int message(void *ctx, uint32_t thread, uint64_t ns, uint32_t peer, uint64_t bytes,
                   uint32_t tag, unsigned flags)
{
    struct prv *p = ctx;
    struct tscope__msg m = {ns + p->offset,        bytes,         p->rank, peer, tag,
                            job_thread(p, thread), (uint8_t)flags};
    /* a record names its send by a 32-bit index: 2^32 ends are memory long
     * before (160 GiB) */
    if (p->msgs.n >= UINT32_MAX || tscope__msgs_add(&p->msgs, &m)) {
        fail(p, NULL, ENOMEM);
        return -1;
    }
    return 0;
}

/* A send joined to its receive: a communication, and the ends marked. */
static int message_pair(void *ctx, const struct tscope__msg *snd, const struct tscope__msg *rcv)
{
    struct prv *p = ctx;
    int coll = (snd->flags & TSCOPE_MSG_COLLECTIVE) != 0;
    struct rec r = {.t = snd->ns,
                    .t2 = rcv->ns,
                    .thread = snd->thread,
                    .what = rcv->thread,
                    .tag = coll ? COLLECTIVE_TAG : snd->tag,
                    .msg = (uint32_t)(snd - p->msgs.m)};
    p->joined++;
    if (add(p, &r, REC_MSG) ||
        event(p, snd->thread, snd->ns, EV_MESSAGE, coll ? MSG_EV_COLL_SEND : MSG_EV_SEND))
        return -1;
    return event(p, rcv->thread, rcv->ns, EV_MESSAGE, coll ? MSG_EV_COLL_RECV : MSG_EV_RECV);
}

/* Replays task k into p (its threads numbered after the tasks before it;
 * messages: their ends kept), its statistics added to *st; 0, or -1 with
 * a message in err (the replay's; the writer's failure is in p). */
static int replay_member(struct prv *p, int k, int messages, struct tscope__replay_stats *st,
                         char *err, size_t errlen)
{
    struct member *m = &p->m[k];
    p->t = m->t;
    p->offset = m->offset;
    p->rank = m->rank;
    p->base = m->base = p->threads;
    p->hi = 0;
    p->first = k == 0;
    struct ids *tables[] = {&p->types, &p->counters, &p->customs};
    for (int i = 0; i < 3; i++) /* its own ids: none known yet */
        if (tables[i]->nlocal)
            memset(tables[i]->local, 0, tables[i]->nlocal * sizeof *tables[i]->local);
    if (p->waiting.count) { /* the last rank's tasks that never resumed */
        tscope__u64map_free(&p->waiting);
        if (tscope__u64map_init(&p->waiting, 64)) {
            fail(p, NULL, ENOMEM);
            return -1;
        }
    }
    struct tscope__trace_sink sink = {p,       slice_begin, slice_end, flow,
                                      counter, instant,     yielded,   messages ? message : NULL};
    struct tscope__replay_stats one;
    int rc = tscope__trace_replay(m->t, &sink, &one, err, errlen);
    tscope__job_add_stats(st, &one, m->offset);
    /* its slots: as many as its trace has, or uses (at least 1) */
    uint32_t threads = tscope__trace_info(m->t)->threads;
    m->threads = p->hi > threads ? p->hi : threads ? threads : 1;
    p->threads += m->threads;
    return rc;
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

static int write_pcf(const struct prv *p, FILE *f)
{
    fprintf(f, "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
               "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
               "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n"
               "DEFAULT_SEMANTIC\n\nTHREAD_FUNC         State As Is\n\n\n"
               "STATES\n0    Idle\n1    Running\n2    Yielded (a task that yielded here waits to "
               "resume)\n\n\n"
               "STATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n2    {255,170,0}\n\n\n");
    fprintf(f, "EVENT_TYPE\n0    %u    Task type\nVALUES\n0      End\n", EV_TYPE);
    const struct ids *d = &p->types;
    for (uint32_t v = 0; v < d->top; v++) {
        if (!d->by_value[v].t)
            continue;
        fprintf(f, "%u      ", type_value(v));
        if (v)
            put_label(f, ids_name(d, v), "type", d->by_value[v].id);
        else
            fputs("(untyped)", f);
        fputc('\n', f);
    }
    fprintf(f, "\n\n");
    d = &p->counters;
    for (uint32_t v = 0; v < d->top; v++) {
        if (!d->by_value[v].t)
            continue;
        fprintf(f, "EVENT_TYPE\n0    %u    ", EV_COUNTER + v);
        put_label(f, ids_name(d, v), "counter", d->by_value[v].id);
        fprintf(f, " (x1000)\n\n\n");
    }
    d = &p->customs;
    for (uint32_t v = 0; v < d->top; v++) {
        if (!d->by_value[v].t)
            continue;
        fprintf(f, "EVENT_TYPE\n0    %u    ", EV_CUSTOM + v);
        put_label(f, ids_name(d, v), "event", d->by_value[v].id);
        fprintf(f, " (payload)\n\n\n");
    }
    if (p->joined)
        fprintf(f,
                "EVENT_TYPE\n0    %u    Message (the communication sent or received here is a "
                "message between ranks, not a dependency; its tag: the MPI tag, %u for a "
                "collective's share)\nVALUES\n%u      Send\n%u      Receive\n%u      Collective "
                "send\n%u      Collective receive\n\n\n",
                EV_MESSAGE, COLLECTIVE_TAG, MSG_EV_SEND, MSG_EV_RECV, MSG_EV_COLL_SEND,
                MSG_EV_COLL_RECV);
    return ferror(f) ? -1 : 0;
}

/* The names of the job's objects; a job's threads say their rank. */
static int write_row(const struct prv *p, FILE *f)
{
    fprintf(f, "LEVEL CPU SIZE 0\n\nLEVEL NODE SIZE 1\nnode\n\nLEVEL THREAD SIZE %u\n", p->threads);
    for (int k = 0; k < p->n; k++)
        for (uint32_t th = 0; th < p->m[k].threads; th++) {
            if (p->job)
                fprintf(f, "rank %u: ", p->m[k].rank);
            put_label(f, tscope__trace_name(p->m[k].t, TSCOPE__TABLE_THREADS, th), "thread", th);
            fputc('\n', f);
        }
    fprintf(f, "\nLEVEL TASK SIZE %d\n", p->n);
    for (int k = 0; k < p->n; k++)
        fprintf(f, "rank %u\n", p->m[k].rank);
    fprintf(f, "\nLEVEL APPL SIZE 1\ntaskscope\n");
    return ferror(f) ? -1 : 0;
}

/* Writes the .pcf (row 0) or the .row (row 1) at path, under its
 * temporary name (core/outfile.h) until the caller commits it; 0, or -1
 * with the failure recorded and nothing left. */
static int write_small(struct prv *p, const char *path, int row, struct tscope__outfile *o)
{
    char ignored[8];
    if (tscope__outfile_open(o, path, ignored, sizeof ignored)) {
        fail(p, path, errno);
        return -1;
    }
    int rc = row ? write_row(p, o->f) : write_pcf(p, o->f);
    if (rc)
        tscope__outfile_fail(o);
    if (tscope__outfile_close(o, rc == 0, ignored, sizeof ignored)) {
        fail(p, path, o->errnum ? o->errnum : EIO);
        return -1;
    }
    return 0;
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

/* The .prv's header: the date of the job's origin (UTC), its end, one
 * node with a cpu per thread, one application of the tasks. */
static void write_header(const struct prv *p, FILE *f, uint64_t origin, uint64_t end_ns)
{
    time_t when = (time_t)(origin / 1000000000u);
    struct tm tm;
    gmtime_r(&when, &tm);
    fprintf(f, "#Paraver (%02d/%02d/%02d at %02d:%02d):%llu_ns:1(%u):1:%d(", tm.tm_mday,
            tm.tm_mon + 1, tm.tm_year % 100, tm.tm_hour, tm.tm_min, (unsigned long long)end_ns,
            p->threads, p->n);
    for (int k = 0; k < p->n; k++)
        fprintf(f, "%s%u:1", k ? "," : "", p->m[k].threads);
    fputs(")\n", f);
}

/* Writes the n members (in task order, origin: the job's clock's) as out,
 * .pcf and .row; job: the threads named with their rank and, unless
 * several traces claim one rank (dup), the messages joined into
 * communications.  0, or -1 with a one-line message in err and nothing
 * left behind. */
static int write_job(struct member *m, int n, uint64_t origin, int job, int dup, const char *out,
                     struct tscope__replay_stats *st, uint64_t *unmatched, char *err, size_t errlen)
{
    size_t len = strlen(out);
    memset(st, 0, sizeof *st);
    *unmatched = 0;
    if (len < 5 || strcmp(out + len - 4, ".prv") != 0) {
        snprintf(err, errlen, "%s: a Paraver trace's name ends in .prv", out);
        return -1;
    }
    struct prv p = {.m = m, .n = n, .job = job};
    p.types.table = TSCOPE__TABLE_TYPES;
    p.counters.table = TSCOPE__TABLE_COUNTERS;
    p.customs.table = TSCOPE__TABLE_EVENTS;
    char *pcf = with_suffix(out, len - 4, ".pcf"), *row = with_suffix(out, len - 4, ".row");
    char *runs = with_suffix(out, len - 4, ".runs.tmp"),
         *merged = with_suffix(out, len - 4, ".merge.tmp");
    int sorting =
        !runs || !merged ||
        tscope__extsort_init(
            &p.sort, sizeof(struct rec), rec_cmp,
            tscope__paraver_run_records ? tscope__paraver_run_records : RUN_RECORDS,
            tscope__paraver_merge_ways ? tscope__paraver_merge_ways : MERGE_WAYS, runs, merged);
    free(runs);
    free(merged);
    if (!pcf || !row || sorting || tscope__u64map_init(&p.waiting, 64)) {
        free(pcf);
        free(row);
        tscope__extsort_free(&p.sort);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* created first: a bad path fails before the replay; the three files
     * get their names once all three are whole (core/outfile.h) */
    struct tscope__outfile prvf, pcff, rowf;
    FILE *prv = NULL;
    int rc = 0;
    if (tscope__outfile_open(&prvf, out, err, errlen))
        rc = -1;
    else
        prv = prvf.f;
    int messages = job && !dup;
    for (int k = 0; rc == 0 && k < n; k++) {
        if (p.threads > UINT32_MAX - THREADS_MAX) {
            snprintf(err, errlen, "%d ranks: too many threads for one Paraver trace", n);
            rc = -1;
        } else {
            rc = replay_member(&p, k, messages, st, err, errlen);
        }
    }
    if (rc == 0 && job) {
        if (!messages)
            *unmatched = st->messages; /* a peer rank would name two traces */
        else if (tscope__msgs_join(&p.msgs, message_pair, &p, unmatched))
            rc = -1;
        st->flows += p.joined;
    }
    /* each thread's last state lasts until the end */
    for (uint32_t g = 0; rc == 0 && g < p.nth; g++)
        if (p.th[g].seen && state_close(&p, g, &p.th[g], st->end_ns))
            rc = -1;
    struct place *places = rc == 0 ? malloc((size_t)p.threads * sizeof *places) : NULL;
    if (rc == 0 && !places) {
        fail(&p, NULL, ENOMEM);
        rc = -1;
    }
    for (int k = 0; rc == 0 && k < n; k++)
        for (uint32_t th = 0; th < m[k].threads; th++)
            places[m[k].base + th] = (struct place){(uint32_t)k + 1, th + 1};
    if (rc == 0) {
        write_header(&p, prv, origin, st->end_ns);
        if (write_records(&p, prv, out, places))
            rc = -1;
    }
    free(places);
    if (prv) {
        char ignored[8];
        if (tscope__outfile_close(&prvf, rc == 0, ignored, sizeof ignored) && rc == 0) {
            fail(&p, out, prvf.errnum ? prvf.errnum : EIO);
            rc = -1;
        }
    }
    int made_pcf = 0, made_row = 0;
    if (rc == 0 && !(rc = write_small(&p, pcf, 0, &pcff)))
        made_pcf = 1;
    if (rc == 0 && !(rc = write_small(&p, row, 1, &rowf)))
        made_row = 1;
    struct tscope__outfile *all[] = {&prvf, &pcff, &rowf};
    const char *names[] = {out, pcf, row};
    for (int k = 0; rc == 0 && k < 3; k++)
        if (tscope__outfile_commit(all[k], err, errlen)) {
            rc = -1; /* a rename refused: all three or none */
            for (int j = 0; j < k; j++)
                remove(names[j]);
            for (int j = k + 1; j < 3; j++)
                tscope__outfile_discard(all[j]);
        }
    if (rc && p.failed) { /* the writer's failure, not the replay's message */
        if (p.err_path)
            snprintf(err, errlen, "writing %s failed: %s", p.err_path, strerror(p.err_no));
        else
            snprintf(err, errlen, "out of memory");
    }
    tscope__extsort_free(&p.sort); /* and its temporary files */
    if (rc) {                      /* what this call wrote, and only that */
        if (prv)
            tscope__outfile_discard(&prvf);
        if (made_pcf)
            tscope__outfile_discard(&pcff);
        if (made_row)
            tscope__outfile_discard(&rowf);
    }
    for (uint32_t g = 0; g < p.nth; g++)
        free(p.th[g].types);
    free(p.th);
    tscope__u64map_free(&p.waiting);
    ids_free(&p.types);
    ids_free(&p.counters);
    ids_free(&p.customs);
    tscope__msgs_free(&p.msgs);
    free(pcf);
    free(row);
    return rc;
}

int tscope__trace_to_paraver(struct tscope__trace *t, const char *out,
                             struct tscope__replay_stats *st, char *err, size_t errlen)
{
    const struct tscope__trace_info *i = tscope__trace_info(t);
    struct member m = {.t = t, .rank = i->rank};
    uint64_t unmatched;
    return write_job(&m, 1, i->realtime_ns, 0, 0, out, st, &unmatched, err, errlen);
}

/* Task order: by rank, then by the position in the paths. */
static int by_rank(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

int tscope__trace_job_to_paraver(const char *const *paths, int n, const char *out,
                                 struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                                 size_t errlen)
{
    memset(st, 0, sizeof *st);
    *unmatched = 0;
    if (n < 1) {
        snprintf(err, errlen, "%s: no rank's trace to convert", out);
        return -1;
    }
    size_t len = strlen(out); /* refused before any trace is read */
    if (len < 5 || strcmp(out + len - 4, ".prv") != 0) {
        snprintf(err, errlen, "%s: a Paraver trace's name ends in .prv", out);
        return -1;
    }
    struct tscope__job job;
    if (tscope__job_open(&job, paths, n, err, errlen))
        return -1;
    struct member *m = calloc((size_t)n, sizeof *m);
    if (!m) {
        tscope__job_close(&job);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < n; k++)
        m[k] = (struct member){.t = job.t[k],
                               .offset = job.offset[k],
                               .rank = tscope__trace_info(job.t[k])->rank,
                               .pos = k};
    qsort(m, (size_t)n, sizeof *m, by_rank);
    int dup = 0;
    for (int k = 1; k < n; k++)
        dup |= m[k].rank == m[k - 1].rank;
    int rc = write_job(m, n, job.origin, 1, dup, out, st, unmatched, err, errlen);
    free(m);
    tscope__job_close(&job);
    return rc;
}

/* The descriptor: Paraver has no compressed form. */
static int write_trace(struct tscope__trace *t, const char *out, int gzip,
                       struct tscope__replay_stats *st, char *err, size_t errlen)
{
    (void)gzip;
    return tscope__trace_to_paraver(t, out, st, err, errlen);
}

static int write_trace_job(const char *const *paths, int n, const char *out, int gzip,
                           struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                           size_t errlen)
{
    (void)gzip;
    return tscope__trace_job_to_paraver(paths, n, out, st, unmatched, err, errlen);
}

const struct tscope__trace_format tscope__trace_paraver = {
    "Paraver's trace (BSC)", "trace.prv", NULL, "trace.pcf, trace.row", NULL, 0, write_trace,
    write_trace_job};
