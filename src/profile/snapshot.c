/* snapshot.c - builds a tscope__profile (profile.h) from the global store.
 *
 * Names come from the name registries, thread names from the thread registry
 * (under its lock), everything else from the store under the store lock.
 * Order is by id (types, counters, events), by creation (tree nodes), by
 * type pair (edges, dependencies by type) and by creation time and id
 * (the instance graph's tasks), so output is deterministic for a
 * deterministic program, whichever thread aggregated what (the consumer
 * numbers edges and settles tasks in its own order, the shards in theirs).
 */
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/filter.h"
#include "core/core.h"
#include "core/names.h"
#include "critpath.h"
#include "profile.h"
#include "query.h"
#include "shard.h"
#include "store.h"

extern char *program_invocation_short_name;

void tscope__profile_free(struct tscope__profile *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->ntypes; i++)
        free(p->types[i].name);
    for (uint32_t i = 0; i < p->ncounters; i++)
        free(p->counters[i].name);
    for (uint32_t i = 0; i < p->nevents; i++)
        free(p->events[i].name);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        free(p->threads[i].name);
        free(p->threads[i].types);
    }
    free(p->notes);
    free(p->types);
    free(p->counters);
    free(p->events);
    free(p->peers);
    free(p->edges);
    free(p->nodes);
    free(p->threads);
    free(p->unfinished);
    free(p->deptypes);
    free(p->tasks);
    free(p->deps);
    if (p->path) {
        tscope__critpath_free(p->path);
        free(p->path);
    }
    for (uint32_t i = 0; i < p->tl.ntype; i++)
        free(p->tl.type[i]);
    for (uint32_t i = 0; i < p->tl.nthread; i++)
        free(p->tl.thread[i]);
    for (uint32_t i = 0; i < p->tl.nwait; i++)
        free(p->tl.wait[i]);
    free(p->tl.type);
    free(p->tl.thread);
    free(p->tl.wait);
    free(p->tl.points);
    if (p->global) {
        free(p->global->ranks);
        free(p->global->matrix);
        free(p->global->busy);
        free(p->global->wait);
        for (uint32_t i = 0; i < p->global->nrdeps; i++) {
            free(p->global->rdeps[i].from);
            free(p->global->rdeps[i].to);
        }
        free(p->global->rdeps);
        free(p->global);
    }
    free(p->program);
    free(p->clock);
    free(p->mode);
    free(p->full_policy);
    free(p);
}

const char *tscope__profile_type_name(const struct tscope__profile *p, uint32_t id, char *buf,
                                      unsigned len)
{
    if (id == TSCOPE__PROFILE_ROOT)
        return "<root>";
    if (id == 0)
        return "(untyped)";
    /* types are sorted by id: binary search */
    uint32_t lo = 0, hi = p->ntypes;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (p->types[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->ntypes && p->types[lo].id == id)
        return p->types[lo].name;
    snprintf(buf, len, "type-%u", id);
    return buf;
}

static char *name_of(struct tscope__names *reg, uint32_t id, const char *fallback)
{
    char buf[TSCOPE__NAME_MAX + 1];
    if (tscope__names_get(reg, id, buf, sizeof buf))
        snprintf(buf, sizeof buf, "%s-%u", fallback, id);
    return strdup(buf);
}

static int by_type_pair(const void *a, const void *b)
{
    const struct tscope__pdeptype *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

/* Edges by source type (the root's first), then target type. */
static int by_edge(const void *a, const void *b)
{
    const struct tscope__pedge *x = a, *y = b;
    uint32_t xf = x->from == TSCOPE__PROFILE_ROOT ? 0 : x->from,
             yf = y->from == TSCOPE__PROFILE_ROOT ? 0 : y->from;
    if (xf != yf)
        return xf < yf ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

static int by_creation(const void *a, const void *b)
{
    const struct tscope__ptask *x = a, *y = b;
    if (x->create != y->create)
        return x->create < y->create ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_end(const void *a, const void *b)
{
    const struct tscope__ppoint *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Rows of bins in ns; NULL rows stay NULL.  0 on memory exhaustion. */
static int copy_bins(uint64_t **from, uint32_t n, uint32_t nbins, double f, double ***to)
{
    if (!n)
        return 1;
    if (!(*to = calloc(n, sizeof **to)))
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!from[i])
            continue;
        if (!((*to)[i] = malloc((nbins ? nbins : 1) * sizeof *(*to)[i])))
            return 0;
        for (uint32_t b = 0; b < nbins; b++)
            (*to)[i][b] = (double)from[i][b] * f;
    }
    return 1;
}

/* The timeline, its bins up to the run's end.  0 on memory exhaustion. */
static int copy_timeline(const struct tscope__store *s, struct tscope__profile *p, double f)
{
    const struct tscope__timeline *tl = &s->tl;
    struct tscope__ptimeline *o = &p->tl;
    o->bin_ns = (double)(1ull << tl->shift) * f;
    uint64_t end = tscope__g.end_ticks > s->origin ? tscope__g.end_ticks - s->origin : 0;
    uint64_t bins = end ? ((end - 1) >> tl->shift) + 1 : 0;
    o->nbins = bins > TSCOPE__TL_BINS ? TSCOPE__TL_BINS : (uint32_t)bins;
    if (o->nbins < tl->used)
        o->nbins = tl->used;
    if (!copy_bins(tl->type, tl->ntype, o->nbins, f, &o->type))
        return 0;
    o->ntype = tl->ntype;
    if (!copy_bins(tl->thread, tl->nthread, o->nbins, f, &o->thread))
        return 0;
    o->nthread = tl->nthread;
    if (!copy_bins(tl->wait, tl->nwait, o->nbins, f, &o->wait))
        return 0;
    o->nwait = tl->nwait;
    o->sampled = ldexp((double)tl->threshold, -64);
    if (tl->npts && !(o->points = malloc(tl->npts * sizeof *o->points)))
        return 0;
    for (uint32_t i = 0; i < tl->npts; i++)
        o->points[i] = (struct tscope__ppoint){(double)(tl->pts[i].end - s->origin) * f,
                                               (double)tl->pts[i].duration * f, tl->pts[i].type};
    o->npoints = tl->npts;
    if (o->npoints > 1)
        qsort(o->points, o->npoints, sizeof *o->points, by_end);
    return 1;
}

/* The dependency graph by type, the instance graph and its dependency
 * edges.  0 on memory exhaustion. */
static int copy_graphs(const struct tscope__store *s, struct tscope__profile *p, double f)
{
    /* the instance graph, for profile.json and its critical path: when asked
     * for or when the run recorded dependencies (always would cost fib 1.4 us
     * a task at finalize: the path of a run of fine tasks at 1 thread is
     * every task, 11 MB of JSON for fib(25)) */
    uint32_t ntasks = (s->cfg.outputs & TSCOPE__OUT_TASKS) || s->ndeps ? s->ninst : 0;
    p->tasks_unwritten = 0;
    uint32_t nd = s->ndeptypes + s->nth_deptypes;
    if ((nd && !(p->deptypes = malloc(nd * sizeof *p->deptypes))) ||
        (ntasks && !(p->tasks = malloc(ntasks * sizeof *p->tasks))) ||
        (s->ndeps && !(p->deps = malloc(s->ndeps * sizeof *p->deps))))
        return 0;
    /* the consumer's and the threads', then each pair once */
    for (uint32_t i = 0; i < nd; i++) {
        const struct tscope__deptype *d =
            i < s->ndeptypes ? &s->deptypes[i] : &s->th_deptypes[i - s->ndeptypes];
        p->deptypes[i] = (struct tscope__pdeptype){d->from, d->to,  d->count, d->raw,
                                                   d->war,  d->waw, d->mutex, d->remote};
    }
    if (nd > 1)
        qsort(p->deptypes, nd, sizeof *p->deptypes, by_type_pair);
    p->ndeptypes = 0;
    for (uint32_t i = 0; i < nd; i++) {
        struct tscope__pdeptype *d = &p->deptypes[i];
        struct tscope__pdeptype *last = p->ndeptypes ? &p->deptypes[p->ndeptypes - 1] : NULL;
        if (last && last->from == d->from && last->to == d->to) {
            last->count += d->count;
            last->raw += d->raw;
            last->war += d->war;
            last->waw += d->waw;
            last->mutex += d->mutex;
            last->remote += d->remote;
        } else {
            p->deptypes[p->ndeptypes++] = *d;
        }
    }
    for (uint32_t i = 0; i < ntasks; i++) {
        const struct tscope__instance *in = &s->inst[i];
        p->tasks[i] = (struct tscope__ptask){
            .id = in->id,
            .parent = in->parent,
            .type = in->type,
            .thread = in->thread,
            .state = in->state,
            .create = (double)in->create_ts * f,
            .begin = (double)in->begin_ts * f,
            .end = (double)in->end_ts * f,
            .self = (double)in->self * f,
            .running = (double)in->running * f,
        };
    }
    p->ntasks = ntasks;
    if (ntasks > 1)
        qsort(p->tasks, ntasks, sizeof *p->tasks, by_creation);
    for (uint32_t i = 0; i < s->ndeps; i++) {
        const struct tscope__dep *d = &s->deps[i];
        p->deps[i] = (struct tscope__pdep){d->from,      d->to,      d->kind,   d->remote,
                                           d->from_rank, d->to_rank, d->naddrs, d->addr};
    }
    p->ndeps = s->ndeps;
    return 1;
}

/* A thread slot's share of each type it completed tasks of, or began one
 * still running at the end (calls 0; the store's ticks, f ns each), by type
 * id.  0 without memory. */
static int thread_types(const struct tscope__tstack *st, struct tscope__pthread *o, double f)
{
    uint32_t n = 0;
    for (uint32_t t = 0; t < st->ntypes; t++)
        n += st->types[t].calls || st->types[t].self || st->types[t].running;
    if (!n)
        return 1;
    if (!(o->types = calloc(n, sizeof *o->types)))
        return 0;
    for (uint32_t t = 0; t < st->ntypes; t++) {
        const struct tscope__thread_type *e = &st->types[t];
        if (e->calls || e->self || e->running)
            o->types[o->ntypes++] = (struct tscope__pthread_type){
                t, e->calls, (double)e->self * f, (double)e->running * f, (double)e->elapsed * f};
    }
    return 1;
}

struct tscope__profile *tscope__profile_snapshot(void)
{
    struct tscope__store *s = tscope__g.store;
    struct tscope__profile *p = calloc(1, sizeof *p);
    if (!s || !p) {
        free(p);
        return NULL;
    }
    p->program = strdup(program_invocation_short_name);
    p->ended_by = atomic_load(&tscope__g.ended_by);
    p->clock = strdup(tscope__clock_name());
    p->mode = strdup(s->cfg.mode == TSCOPE__MODE_NAIVE ? "naive" : "profile");
    p->full_policy = strdup(s->cfg.full_policy == TSCOPE__FULL_DROP ? "drop" : "wait");
    p->rank = tscope__g.rank;
    p->nranks = tscope__g.nranks;

    uint32_t ntypes = tscope__names_count(&tscope__types);
    uint32_t ncounters = tscope__names_count(&tscope__counters);
    uint32_t nevents = tscope__names_count(&tscope__events);
    uint32_t nthreads = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire);

    pthread_mutex_lock(&s->lock);
    tscope__shards_fold(s); /* what the threads aggregated themselves */
    double f = tscope__clock_ns_per_tick();
    tscope__fill_totals(s, &p->totals);
    p->deps_cut_off = s->deps_cut_off + s->th_deps_cut_off;
    p->tasks_filtered = s->th_tasks_filtered;
    p->deps_filtered = s->th_deps_filtered;
    p->filter = tscope__filter_active() || p->tasks_filtered || p->deps_filtered;
    p->cpu_time = s->cfg.cpu_time;
    int untyped = s->ntypes > 0 && (s->types[0].created || s->types[0].calls ||
                                    s->types[0].cancelled || s->types[0].unfinished);
    p->types = calloc(ntypes + 1, sizeof *p->types);
    p->counters = calloc(ncounters + 1, sizeof *p->counters);
    p->events = calloc(nevents + 1, sizeof *p->events);
    uint32_t npeers = tscope__store_npeers(s);
    p->peers = calloc(npeers + 1, sizeof *p->peers);
    p->nodes = calloc(s->nnodes, sizeof *p->nodes);
    p->edges = calloc(s->nedges + 1, sizeof *p->edges);
    p->threads = calloc(nthreads + 1, sizeof *p->threads);
    p->unfinished = calloc(TSCOPE__UNFINISHED_LIST, sizeof *p->unfinished);
    int ok = p->types && p->counters && p->events && p->peers && p->nodes && p->edges &&
             p->threads && p->unfinished && p->program && p->clock && p->mode && p->full_policy;
    for (uint32_t id = untyped ? 0 : 1; ok && id <= ntypes; id++) {
        tscope_type_stats_t st;
        tscope__fill_type_stats(s, id, &st);
        if (tscope__excluded(id) && !st.created && !st.calls && !st.cancelled && !st.unfinished)
            continue; /* the filter file's: never measured, counted in the totals */
        struct tscope__ptype *t = &p->types[p->ntypes++];
        t->name = id ? name_of(&tscope__types, id, "type") : strdup("(untyped)");
        t->id = id;
        t->created = st.created;
        t->calls = st.calls;
        t->yields = st.yields;
        t->cancelled = st.cancelled;
        t->unfinished = st.unfinished;
        t->self = st.self_ns;
        t->running = st.running_ns;
        t->elapsed = st.elapsed_ns;
        t->running_total = st.running_total_ns;
        t->elapsed_total = st.elapsed_total_ns;
        t->self_total = st.self_ns.sum;
        t->threads = st.threads;
        if (id < s->ntypes) { /* with the tasks still running at the end, until then */
            t->self_total += (double)s->types[id].self_unfinished * tscope__clock_ns_per_tick();
            t->cpu = tscope__acc_stats(&s->types[id].cpu, 1); /* ns already */
        }
        t->attrs = tscope__names_attrs(&tscope__types, id);
    }
    for (uint32_t id = 1; ok && id <= ncounters; id++) {
        struct tscope__pcounter *c = &p->counters[p->ncounters++];
        c->name = name_of(&tscope__counters, id, "counter");
        c->id = id;
        struct tscope__welford w = tscope__store_counter(s, id);
        c->stats = tscope__welford_stats(&w);
        c->sampled = !!(tscope__names_attrs(&tscope__counters, id) & TSCOPE__COUNTER_SAMPLED);
    }
    for (uint32_t id = 1; ok && id <= nevents; id++) {
        struct tscope__pevent *e = &p->events[p->nevents++];
        e->name = name_of(&tscope__events, id, "event");
        e->id = id;
        struct tscope__custom c = tscope__store_custom(s, id);
        e->count = c.count;
        e->last_payload = c.last_payload;
    }
    for (uint32_t i = 0; ok && i < npeers; i++) {
        tscope_peer_stats_t m = tscope__store_peer(s, i);
        if (m.sent || m.recv || m.coll_sent || m.coll_recv)
            p->peers[p->npeers++] = m;
    }
    for (uint32_t i = 0; ok && i < s->nnodes; i++) {
        const struct tscope__node *n = &s->nodes[i];
        p->nodes[i] = (struct tscope__pnode){n->parent,
                                             n->type,
                                             n->calls,
                                             (double)n->self * f,
                                             (double)n->running * f,
                                             (double)n->elapsed * f};
    }
    p->nnodes = ok ? s->nnodes : 0;
    for (uint32_t i = 0; ok && i < s->nedges; i++)
        p->edges[i] = (struct tscope__pedge){s->edges[i].from, s->edges[i].to, s->edges[i].count};
    p->nedges = ok ? s->nedges : 0;
    if (p->nedges > 1)
        qsort(p->edges, p->nedges, sizeof *p->edges, by_edge);
    for (uint64_t i = 0; ok && i < s->ninst && p->nunfinished < TSCOPE__UNFINISHED_LIST; i++) {
        const struct tscope__instance *in = &s->inst[i];
        if (in->state == TSCOPE_TASK_UNFINISHED)
            p->unfinished[p->nunfinished++] = (struct tscope__punfinished){
                in->id, in->type, in->thread, (double)in->begin_ts * f};
    }
    ok = ok && copy_graphs(s, p, f) && copy_timeline(s, p, f);
    for (uint32_t i = 0; ok && i < nthreads; i++) {
        p->threads[i].events = i < s->nstacks ? s->stacks[i].events : 0;
        p->threads[i].dropped = atomic_load(&tscope__g.threads[i]->dropped);
        p->threads[i].waits = atomic_load(&tscope__g.threads[i]->waits);
        p->threads[i].own = tscope__g.threads[i]->own;
        ok = i >= s->nstacks || thread_types(&s->stacks[i], &p->threads[i], f);
    }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&tscope__g.reg_lock);
    for (uint32_t i = 0; ok && i < nthreads; i++)
        p->threads[i].name = strdup(tscope__g.threads[i]->name);
    pthread_mutex_unlock(&tscope__g.reg_lock);
    p->nthreads = ok ? nthreads : 0;
    char notes[8][512];
    unsigned nnotes = tscope__machine_notes(notes, 8);
    if (ok && nnotes && (p->notes = malloc(nnotes * sizeof *p->notes))) {
        memcpy(p->notes, notes, nnotes * sizeof *p->notes);
        p->nnotes = nnotes;
    }
    if (!ok) {
        for (uint32_t i = 0; p->threads && i < nthreads; i++)
            free(p->threads[i].types); /* nthreads is 0: the free does not see them */
        tscope__profile_free(p);
        return NULL;
    }
    return p;
}
