/* store.c - creation of the profile store and dispatch of records.
 *
 * Task events go to the state machine (replay.c); counters, custom events
 * and dependencies are simple enough to be handled here.  Lock held by the
 * caller of tscope__store_apply (the consumer).
 */
#include "store.h"

#include <stdlib.h>

#include "grow.h"
#include <string.h>

#include "taskscope/taskscope.h"

struct tscope__store *tscope__store_new(const struct tscope__config *cfg, uint64_t origin)
{
    struct tscope__store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->cfg = *cfg;
    s->origin = origin;
    s->free_head = TSCOPE__NONE;
    s->round = 1;
    s->inst_limit = 0xFFFF;
    tscope__tl_init(&s->tl, origin, cfg->duration_sample);
    if (tscope__grow(&s->nodes, &s->cap_nodes, 64, sizeof *s->nodes) ||
        tscope__u64map_init(&s->task_map, 16) || tscope__u64map_init(&s->node_map, 16) ||
        tscope__u64map_init(&s->edge_map, 16) || tscope__u64map_init(&s->inst_map, 16) ||
        tscope__u64map_init(&s->deptype_map, 16) || tscope__store_grow_types(s, 16)) {
        tscope__store_free(s);
        return NULL;
    }
    s->nodes[0] =
        (struct tscope__node){.parent = TSCOPE__NONE, .edge = TSCOPE__NONE}; /* the root */
    s->nnodes = 1;
    return s;
}

void tscope__store_free(struct tscope__store *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nstacks; i++) {
        free(s->stacks[i].seg);
        free(s->stacks[i].open);
        free(s->stacks[i].types);
    }
    for (uint32_t i = 0; i < s->ntypes; i++)
        free(s->types[i].seen);
    tscope__tl_free(&s->tl);
    free(s->id_front);
    free(s->stacks);
    free(s->types);
    free(s->counters);
    free(s->customs);
    free(s->peers);
    free(s->tasks);
    free(s->implicit_list);
    free(s->terminal_list);
    free(s->nodes);
    free(s->edges);
    free(s->inst);
    free(s->inst_at_depth);
    free(s->dropped);
    free(s->deps);
    free(s->deptypes);
    free(s->th_counters);
    free(s->th_customs);
    free(s->th_peers);
    free(s->th_deptypes);
    tscope__u64map_free(&s->deptype_map);
    tscope__u64map_free(&s->below_map);
    tscope__u64map_free(&s->task_map);
    tscope__u64map_free(&s->node_map);
    tscope__u64map_free(&s->edge_map);
    tscope__u64map_free(&s->inst_map);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

struct tscope__welford tscope__store_counter(const struct tscope__store *s, uint32_t id)
{
    struct tscope__welford a = {0}, b = {0};
    if (id < s->ncounters)
        a = s->counters[id];
    if (id < s->nth_counters)
        b = s->th_counters[id];
    return tscope__welford_merge(a, b);
}

struct tscope__custom tscope__store_custom(const struct tscope__store *s, uint32_t id)
{
    struct tscope__custom c = {0};
    if (id < s->ncustoms)
        c = s->customs[id];
    if (id < s->nth_customs && s->th_customs[id].count) {
        c.count += s->th_customs[id].count;
        c.last_payload = s->th_customs[id].last_payload;
    }
    return c;
}

tscope_peer_stats_t tscope__store_peer(const struct tscope__store *s, uint32_t peer)
{
    tscope_peer_stats_t p = {.peer = peer};
    if (peer < s->npeers)
        p = s->peers[peer];
    if (peer < s->nth_peers) {
        const tscope_peer_stats_t *t = &s->th_peers[peer];
        p.peer = peer;
        p.sent += t->sent;
        p.sent_bytes += t->sent_bytes;
        p.recv += t->recv;
        p.recv_bytes += t->recv_bytes;
        p.coll_sent += t->coll_sent;
        p.coll_sent_bytes += t->coll_sent_bytes;
        p.coll_recv += t->coll_recv;
        p.coll_recv_bytes += t->coll_recv_bytes;
    }
    return p;
}

uint32_t tscope__store_npeers(const struct tscope__store *s)
{
    return s->npeers > s->nth_peers ? s->npeers : s->nth_peers;
}

static void on_counter(struct tscope__store *s, const struct tscope__rec *r)
{
    if (tscope__grow(&s->counters, &s->ncounters, r->type, sizeof *s->counters)) {
        s->anomalies++;
        return;
    }
    double v;
    memcpy(&v, &r->arg, sizeof v);
    tscope__welford_add(&s->counters[r->type], v);
}

static void on_custom(struct tscope__store *s, const struct tscope__rec *r)
{
    if (tscope__grow(&s->customs, &s->ncustoms, r->type, sizeof *s->customs)) {
        s->anomalies++;
        return;
    }
    s->customs[r->type].count++;
    s->customs[r->type].last_payload = r->arg;
}

static void on_message(struct tscope__store *s, const struct tscope__rec *r)
{
    if (tscope__grow(&s->peers, &s->npeers, r->depth, sizeof *s->peers)) {
        s->anomalies++;
        return;
    }
    tscope_peer_stats_t *p = &s->peers[r->depth];
    p->peer = r->depth;
    int coll = (r->flags & TSCOPE_MSG_COLLECTIVE) != 0;
    if (r->flags & TSCOPE_MSG_SEND) {
        *(coll ? &p->coll_sent : &p->sent) += 1;
        *(coll ? &p->coll_sent_bytes : &p->sent_bytes) += r->arg;
    } else {
        *(coll ? &p->coll_recv : &p->recv) += 1;
        *(coll ? &p->coll_recv_bytes : &p->recv_bytes) += r->arg;
    }
}

/* The type of a task the store knows (in the task table, or running on
 * `thread` as a START task), else 0. */
static uint16_t type_of_task(struct tscope__store *s, uint32_t thread, uint64_t id)
{
    uint32_t slot = tscope__task_find(s, id);
    if (slot != TSCOPE__NONE)
        return s->tasks[slot].type;
    if (thread < s->nstacks) {
        const struct tscope__tstack *st = &s->stacks[thread];
        for (uint32_t i = st->n; i-- > 0;)
            if (s->tasks[st->seg[i].slot].id == id)
                return s->tasks[st->seg[i].slot].type;
    }
    return 0;
}

/* Counts a dependency in the type-level dependency graph.  Runtimes record
 * an edge when its successor is created and its predecessor has not ended
 * (src/rt/deps.c, OMPT), so both tasks are normally in the task table. */
static void count_deptype(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r,
                          int remote)
{
    /* a task of another rank is not in this store: type 0 */
    uint16_t from = type_of_task(s, thread, r->id), to = type_of_task(s, thread, r->arg);
    if (!remote && !from)
        from = r->type; /* given by the runtime (tscope_dep_edge) */
    if (!remote && !to)
        to = r->depth;
    uint64_t key = ((uint64_t)from << 16 | to) + 1;
    uint32_t idx;
    if (!tscope__u64map_get(&s->deptype_map, key, &idx)) {
        if (tscope__grow(&s->deptypes, &s->cap_deptypes, s->ndeptypes, sizeof *s->deptypes))
            return;
        idx = s->ndeptypes;
        if (tscope__u64map_put(&s->deptype_map, key, idx))
            return;
        s->deptypes[s->ndeptypes++] = (struct tscope__deptype){.from = from, .to = to};
    }
    struct tscope__deptype *d = &s->deptypes[idx];
    d->count++;
    if (remote) {
        d->remote++;
        return;
    }
    d->raw += (r->flags & TSCOPE_HAZARD_RAW) != 0;
    d->war += (r->flags & TSCOPE_HAZARD_WAR) != 0;
    d->waw += (r->flags & TSCOPE_HAZARD_WAW) != 0;
    d->mutex += (r->flags & TSCOPE_HAZARD_MUTEX) != 0;
}

void tscope__store_dep_list(struct tscope__store *s, const struct tscope__rec *r,
                            const struct tscope__rec *ext)
{
    if (s->ndeps >= s->cfg.instance_cap) {
        s->deps_cut_off++;
        return;
    }
    if (tscope__grow(&s->deps, &s->cap_deps, s->ndeps, sizeof *s->deps)) {
        s->deps_cut_off++;
        return;
    }
    int remote = r->kind == TSCOPE__REC_DEP_REMOTE;
    s->deps[s->ndeps++] = (struct tscope__dep){
        .from = r->id,
        .to = r->arg,
        .addr = ext ? ext->id : 0,
        .from_rank = remote ? r->type : 0,
        .to_rank = remote ? r->depth : 0,
        .naddrs = remote ? 1 : (uint16_t)r->prio,
        .kind = r->flags,
        .remote = (uint8_t)remote,
    };
}

static void on_dep(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r,
                   const struct tscope__rec *ext)
{
    s->dependencies++;
    count_deptype(s, thread, r, r->kind == TSCOPE__REC_DEP_REMOTE);
    tscope__store_dep_list(s, r, ext);
}

/* Counts n tasks with `self` ticks in the nearest kept ancestor of `anc`
 * (the queries resolve it through the instances and the dropped ones). */
void tscope__store_below(struct tscope__store *s, uint64_t anc, uint64_t n, uint64_t self)
{
    if (!n)
        return;
    uint32_t at;
    if (anc && s->below_map.e && tscope__u64map_get(&s->below_map, anc, &at) && at < s->ndropped &&
        s->dropped[at].parent == anc && s->dropped[at].id == 0) { /* one entry per ancestor */
        s->dropped[at].n += n;
        s->dropped[at].self += self;
        return;
    }
    if (!anc ||
        tscope__grow_uninit(&s->dropped, &s->cap_dropped, s->ndropped, sizeof *s->dropped)) {
        s->below_lost += n;
        return;
    }
    s->dropped[s->ndropped] = (struct tscope__dropped){0, anc, n, self};
    if (s->below_map.e || tscope__u64map_init(&s->below_map, 1024) == 0)
        tscope__u64map_put(&s->below_map, anc, s->ndropped); /* no memory: unmerged */
    s->ndropped++;
}

void tscope__store_below_cut(struct tscope__store *s, uint64_t anc, uint64_t n, uint64_t self,
                             int cut)
{
    if (cut) /* wanted by the filters, left out by the cap, as settle.c counts them */
        s->cut_off += n;
    tscope__store_below(s, anc, n, self);
}

void tscope__store_instance(struct tscope__store *s, const struct tscope__task *t, int state,
                            uint64_t keep_anc, int anc_of_others)
{
    if (tscope__store_grow_types(s, t->type))
        return;
    uint32_t idx = TSCOPE__NONE;
    if (tscope__inst_capped(s, t->tdepth) && !tscope__inst_filtered(s))
        s->cut_off++;
    else
        idx = tscope__settle_record_instance(s, t, state);
    if (idx == TSCOPE__NONE && !anc_of_others) {
        tscope__store_below(s, keep_anc, 1, t->self);
    } else if (idx == TSCOPE__NONE) { /* its descendants count in it: a link up */
        if (keep_anc &&
            !tscope__grow_uninit(&s->dropped, &s->cap_dropped, s->ndropped, sizeof *s->dropped))
            s->dropped[s->ndropped++] = (struct tscope__dropped){t->id, keep_anc, 1, t->self};
        else
            s->below_lost++;
    }
    tscope__shards_set_limit(s);
}

static void on_instance(struct tscope__store *s, const struct tscope__rec *r,
                        const struct tscope__rec *ext)
{
    if (!ext) {
        s->anomalies++;
        return;
    }
    const struct tscope__rec *x = &ext[0], *y = &ext[1];
    struct tscope__task t = {.id = r->id,
                             .parent_id = r->arg,
                             .create_ts = x->ts,
                             .begin_ts = x->id,
                             .end_ts = r->ts,
                             .self = x->arg,
                             .running = y->ts,
                             .thread = (uint32_t)(y->arg >> 32),
                             .yields = (uint32_t)y->arg,
                             .type = r->type,
                             .prio = r->prio,
                             .depth = r->depth,
                             .flags = r->flags,
                             .tdepth = x->type};
    tscope__store_instance(s, &t, x->prio, y->id, x->flags);
}

void tscope__store_apply(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r,
                         const struct tscope__rec *ext)
{
    if (s->leaves.acc.n)
        tscope__store_flush_leaves(s);
    if (r->kind == TSCOPE__REC_INSTANCE || r->kind == TSCOPE__REC_BELOW) {
        /* the instance graph's records from the shards (which count their
         * events themselves), not events */
        if (r->kind == TSCOPE__REC_INSTANCE)
            on_instance(s, r, ext);
        else
            tscope__store_below_cut(s, r->id, r->arg, r->ts, r->flags & 1);
        return;
    }
    s->events++;
    /* the thread's first records (a create, the begin that makes its replay
     * stack) come before its stack: make it here, so that the per-thread
     * counts add up to s->events (only memory exhaustion leaves one short) */
    struct tscope__tstack *st =
        thread < s->nstacks ? &s->stacks[thread] : tscope__stack_of(s, thread);
    if (st)
        st->events++;
    switch (r->kind) {
    case TSCOPE__REC_COUNTER:
        on_counter(s, r);
        break;
    case TSCOPE__REC_CUSTOM:
        on_custom(s, r);
        break;
    case TSCOPE__REC_MESSAGE:
        on_message(s, r);
        break;
    case TSCOPE__REC_DEP_LOCAL:
    case TSCOPE__REC_DEP_REMOTE:
        on_dep(s, thread, r, ext);
        break;
    default:
        tscope__replay_apply(s, thread, r);
    }
}
