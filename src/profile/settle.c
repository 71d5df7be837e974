/* settle.c - decisions that wait for a task's complete history.
 *
 * Resolution: a task's parent is known once its create was applied, or -
 * for a task that only ever had a begin - once a full round has passed
 * without a create (then the task it was begun inside is its parent).  A
 * resolved task gets its node in the path-level tree (parent's node + own
 * type) and counts one edge in the type-level graph.  A task whose parent is
 * not resolved yet waits in the parent's waiter list.
 *
 * Finalization: a task that ended (or was cancelled) with all its segments
 * closed is added to the statistics one round later, when every event of it
 * that any thread published earlier has been applied; it then enters the
 * instance graph if the filters, the sampling fraction and the cap allow.
 *
 * A slot is freed when it is finalized and no unresolved child points to it.
 * Lock held for everything here.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/names.h"
#include "grow.h"
#include "shard.h"
#include "store.h"

static uint32_t edge_index(struct tscope__store *s, uint16_t from, uint16_t to)
{
    uint64_t key = ((uint64_t)from << 16 | to) + 1;
    uint32_t idx;
    if (tscope__u64map_get(&s->edge_map, key, &idx))
        return idx;
    if (tscope__grow(&s->edges, &s->cap_edges, s->nedges, sizeof *s->edges))
        return TSCOPE__NONE;
    idx = s->nedges;
    if (tscope__u64map_put(&s->edge_map, key, idx))
        return TSCOPE__NONE;
    s->edges[s->nedges++] = (struct tscope__edge){from, to, 0};
    return idx;
}

/* The node a step to `type` below node `parent` lands on, without the
 * caches: folded into the ancestor of that type when recursion folding is
 * on (a path that re-enters a type already on it collapses into that node,
 * so a recursive program gets one node per type pattern, not one per
 * task), below the ancestor at depth TASKSCOPE_TREE_DEPTH - 1 when the path
 * would be deeper, else a new node.  0 (the root) on memory exhaustion. */
static uint32_t node_land(struct tscope__store *s, uint32_t parent, uint16_t ptype, uint16_t type)
{
    if (s->cfg.tree_fold)
        for (uint32_t a = parent; a != 0 && a != TSCOPE__NONE; a = s->nodes[a].parent)
            if (s->nodes[a].type == type)
                return a;
    uint32_t depth = s->nodes[parent].depth + 1u;
    if (s->cfg.tree_depth && depth > s->cfg.tree_depth) {
        uint32_t a = parent;
        while (s->nodes[a].depth + 1u > s->cfg.tree_depth)
            a = s->nodes[a].parent;
        uint32_t edge;
        uint8_t step;
        return tscope__settle_node(s, a, a ? s->nodes[a].type : TSCOPE__ROOT_TYPE, type, &edge,
                                   &step);
    }
    if (tscope__grow(&s->nodes, &s->cap_nodes, s->nnodes, sizeof *s->nodes))
        return 0; /* out of memory: account to the root */
    uint32_t idx = s->nnodes++;
    s->nodes[idx] = (struct tscope__node){
        .parent = parent,
        .type = type,
        .depth = (uint16_t)(depth > 0xFFFF ? 0xFFFF : depth),
        .edge = edge_index(s, ptype, type),
    };
    return idx;
}

/* The step flags of parent -> type landing on node idx: FOLDED when idx is
 * parent or one of its ancestors (a child node of parent is not). */
static uint8_t step_of(const struct tscope__store *s, uint32_t parent, uint32_t idx)
{
    if (idx == 0 || s->nodes[idx].parent == parent)
        return 0;
    for (uint32_t a = parent; a != 0 && a != TSCOPE__NONE; a = s->nodes[a].parent)
        if (a == idx)
            return TSCOPE__STEP_FOLDED;
    return 0;
}

int tscope__settle_nested(const struct tscope__store *s, uint32_t pslot, uint16_t type)
{
    if (pslot == TSCOPE__NONE)
        return 0;
    const struct tscope__task *p = &s->tasks[pslot];
    if (!((p->anc | tscope__type_bit(p->type)) & tscope__type_bit(type)))
        return 0; /* no ancestor can have the type: the common case */
    for (uint32_t a = pslot; a != TSCOPE__NONE; a = s->tasks[a].parent_slot)
        if (s->tasks[a].type == type)
            return 1;
    return 0; /* another type with the same bit */
}

#define EDGE_NONE_30 0x3FFFFFFFu /* TSCOPE__NONE in the cache's 30-bit field */

static uint32_t settle_node(struct tscope__store *s, uint32_t parent, uint16_t ptype, uint16_t type,
                            uint32_t *edge, uint8_t *step)
{
    uint64_t key = ((uint64_t)parent << 16 | type) + 1;
    struct tscope__node_cache *c = &s->node_cache[tscope__mix64(key) % TSCOPE__NODE_CACHE];
    if (c->key == key) {
        *edge = c->edge == EDGE_NONE_30 ? TSCOPE__NONE : c->edge;
        *step = (uint8_t)c->step;
        return c->node;
    }
    uint32_t idx;
    if (!tscope__u64map_get(&s->node_map, key, &idx)) {
        idx = node_land(s, parent, ptype, type);
        if (idx == 0 || tscope__u64map_put(&s->node_map, key, idx)) {
            *edge = edge_index(s, ptype, type);
            *step = 0;
            return 0;
        }
    }
    /* a node reached from its own parent counts in its own edge; a folded
     * step counts in the edge between the types it really connects */
    *edge = s->nodes[idx].parent == parent ? s->nodes[idx].edge : edge_index(s, ptype, type);
    *step = step_of(s, parent, idx);
    c->key = key;
    c->node = idx;
    c->edge = *edge >= EDGE_NONE_30 ? EDGE_NONE_30 : *edge;
    c->step = *step;
    return idx;
}

uint32_t tscope__settle_node(struct tscope__store *s, uint32_t parent, uint16_t ptype,
                             uint16_t type, uint32_t *edge, uint8_t *step)
{
    uint32_t nodes = s->nnodes, edges = s->nedges;
    uint32_t node = settle_node(s, parent, ptype, type, edge, step);
    if (s->nnodes != nodes || s->nedges != edges)
        tscope__shards_log_path(parent, ptype, type); /* the crash journal's, with shards */
    return node;
}

void tscope__settle_release_parent(struct tscope__store *s, uint32_t slot)
{
    uint32_t p = s->tasks[slot].parent_slot;
    s->tasks[slot].parent_slot = TSCOPE__NONE;
    if (p == TSCOPE__NONE)
        return;
    struct tscope__task *pt = &s->tasks[p];
    pt->refs--;
    if ((pt->bits & TSCOPE__T_FINALIZED) && pt->refs == 0)
        tscope__task_free(s, p);
}

uint32_t tscope__settle_path_step(struct tscope__store *s, uint32_t pnode, uint16_t ptype,
                                  uint16_t type, uint8_t *step)
{
    uint32_t edge;
    uint32_t node = tscope__settle_node(s, pnode, ptype, type, &edge, step);
    if (edge != TSCOPE__NONE)
        s->edges[edge].count++;
    return node;
}

void tscope__settle_count_done(struct tscope__store *s, const struct tscope__task *t)
{
    struct tscope__type_acc *ta = &s->types[t->type];
    uint64_t elapsed = (t->bits & TSCOPE__T_BEGUN) && t->end_ts > t->begin_ts
                           ? t->end_ts - t->begin_ts
                           : 0; /* (a begin lost: resumed only) */
    ta->calls++;
    ta->yields += t->yields;
    tscope__acc_add(&ta->self, t->self);
    tscope__acc_add(&ta->running, t->running);
    tscope__acc_add(&ta->elapsed, elapsed);
    ta->running_total += t->running_top;
    if (!(t->bits & TSCOPE__T_NESTED))
        ta->elapsed_total += elapsed;
    tscope__stack_count(s, t->thread, 0, t->type, 1, t->self, t->running_top,
                        (t->bits & TSCOPE__T_NESTED) ? 0 : elapsed);
    struct tscope__node *n = &s->nodes[t->node == TSCOPE__NONE ? 0 : t->node];
    n->calls++;
    n->self += t->self;
    if (t->step & TSCOPE__STEP_FOLDED) {
        n->running += t->running_top; /* the node's outer task holds the rest */
    } else {
        n->running += t->running;
        n->elapsed += elapsed;
    }
    tscope__tl_point(&s->tl, t->id, t->end_ts, elapsed, t->type);
    s->completed++;
}

void tscope__settle_count_unfinished(struct tscope__store *s, uint32_t thread, uint16_t type,
                                     uint64_t self, uint64_t running_top, uint64_t elapsed,
                                     int nested)
{
    struct tscope__type_acc *ta = &s->types[type];
    ta->unfinished++;
    s->unfinished++;
    ta->self_unfinished += self;
    ta->running_total += running_top;
    if (nested)
        elapsed = 0; /* inside one of its type: counted there */
    ta->elapsed_total += elapsed;
    if (thread < TSCOPE__THREADS_MAX && (self || running_top || elapsed))       /* the thread's */
        tscope__stack_count(s, thread, 1, type, 0, self, running_top, elapsed); /* add up */
}

/* Gives a task whose parent is resolved (or absent) its node and edge. */
static void attach(struct tscope__store *s, uint32_t slot)
{
    struct tscope__task *t = &s->tasks[slot];
    uint32_t pnode = 0;
    uint16_t ptype = TSCOPE__ROOT_TYPE, tdepth = 0;
    if (t->parent_slot != TSCOPE__NONE) {
        const struct tscope__task *p = &s->tasks[t->parent_slot];
        pnode = p->node;
        if (pnode != 0)
            ptype = p->type;
        tdepth = p->tdepth < 0xFFFE ? (uint16_t)(p->tdepth + 1) : 0xFFFE;
        t->anc = p->anc | tscope__type_bit(p->type);
    }
    uint8_t step;
    uint32_t node = tscope__settle_path_step(s, pnode, ptype, t->type, &step);
    t = &s->tasks[slot];
    t->node = node;
    t->step = step;
    t->tdepth = tdepth;
    /* recursion by the task's real ancestry (kept in the table through the
     * parent slots): the folded tree path can have lost the ancestor */
    if (tscope__settle_nested(s, t->parent_slot, t->type))
        t->bits |= TSCOPE__T_NESTED;
    t->bits |= TSCOPE__T_RESOLVED;
    /* the reference on the parent stays until this slot is freed: what
     * the instance graph leaves out below is counted up through it */
}

/* Attaches every task waiting (transitively) for `slot`, which is resolved.
 * A worklist instead of recursion; the list link reuses next_wait. */
static void resolve_waiters(struct tscope__store *s, uint32_t slot)
{
    s->tasks[slot].next_wait = TSCOPE__NONE;
    uint32_t work = slot;
    while (work != TSCOPE__NONE) {
        struct tscope__task *w = &s->tasks[work];
        uint32_t child = w->waiters;
        uint32_t next_work = w->next_wait;
        w->waiters = TSCOPE__NONE;
        while (child != TSCOPE__NONE) {
            uint32_t sibling = s->tasks[child].next_wait;
            s->tasks[child].bits &= (uint16_t)~TSCOPE__T_WAITING;
            attach(s, child);
            s->tasks[child].next_wait = next_work;
            next_work = child;
            child = sibling;
        }
        work = next_work;
    }
}

void tscope__settle_try_resolve(struct tscope__store *s, uint32_t slot)
{
    struct tscope__task *t = &s->tasks[slot];
    if ((t->bits & (TSCOPE__T_RESOLVED | TSCOPE__T_WAITING)) ||
        !(t->bits & (TSCOPE__T_CREATED | TSCOPE__T_IMPLICIT)))
        return;
    uint32_t p = t->parent_slot;
    if (p != TSCOPE__NONE && !(s->tasks[p].bits & TSCOPE__T_RESOLVED)) {
        t->bits |= TSCOPE__T_WAITING;
        t->next_wait = s->tasks[p].waiters;
        s->tasks[p].waiters = slot;
        return;
    }
    attach(s, slot);
    resolve_waiters(s, slot);
}

int tscope__inst_type_wanted(const struct tscope__config *c, uint16_t type)
{
    char name[TSCOPE__NAME_MAX + 1];
    if (tscope__names_get(&tscope__types, type, name, sizeof name) == 0)
        for (int i = 0; i < c->filter_ntypes; i++)
            if (strcmp(name, tscope__config_filter_type(c, i)) == 0)
                return 1;
    return 0;
}

/* Verdict of the instance filters for a task (type, flags, depth, sample). */
static int instance_wanted(struct tscope__store *s, const struct tscope__task *t)
{
    const struct tscope__config *c = &s->cfg;
    if (c->filter_ntypes) {
        struct tscope__type_acc *ta = &s->types[t->type];
        if (ta->filter == 0)
            ta->filter = tscope__inst_type_wanted(c, t->type) ? 1 : -1;
        if (ta->filter < 0)
            return 0;
    }
    return tscope__inst_rest_wanted(c, t->id, t->flags, t->depth);
}

void tscope__settle_below(struct tscope__store *s, uint32_t p, uint64_t n, uint64_t self)
{
    for (; p != TSCOPE__NONE; p = s->tasks[p].parent_slot) {
        struct tscope__task *pt = &s->tasks[p];
        if (!(pt->bits & TSCOPE__T_FINALIZED)) { /* passes it on at its finalize */
            pt->below_n += n;
            pt->below += self;
            return;
        }
        if (pt->inst != TSCOPE__NONE) {
            struct tscope__instance *in = &s->inst[pt->inst];
            in->below_n = tscope__add_sat32(in->below_n, n);
            in->below += self;
            return;
        }
    }
    s->below_lost += n;
}

/* Drops every kept instance deeper than `limit` (the cap keeps the top of
 * the tree), deepest first, counting each - itself plus what was counted
 * below it, and their self ticks - where its parent is: in the parent's
 * slot while that is in the table (tscope__settle_below: the slot, or its
 * instance, or on up), else in a 32-byte record in s->dropped that the
 * queries count in its nearest kept ancestor (query.c).  Then compacts the
 * array and renumbers the slots' instance indexes.  -1 when memory runs
 * out (nothing changed). */
static int drop_below(struct tscope__store *s, uint16_t limit)
{
    uint32_t n0 = s->ninst, ndrop = 0, nd = s->n_at_depth;
    for (uint32_t d = (uint32_t)limit + 1; d < nd; d++)
        ndrop += s->inst_at_depth[d];
    /* the new numbering of the instances, only when task slots refer to
     * them (the threads that aggregate their own tasks leave the table
     * empty): temporary arrays this large are fresh pages each time */
    int renumber = s->ntasks_cap != 0;
    uint32_t *moved = renumber ? malloc((n0 ? n0 : 1) * sizeof *moved) : NULL;
    uint32_t *first = calloc((size_t)nd + 1, sizeof *first);
    struct tscope__u64map slots = {0}, index = {0};
    int bad = (renumber && !moved) || !first || tscope__u64map_init(&index, 1024) ||
              (s->ntasks_cap && tscope__u64map_init(&slots, 1024)) ||
              (ndrop && tscope__grow_uninit(&s->dropped, &s->cap_dropped, s->ndropped + ndrop - 1,
                                            sizeof *s->dropped));
    /* the slots in the table by id (the mapped one where an id is reused) */
    for (uint32_t i = 0; !bad && i < s->ntasks_cap; i++) {
        const struct tscope__task *t = &s->tasks[i];
        uint32_t have;
        if (!(t->bits & TSCOPE__T_FREE) &&
            (!tscope__u64map_get(&slots, t->id, &have) || (t->bits & TSCOPE__T_MAPPED)))
            bad = tscope__u64map_put(&slots, t->id, i) != 0;
    }
    if (bad) {
        free(moved);
        free(first);
        tscope__u64map_free(&slots);
        tscope__u64map_free(&index);
        return -1;
    }
    /* What each dropped instance passes on goes to the end of the dropped
     * list (grown above), deepest first - a counting sort by depth as the
     * instances are read, so that a parent dropped too has its children's
     * counts before it passes its own on - and the kept ones move down:
     * one pass over the instances, each read once. */
    uint32_t at = 0;
    for (uint32_t d = nd; d-- > (uint32_t)limit + 1;) {
        first[d] = at;
        at += s->inst_at_depth[d];
    }
    struct tscope__dropped *gone = s->dropped + s->ndropped;
    uint32_t n = 0;
    for (uint32_t i = 0; i < n0; i++) {
        const struct tscope__instance *in = &s->inst[i];
        if (in->tdepth > limit) {
            if (moved)
                moved[i] = TSCOPE__NONE;
            if (first[in->tdepth] < ndrop)
                gone[first[in->tdepth]++] = (struct tscope__dropped){
                    in->id, in->parent, 1 + (uint64_t)in->below_n, in->self + in->below};
            continue;
        }
        if (moved)
            moved[i] = n;
        if (n != i)
            s->inst[n] = *in;
        n++;
    }
    for (uint32_t i = 0; i < s->ntasks_cap; i++) {
        struct tscope__task *t = &s->tasks[i];
        if (!(t->bits & TSCOPE__T_FREE) && t->inst != TSCOPE__NONE)
            t->inst = t->inst < n0 ? moved[t->inst] : TSCOPE__NONE;
    }
    s->ninst = n;
    /* then those whose parent still has a slot pass their counts to it
     * (numbered anew: an instance it marks is marked in the new numbering)
     * and leave the list */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < ndrop; k++) {
        uint32_t p;
        if (s->ntasks_cap && gone[k].parent && tscope__u64map_get(&slots, gone[k].parent, &p))
            tscope__settle_below(s, p, gone[k].n, gone[k].self);
        else
            gone[kept++] = gone[k];
    }
    s->ndropped += kept;
    free(moved);
    free(first);
    tscope__u64map_free(&slots);
    s->cut_off += n0 - n;
    for (uint32_t d = (uint32_t)limit + 1; d < nd; d++)
        s->inst_at_depth[d] = 0;
    s->inst_limit = limit;
    s->inst_deepest = limit;
    while (s->inst_deepest > 0 && !s->inst_at_depth[s->inst_deepest])
        s->inst_deepest--;
    s->inst_gen++;
    s->inst_indexed = 0; /* the queries index again (a fresh map: made first) */
    tscope__u64map_free(&s->inst_map);
    s->inst_map = index;
    return 0;
}

uint32_t tscope__settle_record_instance(struct tscope__store *s, const struct tscope__task *t,
                                        int state)
{
    if (!instance_wanted(s, t))
        return TSCOPE__NONE;
    if (tscope__inst_capped(s, t->tdepth) || s->cfg.instance_cap == 0 ||
        tscope__grow(&s->inst_at_depth, &s->n_at_depth, t->tdepth, sizeof *s->inst_at_depth) ||
        tscope__grow_uninit(&s->inst, &s->cap_inst, s->ninst, sizeof *s->inst)) {
        s->cut_off++;
        return TSCOPE__NONE;
    }
    if (s->ninst >= s->cfg.instance_cap) {
        /* full: drop the deepest levels, down to what leaves room for a
         * quarter of the cap (so a drop is rare), keeping at least one level */
        uint64_t room = s->cfg.instance_cap - s->cfg.instance_cap / 4;
        uint64_t kept = s->inst_at_depth[0];
        uint32_t limit = 0;
        while (limit < s->inst_deepest && kept + s->inst_at_depth[limit + 1] <= room)
            kept += s->inst_at_depth[++limit];
        if (limit >= s->inst_deepest || drop_below(s, (uint16_t)limit)) {
            /* one level left (or no memory): it keeps what it has */
            if (limit >= s->inst_deepest)
                s->inst_limit = s->inst_deepest;
            s->cut_off++;
            return TSCOPE__NONE;
        }
        if (t->tdepth > s->inst_limit || s->ninst >= s->cfg.instance_cap) {
            s->cut_off++;
            return TSCOPE__NONE;
        }
    }
    /* appended only: queries index it by id when they need to (query.c) */
    uint32_t idx = s->ninst++;
    s->inst[idx] = tscope__instance_of(s, t, state);
    s->inst_at_depth[t->tdepth]++;
    if (t->tdepth > s->inst_deepest)
        s->inst_deepest = t->tdepth;
    return idx;
}

struct tscope__instance tscope__instance_of(const struct tscope__store *s,
                                            const struct tscope__task *t, int state)
{
    uint64_t o = s->origin;
    return (struct tscope__instance){
        .id = t->id,
        .parent = t->parent_id,
        .create_ts = t->create_ts ? t->create_ts - o : 0,
        .begin_ts = t->begin_ts ? t->begin_ts - o : 0,
        .end_ts = t->end_ts ? t->end_ts - o : 0,
        .self = t->self,
        .running = t->running,
        .thread = t->thread,
        .yields = t->yields,
        .type = t->type,
        .prio = t->prio,
        .depth = t->depth,
        .flags = t->flags,
        .state = (uint8_t)state,
        .tdepth = t->tdepth,
        .below_n = tscope__add_sat32(0, t->below_n),
        .below = t->below,
    };
}

/* Adds a settled task to the statistics and releases its slot. */
void tscope__settle_finalize(struct tscope__store *s, uint32_t slot)
{
    struct tscope__task *t = &s->tasks[slot];
    if (tscope__store_grow_types(s, t->type))
        return;
    t = &s->tasks[slot];
    struct tscope__type_acc *ta = &s->types[t->type];
    int state;
    if (t->bits & TSCOPE__T_UNFINISHED ||
        ((t->bits & TSCOPE__T_BEGUN) && !(t->bits & (TSCOPE__T_ENDED | TSCOPE__T_CANCELLED)))) {
        uint64_t end = t->end_ts ? t->end_ts : s->completed_at;
        int begun = (t->bits & TSCOPE__T_BEGUN) != 0; /* else its begin was lost: no elapsed */
        tscope__settle_count_unfinished(
            s, begun ? t->thread : TSCOPE__NONE, t->type, t->self, t->running_top,
            begun && end > t->begin_ts ? end - t->begin_ts : 0, (t->bits & TSCOPE__T_NESTED) != 0);
        state = TSCOPE_TASK_UNFINISHED;
    } else if (t->bits & TSCOPE__T_CANCELLED) {
        ta->cancelled++;
        s->cancelled++;
        state = TSCOPE_TASK_CANCELLED;
    } else if (t->bits & TSCOPE__T_ENDED) {
        tscope__settle_count_done(s, t);
        state = TSCOPE_TASK_DONE;
    } else {
        s->never_ran++; /* created, never run (seen at finalize only) */
        state = TSCOPE_TASK_LIVE;
    }
    if ((t->bits & (TSCOPE__T_BEGUN | TSCOPE__T_SAW)) == TSCOPE__T_BEGUN)
        tscope__type_saw_thread(s, t->type, t->thread);
    t = &s->tasks[slot];
    if (t->bits & (TSCOPE__T_CREATED | TSCOPE__T_BEGUN)) {
        uint32_t idx = TSCOPE__NONE;
        if (tscope__inst_capped(s, t->tdepth) && !tscope__inst_filtered(s))
            s->cut_off++; /* the common case once the graph is full: no call */
        else
            idx = tscope__settle_record_instance(s, t, state);
        t = &s->tasks[slot];
        t->inst = idx;
        if (idx == TSCOPE__NONE) /* left out: counted in its nearest kept ancestor */
            tscope__settle_below(s, t->parent_slot, 1 + t->below_n, t->self + t->below);
    }
    tscope__task_unmap(s, slot);
    t = &s->tasks[slot];
    t->bits |= TSCOPE__T_FINALIZED;
    if (t->refs == 0) {
        tscope__task_free(s, slot);
    } else {
        t->held = 1;
        s->held++;
    }
}

/* Publishes what the threads run (store.h, running): one pass over the
 * replay stacks, under the sequence lock. */
static void publish_running(struct tscope__store *s)
{
    uint32_t seq = atomic_load_explicit(&s->running.seq, memory_order_relaxed);
    atomic_store_explicit(&s->running.seq, seq + 1, memory_order_relaxed);
    /* the data are stored with release (no fences: gcc's TSan has none), so
     * a reader that sees a new value also sees the odd sequence number */
    uint32_t busy = 0;
    for (uint32_t t = 0; t < s->nstacks; t++) {
        const struct tscope__tstack *st = &s->stacks[t];
        if (!st->n)
            continue;
        if (busy < TSCOPE__RUNNING_MAX)
            atomic_store_explicit(&s->running.type[busy], s->tasks[st->seg[st->n - 1].slot].type,
                                  memory_order_release);
        busy++;
    }
    atomic_store_explicit(&s->running.busy, busy, memory_order_release);
    atomic_store_explicit(&s->running.seq, seq + 2, memory_order_release);
}

void tscope__store_end_round(struct tscope__store *s)
{
    tscope__store_flush_leaves(s);
    uint64_t r = s->round;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < s->n_implicit; i++) {
        uint32_t slot = s->implicit_list[i];
        struct tscope__task *t = &s->tasks[slot];
        if (t->bits &
            (TSCOPE__T_FREE | TSCOPE__T_CREATED | TSCOPE__T_RESOLVED | TSCOPE__T_IMPLICIT))
            continue;
        if (t->seen_round < r) {
            t->bits |= TSCOPE__T_IMPLICIT;
            tscope__settle_try_resolve(s, slot);
        } else {
            s->implicit_list[keep++] = slot;
        }
    }
    s->n_implicit = keep;
    keep = 0;
    for (uint32_t i = 0; i < s->n_terminal; i++) {
        uint32_t slot = s->terminal_list[i];
        struct tscope__task *t = &s->tasks[slot];
        if (t->bits & (TSCOPE__T_FREE | TSCOPE__T_FINALIZED))
            continue;
        if (t->terminal_round < r && (t->bits & TSCOPE__T_RESOLVED))
            tscope__settle_finalize(s, slot);
        else
            s->terminal_list[keep++] = slot;
    }
    s->n_terminal = keep;
    s->round++;
    publish_running(s);
}

void tscope__store_complete(struct tscope__store *s, uint64_t end)
{
    if (s->completed_run)
        return;
    s->completed_run = 1;
    s->completed_at = end;
    tscope__store_flush_leaves(s);
    tscope__stack_close_all(s, end);
    uint32_t cap = s->ntasks_cap;
    /* Parents that never appeared (only named by a create) become roots. */
    for (uint32_t i = 0; i < cap; i++) {
        struct tscope__task *t = &s->tasks[i];
        if (!(t->bits &
              (TSCOPE__T_FREE | TSCOPE__T_CREATED | TSCOPE__T_BEGUN | TSCOPE__T_RESOLVED))) {
            t->node = 0;
            t->bits |= TSCOPE__T_RESOLVED;
            resolve_waiters(s, i);
        }
    }
    for (uint32_t i = 0; i < cap; i++) {
        struct tscope__task *t = &s->tasks[i];
        if (t->bits & (TSCOPE__T_FREE | TSCOPE__T_RESOLVED))
            continue;
        if (!(t->bits & TSCOPE__T_CREATED))
            t->bits |= TSCOPE__T_IMPLICIT;
        tscope__settle_try_resolve(s, i);
    }
    /* Whatever still waits sits on a parent cycle (bad input): attach to the root. */
    for (uint32_t i = 0; i < cap; i++) {
        struct tscope__task *t = &s->tasks[i];
        if (t->bits & (TSCOPE__T_FREE | TSCOPE__T_RESOLVED))
            continue;
        s->anomalies++;
        tscope__settle_release_parent(s, i);
        s->tasks[i].bits &= (uint16_t)~TSCOPE__T_WAITING;
        attach(s, i);
    }
    for (uint32_t i = 0; i < cap; i++) {
        struct tscope__task *t = &s->tasks[i];
        if (t->bits & (TSCOPE__T_FREE | TSCOPE__T_FINALIZED))
            continue;
        if (t->bits & (TSCOPE__T_CREATED | TSCOPE__T_BEGUN | TSCOPE__T_CANCELLED))
            tscope__settle_finalize(s, i);
        else if (!(t->bits & TSCOPE__T_FINALIZED)) {
            t->bits |= TSCOPE__T_FINALIZED; /* provisional parent: nothing to report */
            if (t->refs == 0)
                tscope__task_free(s, i);
        }
    }
    s->n_implicit = s->n_terminal = 0;
}
