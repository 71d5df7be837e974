/* hazards.c - dependence edges from depend lists (hazards.h).
 *
 * An open-addressing table keyed by (parent, address): for the children of
 * that parent that use the address, its last writer group (one out/inout
 * task, or a run of mutexinoutset or inoutset tasks), what that group's
 * first task waited for (a later member waits for the same), and the
 * readers since the group.  A parent that used omp_all_memory has an entry
 * at (parent, ALL_ADDR): its latest such task and an epoch; an address
 * history from an older epoch starts afresh with that task as its writer.
 * A second table keyed by parent lists the addresses each parent's children
 * used, so that omp_all_memory visits only its siblings' histories and a
 * parent's end (tscope__hazards_forget) removes them.  A depend list is
 * first reduced to one access per address, its edges are collected per
 * (predecessor, address) in `pend`, then merged into one edge per
 * predecessor.  One mutex: this runs once per task with depend clauses
 * (tasks that carry data dependences are coarse), not per event.
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

/* The addresses a parent's children used (entries of `table`). */
struct owner {
    uint64_t parent;
    uintptr_t *addrs;
    uint32_t n, cap;
    int used;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct access_hist *table;
static size_t table_cap, table_used;
static struct owner *owners;
static size_t owners_cap, owners_used;
static uint64_t epochs; /* omp_all_memory tasks so far: epochs are unique */
static struct pend *pend;
static size_t npend, cap_pend;
static struct item *items;
static size_t cap_items;
static int failed; /* memory ran out during the current list */

static size_t slot_of(uint64_t parent, uintptr_t addr, size_t cap)
{
    uint64_t h = ((uint64_t)addr ^ (parent * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

/* ---- the parents' address lists ---- */

static size_t owner_slot(uint64_t parent, size_t cap)
{
    return (size_t)((parent * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static struct owner *owner_peek(uint64_t parent)
{
    if (!owners_cap)
        return NULL;
    size_t i = owner_slot(parent, owners_cap);
    while (owners[i].used && owners[i].parent != parent)
        i = (i + 1) & (owners_cap - 1);
    return owners[i].used ? &owners[i] : NULL;
}

static int owners_grow(void)
{
    size_t cap = owners_cap ? 2 * owners_cap : 64;
    struct owner *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < owners_cap; i++) {
        if (!owners[i].used)
            continue;
        size_t j = owner_slot(owners[i].parent, cap);
        while (t[j].used)
            j = (j + 1) & (cap - 1);
        t[j] = owners[i];
    }
    free(owners);
    owners = t;
    owners_cap = cap;
    return 0;
}

/* Notes that a child of parent used addr (a new entry of `table`). */
static void owner_add(uint64_t parent, uintptr_t addr)
{
    struct owner *o = owner_peek(parent);
    if (!o) {
        if ((owners_used + 1) * 4 > owners_cap * 3 && owners_grow()) {
            failed = 1;
            return;
        }
        size_t i = owner_slot(parent, owners_cap);
        while (owners[i].used)
            i = (i + 1) & (owners_cap - 1);
        o = &owners[i];
        *o = (struct owner){.parent = parent, .used = 1};
        owners_used++;
    }
    if (o->n == o->cap) {
        uint32_t cap = o->cap ? 2 * o->cap : 8;
        uintptr_t *a = realloc(o->addrs, cap * sizeof *a);
        if (!a) {
            failed = 1;
            return;
        }
        o->addrs = a;
        o->cap = cap;
    }
    o->addrs[o->n++] = addr;
}

/* 1 when slot k, the home of the entry at j, lies cyclically in (i, j]:
 * then that entry may not move back to i (linear probing's deletion). */
static int home_between(size_t i, size_t k, size_t j)
{
    return i <= j ? (i < k && k <= j) : (i < k || k <= j);
}

/* ---- the address histories ---- */

static int grow(void)
{
    size_t cap = table_cap ? 2 * table_cap : 1024;
    struct access_hist *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < table_cap; i++) {
        if (!table[i].addr)
            continue;
        size_t j = slot_of(table[i].parent, table[i].addr, cap);
        while (t[j].addr)
            j = (j + 1) & (cap - 1);
        t[j] = table[i];
    }
    free(table);
    table = t;
    table_cap = cap;
    return 0;
}

/* The slot of (parent, addr): its entry, or the empty slot that ends its
 * probe run (table_cap > 0). */
static size_t probe(uint64_t parent, uintptr_t addr)
{
    size_t i = slot_of(parent, addr, table_cap);
    while (table[i].addr && (table[i].addr != addr || table[i].parent != parent))
        i = (i + 1) & (table_cap - 1);
    return i;
}

/* The entry of (parent, addr), added if missing (NULL when memory ran
 * out). */
static struct access_hist *find(uint64_t parent, uintptr_t addr)
{
    if ((table_used + 1) * 4 > table_cap * 3 && grow())
        return NULL;
    size_t i = probe(parent, addr);
    if (!table[i].addr) {
        table[i].addr = addr;
        table[i].parent = parent;
        table_used++;
        owner_add(parent, addr);
    }
    return &table[i];
}

/* The entry of (parent, addr) if there is one. */
static struct access_hist *peek(uint64_t parent, uintptr_t addr)
{
    if (!table_cap)
        return NULL;
    size_t i = probe(parent, addr);
    return table[i].addr ? &table[i] : NULL;
}

/* Removes the entry at slot i (its lists freed); the entries after it in
 * its probe run move back where their home allows. */
static void table_remove(size_t i)
{
    free(table[i].group.t);
    free(table[i].before.t);
    free(table[i].readers.t);
    for (size_t j = (i + 1) & (table_cap - 1); table[j].addr; j = (j + 1) & (table_cap - 1)) {
        if (home_between(i, slot_of(table[j].parent, table[j].addr, table_cap), j))
            continue;
        table[i] = table[j];
        i = j;
    }
    memset(&table[i], 0, sizeof table[i]);
    table_used--;
}

/* Removes owner entry o (its list freed), as table_remove does. */
static void owner_remove(struct owner *o)
{
    free(o->addrs);
    size_t i = (size_t)(o - owners);
    for (size_t j = (i + 1) & (owners_cap - 1); owners[j].used; j = (j + 1) & (owners_cap - 1)) {
        if (home_between(i, owner_slot(owners[j].parent, owners_cap), j))
            continue;
        owners[i] = owners[j];
        i = j;
    }
    memset(&owners[i], 0, sizeof owners[i]);
    owners_used--;
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
    const struct access_hist *a = peek(parent, ALL_ADDR);
    if (a && a->group.n) {
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
    struct access_hist *h = find(parent, it->addr);
    if (!h) {
        failed = 1;
        return;
    }
    if (h->epoch != epoch) { /* new, or older than the omp_all_memory task */
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
    const struct owner *o = owner_peek(parent);
    for (uint32_t k = 0; o && k < o->n; k++) { /* the addresses its children used */
        const struct access_hist *h = o->addrs[k] == ALL_ADDR ? NULL : peek(parent, o->addrs[k]);
        if (!h || h->epoch != epoch)
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
    struct access_hist *a = find(parent, ALL_ADDR);
    if (!a) {
        failed = 1;
        return;
    }
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

void tscope__hazards_forget(uint64_t parent)
{
    pthread_mutex_lock(&lock);
    struct owner *o = owner_peek(parent);
    if (o) {
        for (uint32_t k = 0; k < o->n; k++) {
            size_t i = probe(parent, o->addrs[k]);
            if (table[i].addr)
                table_remove(i);
        }
        owner_remove(o);
    }
    pthread_mutex_unlock(&lock);
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
    for (size_t i = 0; i < owners_cap; i++)
        free(owners[i].addrs);
    free(owners);
    owners = NULL;
    owners_cap = owners_used = 0;
    epochs = 0;
    free(pend);
    pend = NULL;
    npend = cap_pend = 0;
    free(items);
    items = NULL;
    cap_items = 0;
    pthread_mutex_unlock(&lock);
}
