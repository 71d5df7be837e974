/* global.c - the reduction of a job's ranks into the global view
 * (global.h), over the transport's collectives at the end of the run
 * (tscope_finalize_global) or offline from the ranks' profiles
 * (tscope__global_merge).
 *
 * The steps, the same in both:
 *  1. names: the task types of all ranks, in rank order (rank 0's in its
 *     order, then what each next rank adds); in a run rank 0 broadcasts
 *     its names, gathers the others' new ones and broadcasts the list;
 *  2. each rank cuts its profile into vectors over that list: sums, minima
 *     and maxima of integer ns (reduced elementwise: a tree of MPI
 *     collectives, log(ranks) steps), and a record of its own (totals,
 *     the nonzero cells of its row of the message matrix, its busy time
 *     over time, per type its self time and sums of squares: struct
 *     rank_rec, packed explicitly for the transport; its length varies
 *     with the cells, so the lengths are gathered first, then the records,
 *     to rank 0: they are per rank by nature);
 *  3. rank 0 builds a profile (tscope__profile with p->global) from the
 *     combined vectors and the records in rank order, and writes it.
 * The message matrix stays sparse throughout (the pairs of ranks that
 * exchanged messages): memory grows with the ranks and their pairs, never
 * with the square of the ranks.
 * Sums of integers are exact in any order and the records are combined in
 * rank order, so the in-run reduction and `taskscope merge` agree. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "export/export.h"
#include "export/output.h"
#include "global.h"
#include "global_int.h"

extern char *program_invocation_short_name;

/* per type: summed, minimum, maximum */
enum {
    S_CREATED,
    S_CALLS,
    S_YIELDS,
    S_CANCELLED,
    S_UNFINISHED,
    S_THREADS,
    S_SELF_N,
    S_SELF_SUM,
    S_RUN_N,
    S_RUN_SUM,
    S_RUN_TOTAL,
    S_EL_N,
    S_EL_SUM,
    S_EL_TOTAL,
    S_SELF_TOTAL, /* the self sum and what unfinished tasks ran: a rank's self time */
    S_CPU_N,      /* --cpu-time's CPU time (ranks that measured it) */
    S_CPU_SUM,
    NS_TYPE
};
enum { M_SELF, M_RUN, M_EL, M_RANK_SELF, M_RANK_CALLS, M_CPU, NM_TYPE };
enum { X_SELF, X_RUN, X_EL, X_RANK_SELF_MAX, X_RANK_CALLS, X_CPU, NX_TYPE };
/* the totals, summed (after the types' sums) */
enum {
    T_EVENTS,
    T_DROPPED,
    T_WAITS,
    T_CREATED,
    T_COMPLETED,
    T_CANCELLED,
    T_UNFINISHED,
    T_NEVER_RAN,
    T_INSTANCES,
    T_INST_CUT,
    T_DEPS,
    T_DEPS_CUT,
    T_ANOMALIES,
    T_FILTERED,      /* tasks the filter file left out */
    T_DEPS_FILTERED, /* ... and their dependencies */
    T_FILTER_ON,     /* ranks measured under a filter file */
    T_CPU_ON,        /* ranks that measured CPU time (--cpu-time) */
    T_THREADS,
    T_PRESENT,
    NT_SUM
};
#define TL_MAX 512 /* TSCOPE__TL_BINS: a rank's timeline bins */

/* What is per rank by nature, gathered to rank 0 rather than reduced: its
 * totals, the nonzero cells of its row of the message matrix, its busy time
 * over its own timeline, and per type (in the agreed names' order) its self
 * time and the sums of squares of its self, running and elapsed times.  On
 * the wire (record_pack, record_unpack) it is record_len() int64 values in
 * the order of the fields below (nsent, then each cell's three values),
 * doubles as their bits. */
struct type_rec {
    int64_t self_ns;
    double sq_self, sq_running, sq_elapsed, sq_cpu;
};
/* One cell of a rank's row: sent to rank `to` (point to point and collective). */
struct sent {
    int64_t to, bytes, msgs;
};
struct rank_rec {
    struct tscope__prank fig; /* rank, present, totals, messages summed over its peers */
    struct sent *sent;        /* by `to`, those with bytes or messages: nsent */
    uint32_t nsent;
    double bin_ns;
    uint32_t nbins;
    int64_t bins[TL_MAX];   /* busy thread-ns per bin */
    int64_t wait[TL_MAX];   /* the part of it waiting (a waiting type on top) */
    struct type_rec *types; /* one per agreed name */
};

struct names {
    char **v;
    uint32_t n, cap;
    uint32_t *sorted; /* indexes by name of the first nsorted names, for lookups */
    uint32_t nsorted;
};

struct vectors {
    int64_t *sum, *min, *max;
    size_t nsum, nmin, nmax;
};

static void names_free(struct names *nm)
{
    for (uint32_t i = 0; i < nm->n; i++)
        free(nm->v[i]);
    free(nm->v);
    free(nm->sorted);
    memset(nm, 0, sizeof *nm);
}

static const struct names *sort_names;
static int by_name(const void *a, const void *b)
{
    return strcmp(sort_names->v[*(const uint32_t *)a], sort_names->v[*(const uint32_t *)b]);
}

/* Index of name among the indexed names of nm (names_index), or -1. */
static long names_find(const struct names *nm, const char *name)
{
    size_t lo = 0, hi = nm->sorted ? nm->nsorted : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(nm->v[nm->sorted[mid]], name);
        if (!c)
            return nm->sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int names_index(struct names *nm)
{
    free(nm->sorted);
    nm->sorted = malloc((nm->n + 1) * sizeof *nm->sorted);
    if (!nm->sorted)
        return -1;
    for (uint32_t i = 0; i < nm->n; i++)
        nm->sorted[i] = i;
    sort_names = nm;
    qsort(nm->sorted, nm->n, sizeof *nm->sorted, by_name);
    nm->nsorted = nm->n;
    return 0;
}

/* Appends name unless present: the indexed names by their index, those
 * added since one by one (names_index indexes them all again). */
static int names_add(struct names *nm, const char *name, int check)
{
    if (check && names_find(nm, name) >= 0)
        return 0;
    if (check)
        for (uint32_t i = nm->sorted ? nm->nsorted : 0; i < nm->n; i++)
            if (!strcmp(nm->v[i], name))
                return 0;
    if (nm->n == nm->cap) {
        uint32_t cap = nm->cap ? nm->cap * 2 : 32;
        char **v = realloc(nm->v, cap * sizeof *v);
        if (!v)
            return -1;
        nm->v = v;
        nm->cap = cap;
    }
    if (!(nm->v[nm->n] = strdup(name)))
        return -1;
    nm->n++;
    return 0;
}

/* The names of p's types as one block of NUL-ended strings. */
static char *names_blob(const struct tscope__profile *p, size_t *len)
{
    size_t n = 0;
    for (uint32_t i = 0; p && i < p->ntypes; i++)
        n += strlen(p->types[i].name) + 1;
    char *b = malloc(n + 1), *at = b;
    if (!b)
        return NULL;
    for (uint32_t i = 0; p && i < p->ntypes; i++) {
        size_t l = strlen(p->types[i].name) + 1;
        memcpy(at, p->types[i].name, l);
        at += l;
    }
    *len = n;
    return b;
}

/* Adds the names of a blob (check: skip those present). */
static int names_add_blob(struct names *nm, const char *b, size_t len, int check)
{
    for (size_t at = 0; at < len;) {
        const char *s = b + at;
        size_t l = strnlen(s, len - at);
        if (l == len - at) /* not NUL-ended: cut */
            return -1;
        if (names_add(nm, s, check))
            return -1;
        at += l + 1;
    }
    return 0;
}

/* ---- one rank's vectors ---------------------------------------------------- */

static int vectors_alloc(struct vectors *v, uint32_t ntypes)
{
    v->nsum = (size_t)ntypes * NS_TYPE + NT_SUM;
    v->nmin = (size_t)ntypes * NM_TYPE;
    v->nmax = (size_t)ntypes * NX_TYPE + 1;
    v->sum = calloc(v->nsum + 1, sizeof *v->sum);
    v->min = calloc(v->nmin + 1, sizeof *v->min);
    v->max = calloc(v->nmax + 1, sizeof *v->max);
    return v->sum && v->min && v->max ? 0 : -1;
}

static void vectors_free(struct vectors *v)
{
    free(v->sum);
    free(v->min);
    free(v->max);
}

/* ---- one rank's record ------------------------------------------------------ */

enum { FIG_FIELDS = 17 }; /* the int64 values of rank_rec.fig on the wire */

/* The int64 values of a record of nsent cells on the wire. */
static size_t record_len(size_t nsent, uint32_t ntypes)
{
    return FIG_FIELDS + 1 + 3 * nsent + 2 + 2 * TL_MAX + 5 * (size_t)ntypes;
}

static int record_alloc(struct rank_rec *r, uint32_t ntypes)
{
    memset(r, 0, sizeof *r);
    r->types = calloc((size_t)ntypes + 1, sizeof *r->types);
    return r->types ? 0 : -1;
}

static void record_free(struct rank_rec *r)
{
    free(r->sent);
    free(r->types);
}

/* Empties r for rank `rank` (absent until rank_cut says present). */
static void record_clear(struct rank_rec *r, int rank, uint32_t ntypes)
{
    memset(&r->fig, 0, sizeof r->fig);
    r->fig.rank = rank;
    r->fig.msgs.peer = -1;
    free(r->sent);
    r->sent = NULL;
    r->nsent = 0;
    r->bin_ns = 0;
    r->nbins = 0;
    memset(r->bins, 0, sizeof r->bins);
    memset(r->wait, 0, sizeof r->wait);
    memset(r->types, 0, (size_t)ntypes * sizeof *r->types);
}

static int64_t dbits(double d)
{
    int64_t i;
    memcpy(&i, &d, sizeof i);
    return i;
}

static double bitsd(int64_t i)
{
    double d;
    memcpy(&d, &i, sizeof d);
    return d;
}

static void record_pack(const struct rank_rec *r, uint32_t ntypes, int64_t *w)
{
    const struct tscope__prank *f = &r->fig;
    const tscope_peer_stats_t *m = &f->msgs;
    int64_t fig[FIG_FIELDS] = {f->rank,
                               f->present,
                               (int64_t)f->tasks,
                               (int64_t)f->events,
                               (int64_t)f->anomalies,
                               (int64_t)f->unfinished,
                               (int64_t)f->threads,
                               f->self_ns,
                               f->elapsed_ns,
                               (int64_t)m->sent,
                               (int64_t)m->sent_bytes,
                               (int64_t)m->recv,
                               (int64_t)m->recv_bytes,
                               (int64_t)m->coll_sent,
                               (int64_t)m->coll_sent_bytes,
                               (int64_t)m->coll_recv,
                               (int64_t)m->coll_recv_bytes};
    memcpy(w, fig, sizeof fig);
    w += FIG_FIELDS;
    *w++ = r->nsent;
    for (uint32_t i = 0; i < r->nsent; i++) {
        *w++ = r->sent[i].to;
        *w++ = r->sent[i].bytes;
        *w++ = r->sent[i].msgs;
    }
    *w++ = dbits(r->bin_ns);
    *w++ = r->nbins;
    memcpy(w, r->bins, sizeof r->bins);
    w += TL_MAX;
    memcpy(w, r->wait, sizeof r->wait);
    w += TL_MAX;
    for (uint32_t k = 0; k < ntypes; k++) {
        *w++ = r->types[k].self_ns;
        *w++ = dbits(r->types[k].sq_self);
        *w++ = dbits(r->types[k].sq_running);
        *w++ = dbits(r->types[k].sq_elapsed);
        *w++ = dbits(r->types[k].sq_cpu);
    }
}

/* r from record_pack's n values (r allocated by record_alloc, empty): 0,
 * or -1 when they are not a record of ntypes types and cells to ranks
 * below nranks, or memory ran out. */
static int record_unpack(struct rank_rec *r, uint32_t ntypes, int nranks, const int64_t *w,
                         size_t n)
{
    if (n < record_len(0, ntypes))
        return -1;
    uint64_t nsent = (uint64_t)w[FIG_FIELDS];
    if (nsent > (uint64_t)nranks || n != record_len(nsent, ntypes))
        return -1;
    struct tscope__prank *f = &r->fig;
    f->rank = (int)w[0];
    f->present = (int)w[1];
    f->tasks = (uint64_t)w[2];
    f->events = (uint64_t)w[3];
    f->anomalies = (uint64_t)w[4];
    f->unfinished = (uint64_t)w[5];
    f->threads = (uint64_t)w[6];
    f->self_ns = w[7];
    f->elapsed_ns = w[8];
    f->msgs = (tscope_peer_stats_t){-1,
                                    (uint64_t)w[9],
                                    (uint64_t)w[10],
                                    (uint64_t)w[11],
                                    (uint64_t)w[12],
                                    (uint64_t)w[13],
                                    (uint64_t)w[14],
                                    (uint64_t)w[15],
                                    (uint64_t)w[16]};
    w += FIG_FIELDS + 1;
    if (!(r->sent = malloc((nsent + 1) * sizeof *r->sent)))
        return -1;
    for (r->nsent = 0; r->nsent < nsent; r->nsent++, w += 3) {
        if (w[0] < 0 || w[0] >= nranks || (r->nsent && w[0] <= r->sent[r->nsent - 1].to))
            return -1;
        r->sent[r->nsent] = (struct sent){w[0], w[1], w[2]};
    }
    r->bin_ns = bitsd(*w++);
    r->nbins = (uint32_t)*w++;
    if (r->nbins > TL_MAX)
        r->nbins = TL_MAX;
    memcpy(r->bins, w, sizeof r->bins);
    w += TL_MAX;
    memcpy(r->wait, w, sizeof r->wait);
    w += TL_MAX;
    for (uint32_t b = 0; b < TL_MAX; b++)
        if (r->wait[b] < 0 || r->wait[b] > r->bins[b])
            r->wait[b] = r->wait[b] < 0 ? 0 : r->bins[b]; /* never more than busy */
    for (uint32_t k = 0; k < ntypes; k++, w += 5)
        r->types[k] = (struct type_rec){w[0], bitsd(w[1]), bitsd(w[2]), bitsd(w[3]), bitsd(w[4])};
    return 0;
}

/* Sum of squares of a time's samples, from its count, mean and stddev. */
static double sumsq(const tscope_stats_t *s)
{
    return (double)s->count * (s->stddev * s->stddev + s->mean * s->mean);
}

/* v as an absent rank's (the identities of sum, min and max: combined
 * with them, a rank's vectors stay as they are), or with the minima of a
 * present rank's own per type figures at 0 until rank_cut sets them. */
static void vectors_clear(struct vectors *v, uint32_t T, int present)
{
    memset(v->sum, 0, v->nsum * sizeof *v->sum);
    memset(v->max, 0, v->nmax * sizeof *v->max);
    for (uint32_t k = 0; k < T; k++) {
        int64_t *mn = &v->min[(size_t)k * NM_TYPE];
        mn[M_SELF] = mn[M_RUN] = mn[M_EL] = mn[M_CPU] = INT64_MAX;
        mn[M_RANK_SELF] = mn[M_RANK_CALLS] = present ? 0 : INT64_MAX;
    }
}

static int by_to(const void *a, const void *b)
{
    const struct sent *x = a, *y = b;
    return x->to < y->to ? -1 : x->to > y->to;
}

/* rec's row of the message matrix from p's peers: the cells with bytes or
 * messages, by rank, a rank named twice summed.  0, or -1 out of memory. */
static int row_cut(const struct tscope__profile *p, int nranks, struct rank_rec *rec)
{
    if (!(rec->sent = malloc(((size_t)p->npeers + 1) * sizeof *rec->sent)))
        return -1;
    size_t n = 0;
    for (uint32_t i = 0; i < p->npeers; i++) {
        const tscope_peer_stats_t *m = &p->peers[i];
        if (m->peer >= 0 && m->peer < nranks)
            rec->sent[n++] = (struct sent){m->peer, (int64_t)(m->sent_bytes + m->coll_sent_bytes),
                                           (int64_t)(m->sent + m->coll_sent)};
    }
    qsort(rec->sent, n, sizeof *rec->sent, by_to);
    rec->nsent = 0;
    for (size_t i = 0; i < n; i++) {
        struct sent *last = rec->nsent ? &rec->sent[rec->nsent - 1] : NULL;
        if (last && last->to == rec->sent[i].to) {
            last->bytes += rec->sent[i].bytes;
            last->msgs += rec->sent[i].msgs;
        } else
            rec->sent[rec->nsent++] = rec->sent[i];
    }
    uint32_t kept = 0; /* a cell of 0 bytes and 0 messages is no pair */
    for (uint32_t i = 0; i < rec->nsent; i++)
        if (rec->sent[i].bytes || rec->sent[i].msgs)
            rec->sent[kept++] = rec->sent[i];
    rec->nsent = kept;
    return 0;
}

/* Rank `rank`'s vectors and record from its profile p (NULL: the rank is
 * absent or failed: the identities of sum/min/max, present 0).  0, or -1
 * out of memory. */
static int rank_cut(const struct tscope__profile *p, int rank, int nranks, const struct names *nm,
                    struct vectors *v, struct rank_rec *rec)
{
    uint32_t T = nm->n;
    vectors_clear(v, T, p != NULL);
    record_clear(rec, rank, T);
    if (!p)
        return 0;
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        long k = names_find(nm, t->name);
        if (k < 0)
            continue;
        int64_t *s = &v->sum[(size_t)k * NS_TYPE];
        int64_t *mn = &v->min[(size_t)k * NM_TYPE];
        int64_t *mx = &v->max[(size_t)k * NX_TYPE];
        s[S_CREATED] = (int64_t)t->created;
        s[S_CALLS] = (int64_t)t->calls;
        s[S_YIELDS] = (int64_t)t->yields;
        s[S_CANCELLED] = (int64_t)t->cancelled;
        s[S_UNFINISHED] = (int64_t)t->unfinished;
        s[S_THREADS] = t->threads;
        s[S_SELF_N] = (int64_t)t->self.count;
        s[S_SELF_SUM] = tscope__ns_whole(t->self.sum);
        s[S_RUN_N] = (int64_t)t->running.count;
        s[S_RUN_SUM] = tscope__ns_whole(t->running.sum);
        s[S_RUN_TOTAL] = tscope__ns_whole(t->running_total);
        s[S_EL_N] = (int64_t)t->elapsed.count;
        s[S_EL_SUM] = tscope__ns_whole(t->elapsed.sum);
        s[S_EL_TOTAL] = tscope__ns_whole(t->elapsed_total);
        s[S_SELF_TOTAL] = tscope__ns_whole(t->self_total);
        if (t->self.count) {
            mn[M_SELF] = tscope__ns_whole(t->self.min);
            mx[X_SELF] = tscope__ns_whole(t->self.max);
        }
        if (t->running.count) {
            mn[M_RUN] = tscope__ns_whole(t->running.min);
            mx[X_RUN] = tscope__ns_whole(t->running.max);
        }
        if (t->elapsed.count) {
            mn[M_EL] = tscope__ns_whole(t->elapsed.min);
            mx[X_EL] = tscope__ns_whole(t->elapsed.max);
        }
        if (p->cpu_time) {
            s[S_CPU_N] = (int64_t)t->cpu.count;
            s[S_CPU_SUM] = tscope__ns_whole(t->cpu.sum);
            if (t->cpu.count) {
                mn[M_CPU] = tscope__ns_whole(t->cpu.min);
                mx[X_CPU] = tscope__ns_whole(t->cpu.max);
            }
        }
        mn[M_RANK_SELF] = s[S_SELF_TOTAL];
        mn[M_RANK_CALLS] = s[S_CALLS];
        mx[X_RANK_SELF_MAX] = s[S_SELF_TOTAL];
        mx[X_RANK_CALLS] = s[S_CALLS];
        rec->types[k] = (struct type_rec){s[S_SELF_TOTAL], sumsq(&t->self), sumsq(&t->running),
                                          sumsq(&t->elapsed), p->cpu_time ? sumsq(&t->cpu) : 0};
    }
    const tscope_totals_t *tt = &p->totals;
    int64_t *ts = &v->sum[(size_t)T * NS_TYPE];
    ts[T_EVENTS] = (int64_t)tt->events;
    ts[T_DROPPED] = (int64_t)tt->events_dropped;
    ts[T_WAITS] = (int64_t)tt->ring_waits;
    ts[T_CREATED] = (int64_t)tt->tasks_created;
    ts[T_COMPLETED] = (int64_t)tt->tasks_completed;
    ts[T_CANCELLED] = (int64_t)tt->tasks_cancelled;
    ts[T_UNFINISHED] = (int64_t)tt->tasks_unfinished;
    ts[T_NEVER_RAN] = (int64_t)tt->tasks_live;
    ts[T_INSTANCES] = (int64_t)tt->instances;
    ts[T_INST_CUT] = (int64_t)tt->instances_cut_off;
    ts[T_DEPS] = (int64_t)tt->dependencies;
    ts[T_DEPS_CUT] = (int64_t)p->deps_cut_off;
    ts[T_ANOMALIES] = (int64_t)tt->anomalies;
    ts[T_FILTERED] = (int64_t)p->tasks_filtered;
    ts[T_DEPS_FILTERED] = (int64_t)p->deps_filtered;
    ts[T_FILTER_ON] = p->filter != 0;
    ts[T_CPU_ON] = p->cpu_time != 0;
    ts[T_THREADS] = tt->threads;
    ts[T_PRESENT] = 1;
    v->max[(size_t)T * NX_TYPE] = tscope__ns_whole(tt->elapsed_ns);

    struct tscope__prank *f = &rec->fig;
    f->present = 1;
    f->tasks = tt->tasks_completed;
    f->events = tt->events;
    f->anomalies = tt->anomalies;
    f->unfinished = tt->tasks_unfinished;
    f->threads = tt->threads;
    f->elapsed_ns = tscope__ns_whole(tt->elapsed_ns);
    for (uint32_t i = 0; i < p->ntypes; i++)
        f->self_ns += tscope__ns_whole(p->types[i].self_total);
    for (uint32_t i = 0; i < p->npeers; i++) {
        const tscope_peer_stats_t *m = &p->peers[i];
        f->msgs.sent += m->sent;
        f->msgs.sent_bytes += m->sent_bytes;
        f->msgs.recv += m->recv;
        f->msgs.recv_bytes += m->recv_bytes;
        f->msgs.coll_sent += m->coll_sent;
        f->msgs.coll_sent_bytes += m->coll_sent_bytes;
        f->msgs.coll_recv += m->coll_recv;
        f->msgs.coll_recv_bytes += m->coll_recv_bytes;
    }
    rec->nbins = p->tl.nbins < TL_MAX ? p->tl.nbins : TL_MAX;
    rec->bin_ns = rec->nbins ? p->tl.bin_ns : 0;
    for (uint32_t b = 0; b < rec->nbins; b++) {
        rec->bins[b] = tscope__profile_busy_bin(p, b);
        int64_t w = tscope__profile_wait_bin(p, b);
        rec->wait[b] = w < rec->bins[b] ? w : rec->bins[b];
    }
    return row_cut(p, nranks, rec);
}

/* acc = acc (op) v, elementwise: what the transport's reduce does. */
static void combine(struct vectors *acc, const struct vectors *v)
{
    for (size_t i = 0; i < acc->nsum; i++)
        acc->sum[i] += v->sum[i];
    for (size_t i = 0; i < acc->nmin; i++)
        if (v->min[i] < acc->min[i])
            acc->min[i] = v->min[i];
    for (size_t i = 0; i < acc->nmax; i++)
        if (v->max[i] > acc->max[i])
            acc->max[i] = v->max[i];
}

/* ---- the global profile ---------------------------------------------------- */

static void stats_of(tscope_stats_t *s, int64_t n, int64_t sum, int64_t mn, int64_t mx, double sq)
{
    s->count = (uint64_t)n;
    s->sum = (double)sum;
    s->min = n ? (double)mn : 0;
    s->max = n ? (double)mx : 0;
    s->mean = n ? (double)sum / (double)n : 0;
    double var = n ? sq / (double)n - s->mean * s->mean : 0;
    s->stddev = var > 0 ? sqrt(var) : 0;
}

/* The ranks' busy and waiting time in TSCOPE__GLOBAL_BINS common bins over
 * the longest rank: each rank's bins spread over the common ones they
 * overlap, in proportion. */
static void common_bins(struct tscope__pglobal *g, const struct rank_rec *const *recs, int nranks)
{
    double end = 0;
    for (int r = 0; r < nranks; r++) {
        if (!recs[r] || !recs[r]->fig.present)
            continue;
        double e = recs[r]->bin_ns * (double)recs[r]->nbins;
        if (e > end)
            end = e;
    }
    g->nbins = end > 0 ? TSCOPE__GLOBAL_BINS : 0;
    g->bin_ns = end > 0 ? end / TSCOPE__GLOBAL_BINS : 0;
    for (int r = 0; r < nranks && g->nbins; r++) {
        if (!recs[r])
            continue;
        double bw = recs[r]->bin_ns;
        double acc[TSCOPE__GLOBAL_BINS] = {0}, wacc[TSCOPE__GLOBAL_BINS] = {0};
        for (uint32_t b = 0; b < recs[r]->nbins && bw > 0; b++) {
            double lo = (double)b * bw, hi = lo + bw, v = (double)recs[r]->bins[b];
            double wv = (double)recs[r]->wait[b];
            for (uint32_t c = (uint32_t)(lo / g->bin_ns); c < g->nbins; c++) {
                double clo = c * g->bin_ns, chi = clo + g->bin_ns;
                if (clo >= hi)
                    break;
                double o = (hi < chi ? hi : chi) - (lo > clo ? lo : clo);
                if (o > 0) {
                    acc[c] += v * o / bw;
                    wacc[c] += wv * o / bw;
                }
            }
        }
        for (uint32_t c = 0; c < g->nbins; c++) {
            g->busy[(size_t)r * g->nbins + c] = tscope__ns_whole(acc[c]);
            g->wait[(size_t)r * g->nbins + c] = tscope__ns_whole(wacc[c]);
        }
    }
}

/* The global profile from the combined vectors and the ranks' records
 * (recs[r] NULL: rank r absent). */
static struct tscope__profile *build(const char *program, const struct names *nm,
                                     const struct vectors *v, const struct rank_rec *const *recs,
                                     int nranks)
{
    uint32_t T = nm->n;
    struct tscope__profile *p = calloc(1, sizeof *p);
    struct tscope__pglobal *g = p ? calloc(1, sizeof *g) : NULL;
    if (!g) {
        free(p);
        return NULL;
    }
    p->global = g;
    size_t npairs = 0;
    for (int r = 0; r < nranks; r++)
        npairs += recs[r] ? recs[r]->nsent : 0;
    p->program = strdup(program && *program ? program : "?");
    p->clock = strdup("global");
    p->mode = strdup("global");
    p->full_policy = strdup("-");
    p->types = calloc(T + 1, sizeof *p->types);
    p->counters = calloc(1, sizeof *p->counters);
    p->events = calloc(1, sizeof *p->events);
    p->peers = calloc(1, sizeof *p->peers);
    p->edges = calloc(1, sizeof *p->edges);
    p->nodes = calloc(1, sizeof *p->nodes);
    p->threads = calloc(1, sizeof *p->threads);
    p->unfinished = calloc(1, sizeof *p->unfinished);
    g->ranks = calloc((size_t)nranks, sizeof *g->ranks);
    g->matrix = calloc(npairs + 1, sizeof *g->matrix);
    g->busy = calloc((size_t)nranks * TSCOPE__GLOBAL_BINS, sizeof *g->busy);
    g->wait = calloc((size_t)nranks * TSCOPE__GLOBAL_BINS, sizeof *g->wait);
    if (!p->program || !p->clock || !p->mode || !p->full_policy || !p->types || !p->counters ||
        !p->events || !p->peers || !p->edges || !p->nodes || !p->threads || !p->unfinished ||
        !g->ranks || !g->matrix || !g->busy || !g->wait) {
        tscope__profile_free(p);
        return NULL;
    }
    p->rank = 0;
    p->nranks = nranks;
    g->nranks = nranks;
    const int64_t *ts = &v->sum[(size_t)T * NS_TYPE];
    g->present = (int)ts[T_PRESENT];
    for (uint32_t k = 0; k < T; k++) {
        struct tscope__ptype *t = &p->types[p->ntypes];
        const int64_t *s = &v->sum[(size_t)k * NS_TYPE];
        const int64_t *mn = &v->min[(size_t)k * NM_TYPE];
        const int64_t *mx = &v->max[(size_t)k * NX_TYPE];
        if (!(t->name = strdup(nm->v[k])))
            break;
        p->ntypes++;
        t->id = k + 1;
        t->created = (uint64_t)s[S_CREATED];
        t->calls = (uint64_t)s[S_CALLS];
        t->yields = (uint64_t)s[S_YIELDS];
        t->cancelled = (uint64_t)s[S_CANCELLED];
        t->unfinished = (uint64_t)s[S_UNFINISHED];
        t->threads = (uint32_t)s[S_THREADS];
        double sq[4] = {0, 0, 0, 0};
        int max_rank = 0; /* the present rank with the most self time (the highest of equals) */
        int64_t most = -1;
        for (int r = 0; r < nranks; r++) {
            if (!recs[r] || !recs[r]->fig.present)
                continue;
            const struct type_rec *x = &recs[r]->types[k];
            sq[0] += x->sq_self;
            sq[1] += x->sq_running;
            sq[2] += x->sq_elapsed;
            sq[3] += x->sq_cpu;
            if (x->self_ns >= most) {
                most = x->self_ns;
                max_rank = r;
            }
        }
        stats_of(&t->self, s[S_SELF_N], s[S_SELF_SUM], mn[M_SELF], mx[X_SELF], sq[0]);
        stats_of(&t->running, s[S_RUN_N], s[S_RUN_SUM], mn[M_RUN], mx[X_RUN], sq[1]);
        stats_of(&t->elapsed, s[S_EL_N], s[S_EL_SUM], mn[M_EL], mx[X_EL], sq[2]);
        stats_of(&t->cpu, s[S_CPU_N], s[S_CPU_SUM], mn[M_CPU], mx[X_CPU], sq[3]);
        t->running_total = (double)s[S_RUN_TOTAL];
        t->elapsed_total = (double)s[S_EL_TOTAL];
        t->self_total = (double)s[S_SELF_TOTAL];
        t->ranks.self_sum = s[S_SELF_TOTAL];
        t->ranks.self_min = g->present ? mn[M_RANK_SELF] : 0;
        t->ranks.self_max = mx[X_RANK_SELF_MAX];
        t->ranks.self_max_rank = max_rank;
        t->ranks.calls_min = g->present ? (uint64_t)mn[M_RANK_CALLS] : 0;
        t->ranks.calls_max = (uint64_t)mx[X_RANK_CALLS];
    }
    tscope_totals_t *o = &p->totals;
    o->events = (uint64_t)ts[T_EVENTS];
    o->events_dropped = (uint64_t)ts[T_DROPPED];
    o->ring_waits = (uint64_t)ts[T_WAITS];
    o->tasks_created = (uint64_t)ts[T_CREATED];
    o->tasks_completed = (uint64_t)ts[T_COMPLETED];
    o->tasks_cancelled = (uint64_t)ts[T_CANCELLED];
    o->tasks_unfinished = (uint64_t)ts[T_UNFINISHED];
    o->tasks_live = (uint64_t)ts[T_NEVER_RAN];
    o->instances = (uint64_t)ts[T_INSTANCES];
    o->instances_cut_off = (uint64_t)ts[T_INST_CUT];
    o->dependencies = (uint64_t)ts[T_DEPS];
    p->deps_cut_off = (uint64_t)ts[T_DEPS_CUT];
    o->anomalies = (uint64_t)ts[T_ANOMALIES];
    p->tasks_filtered = (uint64_t)ts[T_FILTERED];
    p->deps_filtered = (uint64_t)ts[T_DEPS_FILTERED];
    p->filter = ts[T_FILTER_ON] > 0;
    /* CPU time when every rank there measured it: a sum over some would
     * read as the job's */
    p->cpu_time = g->present > 0 && ts[T_CPU_ON] == g->present;
    o->threads = (uint32_t)ts[T_THREADS];
    o->types = p->ntypes;
    o->elapsed_ns = (double)v->max[(size_t)T * NX_TYPE];
    for (int r = 0; r < nranks; r++) {
        if (recs[r])
            g->ranks[r] = recs[r]->fig;
        else
            g->ranks[r].msgs.peer = -1;
        g->ranks[r].rank = r;
        for (uint32_t i = 0; recs[r] && i < recs[r]->nsent; i++) {
            const struct sent *x = &recs[r]->sent[i];
            g->matrix[g->nmatrix++] =
                (struct tscope__pmsgpair){r, (int)x->to, (uint64_t)x->bytes, (uint64_t)x->msgs};
        }
    }
    common_bins(g, recs, nranks);
    return p;
}

/* ---- offline: from the ranks' profiles ------------------------------------- */

struct tscope__profile *tscope__global_merge(struct tscope__profile *const *ps, int nranks)
{
    struct names nm = {0};
    const char *program = NULL;
    for (int r = 0; r < nranks; r++) {
        if (!ps[r])
            continue;
        if (!program)
            program = ps[r]->program;
        for (uint32_t i = 0; i < ps[r]->ntypes; i++)
            if (names_add(&nm, ps[r]->types[i].name, 1)) {
                names_free(&nm);
                return NULL;
            }
        if (names_index(&nm)) {
            names_free(&nm);
            return NULL;
        }
    }
    if (names_index(&nm)) {
        names_free(&nm);
        return NULL;
    }
    /* a record for each rank present only; the absent ones are the
     * identities of the combination, combined once (as often as one: min
     * and max are idempotent, sums of 0 change nothing) */
    struct vectors acc = {0}, one = {0};
    struct rank_rec **recs = calloc((size_t)nranks + 1, sizeof *recs);
    int ok = recs && !vectors_alloc(&acc, nm.n) && !vectors_alloc(&one, nm.n), absent = 0;
    for (int r = 0; ok && r < nranks; r++) {
        if (!ps[r]) {
            if (!r)
                vectors_clear(&acc, nm.n, 0);
            absent |= r > 0;
            continue;
        }
        ok = (recs[r] = malloc(sizeof *recs[r])) && !record_alloc(recs[r], nm.n) &&
             !rank_cut(ps[r], r, nranks, &nm, r ? &one : &acc, recs[r]);
        if (ok && r)
            combine(&acc, &one);
    }
    if (ok && absent) {
        vectors_clear(&one, nm.n, 0);
        combine(&acc, &one);
    }
    struct tscope__profile *g =
        ok ? build(program, &nm, &acc, (const struct rank_rec *const *)recs, nranks) : NULL;
    if (g && tscope__global_rdeps_merge(g->global, ps, nranks)) {
        tscope__profile_free(g);
        g = NULL;
    }
    for (int r = 0; recs && r < nranks; r++) {
        if (recs[r])
            record_free(recs[r]);
        free(recs[r]);
    }
    free(recs);
    vectors_free(&acc);
    vectors_free(&one);
    names_free(&nm);
    return g;
}

/* ---- in the run: over the transport's collectives -------------------------- */

int tscope__global_all_ok(const tscope_comm_t *c, int ok)
{
    int64_t in = ok ? 1 : 0, out = 0;
    if (c->reduce(c->ctx, &in, &out, 1, TSCOPE_REDUCE_MIN, 0))
        out = 0;
    if (c->rank != 0)
        out = 0;
    if (c->bcast(c->ctx, &out, sizeof out, 0))
        return 0;
    return out == 1;
}

int tscope__global_bcast_blob(const tscope_comm_t *c, char **blob, uint64_t *len)
{
    if (c->bcast(c->ctx, len, sizeof *len, 0))
        return -1;
    if (c->rank != 0)
        *blob = malloc(*len + 1);
    if (!tscope__global_all_ok(c, *blob != NULL))
        return -1;
    return c->bcast(c->ctx, *blob, *len, 0) ? -1 : 0;
}

int tscope__global_gather_blobs(const tscope_comm_t *c, const void *blob, uint64_t len, char **all,
                                size_t **at, size_t *total)
{
    int root = c->rank == 0, rc = -1;
    size_t *counts = root ? calloc((size_t)c->size + 1, sizeof *counts) : NULL;
    uint64_t *lens = root ? calloc((size_t)c->size + 1, sizeof *lens) : NULL;
    *at = root ? calloc((size_t)c->size + 1, sizeof **at) : NULL;
    *all = NULL;
    *total = 0;
    if (!tscope__global_all_ok(c, !root || (counts && lens && *at)))
        goto out;
    for (int i = 0; root && i < c->size; i++)
        counts[i] = sizeof(uint64_t);
    if (c->gatherv(c->ctx, &len, sizeof len, lens, counts, 0))
        goto out;
    for (int i = 0; root && i < c->size; i++) {
        (*at)[i] = *total;
        *total += (counts[i] = lens[i]);
    }
    if (root)
        *all = malloc(*total + 1);
    if (!tscope__global_all_ok(c, !root || *all) || c->gatherv(c->ctx, blob, len, *all, counts, 0))
        goto out;
    rc = 0;
out:
    free(counts);
    free(lens);
    if (rc) {
        free(*all);
        free(*at);
        *all = NULL;
        *at = NULL;
    }
    return rc;
}

/* Step 1 over comm: the names, in rank order, at every rank. */
static int agree_names(const tscope_comm_t *c, const struct tscope__profile *p, struct names *nm)
{
    int root = c->rank == 0;
    size_t len = 0;
    char *mine = names_blob(p, &len);
    char *blob = root ? mine : NULL, *extra = NULL, *all = NULL, *final = NULL;
    uint64_t l = root && mine ? len : 0, xl = 0;
    size_t *counts = NULL;
    uint64_t *lens = NULL;
    int rc = -1;
    if (!tscope__global_all_ok(c, mine != NULL) || tscope__global_bcast_blob(c, &blob, &l))
        goto out;
    /* what each rank adds to rank 0's names, gathered in rank order */
    int ok = !names_add_blob(nm, blob, l, 0) && !names_index(nm) && (extra = malloc(len + 1));
    if (root) {
        counts = calloc((size_t)c->size, sizeof *counts);
        lens = calloc((size_t)c->size, sizeof *lens);
        ok = ok && counts && lens;
    }
    for (size_t at = 0; ok && !root && at < len;) {
        const char *s = mine + at;
        size_t sl = strlen(s) + 1;
        if (names_find(nm, s) < 0) {
            memcpy(extra + xl, s, sl);
            xl += sl;
        }
        at += sl;
    }
    if (!tscope__global_all_ok(c, ok))
        goto out;
    for (int i = 0; root && i < c->size; i++)
        counts[i] = sizeof(uint64_t);
    if (c->gatherv(c->ctx, &xl, sizeof xl, lens, counts, 0))
        goto out;
    size_t total = 0;
    for (int i = 0; root && i < c->size; i++)
        total += (counts[i] = lens[i]);
    if (root)
        all = malloc(total + 1);
    if (!tscope__global_all_ok(c, !root || all) || c->gatherv(c->ctx, extra, xl, all, counts, 0))
        goto out;
    /* the whole list, from rank 0 */
    uint64_t fl = 0;
    if (root) {
        ok = !names_add_blob(nm, all, total, 1) && !names_index(nm);
        for (uint32_t i = 0; i < nm->n; i++)
            fl += strlen(nm->v[i]) + 1;
        final = ok ? malloc(fl + 1) : NULL;
        for (uint32_t i = 0, at = 0; final && i < nm->n; i++) {
            size_t sl = strlen(nm->v[i]) + 1;
            memcpy(final + at, nm->v[i], sl);
            at += (uint32_t)sl;
        }
    }
    if (!tscope__global_all_ok(c, !root || final) || tscope__global_bcast_blob(c, &final, &fl))
        goto out;
    if (!root) {
        names_free(nm);
        if (names_add_blob(nm, final, fl, 0) || names_index(nm))
            ok = 0;
    }
    rc = tscope__global_all_ok(c, ok) ? 0 : -1;
out:
    if (!root)
        free(blob);
    free(mine);
    free(extra);
    free(all);
    free(final);
    free(counts);
    free(lens);
    return rc;
}

int tscope_finalize_global(const tscope_comm_t *c)
{
    if (!c || c->struct_size < sizeof *c || !c->bcast || !c->reduce || !c->gatherv || c->size < 1 ||
        c->rank < 0 || c->rank >= c->size)
        return TSCOPE_EINVAL;
    int rc = tscope_finalize();
    if (rc == TSCOPE_ESTATE) /* not measuring: the ranks still meet */
        rc = 0;
    if (c->size == 1)
        return rc;
    /* what this rank brings (NULL: nothing, but it takes part) */
    int measured = tscope__g.finalised && tscope__g.cfg.enable && tscope__g.cfg.profiler;
    struct tscope__profile *p = measured ? tscope__profile_snapshot() : NULL;
    int root = c->rank == 0;
    struct names nm = {0};
    struct vectors mine = {0}, acc = {0};
    struct rank_rec rec = {0}, *store = NULL, **recs = NULL;
    int64_t *wire = NULL;  /* this rank's record packed */
    char *wire_all = NULL; /* at rank 0: all ranks', rank i's from at[i] of total bytes */
    size_t *at = NULL, total = 0;
    struct tscope__profile *g = NULL;
    const char *why = "a collective failed or memory ran out";
    if (agree_names(c, p, &nm))
        goto out;
    int ok = !vectors_alloc(&mine, nm.n) && !record_alloc(&rec, nm.n) &&
             !rank_cut(p, c->rank, c->size, &nm, &mine, &rec);
    size_t rl = record_len(rec.nsent, nm.n);
    ok = ok && (wire = malloc(rl * sizeof *wire));
    if (root) {
        ok = ok && !vectors_alloc(&acc, nm.n);
        store = calloc((size_t)c->size, sizeof *store);
        recs = calloc((size_t)c->size, sizeof *recs);
        ok = ok && store && recs;
        for (int i = 0; ok && i < c->size; i++)
            ok = !record_alloc(recs[i] = &store[i], nm.n);
    }
    if (!tscope__global_all_ok(c, ok))
        goto out;
    record_pack(&rec, nm.n, wire);
    /* the records' lengths vary with their cells: gathered first */
    if (c->reduce(c->ctx, mine.sum, acc.sum, mine.nsum, TSCOPE_REDUCE_SUM, 0) ||
        c->reduce(c->ctx, mine.min, acc.min, mine.nmin, TSCOPE_REDUCE_MIN, 0) ||
        c->reduce(c->ctx, mine.max, acc.max, mine.nmax, TSCOPE_REDUCE_MAX, 0) ||
        tscope__global_gather_blobs(c, wire, rl * sizeof *wire, &wire_all, &at, &total))
        goto out;
    for (int i = 0; root && ok && i < c->size; i++) {
        size_t end = i + 1 < c->size ? at[i + 1] : total;
        ok = !record_unpack(recs[i], nm.n, c->size, (const int64_t *)(void *)(wire_all + at[i]),
                            (end - at[i]) / sizeof *wire);
    }
    if (root && !ok)
        why = "a rank's record came damaged or memory ran out";
    else if (root && !(g = build(program_invocation_short_name, &nm, &acc,
                                 (const struct rank_rec *const *)recs, c->size)))
        why = "out of memory";
    /* every rank takes part, also when rank 0 could not build */
    struct tscope__pglobal scratch = {0};
    if (tscope__global_rdeps_run(c, p, g ? g->global : &scratch)) {
        tscope__profile_free(g);
        g = NULL;
        why = "the remote dependencies: a collective failed or memory ran out";
    }
    for (uint32_t i = 0; i < scratch.nrdeps; i++) {
        free(scratch.rdeps[i].from);
        free(scratch.rdeps[i].to);
    }
    free(scratch.rdeps);
out:
    if (root && !g) {
        fprintf(stderr,
                "taskscope: the global view could not be reduced (%s); each rank's own outputs "
                "are complete\n",
                why);
        rc = rc ? rc : TSCOPE_EIO;
    } else if (root && measured) {
        const char *run = tscope__g.rundir;
        char dir[1200];
        FILE *say = tscope__g.cfg.summary ? stderr : NULL;
        snprintf(dir, sizeof dir, "%s/global", run);
        int wrc = tscope__global_write(g, run[0] && tscope__g.cfg.outputs ? dir : NULL, say,
                                       tscope__g.cfg.summary_rows);
        rc = rc ? rc : wrc;
    }
    tscope__profile_free(p);
    tscope__profile_free(g);
    for (int i = 0; store && i < c->size; i++)
        record_free(&store[i]);
    free(store);
    free(recs);
    free(wire_all);
    free(at);
    free(wire);
    record_free(&rec);
    vectors_free(&mine);
    vectors_free(&acc);
    names_free(&nm);
    return rc;
}
