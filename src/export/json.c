/* json.c - the canonical JSON profile (schema "taskscope-profile", version
 * TSCOPE__PROFILE_VERSION; docs/output-formats.md describes every field).
 * One array element per line, so diffs of two profiles stay readable. */
#include <stdlib.h>
#include <string.h>

#include "core/hazard.h"
#include "export.h"
#include "output.h"
#include "profile/critpath.h"

static void key(FILE *f, const char *k)
{
    tscope__fmt_json_string(f, k);
    fputc(':', f);
}

static void num(FILE *f, const char *k, double v)
{
    key(f, k);
    tscope__fmt_json_number(f, v);
}

static void u64(FILE *f, const char *k, uint64_t v)
{
    key(f, k);
    fprintf(f, "%llu", (unsigned long long)v);
}

/* A time in whole ns (negative or not finite: 0). */
static void ns(FILE *f, const char *k, double v)
{
    key(f, k);
    fprintf(f, "%llu", v >= 0.5 && v < 1.8e19 ? (unsigned long long)(v + 0.5) : 0ull);
}

static void str(FILE *f, const char *k, const char *v)
{
    key(f, k);
    tscope__fmt_json_string(f, v);
}

/* A time's statistics; `total` is the sum with recursion counted once. */
static void stats(FILE *f, const char *k, const tscope_stats_t *s, double total)
{
    key(f, k);
    fputc('{', f);
    num(f, "total", total);
    fputc(',', f);
    u64(f, "count", s->count);
    fputc(',', f);
    num(f, "sum", s->sum);
    fputc(',', f);
    num(f, "min", s->min);
    fputc(',', f);
    num(f, "max", s->max);
    fputc(',', f);
    num(f, "mean", s->mean);
    fputc(',', f);
    num(f, "stddev", s->stddev);
    fputc('}', f);
}

static const char *state_name(int state)
{
    static const char *const names[] = {"live", "done", "cancelled", "unfinished"};
    return state >= 0 && state < 4 ? names[state] : "live";
}

/* in/out/copyin for a remote edge, else the number. */
static const char *dep_dir(const struct tscope__pdep *d, char *buf, size_t len)
{
    static const char *const remote[] = {"in", "out", "copyin"};
    if (d->kind >= 1 && d->kind <= 3)
        return remote[d->kind - 1];
    snprintf(buf, len, "%d", d->kind);
    return buf;
}

/* "hazards":["RAW","WAW"] of a local edge's bits. */
static void hazards(FILE *f, unsigned bits)
{
    fputs("\"hazards\":[", f);
    for (int i = 0, n = 0; i < TSCOPE__HAZARD_NAMES; i++)
        if (bits & (1u << i))
            fprintf(f, "%s\"%s\"", n++ ? "," : "", tscope__hazard_names[i]);
    fputc(']', f);
}

/* "dependencies" (by type pair), "tasks" (the instance graph) and
 * "task_deps" (its dependency edges). */
static void dependencies(FILE *f, const struct tscope__profile *p)
{
    char buf[32];
    fputs(" \"dependencies\":[", f);
    for (uint32_t i = 0; i < p->ndeptypes; i++) {
        const struct tscope__pdeptype *d = &p->deptypes[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "from_id", d->from);
        fputc(',', f);
        str(f, "from", tscope__profile_type_name(p, d->from, buf, sizeof buf));
        fputc(',', f);
        u64(f, "to_id", d->to);
        fputc(',', f);
        str(f, "to", tscope__profile_type_name(p, d->to, buf, sizeof buf));
        fprintf(f,
                ",\"count\":%llu,\"raw\":%llu,\"war\":%llu,\"waw\":%llu,\"mutex\":%llu,"
                "\"remote\":%llu}",
                (unsigned long long)d->count, (unsigned long long)d->raw,
                (unsigned long long)d->war, (unsigned long long)d->waw,
                (unsigned long long)d->mutex, (unsigned long long)d->remote);
    }
    fputs("],\n \"tasks\":[", f);
    for (uint32_t i = 0; !p->tasks_unwritten && i < p->ntasks; i++) {
        const struct tscope__ptask *t = &p->tasks[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "id", t->id);
        fputc(',', f);
        u64(f, "parent", t->parent);
        fputc(',', f);
        u64(f, "type_id", t->type);
        fputc(',', f);
        u64(f, "thread", t->thread);
        fputc(',', f);
        str(f, "state", state_name(t->state));
        fputc(',', f);
        /* whole ns: %.17g costs a few hundred ns a number, and these
         * are up to TASKSCOPE_INSTANCE_CAP lines */
        ns(f, "create_ns", t->create);
        fputc(',', f);
        ns(f, "begin_ns", t->begin);
        fputc(',', f);
        ns(f, "end_ns", t->end);
        fputc(',', f);
        ns(f, "self_ns", t->self);
        fputc(',', f);
        ns(f, "running_ns", t->running);
        fputc(',', f);
        /* a task cancelled before it began has no elapsed time */
        ns(f, "elapsed_ns",
           t->end > t->begin && (t->begin > 0 || t->running > 0) ? t->end - t->begin : 0);
        fputc('}', f);
    }
    fputs("],\n \"task_deps\":[", f);
    for (uint32_t i = 0; i < p->ndeps; i++) {
        const struct tscope__pdep *d = &p->deps[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "from", d->from);
        fputc(',', f);
        u64(f, "to", d->to);
        fputc(',', f);
        if (d->remote) {
            str(f, "kind", dep_dir(d, buf, sizeof buf));
        } else {
            hazards(f, (unsigned)d->kind);
            fprintf(f, ",\"addresses\":%u,\"addr\":\"0x%llx\"", d->naddrs,
                    (unsigned long long)d->addr);
        }
        fprintf(f, ",\"remote\":%s,\"from_rank\":%d,\"to_rank\":%d}", d->remote ? "true" : "false",
                d->from_rank, d->to_rank);
    }
    fputc(']', f);
}

static void totals(FILE *f, const struct tscope__profile *p)
{
    const tscope_totals_t *t = &p->totals;
    fputs(" \"totals\":{", f);
    num(f, "elapsed_ns", t->elapsed_ns);
    fputc(',', f);
    u64(f, "events", t->events);
    fputc(',', f);
    u64(f, "events_dropped", t->events_dropped);
    fputc(',', f);
    u64(f, "ring_waits", t->ring_waits);
    fputc(',', f);
    u64(f, "tasks_created", t->tasks_created);
    fputc(',', f);
    u64(f, "tasks_completed", t->tasks_completed);
    fputc(',', f);
    u64(f, "tasks_cancelled", t->tasks_cancelled);
    fputc(',', f);
    u64(f, "tasks_unfinished", t->tasks_unfinished);
    fputc(',', f);
    u64(f, "tasks_never_ran", t->tasks_live);
    fputc(',', f);
    u64(f, "instances", t->instances);
    fputc(',', f);
    u64(f, "instances_cut_off", t->instances_cut_off);
    fputc(',', f);
    u64(f, "dependencies", t->dependencies);
    fputc(',', f);
    u64(f, "dependencies_cut_off", p->deps_cut_off);
    fputc(',', f);
    u64(f, "anomalies", t->anomalies);
    fputc(',', f);
    u64(f, "threads", t->threads);
    fputc(',', f);
    u64(f, "types", t->types);
    if (p->filter) { /* only under a filter file: without one the file is as before */
        fputc(',', f);
        u64(f, "tasks_filtered", p->tasks_filtered);
        fputc(',', f);
        u64(f, "dependencies_filtered", p->deps_filtered);
    }
    fputs("},\n", f);
}

/* A global profile's type over the ranks: each rank's self time total. */
static void type_ranks(FILE *f, const struct tscope__profile *p, const struct tscope__ptype *t)
{
    const struct tscope__pranks *r = &t->ranks;
    double mean = p->global->present ? (double)r->self_sum / p->global->present : 0;
    fprintf(f, ",\"ranks\":{\"self_ns\":{\"min\":%lld,\"mean\":", (long long)r->self_min);
    tscope__fmt_json_number(f, mean);
    fprintf(f, ",\"max\":%lld,\"max_rank\":%d,\"imbalance\":", (long long)r->self_max,
            r->self_max_rank);
    tscope__fmt_json_number(f, mean > 0 ? (double)r->self_max / mean : 0);
    fprintf(f, "},\"calls\":{\"min\":%llu,\"max\":%llu}}", (unsigned long long)r->calls_min,
            (unsigned long long)r->calls_max);
}

/* A thread's share of the types it completed tasks of (report --threads):
 * calls, self, running and elapsed as the type's totals count them. */
static void thread_types(FILE *f, const struct tscope__profile *p, const struct tscope__pthread *t)
{
    char buf[32];
    fputs(",\"types\":[", f);
    for (uint32_t i = 0; i < t->ntypes; i++) {
        const struct tscope__pthread_type *e = &t->types[i];
        fputs(i ? ",{" : "{", f);
        u64(f, "type_id", e->type);
        fputc(',', f);
        str(f, "type", tscope__profile_type_name(p, e->type, buf, sizeof buf));
        fputc(',', f);
        u64(f, "calls", e->calls);
        fputc(',', f);
        num(f, "self_ns", e->self);
        fputc(',', f);
        num(f, "running_ns", e->running);
        fputc(',', f);
        num(f, "elapsed_ns", e->elapsed);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The message matrix of g, whole ("bytes" or "messages": a row per rank,
 * zeros and all) up to TSCOPE__GLOBAL_DENSE_MAX ranks. */
static void matrix(FILE *f, const struct tscope__pglobal *g, int of_bytes)
{
    fprintf(f, "\"%s\":[", of_bytes ? "bytes" : "messages");
    size_t k = 0; /* the next pair (by from, to); none in a profile read back */
    for (int i = 0; i < g->nranks; i++) {
        fputs(i ? ",\n  [" : "\n  [", f);
        for (int j = 0; j < g->nranks; j++) {
            const struct tscope__pmsgpair *x = k < g->nmatrix ? &g->matrix[k] : NULL;
            int here = x && x->from == i && x->to == j;
            fprintf(f, "%s%llu", j ? "," : "",
                    here ? (unsigned long long)(of_bytes ? x->bytes : x->msgs) : 0ULL);
            k += (size_t)here;
        }
        fputc(']', f);
    }
    fputc(']', f);
}

/* A larger job's: "pairs", the pairs that exchanged messages by (from, to),
 * each [from, to, bytes, messages]. */
static void matrix_pairs(FILE *f, const struct tscope__pglobal *g)
{
    fputs("\"pairs\":[", f);
    for (size_t i = 0; i < g->nmatrix; i++) {
        const struct tscope__pmsgpair *x = &g->matrix[i];
        fprintf(f, "%s[%d,%d,%llu,%llu]", i ? ",\n  " : "\n  ", x->from, x->to,
                (unsigned long long)x->bytes, (unsigned long long)x->msgs);
    }
    fputc(']', f);
}

/* What only a job's global profile has (src/global). */
static void global(FILE *f, const struct tscope__pglobal *g)
{
    fprintf(f, ",\n \"global\":{\"nranks\":%d,\"ranks_present\":%d,\"missing_ranks\":[", g->nranks,
            g->present);
    int first = 1;
    for (int i = 0; i < g->nranks; i++)
        if (!g->ranks[i].present) {
            fprintf(f, "%s%d", first ? "" : ",", i);
            first = 0;
        }
    fputs("]},\n \"ranks\":[", f);
    for (int i = 0; i < g->nranks; i++) {
        const struct tscope__prank *r = &g->ranks[i];
        const tscope_peer_stats_t *m = &r->msgs;
        fprintf(f,
                "%s{\"rank\":%d,\"present\":%s,\"tasks\":%llu,\"events\":%llu,"
                "\"anomalies\":%llu,\"unfinished\":%llu,\"threads\":%llu,\"self_ns\":%lld,"
                "\"elapsed_ns\":%lld,\"sent\":%llu,\"sent_bytes\":%llu,\"recv\":%llu,"
                "\"recv_bytes\":%llu,\"coll_sent\":%llu,\"coll_sent_bytes\":%llu,"
                "\"coll_recv\":%llu,\"coll_recv_bytes\":%llu}",
                i ? ",\n  " : "\n  ", r->rank, r->present ? "true" : "false",
                (unsigned long long)r->tasks, (unsigned long long)r->events,
                (unsigned long long)r->anomalies, (unsigned long long)r->unfinished,
                (unsigned long long)r->threads, (long long)r->self_ns, (long long)r->elapsed_ns,
                (unsigned long long)m->sent, (unsigned long long)m->sent_bytes,
                (unsigned long long)m->recv, (unsigned long long)m->recv_bytes,
                (unsigned long long)m->coll_sent, (unsigned long long)m->coll_sent_bytes,
                (unsigned long long)m->coll_recv, (unsigned long long)m->coll_recv_bytes);
    }
    fputs("],\n \"message_matrix\":{", f);
    if (g->nranks > TSCOPE__GLOBAL_DENSE_MAX)
        matrix_pairs(f, g);
    else {
        matrix(f, g, 1);
        fputc(',', f);
        matrix(f, g, 0);
    }
    fputs("},\n \"ranks_timeline\":{", f);
    num(f, "bin_ns", g->bin_ns);
    fputs(",\"busy_ns\":[", f);
    for (int i = 0; i < g->nranks; i++) {
        fputs(i ? ",\n  [" : "\n  [", f);
        for (uint32_t b = 0; b < g->nbins; b++)
            fprintf(f, "%s%lld", b ? "," : "", (long long)g->busy[(size_t)i * g->nbins + b]);
        fputc(']', f);
    }
    fputs("],\"wait_ns\":[", f);
    for (int i = 0; i < g->nranks; i++) {
        fputs(i ? ",\n  [" : "\n  [", f);
        for (uint32_t b = 0; b < g->nbins; b++)
            fprintf(f, "%s%lld", b ? "," : "", (long long)g->wait[(size_t)i * g->nbins + b]);
        fputc(']', f);
    }
    fputs("]},\n \"remote_dependencies\":[", f);
    for (uint32_t i = 0; i < g->nrdeps; i++) {
        const struct tscope__prdep *d = &g->rdeps[i];
        fprintf(f, "%s{\"from_rank\":%d,\"from\":", i ? ",\n  " : "\n  ", d->from_rank);
        tscope__fmt_json_string(f, d->from);
        fprintf(f, ",\"to_rank\":%d,\"to\":", d->to_rank);
        tscope__fmt_json_string(f, d->to);
        fprintf(f, ",\"in\":%llu,\"out\":%llu,\"copyin\":%llu}", (unsigned long long)d->in,
                (unsigned long long)d->out, (unsigned long long)d->copyin);
    }
    fputs("]", f);
}

/* "critical_path" (src/profile/critpath.c), only for a profile with tasks:
 * its steps, the work on it and all work, the share of each type.  0, or
 * TSCOPE_ENOMEM (nothing written). */
static int critical_path(FILE *f, const struct tscope__profile *p)
{
    struct tscope__critpath cp;
    double *by_type = malloc(((size_t)p->ntypes + 1) * sizeof *by_type);
    if (!by_type || tscope__critpath_find(p, &cp)) {
        free(by_type);
        return TSCOPE_ENOMEM;
    }
    fputs(",\n \"critical_path\":{", f);
    ns(f, "length_ns", cp.length);
    fputc(',', f);
    ns(f, "work_ns", cp.work);
    fputc(',', f);
    num(f, "parallelism", cp.length > 0 ? cp.work / cp.length : 0);
    fputc(',', f);
    u64(f, "tasks", cp.tasks);
    fputc(',', f);
    u64(f, "tasks_cut_off", cp.tasks_cut_off);
    uint32_t first = cp.nsteps > TSCOPE__CP_STEPS_KEPT ? cp.nsteps - TSCOPE__CP_STEPS_KEPT : 0;
    fputc(',', f);
    u64(f, "steps_cut_off", first + cp.steps_cut);
    fprintf(f, ",\"waits_marked\":%s,\"steps\":[", cp.waits_marked ? "true" : "false");
    for (uint32_t k = first; k < cp.nsteps; k++) {
        const struct tscope__cpstep *st = &cp.steps[k];
        fputs(k > first ? ",\n  {" : "\n  {", f);
        u64(f, "task", st->id);
        fputc(',', f);
        u64(f, "type_id", st->type);
        fputc(',', f);
        ns(f, "from_ns", st->from);
        fputc(',', f);
        ns(f, "to_ns", st->to);
        fputc(',', f);
        ns(f, "work_ns", st->work);
        fputc(',', f);
        key(f, "next");
        if (st->link == TSCOPE__CP_END)
            fputs("null", f);
        else
            tscope__fmt_json_string(f, st->why);
        fputc('}', f);
    }
    fputs("],\"types\":[", f);
    tscope__critpath_by_type(p, &cp, by_type);
    for (uint32_t i = 0, n = 0; i < p->ntypes; i++) {
        if (!(by_type[i] > 0))
            continue;
        fputs(n++ ? ",{" : "{", f);
        u64(f, "type_id", p->types[i].id);
        fputc(',', f);
        ns(f, "work_ns", by_type[i]);
        fputc('}', f);
    }
    fputs("]}", f);
    tscope__critpath_free(&cp);
    free(by_type);
    return 0;
}

int tscope__export_json(const struct tscope__profile *p, FILE *f)
{
    char buf[32];
    fputs("{\"schema\":\"" TSCOPE__PROFILE_SCHEMA "\",", f);
    u64(f, "version", TSCOPE__PROFILE_VERSION);
    fputs(",\n ", f);
    str(f, "program", p->program);
    fputc(',', f);
    u64(f, "rank", (uint64_t)p->rank);
    fputc(',', f);
    u64(f, "nranks", (uint64_t)p->nranks);
    fputc(',', f);
    str(f, "clock", p->clock);
    fputc(',', f);
    str(f, "mode", p->mode);
    fputc(',', f);
    str(f, "full_policy", p->full_policy);
    if (p->ended_by) { /* only then: a normal end keeps the format as it was */
        char sig[32];
        fputc(',', f);
        str(f, "ended_by", tscope__fmt_ended_by(p, sig, sizeof sig));
    }
    if (p->cpu_time) /* only then (--cpu-time): the types' cpu_ns */
        fputs(",\"cpu_time\":true", f);
    fputs(",\n", f);
    totals(f, p);

    fputs(" \"types\":[", f);
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "id", t->id);
        fputc(',', f);
        str(f, "name", t->name);
        fputc(',', f);
        u64(f, "created", t->created);
        fputc(',', f);
        u64(f, "calls", t->calls);
        fputc(',', f);
        u64(f, "yields", t->yields);
        fputc(',', f);
        u64(f, "cancelled", t->cancelled);
        fputc(',', f);
        u64(f, "unfinished", t->unfinished);
        fputc(',', f);
        u64(f, "threads", t->threads);
        fputc(',', f);
        stats(f, "self_ns", &t->self, t->self_total);
        fputc(',', f);
        stats(f, "running_ns", &t->running, t->running_total);
        fputc(',', f);
        stats(f, "elapsed_ns", &t->elapsed, t->elapsed_total);
        if (p->cpu_time) {
            fputc(',', f);
            stats(f, "cpu_ns", &t->cpu, t->cpu.sum);
        }
        if (t->attrs & TSCOPE_TYPE_WAIT) /* only then: other types stay as they were */
            fputs(",\"wait\":true", f);
        if (t->attrs & TSCOPE_TYPE_BARRIER)
            fputs(",\"barrier\":true", f);
        if (p->global)
            type_ranks(f, p, t);
        fputc('}', f);
    }
    fputs("],\n \"counters\":[", f);
    for (uint32_t i = 0; i < p->ncounters; i++) {
        const struct tscope__pcounter *c = &p->counters[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "id", c->id);
        fputc(',', f);
        str(f, "name", c->name);
        fputc(',', f);
        u64(f, "count", c->stats.count);
        fputc(',', f);
        num(f, "min", c->stats.min);
        fputc(',', f);
        num(f, "max", c->stats.max);
        fputc(',', f);
        num(f, "mean", c->stats.mean);
        fputc(',', f);
        num(f, "stddev", c->stats.stddev);
        fputc(',', f);
        num(f, "last", c->stats.last);
        if (c->sampled)
            fputs(",\"sampled\":true", f); /* one value per sampling period */
        fputc('}', f);
    }
    fputs("],\n \"events\":[", f);
    for (uint32_t i = 0; i < p->nevents; i++) {
        const struct tscope__pevent *e = &p->events[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "id", e->id);
        fputc(',', f);
        str(f, "name", e->name);
        fputc(',', f);
        u64(f, "count", e->count);
        fputc(',', f);
        u64(f, "last_payload", e->last_payload);
        fputc('}', f);
    }
    fputs("],\n \"messages\":[", f);
    for (uint32_t i = 0; i < p->npeers; i++) {
        const tscope_peer_stats_t *m = &p->peers[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        fprintf(f,
                "\"peer\":%d,\"sent\":%llu,\"sent_bytes\":%llu,\"recv\":%llu,\"recv_bytes\":%llu,"
                "\"coll_sent\":%llu,\"coll_sent_bytes\":%llu,\"coll_recv\":%llu,"
                "\"coll_recv_bytes\":%llu}",
                m->peer, (unsigned long long)m->sent, (unsigned long long)m->sent_bytes,
                (unsigned long long)m->recv, (unsigned long long)m->recv_bytes,
                (unsigned long long)m->coll_sent, (unsigned long long)m->coll_sent_bytes,
                (unsigned long long)m->coll_recv, (unsigned long long)m->coll_recv_bytes);
    }
    fputs("],\n \"graph\":[", f);
    for (uint32_t i = 0; i < p->nedges; i++) {
        const struct tscope__pedge *e = &p->edges[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "from_id", e->from);
        fputc(',', f);
        str(f, "from", tscope__profile_type_name(p, e->from, buf, sizeof buf));
        fputc(',', f);
        u64(f, "to_id", e->to);
        fputc(',', f);
        str(f, "to", tscope__profile_type_name(p, e->to, buf, sizeof buf));
        fputc(',', f);
        u64(f, "count", e->count);
        fputc('}', f);
    }
    fputs("],\n \"tree\":[", f);
    for (uint32_t i = 0; i < p->nnodes; i++) {
        const struct tscope__pnode *n = &p->nodes[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "node", i);
        fputc(',', f);
        key(f, "parent");
        if (n->parent == UINT32_MAX)
            fputs("null", f);
        else
            fprintf(f, "%u", n->parent);
        fputc(',', f);
        u64(f, "type_id", i ? n->type : TSCOPE__PROFILE_ROOT);
        fputc(',', f);
        str(f, "type",
            tscope__profile_type_name(p, i ? n->type : TSCOPE__PROFILE_ROOT, buf, sizeof buf));
        fputc(',', f);
        u64(f, "calls", n->calls);
        fputc(',', f);
        num(f, "self_ns", n->self);
        fputc(',', f);
        num(f, "running_ns", n->running);
        fputc(',', f);
        num(f, "elapsed_ns", n->elapsed);
        fputc('}', f);
    }
    fputs("],\n \"threads\":[", f);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const struct tscope__pthread *t = &p->threads[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "index", i);
        fputc(',', f);
        str(f, "name", t->name);
        fputc(',', f);
        u64(f, "events", t->events);
        fputc(',', f);
        u64(f, "dropped", t->dropped);
        fputc(',', f);
        u64(f, "waits", t->waits);
        if (t->own)
            fputs(",\"taskscope\":true", f); /* its own thread, not the program's */
        if (t->ntypes)                       /* only a thread that completed tasks */
            thread_types(f, p, t);
        fputc('}', f);
    }
    fputc(']', f);
    if (p->nnotes) { /* what the machine lacks, printed once per machine (core/note.c) */
        fputs(",\n \"notes\":[", f);
        for (uint32_t i = 0; i < p->nnotes; i++) {
            fputs(i ? ",\n  " : "\n  ", f);
            tscope__fmt_json_string(f, p->notes[i]);
        }
        fputc(']', f);
    }
    fputs(",\n \"unfinished\":[", f);
    for (uint32_t i = 0; i < p->nunfinished; i++) {
        const struct tscope__punfinished *u = &p->unfinished[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        u64(f, "id", u->id);
        fputc(',', f);
        u64(f, "type_id", u->type);
        fputc(',', f);
        u64(f, "thread", u->thread);
        fputc(',', f);
        num(f, "begin_ns", u->begin);
        fputc('}', f);
    }
    fputs("],\n", f);
    dependencies(f, p);
    if ((p->ntasks || p->path) && critical_path(f, p))
        return TSCOPE_ENOMEM;
    fputs(",\n \"timeline\":{", f);
    num(f, "bin_ns", p->tl.nbins ? p->tl.bin_ns : 0);
    fputs(",\"busy_ns\":[", f);
    for (uint32_t b = 0; b < p->tl.nbins; b++)
        fprintf(f, "%s%lld", b ? "," : "", (long long)tscope__profile_busy_bin(p, b));
    fputs("],\"wait_ns\":[", f);
    for (uint32_t b = 0; b < p->tl.nbins; b++)
        fprintf(f, "%s%lld", b ? "," : "", (long long)tscope__profile_wait_bin(p, b));
    fputs("]}", f);
    if (p->global)
        global(f, p->global);
    fputs("\n}\n", f);
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_json = {
    "the profile that taskscope report, diff, merge, model and convert read",
    0,
    {{"profile.json", tscope__export_json, 0, NULL}}};
