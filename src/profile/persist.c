/* persist.c - the profile store as bytes: saved by the crash journal at each
 * checkpoint (src/lifecycle/journal.c), loaded by `taskscope run` to
 * recover a program killed by SIGKILL (cli/recover.c).
 *
 * The store is a handful of flat arrays that refer to each other by index,
 * never by pointer, so the bytes are the struct followed by each array;
 * loading reallocates the arrays with the capacities the struct names and
 * re-creates the lock.  Writer and reader are the same build (the launcher
 * and the library it preloads); a layout stamp of the struct sizes turns any
 * other pairing into a clear error instead of a wrong profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "persist.h"
#include "store.h"

static uint64_t layout_stamp(void)
{
    return (uint64_t)sizeof(struct tscope__store) * 1000003u ^
           (uint64_t)sizeof(struct tscope__task) * 10007u ^
           (uint64_t)sizeof(struct tscope__instance) * 101u ^ sizeof(struct tscope__node) ^
           (uint64_t)sizeof(struct tscope__segment) << 40 ^
           (uint64_t)sizeof(struct tscope__config) << 20;
}

static int put(FILE *f, const void *p, size_t bytes)
{
    return bytes && fwrite(p, 1, bytes, f) != bytes ? -1 : 0;
}

static int put_map(FILE *f, const struct tscope__u64map *m)
{
    return put(f, m->e, (size_t)(m->mask + 1) * sizeof *m->e);
}

/* The task table, sparse: the live slots with their index, then the free
 * list in its order (which slot the next task gets stays the same, and with
 * it every later result).  Most of a table is free after its peak. */
static int put_tasks(FILE *f, const struct tscope__store *s)
{
    uint32_t live = 0, nfree = 0;
    for (uint32_t i = 0; i < s->ntasks_cap; i++)
        live += !(s->tasks[i].bits & TSCOPE__T_FREE);
    if (put(f, &live, sizeof live))
        return -1;
    for (uint32_t i = 0; i < s->ntasks_cap; i++)
        if (!(s->tasks[i].bits & TSCOPE__T_FREE) &&
            (put(f, &i, sizeof i) || put(f, &s->tasks[i], sizeof s->tasks[i])))
            return -1;
    for (uint32_t i = s->free_head; i != TSCOPE__NONE && nfree < s->ntasks_cap;
         i = s->tasks[i].next_wait)
        nfree++;
    if (put(f, &nfree, sizeof nfree))
        return -1;
    for (uint32_t i = s->free_head, k = 0; k < nfree; i = s->tasks[i].next_wait, k++)
        if (put(f, &i, sizeof i))
            return -1;
    return 0;
}

/* An update of an instance already in the appendix: its count of the tasks
 * left out below it (settle.c) grew. */
struct below_update {
    uint64_t id, below_n, below;
};

/* Appends n entries of kind (1 instances, 2 dependencies, 3 updates of
 * instances, 4 records of dropped instances) as one chunk. */
static int put_chunk(FILE *f, uint32_t kind, const void *entries, uint64_t n, size_t elem)
{
    uint32_t h[2] = {kind, (uint32_t)n};
    return n && (put(f, h, sizeof h) || put(f, entries, (size_t)n * elem)) ? -1 : 0;
}

/* The instances in the appendix whose below_* changed since, as one chunk. */
static int put_updates(FILE *f, struct tscope__store *s)
{
    for (uint32_t k = 0; k < s->ndirty; k++) {
        if (s->dirty[k] >= s->ninst)
            continue;
        struct tscope__instance *in = &s->inst[s->dirty[k]];
        struct below_update u = {in->id, in->below_n, in->below};
        uint32_t h[2] = {3, 1};
        if (put(f, h, sizeof h) || put(f, &u, sizeof u))
            return -1;
        in->dirty = 0;
        s->inst_updates++;
    }
    s->ndirty = 0;
    return 0;
}

/* The timeline's bins (a presence byte per array) and duration sample. */
static int put_bins(FILE *f, uint64_t **a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint8_t has = a[i] != NULL;
        if (put(f, &has, 1) || (has && put(f, a[i], TSCOPE__TL_BINS * sizeof *a[i])))
            return -1;
    }
    return 0;
}

static int put_tl(FILE *f, const struct tscope__timeline *tl)
{
    return put_bins(f, tl->type, tl->ntype) || put_bins(f, tl->thread, tl->nthread) ||
           put(f, tl->pts, (size_t)tl->npts * sizeof *tl->pts);
}

int tscope__store_save(struct tscope__store *s, FILE *f, struct tscope__appendix *ax)
{
    uint64_t stamp = layout_stamp();
    uint32_t where = ax ? 2 : 1; /* the instances and dependencies: inline or appended */
    if (ax) {                    /* only what the appendix lacks, before the state that counts it */
        if (s->inst_saved > s->ninst || ax->deps_done > s->ndeps ||
            s->dropped_saved > s->ndropped ||
            put_chunk(ax->f, 1, s->inst + s->inst_saved, s->ninst - s->inst_saved,
                      sizeof *s->inst) ||
            put_updates(ax->f, s) ||
            put_chunk(ax->f, 4, s->dropped + s->dropped_saved, s->ndropped - s->dropped_saved,
                      sizeof *s->dropped) ||
            put_chunk(ax->f, 2, s->deps + ax->deps_done, s->ndeps - ax->deps_done,
                      sizeof *s->deps) ||
            fflush(ax->f))
            return -1;
        s->inst_appended += s->ninst - s->inst_saved;
        s->inst_saved = s->ninst;
        s->dropped_saved = s->ndropped;
        ax->deps_done = s->ndeps;
    }
    int rc = put(f, &stamp, sizeof stamp) || put(f, s, sizeof *s) || put(f, &where, sizeof where) ||
             put_tasks(f, s) || put_map(f, &s->task_map) ||
             put(f, s->implicit_list, (size_t)s->n_implicit * sizeof *s->implicit_list) ||
             put(f, s->terminal_list, (size_t)s->n_terminal * sizeof *s->terminal_list) ||
             put(f, s->stacks, (size_t)s->nstacks * sizeof *s->stacks);
    for (uint32_t i = 0; !rc && i < s->nstacks; i++)
        rc = put(f, s->stacks[i].seg, (size_t)s->stacks[i].n * sizeof *s->stacks[i].seg);
    rc = rc || put(f, s->types, (size_t)s->ntypes * sizeof *s->types);
    for (uint32_t i = 0; !rc && i < s->ntypes; i++)
        rc = put(f, s->types[i].seen, s->types[i].seen_bytes);
    rc = rc || put(f, s->counters, (size_t)s->ncounters * sizeof *s->counters) ||
         put(f, s->customs, (size_t)s->ncustoms * sizeof *s->customs) ||
         put(f, s->peers, (size_t)s->npeers * sizeof *s->peers) ||
         put(f, s->nodes, (size_t)s->nnodes * sizeof *s->nodes) || put_map(f, &s->node_map) ||
         put(f, s->edges, (size_t)s->nedges * sizeof *s->edges) || put_map(f, &s->edge_map) ||
         put(f, s->deptypes, (size_t)s->ndeptypes * sizeof *s->deptypes) ||
         put_map(f, &s->deptype_map) || put_tl(f, &s->tl);
    if (!ax)
        rc = rc || put(f, s->inst, (size_t)s->ninst * sizeof *s->inst) ||
             put(f, s->deps, (size_t)s->ndeps * sizeof *s->deps) ||
             put(f, s->dropped, (size_t)s->ndropped * sizeof *s->dropped);
    return rc ? -1 : 0;
}

/* The bytes still to read: no allocation is made for more than they can
 * fill, whatever sizes the struct claims. */
struct rd {
    FILE *f;
    uint64_t left;
};

static int take(struct rd *r, void *dst, uint64_t n, size_t elem)
{
    if (n > r->left / elem)
        return -1;
    if (n && fread(dst, elem, (size_t)n, r->f) != (size_t)n)
        return -1;
    r->left -= n * elem;
    return 0;
}

/* Allocates n items of elem bytes in *p and reads them; *cap (if given)
 * becomes n: a loaded array is exactly as long as what it holds, and grows
 * from there as before.  On failure *p is NULL (nothing to free). */
static int get(struct rd *r, void *p, uint32_t *cap, uint64_t n, size_t elem)
{
    void **out = p;
    *out = NULL;
    if (n > UINT32_MAX || n > r->left / elem)
        return -1;
    if (cap)
        *cap = (uint32_t)n;
    if (!n)
        return 0;
    *out = malloc((size_t)n * elem);
    if (*out && take(r, *out, n, elem) == 0)
        return 0;
    free(*out);
    *out = NULL;
    return -1;
}

/* The task table written by put_tasks; every slot is live or on the free
 * list, as saved.  -1 for short or impossible bytes. */
static int get_tasks(struct rd *r, struct tscope__store *s)
{
    uint32_t cap = s->ntasks_cap, live, nfree;
    if (cap > r->left / sizeof(uint32_t)) /* each slot costs 4 bytes at least */
        return -1;
    if (cap && !(s->tasks = calloc(cap, sizeof *s->tasks)))
        return -1;
    if (take(r, &live, 1, sizeof live) || live > cap)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        s->tasks[i] = (struct tscope__task){.bits = TSCOPE__T_FREE,
                                            .next_wait = TSCOPE__NONE,
                                            .parent_slot = TSCOPE__NONE,
                                            .waiters = TSCOPE__NONE,
                                            .inst = TSCOPE__NONE};
    for (uint32_t k = 0; k < live; k++) {
        uint32_t i;
        struct tscope__task t;
        if (take(r, &i, 1, sizeof i) || i >= cap || take(r, &t, 1, sizeof t) ||
            (t.bits & TSCOPE__T_FREE) || !(s->tasks[i].bits & TSCOPE__T_FREE))
            return -1; /* out of the table, free, or the same slot twice */
        s->tasks[i] = t;
    }
    if (take(r, &nfree, 1, sizeof nfree) || nfree != cap - live)
        return -1;
    uint32_t *prev = &s->free_head;
    *prev = TSCOPE__NONE;
    for (uint32_t k = 0; k < nfree; k++) {
        uint32_t i;
        if (take(r, &i, 1, sizeof i) || i >= cap || !(s->tasks[i].bits & TSCOPE__T_FREE) ||
            s->tasks[i].next_wait != TSCOPE__NONE || &s->tasks[i].next_wait == prev)
            return -1; /* not a free slot, or listed twice */
        *prev = i;
        prev = &s->tasks[i].next_wait;
    }
    *prev = TSCOPE__NONE;
    return 0;
}

/* m->e is NULL; mask and count are the saved ones. */
static int get_map(struct rd *r, struct tscope__u64map *m)
{
    uint64_t cap = m->mask + 1;
    if (cap == 0 || (cap & (cap - 1)) || m->count >= cap)
        return -1;
    return get(r, &m->e, NULL, cap, sizeof *m->e);
}

static int in(uint32_t v, uint32_t n)
{
    return v < n;
}

static int none_or_in(uint32_t v, uint32_t n)
{
    return v == TSCOPE__NONE || v < n;
}

/* 1 if a hash map has an empty entry (lookups end) and every value is below
 * n. */
static int map_ok(const struct tscope__u64map *m, uint32_t n)
{
    uint64_t used = 0;
    for (uint64_t i = 0; i <= m->mask; i++) {
        if (!m->e[i].key)
            continue;
        used++;
        if (m->e[i].val >= n)
            return 0;
    }
    return used <= m->mask;
}

/* The slots' links (after check() saw every index in range): parent chains
 * end, a slot's refs are its children, held slots are counted, and every
 * mapped slot is found by its id exactly where the index says.  NULL, or
 * what is wrong. */
static const char *check_slots(struct tscope__store *s)
{
    uint32_t cap = s->ntasks_cap, held = 0;
    const char *wrong = NULL;
    uint8_t *state = calloc(cap ? cap : 1, 1); /* 0 new, 1 on the walk, 2 ends */
    uint32_t *kids = calloc(cap ? cap : 1, sizeof *kids);
    if (!state || !kids) {
        free(state);
        free(kids);
        return "out of memory";
    }
    for (uint32_t i = 0; i < cap && !wrong; i++) {
        const struct tscope__task *t = &s->tasks[i];
        if (t->bits & TSCOPE__T_FREE)
            continue;
        if (t->parent_slot != TSCOPE__NONE)
            kids[t->parent_slot]++;
        if (t->held && !(t->bits & TSCOPE__T_FINALIZED))
            wrong = "a held task was not settled";
        held += t->held != 0;
        uint32_t j = i;
        while (j != TSCOPE__NONE && state[j] == 0) { /* mark the walk */
            state[j] = 1;
            j = s->tasks[j].parent_slot;
        }
        if (j != TSCOPE__NONE && state[j] == 1)
            wrong = "the parents of the tasks form a cycle";
        for (j = i; j != TSCOPE__NONE && state[j] == 1; j = s->tasks[j].parent_slot)
            state[j] = 2;
    }
    for (uint32_t i = 0; i < cap && !wrong; i++) {
        const struct tscope__task *t = &s->tasks[i];
        if (t->bits & TSCOPE__T_FREE)
            continue;
        uint32_t v;
        if (kids[i] != t->refs)
            wrong = "a task's count of children is wrong";
        else if ((t->bits & TSCOPE__T_MAPPED) && s->id_front[tscope__id_front_at(t->id)] != i &&
                 !(tscope__u64map_get(&s->task_map, t->id, &v) && v == i))
            wrong = "a mapped task is not in the task index";
    }
    if (!wrong && held != s->held)
        wrong = "the count of held tasks is wrong";
    /* the map holds mapped slots only, none of them also in the front */
    for (uint64_t k = 0; !wrong && k <= s->task_map.mask; k++) {
        const struct tscope__u64entry *e = &s->task_map.e[k];
        if (e->key &&
            (e->val >= cap ||
             (s->tasks[e->val].bits & (TSCOPE__T_MAPPED | TSCOPE__T_FREE)) != TSCOPE__T_MAPPED ||
             s->tasks[e->val].id != e->key || s->id_front[tscope__id_front_at(e->key)] == e->val))
            wrong = "the task index is broken";
    }
    free(state);
    free(kids);
    return wrong;
}

/* Every index the store follows points inside its arrays, and every chain
 * it walks ends: what any later store function needs not to stray, whatever
 * the bytes were.  NULL, or what is wrong. */
static const char *check(struct tscope__store *s)
{
    uint32_t cap = s->ntasks_cap;
    if (!s->nodes || s->nnodes == 0 || s->ntypes == 0 || s->nnodes > s->cap_nodes ||
        s->nedges > s->cap_edges || s->ninst > s->cap_inst || s->ndeps > s->cap_deps ||
        s->ndeptypes > s->cap_deptypes || !none_or_in(s->free_head, cap))
        return "inconsistent sizes";
    for (uint32_t i = 0; i < cap; i++) {
        const struct tscope__task *t = &s->tasks[i];
        if (!none_or_in(t->next_wait, cap) || !none_or_in(t->parent_slot, cap) ||
            !none_or_in(t->waiters, cap))
            return "a task refers outside the task table";
        if (!(t->bits & TSCOPE__T_FREE) && !none_or_in(t->inst, s->ninst))
            return "a task refers outside the instance graph";
        if (!(t->bits & TSCOPE__T_FREE) && t->parent_slot != TSCOPE__NONE &&
            (s->tasks[t->parent_slot].bits & TSCOPE__T_FREE))
            return "a task's parent slot is free";
        if (!(t->bits & TSCOPE__T_FREE) &&
            (!in(t->type, s->ntypes) || !none_or_in(t->node, s->nnodes) ||
             ((t->bits & TSCOPE__T_RESOLVED) && !in(t->node, s->nnodes))))
            return "a task has a type or tree node that does not exist";
    }
    for (uint32_t i = 0; i < TSCOPE__ID_FRONT; i++) { /* the task index's front */
        uint32_t f = s->id_front[i];
        if (f != TSCOPE__NONE &&
            (!in(f, cap) ||
             (s->tasks[f].bits & (TSCOPE__T_MAPPED | TSCOPE__T_FREE)) != TSCOPE__T_MAPPED ||
             tscope__id_front_at(s->tasks[f].id) != i))
            return "the task index is broken";
    }
    const char *wrong = check_slots(s);
    if (wrong)
        return wrong;
    uint32_t chain = 0; /* the free list: free slots only, no loop */
    for (uint32_t i = s->free_head; i != TSCOPE__NONE; i = s->tasks[i].next_wait)
        if (++chain > cap || !(s->tasks[i].bits & TSCOPE__T_FREE))
            return "the free list of tasks is broken";
    /* the waiter lists: a task waits in one list at most (next_wait is one
     * link), so no task is met twice over all of them */
    uint8_t *met = calloc(cap ? cap : 1, 1);
    if (!met)
        return "out of memory";
    for (uint32_t i = 0; i < cap; i++)
        for (uint32_t w = s->tasks[i].bits & TSCOPE__T_FREE ? TSCOPE__NONE : s->tasks[i].waiters;
             w != TSCOPE__NONE; w = s->tasks[w].next_wait) {
            if (met[w]++) {
                free(met);
                return "the lists of waiting tasks are broken";
            }
        }
    free(met);
    for (uint32_t i = 0; i < s->n_implicit; i++)
        if (!in(s->implicit_list[i], cap))
            return "a task list refers outside the task table";
    for (uint32_t i = 0; i < s->n_terminal; i++)
        if (!in(s->terminal_list[i], cap))
            return "a task list refers outside the task table";
    for (uint32_t i = 0; i < s->nstacks; i++)
        for (uint32_t k = 0; k < s->stacks[i].n; k++)
            if (!in(s->stacks[i].seg[k].slot, cap))
                return "a thread's stack refers outside the task table";
    /* the tree: node 0 the root, parents made before their children, depth
     * one more than the parent's: every walk towards the root ends there */
    if (s->nodes[0].parent != TSCOPE__NONE || s->nodes[0].depth != 0)
        return "the task tree has no root";
    for (uint32_t i = 1; i < s->nnodes; i++) {
        const struct tscope__node *n = &s->nodes[i];
        if (n->parent >= i || n->depth != s->nodes[n->parent].depth + 1u ||
            !none_or_in(n->edge, s->nedges))
            return "the task tree is broken";
    }
    if (!map_ok(&s->task_map, cap) || !map_ok(&s->node_map, s->nnodes) ||
        !map_ok(&s->edge_map, s->nedges) || !map_ok(&s->deptype_map, s->ndeptypes))
        return "an index is broken";
    if (s->leaves.acc.n &&
        (!in(s->leaves.type, s->ntypes) || !in(s->leaves.node, s->nnodes) ||
         !in(s->leaves.pnode, s->nnodes) || !none_or_in(s->leaves.edge, s->nedges)))
        return "the pending leaf tasks are broken";
    if (s->cfg.filter_ntypes < 0 || s->cfg.filter_ntypes > TSCOPE__FILTER_MAX_TYPES)
        return "the configuration is broken";
    return NULL;
}

/* n arrays of bins into *a (*na set as soon as *a holds n NULLs, so that
 * freeing the store on an error frees what was read). */
static int get_bins(struct rd *r, uint64_t ***a, uint32_t *na, uint32_t n)
{
    if (n > (1u << 20))
        return -1;
    if (!n)
        return 0;
    if (!(*a = calloc(n, sizeof **a)))
        return -1;
    *na = n;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t has;
        if (take(r, &has, 1, 1) || has > 1 ||
            (has && get(r, &(*a)[i], NULL, TSCOPE__TL_BINS, sizeof *(*a)[i])))
            return -1;
    }
    return 0;
}

/* The timeline's arrays (their counts were read with the store's struct,
 * its pointers cleared). */
static int get_tl(struct rd *r, struct tscope__timeline *tl, uint32_t ntype, uint32_t nthread,
                  uint32_t npts)
{
    if (tl->shift > 63 || tl->used > TSCOPE__TL_BINS || npts > TSCOPE__TL_POINTS ||
        get_bins(r, &tl->type, &tl->ntype, ntype) ||
        get_bins(r, &tl->thread, &tl->nthread, nthread))
        return -1;
    if (!npts)
        return 0;
    if (!(tl->pts = malloc(TSCOPE__TL_POINTS * sizeof *tl->pts)))
        return -1;
    if (take(r, tl->pts, npts, sizeof *tl->pts))
        return -1;
    tl->npts = npts;
    return 0;
}

/* What is only a cache, or only makes sense in the process that wrote it,
 * starts afresh; strings end where their arrays do. */
static void reset_local(struct tscope__store *s)
{
    memset(s->node_cache, 0, sizeof s->node_cache);
    atomic_store(&s->running.seq, 0);
    atomic_store(&s->running.busy, 0);
    struct tscope__config *c = &s->cfg;
    for (int i = 0; i < TSCOPE__FILTER_MAX_TYPES; i++)
        c->filter_types[i][sizeof c->filter_types[i] - 1] = 0;
    c->output_dir[sizeof c->output_dir - 1] = 0;
    c->summary_sort[sizeof c->summary_sort - 1] = 0;
    c->clock[sizeof c->clock - 1] = 0;
    c->tools[sizeof c->tools - 1] = 0;
    c->policy[sizeof c->policy - 1] = 0;
    c->throttle_type[sizeof c->throttle_type - 1] = 0;
    c->papi_events[sizeof c->papi_events - 1] = 0;
}

/* The bytes left in a stream from where it is (UINT64_MAX when it cannot
 * seek). */
static uint64_t bytes_left(FILE *f)
{
    long here = ftell(f);
    if (here >= 0 && fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        if (end >= here && fseek(f, here, SEEK_SET) == 0)
            return (uint64_t)(end - here);
    }
    return UINT64_MAX;
}

/* The instances, dependencies, updates and dropped-instance records the
 * state counts (inst_appended, ndeps, inst_updates, ndropped) from an
 * appendix's chunks (later chunks, written for a state that never
 * completed, are not read); then the updates applied and the instances the
 * cap dropped since left out, which must leave the state's ninst.  -1 when
 * it holds fewer or does not add up. */
static int get_appendix(struct rd *r, struct tscope__store *s, uint64_t wx)
{
    uint64_t want[5] = {0, s->inst_appended, s->ndeps, s->inst_updates, wx}, have[5] = {0};
    size_t elem[5] = {0, sizeof *s->inst, sizeof *s->deps, sizeof(struct below_update),
                      sizeof *s->dropped};
    for (int k = 1; k <= 4; k++)
        if (want[k] > UINT32_MAX || want[k] > r->left / elem[k])
            return -1;
    struct below_update *up = want[3] ? malloc(want[3] * sizeof *up) : NULL;
    if ((want[1] && !(s->inst = malloc(want[1] * elem[1]))) ||
        (want[2] && !(s->deps = malloc(want[2] * elem[2]))) || (want[3] && !up) ||
        (want[4] && !(s->dropped = malloc(want[4] * elem[4])))) {
        free(up);
        return -1;
    }
    char *dst[5] = {NULL, (char *)s->inst, (char *)s->deps, (char *)up, (char *)s->dropped};
    s->cap_inst = (uint32_t)want[1];
    s->cap_deps = s->ndeps;
    s->cap_dropped = (uint32_t)want[4];
    /* an update goes to the latest instance of its id appended before it
     * (ids can be reused), so the updates apply in the order of the file */
    struct tscope__u64map ids = {0};
    int bad = want[3] && tscope__u64map_init(&ids, 1024);
    while (!bad &&
           (have[1] < want[1] || have[2] < want[2] || have[3] < want[3] || have[4] < want[4])) {
        uint32_t h[2];
        if (take(r, h, 1, sizeof h) || h[0] < 1 || h[0] > 4) {
            bad = 1;
            break;
        }
        uint32_t k = h[0];
        uint64_t use = want[k] - have[k] < h[1] ? want[k] - have[k] : h[1];
        bad = use && take(r, dst[k] + have[k] * elem[k], use, elem[k]) != 0;
        for (uint64_t j = use; !bad && j < h[1]; j++) { /* past what this state counts */
            char skip[sizeof *s->inst];
            bad = take(r, skip, 1, elem[k]) != 0;
        }
        for (uint64_t j = have[k]; !bad && want[3] && k == 1 && j < have[k] + use; j++)
            bad = tscope__u64map_put(&ids, s->inst[j].id, (uint32_t)j) != 0;
        for (uint64_t j = have[k]; !bad && k == 3 && j < have[k] + use; j++) {
            uint32_t i;
            if (tscope__u64map_get(&ids, up[j].id, &i)) {
                s->inst[i].below_n = tscope__add_sat32(0, up[j].below_n);
                s->inst[i].below = up[j].below;
            }
        }
        have[k] += use;
    }
    s->ndropped = (uint32_t)have[4];
    uint64_t wi = want[1];
    if (ids.e)
        tscope__u64map_free(&ids);
    free(up);
    /* the kept ones: what the cap dropped since is in s->dropped */
    uint64_t n = 0;
    for (uint64_t i = 0; !bad && i < wi; i++)
        if (s->inst[i].tdepth <= s->inst_limit)
            s->inst[n++] = s->inst[i];
    return bad || n != s->ninst ? -1 : 0;
}

struct tscope__store *tscope__store_load(FILE *f, FILE *appendix, const char **why)
{
    struct rd r = {f, bytes_left(f)};
    uint64_t stamp;
    struct tscope__store *s = calloc(1, sizeof *s);
    *why = "truncated";
    uint32_t where = 0;
    if (!s || take(&r, &stamp, 1, sizeof stamp) || take(&r, s, 1, sizeof *s) ||
        take(&r, &where, 1, sizeof where)) {
        free(s);
        return NULL;
    }
    if (stamp != layout_stamp()) {
        *why = "written by another build of taskscope";
        free(s);
        return NULL;
    }
    /* every pointer read is meaningless here: clear them all first, so that
     * tscope__store_free can run whatever fails below */
    uint32_t nstacks = s->nstacks, ntypes = s->ntypes;
    s->tasks = NULL;
    s->implicit_list = s->terminal_list = NULL;
    s->stacks = NULL;
    s->types = NULL;
    s->counters = NULL;
    s->customs = NULL;
    s->peers = NULL;
    s->th_counters = NULL;
    s->th_customs = NULL;
    s->th_peers = NULL;
    s->th_deptypes = NULL;
    s->nth_counters = s->nth_customs = s->nth_peers = 0;
    s->nth_deptypes = s->cap_th_deptypes = 0;
    s->th_dependencies = s->th_deps_cut_off = 0;
    s->nodes = NULL;
    s->edges = NULL;
    s->inst = NULL;
    s->deps = NULL;
    s->deptypes = NULL;
    uint32_t ndropped = s->ndropped; /* inline states hold them; appendixes rebuild them */
    s->dropped = NULL;
    s->ndropped = s->cap_dropped = 0;
    s->dirty = NULL; /* a state is saved with none marked */
    s->ndirty = s->cap_dirty = 0;
    s->inst_at_depth = NULL;
    s->n_at_depth = 0;
    s->nstacks = s->ntypes = 0;
    uint32_t tl_ntype = s->tl.ntype, tl_nthread = s->tl.nthread, tl_npts = s->tl.npts;
    s->tl.type = s->tl.thread = NULL;
    s->tl.pts = NULL;
    s->tl.ntype = s->tl.nthread = s->tl.npts = 0;
    s->task_map.e = s->node_map.e = s->edge_map.e = s->inst_map.e = s->deptype_map.e = NULL;
    /* the merging of BELOW records starts again: entries the state holds
     * stay as they are, later ones get new entries */
    memset(&s->below_map, 0, sizeof s->below_map);
    pthread_mutex_init(&s->lock, NULL);
    const char *why_appendix = NULL;
    errno = 0;
    int bad = get_tasks(&r, s) || get_map(&r, &s->task_map) ||
              get(&r, &s->implicit_list, &s->cap_implicit, s->n_implicit, sizeof(uint32_t)) ||
              get(&r, &s->terminal_list, &s->cap_terminal, s->n_terminal, sizeof(uint32_t));
    /* stacks and types own arrays of their own: their pointers are cleared
     * as soon as the array is in the store */
    struct tscope__tstack *stacks = NULL;
    bad = bad || get(&r, &stacks, NULL, nstacks, sizeof *stacks);
    if (!bad) {
        s->stacks = stacks;
        s->nstacks = nstacks;
        for (uint32_t i = 0; i < nstacks; i++) {
            s->stacks[i].seg = NULL;
            s->stacks[i].open = NULL;
            s->stacks[i].nopen = 0;
        }
        for (uint32_t i = 0; !bad && i < nstacks; i++)
            bad = get(&r, &s->stacks[i].seg, &s->stacks[i].cap, s->stacks[i].n,
                      sizeof *s->stacks[i].seg);
        /* the open segments per type follow from the segments */
        for (uint32_t i = 0; !bad && i < nstacks; i++) {
            struct tscope__tstack *st = &s->stacks[i];
            for (uint32_t k = 0; !bad && k < st->n; k++) {
                bad = tscope__grow(&st->open, &st->nopen, st->seg[k].type, sizeof *st->open);
                if (!bad)
                    st->open[st->seg[k].type]++;
            }
        }
    }
    struct tscope__type_acc *types = NULL;
    bad = bad || get(&r, &types, NULL, ntypes, sizeof *types);
    if (!bad) {
        s->types = types;
        s->ntypes = ntypes;
        for (uint32_t i = 0; i < ntypes; i++)
            s->types[i].seen = NULL;
        for (uint32_t i = 0; !bad && i < ntypes; i++)
            bad = get(&r, &s->types[i].seen, NULL, s->types[i].seen_bytes, 1);
    }
    bad = bad || get(&r, &s->counters, NULL, s->ncounters, sizeof *s->counters) ||
          get(&r, &s->customs, NULL, s->ncustoms, sizeof *s->customs) ||
          get(&r, &s->peers, NULL, s->npeers, sizeof *s->peers) ||
          get(&r, &s->nodes, &s->cap_nodes, s->nnodes, sizeof *s->nodes) ||
          get_map(&r, &s->node_map) ||
          get(&r, &s->edges, &s->cap_edges, s->nedges, sizeof *s->edges) ||
          get_map(&r, &s->edge_map) ||
          get(&r, &s->deptypes, &s->cap_deptypes, s->ndeptypes, sizeof *s->deptypes) ||
          get_map(&r, &s->deptype_map) || get_tl(&r, &s->tl, tl_ntype, tl_nthread, tl_npts);
    if (!bad && where == 1)
        bad = get(&r, &s->inst, &s->cap_inst, s->ninst, sizeof *s->inst) ||
              get(&r, &s->deps, &s->cap_deps, s->ndeps, sizeof *s->deps) ||
              get(&r, &s->dropped, &s->cap_dropped, ndropped, sizeof *s->dropped);
    if (!bad && where == 1)
        s->ndropped = ndropped;
    else if (!bad && where == 2 && appendix) {
        struct rd ra = {appendix, bytes_left(appendix)};
        bad = get_appendix(&ra, s, ndropped);
        if (bad)
            why_appendix = "its appendix (instances, dependencies) is short or corrupt";
    } else if (!bad) {
        bad = 1;
        why_appendix = where == 2 ? "its appendix (instances, dependencies) is missing"
                                  : "truncated or corrupt";
    }
    if (!bad) { /* the instance index is rebuilt by the queries that need it */
        s->inst_indexed = 0;
        bad = tscope__u64map_init(&s->inst_map, 1024) != 0;
    }
    /* the kept instances per depth follow from the instances */
    s->inst_at_depth = NULL;
    s->n_at_depth = 0;
    s->inst_deepest = 0;
    if (s->inst_saved > s->ninst)
        s->inst_saved = s->ninst;
    for (uint32_t i = 0; !bad && i < s->ninst; i++) {
        bad = tscope__grow(&s->inst_at_depth, &s->n_at_depth, s->inst[i].tdepth,
                           sizeof *s->inst_at_depth) != 0;
        if (!bad)
            s->inst_at_depth[s->inst[i].tdepth]++;
        if (s->inst[i].tdepth > s->inst_deepest)
            s->inst_deepest = s->inst[i].tdepth;
    }
    if (bad) {
        *why = errno == ENOMEM ? "out of memory"
               : why_appendix  ? why_appendix
                               : "truncated or corrupt";
        tscope__store_free(s);
        return NULL;
    }
    reset_local(s);
    const char *wrong = check(s);
    if (wrong) {
        *why = wrong;
        tscope__store_free(s);
        return NULL;
    }
    return s;
}
