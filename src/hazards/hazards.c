/* hazards.c - dependence edges from depend lists (hazards.h).
 *
 * An open-addressing table keyed by address: the parent whose children use
 * the address, its last writer group (one out/inout task, or a run of
 * mutexinoutset or inoutset tasks), what that group's first task waited
 * for (a later member waits for the same), and the readers since the group.
 * A parent that used omp_all_memory has an entry at ALL_ADDR: its latest
 * such task and an epoch; an address history from an older epoch starts
 * afresh with that task as its writer.  A depend list is first reduced to
 * one access per address, its edges are collected per (predecessor,
 * address) in `pend`, then merged into one edge per predecessor.  One mutex:
 * this runs once per task with depend clauses (tasks that carry data
 * dependences are coarse), not per event.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hazards.h"
#include "taskscope/taskscope.h"

#define ALL_ADDR UINTPTR_MAX /* a parent's omp_all_memory entry */

struct tasks {
    uint64_t *t;
    uint32_t n, cap;
};

struct access_hist {
    uintptr_t addr; /* 0: empty slot */
    uint64_t parent;
    uint64_t epoch;      /* the parent's omp_all_memory epoch it belongs to */
    int mode;            /* the group's access (enum tscope__access); 0: none */
    unsigned before_haz; /* the hazards of the group's first task on `before` */
    struct tasks group, before, readers;
};

/* One (predecessor, list item) pair found for the current task. */
struct pend {
    uint64_t from;
    uintptr_t addr;
    uint32_t ord; /* the item's position in the depend list */
    unsigned haz;
};

struct item {
    uintptr_t addr;
    int access;
    uint32_t ord;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct access_hist *table;
static size_t table_cap, table_used;
static uint64_t epochs; /* omp_all_memory tasks so far: epochs are unique */
static struct pend *pend;
static size_t npend, cap_pend;
static struct item *items;
static size_t cap_items;
static int failed; /* memory ran out during the current list */

static size_t slot_of(uintptr_t addr, size_t cap)
{
    uint64_t h = (uint64_t)addr * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static int grow(void)
{
    size_t cap = table_cap ? 2 * table_cap : 1024;
    struct access_hist *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < table_cap; i++) {
        if (!table[i].addr)
            continue;
        size_t j = slot_of(table[i].addr, cap);
        while (t[j].addr)
            j = (j + 1) & (cap - 1);
        t[j] = table[i];
    }
    free(table);
    table = t;
    table_cap = cap;
    return 0;
}

/* The entry of addr, added if missing (NULL when memory ran out). */
static struct access_hist *find(uintptr_t addr)
{
    if ((table_used + 1) * 4 > table_cap * 3 && grow())
        return NULL;
    size_t i = slot_of(addr, table_cap);
    while (table[i].addr && table[i].addr != addr)
        i = (i + 1) & (table_cap - 1);
    if (!table[i].addr) {
        table[i].addr = addr;
        table_used++;
    }
    return &table[i];
}

/* The entry of addr if there is one. */
static struct access_hist *peek(uintptr_t addr)
{
    if (!table_cap)
        return NULL;
    size_t i = slot_of(addr, table_cap);
    while (table[i].addr && table[i].addr != addr)
        i = (i + 1) & (table_cap - 1);
    return table[i].addr ? &table[i] : NULL;
}

static void tasks_add(struct tasks *l, uint64_t task)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 4;
        uint64_t *t = realloc(l->t, cap * sizeof *t);
        if (!t) {
            failed = 1;
            return;
        }
        l->t = t;
        l->cap = cap;
    }
    l->t[l->n++] = task;
}

static void tasks_swap(struct tasks *a, struct tasks *b)
{
    struct tasks x = *a;
    *a = *b;
    *b = x;
}

static void found(uint64_t from, const struct item *it, unsigned haz)
{
    if (!from || !haz)
        return;
    if (npend == cap_pend) {
        size_t cap = cap_pend ? 2 * cap_pend : 64;
        struct pend *p = realloc(pend, cap * sizeof *p);
        if (!p) {
            failed = 1;
            return;
        }
        pend = p;
        cap_pend = cap;
    }
    pend[npend++] = (struct pend){from, it->addr, it->ord, haz};
}

static void found_all(const struct tasks *l, const struct item *it, unsigned haz)
{
    for (uint32_t i = 0; i < l->n; i++)
        found(l->t[i], it, haz);
}

/* The parent's omp_all_memory epoch and its latest such task (0, 0: none). */
static uint64_t parent_epoch(uint64_t parent, uint64_t *all_task)
{
    const struct access_hist *a = peek(ALL_ADDR);
    if (a && a->parent == parent && a->group.n) {
        *all_task = a->group.t[0];
        return a->epoch;
    }
    *all_task = 0;
    return 0;
}

/* What the predecessors of a writer are: the readers since the group, or
 * the group. */
static void writer_preds(const struct access_hist *h, const struct item *it, unsigned on_group)
{
    if (h->readers.n)
        found_all(&h->readers, it, TSCOPE_HAZARD_WAR);
    else
        found_all(&h->group, it, on_group);
}

/* One address of the list (a single access after merging). */
static void access_one(uint64_t parent, uint64_t task, const struct item *it, unsigned flags,
                       uint64_t epoch, uint64_t all_task)
{
    struct access_hist *h = find(it->addr);
    if (!h) {
        failed = 1;
        return;
    }
    if (h->parent != parent || h->epoch != epoch) { /* another parent's, or older */
        h->parent = parent;
        h->epoch = epoch;
        h->group.n = h->before.n = h->readers.n = 0;
        h->mode = 0;
        if (all_task) { /* every access waits for the omp_all_memory task */
            tasks_add(&h->group, all_task);
            h->mode = TSCOPE__ACCESS_INOUT;
        }
    }
    int access = it->access;
    int wait = (flags & TSCOPE__HAZARDS_WAIT) != 0;
    if (wait && (access == TSCOPE__ACCESS_MUTEX || access == TSCOPE__ACCESS_SET))
        access = TSCOPE__ACCESS_INOUT;
    switch (access) {
    case TSCOPE__ACCESS_IN:
        found_all(&h->group, it, TSCOPE_HAZARD_RAW);
        if (!wait)
            tasks_add(&h->readers, task);
        return;
    case TSCOPE__ACCESS_OUT:
    case TSCOPE__ACCESS_INOUT:
        writer_preds(h, it,
                     access == TSCOPE__ACCESS_OUT ? TSCOPE_HAZARD_WAW
                                                  : TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAW);
        if (wait)
            return;
        h->group.n = h->before.n = h->readers.n = 0;
        tasks_add(&h->group, task);
        h->mode = access;
        return;
    default:                                                    /* mutexinoutset, inoutset */
        if (h->mode == access && !h->readers.n && h->group.n) { /* joins the group */
            found_all(&h->before, it, h->before_haz);
            if (access == TSCOPE__ACCESS_MUTEX)
                found(h->group.t[0], it, TSCOPE_HAZARD_MUTEX);
            tasks_add(&h->group, task);
            return;
        }
        if (h->readers.n) {
            tasks_swap(&h->before, &h->readers);
            h->before_haz = TSCOPE_HAZARD_WAR;
        } else {
            tasks_swap(&h->before, &h->group);
            h->before_haz = TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAW;
        }
        found_all(&h->before, it, h->before_haz);
        h->group.n = h->readers.n = 0;
        tasks_add(&h->group, task);
        h->mode = access;
        return;
    }
}

/* omp_all_memory: waits for the latest accesses of every address of the
 * parent's children since its latest omp_all_memory task (or for that
 * task, when none came since), and starts a new epoch. */
static void access_all(uint64_t parent, uint64_t task, const struct item *it, unsigned flags,
                       uint64_t epoch, uint64_t all_task)
{
    int any = 0;
    for (size_t i = 0; i < table_cap; i++) {
        const struct access_hist *h = &table[i];
        if (!h->addr || h->addr == ALL_ADDR || h->parent != parent || h->epoch != epoch)
            continue;
        struct item at = *it;
        at.addr = h->addr;
        writer_preds(h, &at, TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAW);
        any = 1;
    }
    if (!any && all_task)
        found(all_task, it, TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAW);
    if (flags & TSCOPE__HAZARDS_WAIT)
        return;
    struct access_hist *a = find(ALL_ADDR);
    if (!a) {
        failed = 1;
        return;
    }
    a->parent = parent;
    a->epoch = ++epochs;
    a->group.n = 0;
    tasks_add(&a->group, task);
}

static int by_addr(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static int by_from(const void *x, const void *y)
{
    const struct pend *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* Insertion sorts for the few entries of a depend list (qsort's calls
 * through its comparator cost more there); qsort past FEW.  Both orders are
 * total, so the result is the same either way. */
#define FEW 24

static void sort_items(struct item *a, size_t n)
{
    if (n > FEW) {
        qsort(a, n, sizeof *a, by_addr);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        struct item x = a[i];
        size_t j = i;
        for (; j > 0 && by_addr(&a[j - 1], &x) > 0; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

static void sort_pend(struct pend *a, size_t n)
{
    if (n > FEW) {
        qsort(a, n, sizeof *a, by_from);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        struct pend x = a[i];
        size_t j = i;
        for (; j > 0 && by_from(&a[j - 1], &x) > 0; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* The list as one access per address, in items[0..n); *all: it names
 * omp_all_memory.  Returns the count, or -1 when memory ran out. */
static int reduce(const struct tscope__access_item *list, int n, int *all)
{
    if ((size_t)n > cap_items) {
        struct item *it = realloc(items, (size_t)n * sizeof *it);
        if (!it)
            return -1;
        items = it;
        cap_items = (size_t)n;
    }
    int m = 0;
    *all = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)list[i].addr;
        if (a == 0 || a == ALL_ADDR)
            *all = 1;
        else if (list[i].access >= TSCOPE__ACCESS_IN && list[i].access <= TSCOPE__ACCESS_SET)
            items[m++] = (struct item){a, list[i].access, (uint32_t)i};
    }
    if (*all)
        return 0;
    if (m > 1)
        sort_items(items, (size_t)m);
    int k = 0;
    for (int i = 0; i < m; i++) {
        if (k && items[k - 1].addr == items[i].addr) {
            if (items[k - 1].access != items[i].access)
                items[k - 1].access = TSCOPE__ACCESS_INOUT;
            continue;
        }
        items[k++] = items[i];
    }
    return k;
}

int tscope__hazards_task(uint64_t parent, uint64_t task, const struct tscope__access_item *list,
                         int n, unsigned flags, tscope__edge_fn edge)
{
    if (n <= 0)
        return 0;
    pthread_mutex_lock(&lock);
    failed = 0;
    npend = 0;
    int all, m = reduce(list, n, &all);
    uint64_t all_task, epoch = parent_epoch(parent, &all_task);
    if (m < 0) {
        failed = 1;
    } else if (all) {
        struct item it = {ALL_ADDR, TSCOPE__ACCESS_INOUT, 0};
        access_all(parent, task, &it, flags, epoch, all_task);
    } else {
        for (int i = 0; i < m; i++)
            access_one(parent, task, &items[i], flags, epoch, all_task);
    }
    if (npend > 1)
        sort_pend(pend, npend);
    for (size_t i = 0; i < npend;) {
        size_t j = i;
        unsigned haz = 0;
        uint32_t naddrs = 0;
        for (; j < npend && pend[j].from == pend[i].from; j++) { /* one per address */
            haz |= pend[j].haz;
            naddrs++;
        }
        if (pend[i].from != task)
            edge(pend[i].from, task, haz, naddrs,
                 pend[i].addr == ALL_ADDR ? NULL : (const void *)pend[i].addr);
        i = j;
    }
    int rc = failed ? -1 : 0;
    pthread_mutex_unlock(&lock);
    return rc;
}

void tscope__hazards_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < table_cap; i++) {
        free(table[i].group.t);
        free(table[i].before.t);
        free(table[i].readers.t);
    }
    free(table);
    table = NULL;
    table_cap = table_used = 0;
    epochs = 0;
    free(pend);
    pend = NULL;
    npend = cap_pend = 0;
    free(items);
    items = NULL;
    cap_items = 0;
    pthread_mutex_unlock(&lock);
}
