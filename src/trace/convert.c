/* convert.c - the replay shared by every trace format (convert.h) and the
 * entry point that picks the writer.
 *
 * Per thread a stack of stays (task, type, begin); per task that has a
 * creation, a yield or a dependency, an entry (its type, where its
 * creation, first stay and end were) kept while it lives and for the last
 * KEEP_ENDED tasks after it ended, so that arrows whose ends the file
 * holds in either order are drawn; leaf tasks (a START and its END on one
 * thread) never get an entry.  The formats' descriptors (convert.h) are
 * found here by number and word.
 */
#include "convert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/u64map.h"
#include "taskscope/taskscope.h"

#define KEEP_ENDED 65536u
#define NONE UINT32_MAX

struct entry {
    uint64_t id;
    uint32_t type;
    uint8_t created, bound, begun, ended;
    uint32_t create_thread, begin_thread, end_thread;
    uint64_t create_ns, begin_ns, last_begin_ns, end_ns;
    uint32_t out; /* edges waiting for this task's end */
    uint32_t in;  /* edges waiting for this task's first stay */
    uint32_t next_free;
};

struct edge {
    uint64_t pred, succ;
    uint32_t hazard;
    uint32_t ordered;     /* a mutual exclusion turned round: succ ran first */
    uint32_t pred_thread; /* once the predecessor ended */
    uint64_t pred_ns;
    uint32_t next;
};

struct stay {
    uint64_t task;
    uint32_t type;
};

struct stack {
    struct stay *s;
    uint32_t n, cap;
};

struct replay {
    const struct tscope__trace_sink *sink;
    struct tscope__replay_stats *st;
    struct tscope__u64map map; /* task id -> entry index */
    struct entry *e;
    uint32_t ne, cap_e, free_e;
    struct edge *g;
    uint32_t ng, cap_g, free_g;
    uint32_t ended[KEEP_ENDED]; /* FIFO of ended entries */
    uint32_t ended_head, ended_n;
    struct stack *stacks;
    uint32_t nstacks;
    int oom;
};

static struct entry *lookup(struct replay *r, uint64_t id)
{
    uint32_t i;
    return tscope__u64map_get(&r->map, id, &i) ? &r->e[i] : NULL;
}

static struct entry *upsert(struct replay *r, uint64_t id)
{
    int found;
    uint32_t *slot = tscope__u64map_upsert(&r->map, id, NONE, &found);
    if (!slot) {
        r->oom = 1;
        return NULL;
    }
    if (found)
        return &r->e[*slot];
    uint32_t i;
    if (r->free_e != NONE) {
        i = r->free_e;
        r->free_e = r->e[i].next_free;
    } else {
        if (r->ne == r->cap_e) {
            uint32_t cap = r->cap_e ? r->cap_e * 2 : 1024;
            struct entry *g = realloc(r->e, cap * sizeof *g);
            if (!g) {
                tscope__u64map_del(&r->map, id);
                r->oom = 1;
                return NULL;
            }
            r->e = g;
            r->cap_e = cap;
        }
        i = r->ne++;
    }
    *slot = i;
    struct entry *e = &r->e[i];
    memset(e, 0, sizeof *e);
    e->id = id;
    e->out = e->in = NONE;
    return e;
}

static uint32_t edge_new(struct replay *r)
{
    uint32_t i;
    if (r->free_g != NONE) {
        i = r->free_g;
        r->free_g = r->g[i].next;
        return i;
    }
    if (r->ng == r->cap_g) {
        uint32_t cap = r->cap_g ? r->cap_g * 2 : 1024;
        struct edge *g = realloc(r->g, cap * sizeof *g);
        if (!g) {
            r->oom = 1;
            return NONE;
        }
        r->g = g;
        r->cap_g = cap;
    }
    return r->ng++;
}

static void edge_free(struct replay *r, uint32_t i)
{
    r->g[i].next = r->free_g;
    r->free_g = i;
}

static struct stack *stack_of(struct replay *r, uint32_t thread)
{
    if (thread >= r->nstacks) {
        uint32_t n = r->nstacks ? r->nstacks : 16;
        while (n <= thread)
            n *= 2;
        struct stack *g = realloc(r->stacks, n * sizeof *g);
        if (!g) {
            r->oom = 1;
            return NULL;
        }
        memset(g + r->nstacks, 0, (n - r->nstacks) * sizeof *g);
        r->stacks = g;
        r->nstacks = n;
    }
    return &r->stacks[thread];
}

static int push(struct replay *r, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    struct stack *k = stack_of(r, thread);
    if (!k)
        return -1;
    if (k->n == k->cap) {
        uint32_t cap = k->cap ? k->cap * 2 : 16;
        struct stay *g = realloc(k->s, cap * sizeof *g);
        if (!g) {
            r->oom = 1;
            return -1;
        }
        k->s = g;
        k->cap = cap;
    }
    k->s[k->n++] = (struct stay){task, type};
    r->st->slices++;
    return r->sink->slice_begin(r->sink->ctx, thread, ns, task, type);
}

/* Ends task's stay on thread; stays above it (an end out of order) are
 * ended and begun again.  1 found, 0 not running there, -1 sink error. */
static int pop(struct replay *r, uint32_t thread, uint64_t ns, uint64_t task, uint32_t *type)
{
    struct stack *k = thread < r->nstacks ? &r->stacks[thread] : NULL;
    if (!k)
        return 0;
    uint32_t at = k->n;
    while (at > 0 && k->s[at - 1].task != task)
        at--;
    if (at == 0)
        return 0;
    at--;
    const struct tscope__trace_sink *s = r->sink;
    for (uint32_t i = k->n; i > at; i--)
        if (s->slice_end(s->ctx, thread, ns, k->s[i - 1].task, k->s[i - 1].type))
            return -1;
    *type = k->s[at].type;
    memmove(&k->s[at], &k->s[at + 1], (k->n - at - 1) * sizeof *k->s);
    k->n--;
    for (uint32_t i = at; i < k->n; i++) {
        r->st->slices++;
        if (s->slice_begin(s->ctx, thread, ns, k->s[i].task, k->s[i].type))
            return -1;
    }
    return 1;
}

static int flow(struct replay *r, int kind, uint32_t hazard, uint32_t ft, uint64_t fns, uint32_t tt,
                uint64_t tns, uint64_t from, uint64_t to)
{
    r->st->flows++;
    return r->sink->flow(r->sink->ctx, kind, hazard, ft, fns, tt, tns, from, to);
}

/* A mutual exclusion (mutexinoutset) orders nothing: its arrow goes from
 * the end of the task that ran first to the first begin of the other.
 * Called once succ has begun; when succ began before pred, the arrow is
 * drawn from succ's end (or the edge turned round to wait for it) and 1
 * returned (*rc the sink's answer); 0 for the usual arrow. */
static int mutex_turned(struct replay *r, uint32_t gi, struct entry *succ, int *rc)
{
    struct edge *g = &r->g[gi];
    *rc = 0;
    if (g->hazard != TSCOPE_HAZARD_MUTEX || g->ordered)
        return 0;
    struct entry *pred = lookup(r, g->pred);
    if (!pred || !pred->begun || pred->begin_ns <= succ->begin_ns)
        return 0;
    if (succ->ended) {
        *rc = flow(r, TSCOPE__FLOW_DEP, g->hazard, succ->end_thread, succ->end_ns,
                   pred->begin_thread, pred->begin_ns, g->succ, g->pred);
        edge_free(r, gi);
        return 1;
    }
    uint64_t was = g->pred;
    g->pred = g->succ;
    g->succ = was;
    g->ordered = 1;
    g->next = succ->out;
    succ->out = gi;
    return 1;
}

/* A dependency edge whose predecessor ended: drawn if the successor has
 * begun, else parked on it. */
static int edge_ready(struct replay *r, uint32_t gi)
{
    struct edge *g = &r->g[gi];
    struct entry *succ = lookup(r, g->succ);
    if (!succ)
        succ = upsert(r, g->succ);
    if (!succ) {
        edge_free(r, gi);
        return 0;
    }
    int rc;
    if (succ->begun && mutex_turned(r, gi, succ, &rc))
        return rc;
    if (succ->begun) {
        rc = flow(r, TSCOPE__FLOW_DEP, g->hazard, g->pred_thread, g->pred_ns, succ->begin_thread,
                  succ->begin_ns, g->pred, g->succ);
        edge_free(r, gi);
        return rc;
    }
    g->next = succ->in;
    succ->in = gi;
    return 0;
}

static void forget_oldest(struct replay *r)
{
    uint32_t i = r->ended[r->ended_head];
    r->ended_head = (r->ended_head + 1) % KEEP_ENDED;
    r->ended_n--;
    struct entry *e = &r->e[i];
    tscope__u64map_del(&r->map, e->id);
    e->next_free = r->free_e;
    r->free_e = i;
}

static int on_begin(struct replay *r, uint32_t thread, uint64_t ns, uint64_t id, uint32_t type,
                    int resume)
{
    struct entry *e = upsert(r, id);
    if (!e)
        return -1;
    if (type)
        e->type = type;
    int first = !e->begun && !resume;
    e->last_begin_ns = ns;
    if (push(r, thread, ns, id, e->type))
        return -1;
    if (!first)
        return 0;
    r->st->tasks++;
    e->begun = 1;
    e->begin_thread = thread;
    e->begin_ns = ns;
    if (e->created) {
        if (!e->bound)
            r->st->flows_unbound++;
        else if (flow(r, TSCOPE__FLOW_CREATE, 0, e->create_thread, e->create_ns, thread, ns, 0, id))
            return -1;
    }
    uint64_t self = id;
    uint32_t in = e->in;
    e->in = NONE;
    for (uint32_t gi = in; gi != NONE;) {
        struct edge *g = &r->g[gi];
        uint32_t next = g->next;
        int rc;
        if (!mutex_turned(r, gi, lookup(r, self), &rc)) {
            rc = flow(r, TSCOPE__FLOW_DEP, g->hazard, g->pred_thread, g->pred_ns, thread, ns,
                      g->pred, self);
            edge_free(r, gi);
        }
        if (rc)
            return -1;
        gi = next;
    }
    e = lookup(r, self);
    if (e)
        e->in = NONE;
    return 0;
}

static int on_end(struct replay *r, uint32_t thread, uint64_t ns, uint64_t id, int yield)
{
    uint32_t type = 0;
    int found = pop(r, thread, ns, id, &type);
    if (found < 0)
        return -1;
    if (!found && yield)
        r->st->unmatched++;
    struct entry *e = lookup(r, id);
    if (yield) {
        if (found && r->sink->yielded && r->sink->yielded(r->sink->ctx, thread, ns, id))
            return -1;
        if (!e && found && (e = upsert(r, id)) != NULL)
            e->type = type, e->begun = 1, e->begin_thread = thread, e->last_begin_ns = ns;
        return r->oom ? -1 : 0;
    }
    if (!found && !e) {
        r->st->unmatched += 1;
        return 0;
    }
    if (!e)
        return 0; /* a leaf: nothing waits for it */
    if (e->ended)
        return 0;
    e->ended = 1;
    e->end_thread = thread;
    e->end_ns = ns;
    uint64_t from_ns = ns > e->last_begin_ns ? ns - 1 : ns; /* inside its last stay */
    uint32_t self = (uint32_t)(e - r->e);
    for (uint32_t gi = e->out; gi != NONE;) {
        uint32_t next = r->g[gi].next;
        r->g[gi].pred_thread = thread;
        r->g[gi].pred_ns = from_ns;
        if (edge_ready(r, gi))
            return -1;
        gi = next;
    }
    e = &r->e[self]; /* edge_ready may have grown the table */
    e->out = NONE;
    if (r->ended_n == KEEP_ENDED)
        forget_oldest(r);
    r->ended[(r->ended_head + r->ended_n) % KEEP_ENDED] = self;
    r->ended_n++;
    return 0;
}

static int on_create(struct replay *r, uint32_t thread, uint64_t ns, uint64_t id, uint32_t type)
{
    struct entry *e = upsert(r, id);
    if (!e)
        return -1;
    if (type && !e->type)
        e->type = type;
    if (e->created)
        return 0;
    e->created = 1;
    e->create_thread = thread;
    e->create_ns = ns;
    e->bound = thread < r->nstacks && r->stacks[thread].n > 0;
    if (!e->begun)
        return 0;
    if (!e->bound) {
        r->st->flows_unbound++;
        return 0;
    }
    return flow(r, TSCOPE__FLOW_CREATE, 0, thread, ns, e->begin_thread, e->begin_ns, 0, id);
}

static int on_dep(struct replay *r, uint64_t from, uint64_t to, uint32_t hazard)
{
    struct entry *pred = upsert(r, from);
    if (!pred || !upsert(r, to))
        return -1;
    pred = lookup(r, from);
    uint32_t gi = edge_new(r);
    if (gi == NONE)
        return -1;
    pred = lookup(r, from);
    struct edge *g = &r->g[gi];
    g->pred = from;
    g->succ = to;
    g->hazard = hazard;
    g->ordered = 0;
    if (pred->ended) {
        g->pred_thread = pred->end_thread;
        g->pred_ns = pred->end_ns > pred->last_begin_ns ? pred->end_ns - 1 : pred->end_ns;
        return edge_ready(r, gi);
    }
    g->next = pred->out;
    pred->out = gi;
    return 0;
}

static uint64_t to_ns(const struct tscope__trace_info *info, uint64_t ts)
{
    double ns = tscope__trace_ns(info, ts);
    return ns > 0 ? (uint64_t)llround(ns) : 0;
}

int tscope__trace_replay(struct tscope__trace *t, const struct tscope__trace_sink *s,
                         struct tscope__replay_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    struct replay *r = calloc(1, sizeof *r);
    if (!r || tscope__u64map_init(&r->map, 4096)) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->sink = s;
    r->st = st;
    r->free_e = r->free_g = NONE;
    const struct tscope__trace_info *info = tscope__trace_info(t);
    uint32_t thread;
    struct tscope__rec rec;
    int rc, failed = 0;
    while ((rc = tscope__trace_next(t, &thread, &rec)) == 1) {
        st->records++;
        if (rec.kind == TSCOPE__REC_EXT)
            continue;
        uint64_t ns = to_ns(info, rec.ts);
        if (ns > st->end_ns)
            st->end_ns = ns;
        int bad = 0;
        switch (rec.kind) {
        case TSCOPE__REC_CREATE:
            bad = rec.id && on_create(r, thread, ns, rec.id, rec.type);
            break;
        case TSCOPE__REC_BEGIN:
            bad = rec.id && on_begin(r, thread, ns, rec.id, rec.type, 0);
            break;
        case TSCOPE__REC_RESUME:
            bad = rec.id && on_begin(r, thread, ns, rec.id, 0, 1);
            break;
        case TSCOPE__REC_START:
            if (rec.id) {
                st->tasks++;
                bad = push(r, thread, ns, rec.id, rec.type);
            }
            break;
        case TSCOPE__REC_YIELD:
            bad = rec.id && on_end(r, thread, ns, rec.id, 1);
            break;
        case TSCOPE__REC_END:
        case TSCOPE__REC_CANCEL:
            bad = rec.id && on_end(r, thread, ns, rec.id, 0);
            break;
        case TSCOPE__REC_DEP_LOCAL:
            bad = rec.id && rec.arg && on_dep(r, rec.id, rec.arg, rec.flags);
            break;
        case TSCOPE__REC_DEP_REMOTE:
            st->remote++;
            break;
        case TSCOPE__REC_COUNTER: {
            double v;
            memcpy(&v, &rec.arg, sizeof v);
            st->counters++;
            bad = s->counter(s->ctx, thread, ns, rec.type, v);
            break;
        }
        case TSCOPE__REC_CUSTOM:
            st->instants++;
            bad = s->instant(s->ctx, thread, ns, rec.type, rec.arg);
            break;
        case TSCOPE__REC_MESSAGE:
            st->messages++;
            if (s->message)
                bad =
                    s->message(s->ctx, thread, ns, rec.depth, rec.arg, (uint32_t)rec.id, rec.flags);
            break;
        default: /* QUEUED */
            break;
        }
        if (bad) {
            failed = 1;
            break;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", tscope__trace_error(t));
    else if (r->oom)
        snprintf(err, errlen, "out of memory");
    /* what is still running at the end ends there */
    for (uint32_t th = 0; !failed && rc >= 0 && th < r->nstacks; th++)
        for (struct stack *k = &r->stacks[th]; k->n > 0; k->n--)
            if (s->slice_end(s->ctx, th, st->end_ns, k->s[k->n - 1].task, k->s[k->n - 1].type)) {
                failed = 1;
                break;
            }
    for (uint32_t i = 0; i < r->ne; i++) {
        for (uint32_t gi = r->e[i].out; gi != NONE && i < r->ne; gi = r->g[gi].next)
            st->flows_lost++;
        for (uint32_t gi = r->e[i].in; gi != NONE; gi = r->g[gi].next)
            st->flows_lost++;
    }
    for (uint32_t i = 0; i < r->nstacks; i++)
        free(r->stacks[i].s);
    free(r->stacks);
    free(r->e);
    free(r->g);
    tscope__u64map_free(&r->map);
    int oom = r->oom;
    free(r);
    if (failed && !err[0])
        snprintf(err, errlen, "the output failed");
    return rc < 0 || oom || failed ? -1 : 0;
}

const struct tscope__trace_entry *tscope__trace_entry_of(int format)
{
    return format >= 1 && (unsigned)format <= tscope__ntraces ? &tscope__traces[format - 1] : NULL;
}

int tscope__trace_format(const char *word)
{
    for (unsigned i = 0; i < tscope__ntraces; i++)
        if (tscope__format_is(tscope__traces[i].id, word, strlen(word)))
            return tscope__traces[i].format;
    return 0;
}

void tscope__trace_default_output(const char *trace_path, int format, int gzip, char *out,
                                  size_t len)
{
    const struct tscope__trace_entry *e = tscope__trace_entry_of(format);
    const char *slash = strrchr(trace_path, '/');
    int dir = slash ? (int)(slash - trace_path) : 0;
    const char *name = !e ? "" : gzip && e->desc->file_gz ? e->desc->file_gz : e->desc->file;
    if (slash)
        snprintf(out, len, "%.*s/%s", dir, trace_path, name);
    else
        snprintf(out, len, "%s", name);
}

int tscope__trace_convert(const char *in, int format, const char *out, int gzip,
                          struct tscope__replay_stats *st, char *err, size_t errlen)
{
    err[0] = 0;
    struct tscope__trace *t;
    if (tscope__trace_open(in, &t, err, errlen))
        return -1;
    const struct tscope__trace_entry *e = tscope__trace_entry_of(format);
    int rc = -1;
    if (!e)
        snprintf(err, errlen, "unknown trace format %d", format);
    else if (e->desc->missing)
        snprintf(err, errlen, "%s", e->desc->missing);
    else
        rc = e->desc->write(t, out, gzip, st, err, errlen);
    tscope__trace_close(t);
    return rc;
}
