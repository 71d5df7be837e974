/* deps.c - data dependencies between tasks, by address.
 *
 * For each address: the last writer and the readers since that write.  A
 * new reader depends on the last writer (RAW); a new writer depends on the
 * readers since the last write (WAR) or, if there were none, on the last
 * writer (WAW; RAW and WAW for an inout).  Finished tasks give no edge.
 * Each predecessor of a new task is reported once, with every hazard and
 * the number of addresses (tscope_dep_edge).  The table holds a reference
 * to each task it names.
 * All under tscope__rt_deps_lock.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

pthread_mutex_t tscope__rt_deps_lock = PTHREAD_MUTEX_INITIALIZER;

struct addr_entry {
    const void *addr; /* NULL: empty slot */
    struct tscope_rt_task *writer;
    struct tscope_rt_task **readers;
    uint32_t nreaders, cap_readers;
};

static struct addr_entry *table;
static size_t table_cap, table_count;

static size_t hash_addr(const void *a)
{
    uint64_t x = (uint64_t)(uintptr_t)a;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static struct addr_entry *lookup(const void *addr, int add)
{
    if (add && (table_count + 1) * 2 > table_cap) {
        size_t ncap = table_cap ? table_cap * 2 : 256;
        struct addr_entry *n = calloc(ncap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < table_cap; i++) {
            if (!table[i].addr)
                continue;
            size_t j = hash_addr(table[i].addr) & (ncap - 1);
            while (n[j].addr)
                j = (j + 1) & (ncap - 1);
            n[j] = table[i];
        }
        free(table);
        table = n;
        table_cap = ncap;
    }
    if (!table_cap)
        return NULL;
    size_t i = hash_addr(addr) & (table_cap - 1);
    while (table[i].addr && table[i].addr != addr)
        i = (i + 1) & (table_cap - 1);
    if (!table[i].addr) {
        if (!add)
            return NULL;
        table[i].addr = addr;
        table_count++;
    }
    return &table[i];
}

static int finished(struct tscope_rt_task *t)
{
    int s = atomic_load(&t->state);
    return s == RT_DONE || s == RT_CANCELLED;
}

/* Appends t to a growing array of task pointers; 0 or TSCOPE_ENOMEM. */
static int append(struct tscope_rt_task ***arr, uint32_t *n, uint32_t *cap,
                  struct tscope_rt_task *t)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 4;
        struct tscope_rt_task **a = realloc(*arr, c * sizeof *a);
        if (!a)
            return TSCOPE_ENOMEM;
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = t;
    return 0;
}

/* Records `succ` as waiting for `pred`. */
static int edge(struct tscope_rt_task *pred, struct tscope_rt_task *succ)
{
    if (append(&pred->succ, &pred->nsucc, &pred->cap_succ, succ))
        return TSCOPE_ENOMEM;
    succ->deps_pending++;
    return 0;
}

/* The predecessors found for the task being added, each once with every
 * hazard and the addresses that cause it: one tscope_dep_edge a pair. */
struct found {
    struct tscope_rt_task *pred;
    const void *addr; /* the first */
    const void *last; /* the latest (a pred may come twice for one address) */
    unsigned hazards;
    uint32_t naddrs;
};

struct found_list {
    struct found *f;
    size_t n, cap;
};

static int depend(struct tscope_rt_task *pred, struct tscope_rt_task *t, const void *addr,
                  unsigned hazard, int addr_seen, struct found_list *l)
{
    if (!pred || pred == t || finished(pred))
        return 0;
    int rc = edge(pred, t);
    if (rc)
        return rc;
    for (size_t i = 0; i < l->n; i++)
        if (l->f[i].pred == pred) {
            l->f[i].hazards |= hazard;
            l->f[i].naddrs += !addr_seen && l->f[i].last != addr;
            l->f[i].last = addr;
            return 0;
        }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        struct found *f = realloc(l->f, cap * sizeof *f);
        if (!f)
            return TSCOPE_ENOMEM;
        l->f = f;
        l->cap = cap;
    }
    l->f[l->n++] = (struct found){pred, addr, addr, hazard, 1};
    return 0;
}

static void hold(struct tscope_rt_task *t)
{
    atomic_fetch_add(&t->refs, 1);
}

int tscope__rt_deps_add(struct tscope_rt_task *t, const tscope_rt_dep_t *deps, size_t n)
{
    int rc = 0;
    struct found_list l = {0};
    for (size_t k = 0; k < n && !rc; k++) {
        struct addr_entry *e = lookup(deps[k].addr, 1);
        if (!e) {
            rc = TSCOPE_ENOMEM;
            break;
        }
        int seen = 0; /* named earlier in the list: no second address */
        for (size_t j = 0; j < k && !seen; j++)
            seen = deps[j].addr == deps[k].addr;
        if (deps[k].mode == TSCOPE_RT_IN) {
            rc |= depend(e->writer, t, e->addr, TSCOPE_HAZARD_RAW, seen, &l);
            if (append(&e->readers, &e->nreaders, &e->cap_readers, t))
                rc = TSCOPE_ENOMEM;
            else
                hold(t);
        } else {
            if (e->nreaders) {
                for (uint32_t i = 0; i < e->nreaders; i++) {
                    rc |= depend(e->readers[i], t, e->addr, TSCOPE_HAZARD_WAR, seen, &l);
                    tscope__rt_task_release(e->readers[i]);
                }
                e->nreaders = 0;
            } else {
                rc |= depend(e->writer, t, e->addr,
                             deps[k].mode == TSCOPE_RT_INOUT ? TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAW
                                                             : TSCOPE_HAZARD_WAW,
                             seen, &l);
            }
            if (e->writer)
                tscope__rt_task_release(e->writer);
            hold(t);
            e->writer = t;
        }
    }
    for (size_t i = 0; i < l.n; i++)
        tscope_dep_edge(l.f[i].pred->id, l.f[i].pred->type, t->id, t->type, l.f[i].hazards,
                        l.f[i].naddrs, l.f[i].addr);
    free(l.f);
    return rc ? TSCOPE_ENOMEM : 0;
}

void tscope__rt_deps_clear(void)
{
    for (size_t i = 0; i < table_cap; i++) {
        struct addr_entry *e = &table[i];
        if (!e->addr)
            continue;
        if (e->writer)
            tscope__rt_task_release(e->writer);
        for (uint32_t k = 0; k < e->nreaders; k++)
            tscope__rt_task_release(e->readers[k]);
        free(e->readers);
    }
    free(table);
    table = NULL;
    table_cap = table_count = 0;
}
