/* rdeps.c - remote dependencies in a job's global view: each rank's
 * tscope_dep_remote edges (task `to` on one rank waiting for task `from`
 * on another, as DASH reports them) with both ends named by their task
 * types, which only the rank that ran a task knows.
 *
 * In the run: the edges are gathered to rank 0, which broadcasts the
 * (rank, task) pairs they name; each rank answers with the types of its
 * own, gathered again.  Offline: each rank's profile answers directly.
 * Both then count the edges per (rank, type) pair and direction with the
 * same function, so `taskscope merge` agrees with the run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "global_int.h"
#include "taskscope/taskscope.h"

enum { E_FROM_RANK, E_FROM, E_TO_RANK, E_TO, E_DIR, NE };

/* The remote edges of p, NE int64 each; *n of them (NULL when none). */
static int64_t *edges_of(const struct tscope__profile *p, size_t *n)
{
    size_t k = 0;
    for (uint32_t i = 0; p && i < p->ndeps; i++)
        k += p->deps[i].remote != 0;
    *n = k;
    int64_t *e = malloc((k + 1) * NE * sizeof *e);
    if (!e)
        return NULL;
    k = 0;
    for (uint32_t i = 0; p && i < p->ndeps; i++) {
        const struct tscope__pdep *d = &p->deps[i];
        if (!d->remote)
            continue;
        int64_t *x = &e[k++ * NE];
        x[E_FROM_RANK] = d->from_rank;
        x[E_FROM] = (int64_t)d->from;
        x[E_TO_RANK] = d->to_rank;
        x[E_TO] = (int64_t)d->to;
        x[E_DIR] = d->kind;
    }
    return e;
}

/* ---- a task's type by its id, on its own rank ----------------------------- */

struct idtype {
    int64_t rank, id;
    const char *name;
};

static int by_rank_id(const void *a, const void *b)
{
    const struct idtype *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static const char *lookup(const struct idtype *t, size_t n, int64_t rank, int64_t id)
{
    struct idtype key = {rank, id, NULL};
    const struct idtype *hit = n ? bsearch(&key, t, n, sizeof *t, by_rank_id) : NULL;
    return hit ? hit->name : "?";
}

/* The name of type id in p, "?" when p does not know it. */
static const char *type_name(const struct tscope__profile *p, uint32_t id)
{
    size_t lo = 0, hi = p->ntypes; /* types are ordered by id */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->types[mid].id == id)
            return p->types[mid].name;
        if (p->types[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return "?";
}

/* The (rank, id) -> type table of p's kept tasks (rank `rank`), sorted. */
static struct idtype *tasks_of(const struct tscope__profile *p, int rank, size_t *n)
{
    *n = 0;
    struct idtype *t = malloc(((p ? p->ntasks : 0) + 1) * sizeof *t);
    for (uint32_t i = 0; t && p && i < p->ntasks; i++)
        t[(*n)++] = (struct idtype){rank, (int64_t)p->tasks[i].id, type_name(p, p->tasks[i].type)};
    if (t)
        qsort(t, *n, sizeof *t, by_rank_id);
    return t;
}

/* ---- counting ---------------------------------------------------------------- */

static int by_edge(const void *a, const void *b)
{
    const struct tscope__prdep *x = a, *y = b;
    if (x->from_rank != y->from_rank)
        return x->from_rank < y->from_rank ? -1 : 1;
    if (x->to_rank != y->to_rank)
        return x->to_rank < y->to_rank ? -1 : 1;
    int c = strcmp(x->from, y->from);
    return c ? c : strcmp(x->to, y->to);
}

/* g->rdeps from n edges whose ends are named by the table t. */
static int count_edges(struct tscope__pglobal *g, const int64_t *e, size_t n,
                       const struct idtype *t, size_t nt)
{
    struct tscope__prdep *r = calloc(n + 1, sizeof *r);
    if (!r)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t *x = &e[i * NE];
        struct tscope__prdep *d = &r[k];
        d->from_rank = (int)x[E_FROM_RANK];
        d->to_rank = (int)x[E_TO_RANK];
        d->from = strdup(lookup(t, nt, x[E_FROM_RANK], x[E_FROM]));
        d->to = strdup(lookup(t, nt, x[E_TO_RANK], x[E_TO]));
        if (!d->from || !d->to) {
            free(d->from);
            free(d->to);
            break;
        }
        d->in = x[E_DIR] == TSCOPE_DEP_IN;
        d->out = x[E_DIR] == TSCOPE_DEP_OUT;
        d->copyin = x[E_DIR] == TSCOPE_DEP_COPYIN;
        k++;
    }
    qsort(r, k, sizeof *r, by_edge);
    size_t m = 0; /* equal edges summed */
    for (size_t i = 0; i < k; i++) {
        if (m && by_edge(&r[m - 1], &r[i]) == 0) {
            r[m - 1].in += r[i].in;
            r[m - 1].out += r[i].out;
            r[m - 1].copyin += r[i].copyin;
            free(r[i].from);
            free(r[i].to);
        } else
            r[m++] = r[i];
    }
    g->rdeps = r;
    g->nrdeps = (uint32_t)m;
    return k == n ? 0 : -1;
}

/* ---- offline ----------------------------------------------------------------- */

int tscope__global_rdeps_merge(struct tscope__pglobal *g, struct tscope__profile *const *ps,
                               int nranks)
{
    int64_t *all = NULL;
    size_t n = 0, nt = 0;
    struct idtype *t = NULL;
    int rc = 0;
    for (int r = 0; !rc && r < nranks; r++) {
        if (!ps[r])
            continue;
        size_t k, kt;
        int64_t *e = edges_of(ps[r], &k);
        struct idtype *tr = tasks_of(ps[r], r, &kt);
        int64_t *more = e ? realloc(all, (n + k + 1) * NE * sizeof *all) : NULL;
        struct idtype *tmore = tr ? realloc(t, (nt + kt + 1) * sizeof *t) : NULL;
        if (more)
            all = more;
        if (tmore)
            t = tmore;
        rc = !e || !tr || !more || !tmore;
        if (!rc) {
            memcpy(all + n * NE, e, k * NE * sizeof *e);
            memcpy(t + nt, tr, kt * sizeof *tr);
            n += k;
            nt += kt;
        }
        free(e);
        free(tr);
    }
    if (!rc) {
        qsort(t, nt, sizeof *t, by_rank_id);
        rc = count_edges(g, all, n, t, nt);
    }
    free(all);
    free(t);
    return rc;
}

/* ---- in the run ------------------------------------------------------------ */

static int by_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

int tscope__global_rdeps_run(const tscope_comm_t *c, const struct tscope__profile *p,
                             struct tscope__pglobal *g)
{
    int root = c->rank == 0, rc = -1;
    size_t k = 0, nt = 0, total = 0, atotal = 0;
    int64_t *e = edges_of(p, &k);
    struct idtype *mine = tasks_of(p, c->rank, &nt), *t = NULL;
    char *all = NULL, *answers = NULL, *refs = NULL, *ans = NULL;
    size_t *at = NULL, *aat = NULL;
    if (!tscope__global_all_ok(c, e && mine))
        goto out;
    /* 1. every rank's edges at rank 0 */
    if (tscope__global_gather_blobs(c, e, k * NE * sizeof *e, &all, &at, &total))
        goto out;
    /* 2. the tasks they name, to every rank */
    size_t n = total / (NE * sizeof *e), nr = 0;
    uint64_t rlen = 0;
    if (root) {
        int64_t *pairs = malloc((2 * n + 1) * 2 * sizeof *pairs);
        const int64_t *x = (const int64_t *)(void *)all;
        for (size_t i = 0; pairs && i < n; i++) {
            pairs[4 * i] = x[i * NE + E_FROM_RANK];
            pairs[4 * i + 1] = x[i * NE + E_FROM];
            pairs[4 * i + 2] = x[i * NE + E_TO_RANK];
            pairs[4 * i + 3] = x[i * NE + E_TO];
        }
        if (pairs) {
            qsort(pairs, 2 * n, 2 * sizeof *pairs, by_pair);
            for (size_t i = 0; i < 2 * n; i++)
                if (!nr || by_pair(&pairs[2 * i], &pairs[2 * (nr - 1)]))
                    memmove(&pairs[2 * nr++], &pairs[2 * i], 2 * sizeof *pairs);
        }
        refs = (char *)pairs;
        rlen = nr * 2 * sizeof *pairs;
    }
    if (!tscope__global_all_ok(c, !root || refs) || tscope__global_bcast_blob(c, &refs, &rlen))
        goto out;
    /* 3. each rank names its own: (id, name NUL) ... */
    size_t alen = 0, acap = 64;
    ans = malloc(acap);
    const int64_t *pr = (const int64_t *)(void *)refs;
    for (size_t i = 0; ans && i < rlen / (2 * sizeof *pr); i++) {
        if (pr[2 * i] != c->rank)
            continue;
        const char *name = lookup(mine, nt, pr[2 * i], pr[2 * i + 1]);
        size_t l = strlen(name) + 1;
        if (alen + 8 + l > acap) {
            while (alen + 8 + l > acap)
                acap *= 2;
            char *more = realloc(ans, acap);
            if (!more) {
                free(ans);
                ans = NULL;
                break;
            }
            ans = more;
        }
        memcpy(ans + alen, &pr[2 * i + 1], 8);
        memcpy(ans + alen + 8, name, l);
        alen += 8 + l;
    }
    if (!tscope__global_all_ok(c, ans != NULL) ||
        tscope__global_gather_blobs(c, ans, alen, &answers, &aat, &atotal))
        goto out;
    /* 4. rank 0 counts */
    if (root) {
        size_t cap = atotal / 9 + 1, m = 0;
        t = malloc(cap * sizeof *t);
        for (int r = 0; t && r < c->size; r++) {
            size_t end = r + 1 < c->size ? aat[r + 1] : atotal;
            for (size_t a = aat[r]; a + 9 <= end && m < cap;) {
                int64_t id;
                memcpy(&id, answers + a, 8);
                const char *name = answers + a + 8;
                size_t l = strnlen(name, end - a - 8);
                if (l == end - a - 8)
                    break; /* cut: not NUL-ended */
                t[m++] = (struct idtype){r, id, name};
                a += 8 + l + 1;
            }
        }
        if (t) {
            qsort(t, m, sizeof *t, by_rank_id);
            rc = count_edges(g, (const int64_t *)(void *)all, n, t, m);
        }
    } else
        rc = 0;
out:
    free(e);
    free(mine);
    free(all);
    free(at);
    free(refs);
    free(ans);
    free(answers);
    free(aat);
    free(t);
    return rc;
}
