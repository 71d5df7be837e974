/* query.c - the introspection API of taskscope.h.
 *
 * Every query takes the store lock, copies what it needs and releases it, so
 * callers get consistent copies from any thread, while the program runs and
 * after finalize.  Derived metrics over the instance graph (a task's subtree,
 * its children) are computed on demand; the parent -> children index they
 * need is rebuilt only when the instance graph grew since the last query.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/hazard.h"
#include "core/names.h"
#include "query.h"
#include "shard.h"
#include "store.h"

/* Parent -> children index over the instance graph (CSR), owned here. */
static struct {
    struct tscope__store *store;
    uint64_t ninst;
    uint32_t gen;      /* the store's inst_gen when built */
    uint32_t ndropped; /* the store's ndropped when built */
    uint32_t *start;   /* children of instance i: list[start[i] .. start[i+1]) */
    uint32_t *list;
    /* per instance: the tasks the cap dropped whose nearest kept ancestor
     * it is (store.h, tscope__dropped), and their self ticks */
    uint64_t *extra_n, *extra_t;
} kids;

void tscope__query_reset(void)
{
    free(kids.start);
    free(kids.list);
    free(kids.extra_n);
    free(kids.extra_t);
    memset(&kids, 0, sizeof kids);
}

/* Counts each dropped instance in its nearest kept ancestor: up its chain
 * of parents through other dropped instances.  -1 on memory exhaustion. */
static int count_dropped(struct tscope__store *s)
{
    struct tscope__u64map ids;
    if (tscope__u64map_init(&ids, 1024))
        return -1;
    for (uint32_t k = 0; k < s->ndropped; k++)
        if (s->dropped[k].id && /* 0: tasks counted below an ancestor (shard.c) */
            tscope__u64map_put(&ids, s->dropped[k].id, k)) {
            tscope__u64map_free(&ids);
            return -1;
        }
    for (uint32_t k = 0; k < s->ndropped; k++) {
        uint64_t up = s->dropped[k].parent;
        uint32_t at, hops = 0;
        while (up && !tscope__u64map_get(&s->inst_map, up, &at) &&
               tscope__u64map_get(&ids, up, &at) && hops++ < s->ndropped)
            up = s->dropped[at].parent;
        if (up && tscope__u64map_get(&s->inst_map, up, &at)) {
            kids.extra_n[at] += s->dropped[k].n;
            kids.extra_t[at] += s->dropped[k].self;
        }
    }
    tscope__u64map_free(&ids);
    return 0;
}

/* Brings the id -> instance index up to date.  The consumer only appends
 * instances, so indexing the new ones is enough (kept out of the consumer:
 * a hash insert per task was most of its cost on runtime benchmarks). */
static int inst_index(struct tscope__store *s)
{
    for (; s->inst_indexed < s->ninst; s->inst_indexed++)
        if (tscope__u64map_put(&s->inst_map, s->inst[s->inst_indexed].id, s->inst_indexed))
            return TSCOPE_ENOMEM;
    return 0;
}

static int kids_build(struct tscope__store *s)
{
    if (kids.store == s && kids.ninst == s->ninst && kids.gen == s->inst_gen &&
        kids.ndropped == s->ndropped && kids.start)
        return 0;
    if (inst_index(s))
        return TSCOPE_ENOMEM;
    tscope__query_reset();
    uint64_t n = s->ninst;
    kids.start = calloc(n + 2, sizeof *kids.start);
    kids.list = malloc((n ? n : 1) * sizeof *kids.list);
    uint32_t *parent = malloc((n ? n : 1) * sizeof *parent);
    kids.extra_n = calloc(n ? n : 1, sizeof *kids.extra_n);
    kids.extra_t = calloc(n ? n : 1, sizeof *kids.extra_t);
    if (!kids.start || !kids.list || !parent || !kids.extra_n || !kids.extra_t ||
        count_dropped(s)) {
        free(parent);
        tscope__query_reset();
        return TSCOPE_ENOMEM;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint32_t p;
        parent[i] = s->inst[i].parent && tscope__u64map_get(&s->inst_map, s->inst[i].parent, &p)
                        ? p
                        : TSCOPE__NONE;
        if (parent[i] != TSCOPE__NONE)
            kids.start[parent[i] + 2]++;
    }
    for (uint64_t i = 2; i < n + 2; i++)
        kids.start[i] += kids.start[i - 1];
    for (uint64_t i = 0; i < n; i++)
        if (parent[i] != TSCOPE__NONE)
            kids.list[kids.start[parent[i] + 1]++] = (uint32_t)i;
    free(parent);
    kids.store = s;
    kids.ninst = n;
    kids.gen = s->inst_gen;
    kids.ndropped = s->ndropped;
    return 0;
}

static struct tscope__store *locked_store(void)
{
    struct tscope__store *s = tscope__g.store;
    if (s) {
        pthread_mutex_lock(&s->lock);
        tscope__shards_fold(s); /* what the threads aggregated themselves */
    }
    return s;
}

uint32_t tscope__query_type_edges(uint32_t *from, uint32_t *to, uint64_t *count, uint32_t max)
{
    struct tscope__store *s = locked_store();
    if (!s)
        return 0;
    uint32_t n = s->nedges;
    for (uint32_t i = 0; i < n && i < max; i++) {
        from[i] = s->edges[i].from == TSCOPE__ROOT_TYPE ? UINT32_MAX : s->edges[i].from;
        to[i] = s->edges[i].to;
        count[i] = s->edges[i].count;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

int tscope__query_task_type(uint64_t id, uint32_t *type)
{
    struct tscope__store *s = locked_store();
    if (!s)
        return -2;
    uint32_t slot = tscope__task_find(s, id);
    struct tscope__task live;
    int found = slot != TSCOPE__NONE;
    if (found) {
        *type = s->tasks[slot].type;
    } else if (tscope__shards_live_task(id, &live)) { /* a thread's, by id (ids.c) */
        *type = live.type;
        found = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return found ? 0 : -1;
}

uint32_t tscope__query_running(uint16_t *types, uint32_t max)
{
    struct tscope__store *s = tscope__g.store;
    if (!s)
        return 0;
    for (;;) { /* the sequence lock's reader: copy, then check nothing changed */
        uint32_t seq = atomic_load_explicit(&s->running.seq, memory_order_acquire);
        uint32_t busy = atomic_load_explicit(&s->running.busy, memory_order_acquire);
        uint32_t n = busy < max ? busy : max;
        if (n > TSCOPE__RUNNING_MAX)
            n = TSCOPE__RUNNING_MAX;
        for (uint32_t i = 0; i < n; i++)
            types[i] = atomic_load_explicit(&s->running.type[i], memory_order_acquire);
        if (!(seq & 1) && atomic_load_explicit(&s->running.seq, memory_order_relaxed) == seq)
            return tscope__shards_running(types,
                                          max < TSCOPE__RUNNING_MAX ? max : TSCOPE__RUNNING_MAX,
                                          busy); /* threads that aggregate their own tasks */
        sched_yield(); /* the consumer is writing it: a few microseconds */
    }
}

void tscope__fill_type_stats(struct tscope__store *s, uint32_t type, tscope_type_stats_t *out)
{
    memset(out, 0, sizeof *out);
    out->type = type;
    if (type >= s->ntypes)
        return;
    const struct tscope__type_acc *ta = &s->types[type];
    double f = tscope__clock_ns_per_tick();
    out->created = ta->created;
    out->calls = ta->calls;
    out->yields = ta->yields;
    out->cancelled = ta->cancelled;
    out->unfinished = ta->unfinished;
    out->self_ns = tscope__acc_stats(&ta->self, f);
    out->running_ns = tscope__acc_stats(&ta->running, f);
    out->elapsed_ns = tscope__acc_stats(&ta->elapsed, f);
    out->running_total_ns = (double)ta->running_total * f;
    out->elapsed_total_ns = (double)ta->elapsed_total * f;
    out->threads = ta->threads;
}

int tscope_query_type(tscope_type_t type, tscope_type_stats_t *out)
{
    if (!out)
        return TSCOPE_EINVAL;
    if (type > tscope__names_count(&tscope__types))
        return TSCOPE_ENOENT;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    tscope__fill_type_stats(s, type, out);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int tscope_query_types(tscope_type_stats_t *out, size_t cap, size_t *count)
{
    if ((!out && cap) || !count)
        return TSCOPE_EINVAL;
    uint32_t n = tscope__names_count(&tscope__types);
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    for (uint32_t i = 0; i < n && i < cap; i++)
        tscope__fill_type_stats(s, i + 1, &out[i]);
    pthread_mutex_unlock(&s->lock);
    *count = n;
    return 0;
}

int tscope_type_name(tscope_type_t type, char *buf, size_t len)
{
    return tscope__names_get(&tscope__types, type, buf, len);
}

int tscope_counter_name(tscope_counter_t counter, char *buf, size_t len)
{
    return tscope__names_get(&tscope__counters, counter, buf, len);
}

static void info_from_instance(const struct tscope__instance *in, tscope_task_info_t *out)
{
    out->id = in->id;
    out->parent = in->parent;
    out->type = in->type;
    out->flags = in->flags;
    out->depth = in->depth;
    out->priority = in->prio;
    out->state = in->state;
    out->thread = in->thread;
    out->yields = in->yields;
    out->begin_ns = tscope__clock_ns(in->begin_ts);
    out->end_ns = tscope__clock_ns(in->end_ts);
    out->self_ns = tscope__clock_ns(in->self);
    out->running_ns = tscope__clock_ns(in->running);
    out->elapsed_ns = in->end_ts > in->begin_ts && (in->begin_ts || in->running)
                          ? tscope__clock_ns(in->end_ts - in->begin_ts)
                          : 0; /* 0: cancelled before it began */
}

int tscope_query_task(uint64_t id, tscope_task_info_t *out)
{
    if (!out || !id)
        return TSCOPE_EINVAL;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    int rc = 0;
    uint32_t slot = tscope__task_find(s, id);
    uint32_t idx;
    struct tscope__task live;
    memset(out, 0, sizeof *out);
    if (slot != TSCOPE__NONE && !(s->tasks[slot].bits & TSCOPE__T_FINALIZED) &&
        (s->tasks[slot].bits & (TSCOPE__T_CREATED | TSCOPE__T_BEGUN))) {
        struct tscope__instance in = tscope__instance_of(s, &s->tasks[slot], TSCOPE_TASK_LIVE);
        in.end_ts = 0; /* still live */
        info_from_instance(&in, out);
    } else if (tscope__shards_live_task(id, &live)) { /* a thread's, by id (ids.c) */
        struct tscope__instance in = tscope__instance_of(s, &live, TSCOPE_TASK_LIVE);
        in.end_ts = 0;
        info_from_instance(&in, out);
    } else if (inst_index(s) == 0 && tscope__u64map_get(&s->inst_map, id, &idx)) {
        info_from_instance(&s->inst[idx], out);
    } else {
        rc = s->cut_off ? TSCOPE_ENOTKEPT : TSCOPE_ENOENT;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int tscope_query_subtree(uint64_t id, tscope_subtree_t *out)
{
    if (!out || !id)
        return TSCOPE_EINVAL;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    uint32_t root;
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (inst_index(s) || !tscope__u64map_get(&s->inst_map, id, &root)) {
        rc = s->cut_off ? TSCOPE_ENOTKEPT : TSCOPE_ENOENT;
    } else if ((rc = kids_build(s)) == 0) {
        /* Depth-first over the children index with an explicit stack. */
        uint32_t *stack = malloc((s->ninst + 1) * sizeof *stack);
        if (!stack) {
            rc = TSCOPE_ENOMEM;
        } else {
            uint64_t sp = 0, ticks = 0;
            stack[sp++] = root;
            /* Each instance has one parent, so the walk visits each at most
             * once unless ids form a cycle (bad input): the bound stops it. */
            uint64_t visited = 0;
            while (sp && visited <= s->ninst) {
                uint32_t i = stack[--sp];
                visited++;
                /* the task, and what the cap left out below it */
                out->tasks += 1 + s->inst[i].below_n + kids.extra_n[i];
                ticks += s->inst[i].self + s->inst[i].below + kids.extra_t[i];
                for (uint32_t k = kids.start[i]; k < kids.start[i + 1] && sp <= s->ninst; k++)
                    stack[sp++] = kids.list[k];
            }
            free(stack);
            out->time_ns = tscope__clock_ns(ticks);
            const struct tscope__config *c = &s->cfg;
            out->complete = c->filter_ntypes == 0 && c->filter_flags == 0 &&
                            c->filter_depth_min == 0 && c->filter_depth_max == 0xFFFF &&
                            c->instance_sample >= 1.0;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int tscope_query_children(uint64_t id, tscope_stats_t *out)
{
    if (!out || !id)
        return TSCOPE_EINVAL;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    uint32_t idx;
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (inst_index(s) || !tscope__u64map_get(&s->inst_map, id, &idx)) {
        rc = s->cut_off ? TSCOPE_ENOTKEPT : TSCOPE_ENOENT;
    } else if ((rc = kids_build(s)) == 0) {
        struct tscope__acc acc = {0};
        for (uint32_t k = kids.start[idx]; k < kids.start[idx + 1]; k++)
            if (s->inst[kids.list[k]].state == TSCOPE_TASK_DONE)
                tscope__acc_add(&acc, s->inst[kids.list[k]].running);
        *out = tscope__acc_stats(&acc, tscope__clock_ns_per_tick());
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Fills pred/succ with the edges of task id (edge_out: one entry). */
static int query_edges(uint64_t id, void *pred, size_t pred_cap, size_t *npred, void *succ,
                       size_t succ_cap, size_t *nsucc,
                       void (*edge_out)(void *arr, size_t at, uint64_t task,
                                        const struct tscope__dep *d, int rank))
{
    if (!id || !npred || !nsucc || (!pred && pred_cap) || (!succ && succ_cap))
        return TSCOPE_EINVAL;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    *npred = *nsucc = 0;
    for (uint32_t i = 0; i < s->ndeps; i++) {
        const struct tscope__dep *d = &s->deps[i];
        if (d->to == id && (*npred)++ < pred_cap)
            edge_out(pred, *npred - 1, d->from, d, d->from_rank);
        if (d->from == id && (*nsucc)++ < succ_cap)
            edge_out(succ, *nsucc - 1, d->to, d, d->to_rank);
    }
    uint32_t idx;
    int rc = 0;
    if (!*npred && !*nsucc && tscope__task_find(s, id) == TSCOPE__NONE &&
        (inst_index(s) || !tscope__u64map_get(&s->inst_map, id, &idx)))
        rc = TSCOPE_ENOENT;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static void info_v1(void *arr, size_t at, uint64_t task, const struct tscope__dep *d, int rank)
{
    ((tscope_dep_info_t *)arr)[at] = (tscope_dep_info_t){
        task, d->remote ? d->kind : tscope__hazard_kind(d->kind), d->remote, rank};
}

static void info_v2(void *arr, size_t at, uint64_t task, const struct tscope__dep *d, int rank)
{
    ((tscope_dep_edge_info_t *)arr)[at] = (tscope_dep_edge_info_t){
        .task = task,
        .hazards = d->remote ? 0u : d->kind,
        .naddrs = d->remote ? 1u : d->naddrs,
        .addr = d->addr,
        .remote = d->remote,
        .dir = d->remote ? d->kind : 0,
        .rank = rank,
    };
}

int tscope_query_deps(uint64_t id, tscope_dep_info_t *pred, size_t pred_cap, size_t *npred,
                      tscope_dep_info_t *succ, size_t succ_cap, size_t *nsucc)
{
    return query_edges(id, pred, pred_cap, npred, succ, succ_cap, nsucc, info_v1);
}

int tscope_query_dep_edges(uint64_t id, tscope_dep_edge_info_t *pred, size_t pred_cap,
                           size_t *npred, tscope_dep_edge_info_t *succ, size_t succ_cap,
                           size_t *nsucc)
{
    return query_edges(id, pred, pred_cap, npred, succ, succ_cap, nsucc, info_v2);
}

int tscope_query_counter(tscope_counter_t counter, tscope_counter_stats_t *out)
{
    if (!out)
        return TSCOPE_EINVAL;
    if (counter == 0 || counter > tscope__names_count(&tscope__counters))
        return TSCOPE_ENOENT;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    memset(out, 0, sizeof *out);
    struct tscope__welford w = tscope__store_counter(s, counter);
    *out = tscope__welford_stats(&w);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int tscope_query_messages(tscope_peer_stats_t *out, size_t cap, size_t *count)
{
    if (!count || (cap && !out))
        return TSCOPE_EINVAL;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    size_t n = 0;
    for (uint32_t i = 0, np = tscope__store_npeers(s); i < np; i++) {
        tscope_peer_stats_t p = tscope__store_peer(s, i);
        if (!p.sent && !p.recv && !p.coll_sent && !p.coll_recv)
            continue;
        if (n < cap)
            out[n] = p;
        n++;
    }
    pthread_mutex_unlock(&s->lock);
    *count = n;
    return 0;
}

void tscope__fill_totals(struct tscope__store *s, tscope_totals_t *out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        out->events_dropped += atomic_load(&tscope__g.threads[i]->dropped);
        out->ring_waits += atomic_load(&tscope__g.threads[i]->waits);
    }
    out->events_dropped += atomic_load(&tscope__g.unregistered_dropped);
    out->events = s->events;
    out->tasks_created = s->created;
    out->tasks_completed = s->completed;
    out->tasks_cancelled = s->cancelled;
    out->tasks_unfinished = s->unfinished;
    out->tasks_live = s->completed_run ? s->never_ran : s->live - s->held + tscope__shards_live(s);
    out->instances = s->ninst;
    out->instances_cut_off = s->cut_off;
    out->dependencies = s->dependencies + s->th_dependencies;
    out->anomalies = s->anomalies;
    out->threads = 0; /* the program's: taskscope's own (the sampler's) apart */
    for (uint32_t i = 0; i < n; i++)
        out->threads += !tscope__g.threads[i]->own;
    out->types = tscope__names_count(&tscope__types);
    uint64_t end = tscope__g.end_ticks ? tscope__g.end_ticks : tscope__clock_now();
    out->elapsed_ns = tscope__clock_ns(end - s->origin);
}

int tscope_query_totals(tscope_totals_t *out)
{
    if (!out)
        return TSCOPE_EINVAL;
    struct tscope__store *s = locked_store();
    if (!s)
        return TSCOPE_ESTATE;
    tscope__fill_totals(s, out);
    pthread_mutex_unlock(&s->lock);
    return 0;
}
