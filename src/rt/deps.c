/* deps.c - the bundled runtime's data dependencies, by address.
 *
 * Which earlier tasks a new one waits for, and with which hazards, is the
 * dependence tracker's answer (src/hazards/hazards.c, the one the OMPT tool
 * uses for depend clauses): a reader waits for the last writer (RAW), a
 * writer for the readers since that write (WAR) or, if there were none,
 * for the last writer (WAW; RAW and WAW for an inout), one edge per
 * predecessor with every hazard and the number of addresses.  The runtime
 * orders tasks by address whatever their parents, so every task is the
 * tracker's child of one parent (0).  Here each edge from a predecessor
 * that has not finished becomes a scheduling edge (pred->succ,
 * deps_pending) and is reported (tscope_dep_edge): finished tasks give no
 * edge.
 *
 * The tracker knows tasks by a key, a number given at spawn (never reused);
 * `live` maps the keys of the tasks with dependencies that have not
 * finished to their records.  A task leaves it at its end
 * (tscope__rt_deps_done), before its record can be released, so a record
 * found there is alive, and a key not found is a predecessor that ended.
 * The edges of a new task are reported in the order its list names their
 * first addresses (then in spawn order).
 * All under tscope__rt_deps_lock (the tracker's own lock nests inside it).
 */
#include <stdlib.h>
#include <string.h>

#include "hazards/hazards.h"
#include "rt.h"

pthread_mutex_t tscope__rt_deps_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- live tasks by key: open addressing, backward-shift deletion ---- */

struct live_slot {
    uint64_t key; /* 0: empty */
    struct tscope_rt_task *t;
};

static struct live_slot *live;
static size_t live_cap, live_count;
static uint64_t keys; /* the last key given */

static size_t home(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static int live_put(uint64_t key, struct tscope_rt_task *t)
{
    if ((live_count + 1) * 2 > live_cap) {
        size_t cap = live_cap ? 2 * live_cap : 256;
        struct live_slot *n = calloc(cap, sizeof *n);
        if (!n)
            return TSCOPE_ENOMEM;
        for (size_t i = 0; i < live_cap; i++) {
            if (!live[i].key)
                continue;
            size_t j = home(live[i].key, cap);
            while (n[j].key)
                j = (j + 1) & (cap - 1);
            n[j] = live[i];
        }
        free(live);
        live = n;
        live_cap = cap;
    }
    size_t i = home(key, live_cap);
    while (live[i].key)
        i = (i + 1) & (live_cap - 1);
    live[i] = (struct live_slot){key, t};
    live_count++;
    return 0;
}

static size_t live_find(uint64_t key)
{
    if (!live_cap)
        return SIZE_MAX;
    for (size_t i = home(key, live_cap); live[i].key; i = (i + 1) & (live_cap - 1))
        if (live[i].key == key)
            return i;
    return SIZE_MAX;
}

static void live_remove(uint64_t key)
{
    size_t i = live_find(key);
    if (i == SIZE_MAX)
        return;
    live_count--;
    for (size_t j = i;;) { /* the entries after it that probed past i move back */
        j = (j + 1) & (live_cap - 1);
        if (!live[j].key)
            break;
        size_t h = home(live[j].key, live_cap);
        if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
            live[i] = live[j];
            i = j;
        }
    }
    live[i].key = 0;
    live[i].t = NULL;
}

/* ---- the edges of the task being added ---- */

struct found {
    struct tscope_rt_task *pred;
    const void *addr; /* the first */
    unsigned hazards;
    uint32_t naddrs;
    size_t at; /* where the list names addr first */
};

static struct {
    struct tscope_rt_task *t;
    const tscope_rt_dep_t *deps;
    size_t ndeps;
    struct found *f;
    size_t n, cap;
    int rc;
} adding;

static int finished(struct tscope_rt_task *t)
{
    int s = atomic_load(&t->state);
    return s == RT_DONE || s == RT_CANCELLED;
}

/* The tracker's edge: kept when its predecessor has not finished. */
static void edge(uint64_t from, uint64_t to, unsigned hazards, uint32_t naddrs, const void *addr)
{
    (void)to;
    size_t i = live_find(from);
    struct tscope_rt_task *pred = i == SIZE_MAX ? NULL : live[i].t;
    if (!pred || pred == adding.t || finished(pred))
        return;
    if (adding.n == adding.cap) {
        size_t cap = adding.cap ? 2 * adding.cap : 8;
        struct found *f = realloc(adding.f, cap * sizeof *f);
        if (!f) {
            adding.rc = TSCOPE_ENOMEM;
            return;
        }
        adding.f = f;
        adding.cap = cap;
    }
    size_t at = 0;
    while (at < adding.ndeps && adding.deps[at].addr != addr)
        at++;
    adding.f[adding.n++] = (struct found){pred, addr, hazards, naddrs, at};
}

/* The list position of its first address, then spawn order. */
static int before(const struct found *a, const struct found *b)
{
    return a->at != b->at ? a->at < b->at : a->pred->dep_key < b->pred->dep_key;
}

/* Insertion: a task has few predecessors. */
static void sort_found(struct found *f, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct found x = f[i];
        size_t j = i;
        for (; j > 0 && before(&x, &f[j - 1]); j--)
            f[j] = f[j - 1];
        f[j] = x;
    }
}

int tscope__rt_deps_add(struct tscope_rt_task *t, const tscope_rt_dep_t *deps, size_t n)
{
    struct tscope__access_item small[16], *list = small;
    if (n > sizeof small / sizeof *small && !(list = malloc(n * sizeof *list)))
        return TSCOPE_ENOMEM;
    for (size_t k = 0; k < n; k++)
        list[k] = (struct tscope__access_item){
            deps[k].addr, deps[k].mode == TSCOPE_RT_IN      ? TSCOPE__ACCESS_IN
                          : deps[k].mode == TSCOPE_RT_INOUT ? TSCOPE__ACCESS_INOUT
                                                            : TSCOPE__ACCESS_OUT};
    t->dep_key = ++keys;
    adding.t = t;
    adding.deps = deps;
    adding.ndeps = n;
    adding.n = 0;
    adding.rc = live_put(t->dep_key, t);
    if (tscope__hazards_task(0, t->dep_key, list, (int)n, 0, edge))
        adding.rc = TSCOPE_ENOMEM;
    if (list != small)
        free(list);
    sort_found(adding.f, adding.n);
    for (size_t i = 0; i < adding.n; i++) {
        struct found *f = &adding.f[i];
        struct tscope_rt_task *pred = f->pred;
        if (pred->nsucc == pred->cap_succ) {
            uint32_t cap = pred->cap_succ ? 2 * pred->cap_succ : 4;
            struct tscope_rt_task **s = realloc(pred->succ, cap * sizeof *s);
            if (!s) {
                adding.rc = TSCOPE_ENOMEM;
                continue; /* t runs without this edge */
            }
            pred->succ = s;
            pred->cap_succ = cap;
        }
        pred->succ[pred->nsucc++] = t;
        t->deps_pending++;
        tscope_dep_edge(pred->id, pred->type, t->id, t->type, f->hazards, f->naddrs, f->addr);
    }
    adding.t = NULL;
    return adding.rc ? TSCOPE_ENOMEM : 0;
}

void tscope__rt_deps_done(struct tscope_rt_task *t)
{
    if (t->dep_key)
        live_remove(t->dep_key);
}

void tscope__rt_deps_clear(void)
{
    tscope__hazards_reset();
    free(live);
    live = NULL;
    live_cap = live_count = 0;
    free(adding.f);
    adding.f = NULL;
    adding.n = adding.cap = 0;
}
