/* replay.c - the task state machine: replays task events per thread.
 *
 * Each thread has a replay stack of running segments (a segment is one stay
 * of a task on a thread: begin/resume .. yield/end).  Time on a thread goes
 * to the self time of the top segment; a segment's length goes to its
 * task's running time.  So a task nested inside another on the same thread
 * is subtracted from the outer task's self time, a yielded task stops
 * accumulating, and a task resumed on another thread continues there.
 *
 * Because sums commute, segments may be closed in any cross-thread order;
 * the decisions that need the complete history (is the task finished?  who
 * is its parent?) are taken in settle.c, one round later.
 *
 * Task slots live in one growing array (indexes are stable, pointers are
 * not: re-fetch after anything that may allocate); free slots are chained
 * through next_wait.  Lock held for everything here.
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "store.h"
#include "taskscope/taskscope.h"

/* The id -> slot mapping: in the front entry of the id's low bits if that
 * is free, else in the hash map.  A slot with TSCOPE__T_MAPPED is in exactly
 * one of them; a front entry is TSCOPE__NONE or such a slot.  The front is
 * made when the first id is mapped (64 KiB: a process whose threads
 * aggregate their own tasks never maps one, and would pay its pages at
 * start); until then, and if it cannot be made, everything is in the map. */
static uint32_t *front_of(struct tscope__store *s, uint64_t id)
{
    return s->id_front ? &s->id_front[tscope__id_front_at(id)] : NULL;
}

uint32_t tscope__task_find(struct tscope__store *s, uint64_t id)
{
    uint32_t *front = front_of(s, id), slot;
    uint32_t f = front ? *front : TSCOPE__NONE;
    if (f != TSCOPE__NONE && s->tasks[f].id == id)
        return f;
    return s->task_map.count && tscope__u64map_get(&s->task_map, id, &slot) ? slot : TSCOPE__NONE;
}

/* Maps id to slot (id not mapped); 0, or -1 on memory exhaustion. */
static int map_put(struct tscope__store *s, uint64_t id, uint32_t slot)
{
    if (!s->id_front && (s->id_front = malloc(TSCOPE__ID_FRONT * sizeof *s->id_front)))
        memset(s->id_front, 0xFF, TSCOPE__ID_FRONT * sizeof *s->id_front); /* TSCOPE__NONE */
    uint32_t *f = front_of(s, id);
    if (f && *f == TSCOPE__NONE) {
        *f = slot;
        return 0;
    }
    return tscope__u64map_put(&s->task_map, id, slot) ? -1 : 0;
}

/* Removes the mapping of slot's id (the slot is the mapped one). */
static void map_del(struct tscope__store *s, uint32_t slot)
{
    uint32_t *f = front_of(s, s->tasks[slot].id);
    if (f && *f == slot)
        *f = TSCOPE__NONE;
    else
        tscope__u64map_del(&s->task_map, s->tasks[slot].id);
}

/* Takes a slot off the free list (growing the array if needed) and
 * initialises it for task id; TSCOPE__NONE on memory exhaustion.  The caller
 * maps the id. */
static uint32_t slot_alloc(struct tscope__store *s, uint64_t id)
{
    if (s->free_head == TSCOPE__NONE) {
        uint32_t old = s->ntasks_cap;
        if (tscope__grow(&s->tasks, &s->ntasks_cap, old ? 2 * (uint64_t)old - 1 : 1023,
                         sizeof *s->tasks))
            return TSCOPE__NONE;
        for (uint32_t i = s->ntasks_cap; i-- > old;) {
            s->tasks[i].bits = TSCOPE__T_FREE;
            s->tasks[i].next_wait = s->free_head;
            s->free_head = i;
        }
    }
    uint32_t slot = s->free_head;
    struct tscope__task *t = &s->tasks[slot];
    s->free_head = t->next_wait;
    /* field by field: gcc turns a 128-byte memset or compound literal into
     * rep stos, which costs ~30% of the consumer's time here */
    t->id = id;
    t->parent_id = 0;
    t->create_ts = t->queued_ts = t->begin_ts = t->end_ts = 0;
    t->self = t->running = t->running_top = 0;
    t->seen_round = UINT64_MAX;
    t->terminal_round = 0;
    t->parent_slot = TSCOPE__NONE;
    t->node = TSCOPE__NONE;
    t->refs = 0;
    t->waiters = TSCOPE__NONE;
    t->next_wait = TSCOPE__NONE;
    t->thread = 0;
    t->yields = t->resumes = t->open = 0;
    t->inst = TSCOPE__NONE;
    t->below_n = t->below = 0;
    t->tdepth = 0;
    t->held = 0;
    t->type = 0;
    t->prio = 0;
    t->depth = 0;
    t->flags = 0;
    t->step = 0;
    t->bits = 0;
    s->live++;
    return slot;
}

void tscope__task_unmap(struct tscope__store *s, uint32_t slot)
{
    struct tscope__task *t = &s->tasks[slot];
    if (t->bits & TSCOPE__T_MAPPED) {
        map_del(s, slot);
        t->bits &= (uint16_t)~TSCOPE__T_MAPPED;
    }
}

/* Frees the slot and drops its reference on its parent, freeing the parent
 * too when it was finalized and this was its last child (and so on up). */
void tscope__task_free(struct tscope__store *s, uint32_t slot)
{
    while (slot != TSCOPE__NONE) {
        tscope__task_unmap(s, slot);
        struct tscope__task *t = &s->tasks[slot];
        uint32_t p = t->parent_slot;
        t->parent_slot = TSCOPE__NONE;
        t->bits |= TSCOPE__T_FREE;
        t->next_wait = s->free_head;
        s->free_head = slot;
        s->live--;
        s->held -= t->held;
        t->held = 0;
        slot = TSCOPE__NONE;
        if (p != TSCOPE__NONE && --s->tasks[p].refs == 0 &&
            (s->tasks[p].bits & TSCOPE__T_FINALIZED))
            slot = p;
    }
}

/* The slot for id, adding a fresh one if unknown (one probe sequence).  A
 * slot that already saw the event bit `again` (CREATED for a create, BEGUN
 * for a begin) and whose task ended is replaced by a fresh one, so that a
 * reused id starts a new task (the old slot stays on the terminal list); an
 * ended slot without that bit is the same task seen out of order.  Returns
 * TSCOPE__NONE only on memory exhaustion (the caller counts an anomaly). */
static uint32_t task_get(struct tscope__store *s, uint64_t id, unsigned again)
{
    uint32_t old = tscope__task_find(s, id);
    if (old != TSCOPE__NONE) {
        struct tscope__task *o = &s->tasks[old];
        if (!((o->bits & again) && (o->bits & (TSCOPE__T_ENDED | TSCOPE__T_CANCELLED))))
            return old;
        tscope__task_unmap(s, old); /* a reused id: the old slot stays as it is */
    }
    uint32_t slot = slot_alloc(s, id);
    if (slot == TSCOPE__NONE)
        return TSCOPE__NONE;
    if (map_put(s, id, slot)) {
        tscope__task_free(s, slot);
        return TSCOPE__NONE;
    }
    s->tasks[slot].bits |= TSCOPE__T_MAPPED;
    return slot;
}

int tscope__store_grow_types(struct tscope__store *s, uint32_t type)
{
    return tscope__grow(&s->types, &s->ntypes, type, sizeof *s->types) ? TSCOPE_ENOMEM : 0;
}

void tscope__type_saw_thread(struct tscope__store *s, uint32_t type, uint32_t thread)
{
    if (tscope__store_grow_types(s, type))
        return;
    struct tscope__type_acc *ta = &s->types[type];
    uint32_t byte = thread / 8;
    if (tscope__grow(&ta->seen, &ta->seen_bytes, byte, 1))
        return;
    uint8_t bit = (uint8_t)(1u << (thread % 8));
    if (!(ta->seen[byte] & bit)) {
        ta->seen[byte] |= bit;
        ta->threads++;
    }
}

struct tscope__tstack *tscope__stack_of(struct tscope__store *s, uint32_t thread)
{
    if (tscope__grow(&s->stacks, &s->nstacks, thread, sizeof *s->stacks))
        return NULL;
    return &s->stacks[thread];
}

void tscope__stack_count(struct tscope__store *s, uint32_t thread, int grow, uint16_t type,
                         uint64_t calls, uint64_t self, uint64_t running, uint64_t elapsed)
{
    struct tscope__tstack *st = thread < s->nstacks ? &s->stacks[thread]
                                : grow              ? tscope__stack_of(s, thread)
                                                    : NULL;
    if (!st || tscope__grow(&st->types, &st->ntypes, type, sizeof *st->types))
        return;
    struct tscope__thread_type *e = &st->types[type];
    e->calls += calls;
    e->self += self;
    e->running += running;
    e->elapsed += elapsed;
}

static int stack_push(struct tscope__store *s, struct tscope__tstack *st, uint32_t slot,
                      uint64_t ts)
{
    uint16_t type = s->tasks[slot].type;
    if (tscope__grow(&st->seg, &st->cap, st->n, sizeof *st->seg) ||
        tscope__grow(&st->open, &st->nopen, type, sizeof *st->open))
        return TSCOPE_ENOMEM;
    if (st->n) {
        struct tscope__segment *top = &st->seg[st->n - 1];
        top->self_acc += ts - top->self_since;
        tscope__tl_self_on(&s->tl, top->type, (uint32_t)(st - s->stacks), top->self_since, ts);
    } else {
        st->busy_since = ts;
    }
    st->seg[st->n++] = (struct tscope__segment){slot, type, st->open[type]++ != 0, ts, ts, 0};
    s->tasks[slot].open++;
    return 0;
}

/* Index of slot's segment on the stack (searching from the top), or -1. */
static int stack_find(const struct tscope__tstack *st, uint32_t slot)
{
    for (uint32_t i = st->n; i-- > 0;)
        if (st->seg[i].slot == slot)
            return (int)i;
    return -1;
}

/* Closes segment i at ts: its times go to the task; the new top (if the
 * closed one was the top) starts accumulating self time again. */
static void stack_close(struct tscope__store *s, struct tscope__tstack *st, uint32_t i, uint64_t ts)
{
    struct tscope__segment g = st->seg[i];
    int was_top = i == st->n - 1;
    if (was_top) {
        g.self_acc += ts - g.self_since;
        tscope__tl_self_on(&s->tl, g.type, (uint32_t)(st - s->stacks), g.self_since, ts);
    }
    struct tscope__task *t = &s->tasks[g.slot];
    t->self += g.self_acc;
    t->running += ts - g.start;
    if (!g.nested)
        t->running_top += ts - g.start;
    t->open--;
    st->open[g.type]--;
    memmove(&st->seg[i], &st->seg[i + 1], (st->n - i - 1) * sizeof g);
    st->n--;
    if (!st->n)
        tscope__tl_busy(&s->tl, (uint32_t)(st - s->stacks), st->busy_since, ts);
    if (was_top && st->n)
        st->seg[st->n - 1].self_since = ts;
    else if (!was_top)
        s->anomalies++; /* closed below the top: improper nesting */
}

void tscope__stack_close_thread(struct tscope__store *s, uint32_t thread, uint64_t end)
{
    if (thread >= s->nstacks)
        return;
    struct tscope__tstack *st = &s->stacks[thread];
    while (st->n) {
        uint32_t slot = st->seg[st->n - 1].slot;
        stack_close(s, st, st->n - 1, end);
        s->tasks[slot].bits |= TSCOPE__T_UNFINISHED;
        if (!s->tasks[slot].end_ts)
            s->tasks[slot].end_ts = end;
    }
}

void tscope__stack_close_all(struct tscope__store *s, uint64_t end)
{
    for (uint32_t th = 0; th < s->nstacks; th++)
        tscope__stack_close_thread(s, th, end);
}

/* Slot of the task with this id on the thread's replay stack, or NONE. */
static uint32_t running_here(struct tscope__store *s, uint32_t thread, uint64_t id)
{
    if (thread >= s->nstacks)
        return TSCOPE__NONE;
    const struct tscope__tstack *st = &s->stacks[thread];
    for (uint32_t i = st->n; i-- > 0;)
        if (s->tasks[st->seg[i].slot].id == id)
            return st->seg[i].slot;
    return TSCOPE__NONE;
}

/* Sets the parent of an unresolved task, taking a reference on the parent's
 * slot (created provisionally if the parent was never seen).  The parent is
 * looked for first on the thread's stack: a task is normally created by the
 * task running there. */
static void set_parent(struct tscope__store *s, uint32_t thread, uint32_t slot, uint64_t parent_id)
{
    struct tscope__task *t = &s->tasks[slot];
    if (t->parent_slot != TSCOPE__NONE)
        tscope__settle_release_parent(s, slot);
    t = &s->tasks[slot];
    t->parent_id = parent_id;
    if (parent_id == 0)
        return;
    uint32_t p = running_here(s, thread, parent_id);
    if (p == TSCOPE__NONE)
        p = task_get(s, parent_id, 0);
    if (p == TSCOPE__NONE) {
        s->anomalies++;
        s->tasks[slot].parent_id = 0;
        return;
    }
    s->tasks[p].refs++;
    s->tasks[slot].parent_slot = p;
}

/* A begin applied before its create gave the task's open segments the type
 * of the begin (0, usually): they take the create's type, for the
 * recursion rule of the running totals.  Segments already closed keep what
 * they counted.  Rare (a create applied after its task began elsewhere). */
static void retag_segments(struct tscope__store *s, uint32_t slot, uint16_t type)
{
    for (uint32_t th = 0; th < s->nstacks; th++) {
        struct tscope__tstack *st = &s->stacks[th];
        for (uint32_t i = 0; i < st->n; i++) {
            struct tscope__segment *g = &st->seg[i];
            if (g->slot != slot || tscope__grow(&st->open, &st->nopen, type, sizeof *st->open))
                continue;
            st->open[g->type]--;
            g->type = type;
            g->nested = st->open[type]++ != 0;
        }
    }
}

static void on_create(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    uint32_t slot = task_get(s, r->id, TSCOPE__T_CREATED);
    if (slot == TSCOPE__NONE) {
        s->anomalies++;
        return;
    }
    struct tscope__task *t = &s->tasks[slot];
    s->created++;
    if (t->bits & (TSCOPE__T_CREATED | TSCOPE__T_RESOLVED)) {
        /* created twice, or the create came more than a round after the
         * begin: keep what was decided */
        s->anomalies++;
        return;
    }
    t->bits |= TSCOPE__T_CREATED;
    t->create_ts = r->ts;
    if (r->type && r->type != t->type && t->open)
        retag_segments(s, slot, r->type);
    t = &s->tasks[slot];
    t->type = r->type ? r->type : t->type;
    t->flags = r->flags;
    t->depth = r->depth;
    t->prio = r->prio;
    if (!tscope__store_grow_types(s, t->type))
        s->types[t->type].created++;
    set_parent(s, thread, slot, r->arg);
    tscope__settle_try_resolve(s, slot);
}

static void list_push(uint32_t **list, uint32_t *n, uint32_t *cap, uint32_t v)
{
    if (tscope__grow(list, cap, *n, sizeof **list))
        return; /* out of memory: the task is then settled at finalize */
    (*list)[(*n)++] = v;
}

void tscope__settle_check_terminal(struct tscope__store *s, uint32_t slot)
{
    struct tscope__task *t = &s->tasks[slot];
    if (!(t->bits & (TSCOPE__T_ENDED | TSCOPE__T_CANCELLED)) || t->open ||
        t->yields != t->resumes || (t->bits & TSCOPE__T_TERMINAL))
        return;
    t->bits |= TSCOPE__T_TERMINAL;
    t->terminal_round = s->round;
    list_push(&s->terminal_list, &s->n_terminal, &s->cap_terminal, slot);
}

static void on_begin(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    struct tscope__tstack *st = tscope__stack_of(s, thread);
    uint32_t slot = task_get(s, r->id, TSCOPE__T_BEGUN);
    if (!st || slot == TSCOPE__NONE) {
        s->anomalies++;
        return;
    }
    struct tscope__task *t = &s->tasks[slot];
    if (t->bits & TSCOPE__T_BEGUN) {
        s->anomalies++; /* begun twice: a resume was meant */
        return;
    }
    t->bits |= TSCOPE__T_BEGUN;
    if (!t->type)
        t->type = r->type;
    t->begin_ts = r->ts;
    t->thread = thread;
    t->seen_round = s->round;
    if (!(t->bits & TSCOPE__T_CREATED)) {
        /* Implicitly created unless a create turns up within a round: the
         * parent is the task running on this thread. */
        uint64_t nest = st->n ? s->tasks[st->seg[st->n - 1].slot].id : 0;
        set_parent(s, thread, slot, nest);
        list_push(&s->implicit_list, &s->n_implicit, &s->cap_implicit, slot);
    }
    if (stack_push(s, st, slot, r->ts)) {
        s->anomalies++;
        return;
    }
    if (s->tasks[slot].type) {
        tscope__type_saw_thread(s, s->tasks[slot].type, thread);
        s->tasks[slot].bits |= TSCOPE__T_SAW;
    }
}

/* A START task never enters the task table while it runs on one thread: it
 * lives on the thread's stack, is resolved at once (its parent is the task
 * below it) and settled at its end.  Only a yield maps it, so that a resume
 * on another thread can find it. */
static void on_start(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    struct tscope__tstack *st = tscope__stack_of(s, thread);
    uint32_t slot = st ? slot_alloc(s, r->id) : TSCOPE__NONE;
    if (slot == TSCOPE__NONE) {
        s->anomalies++;
        return;
    }
    struct tscope__task *t = &s->tasks[slot];
    t->bits = TSCOPE__T_CREATED | TSCOPE__T_BEGUN | TSCOPE__T_START;
    t->type = r->type;
    t->create_ts = t->begin_ts = r->ts;
    t->thread = thread;
    t->seen_round = s->round;
    s->created++;
    if (!tscope__store_grow_types(s, r->type))
        s->types[r->type].created++;
    if (st->n) {
        uint32_t p = st->seg[st->n - 1].slot;
        s->tasks[p].refs++;
        s->tasks[slot].parent_slot = p;
        s->tasks[slot].parent_id = s->tasks[p].id;
    }
    tscope__settle_try_resolve(s, slot);
    if (stack_push(s, st, slot, r->ts)) {
        s->anomalies++;
        return;
    }
    if (r->type) {
        tscope__type_saw_thread(s, r->type, thread);
        s->tasks[slot].bits |= TSCOPE__T_SAW;
    }
}

static void on_resume(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    struct tscope__tstack *st = tscope__stack_of(s, thread);
    uint32_t slot = task_get(s, r->id, 0);
    if (!st || slot == TSCOPE__NONE || stack_push(s, st, slot, r->ts)) {
        s->anomalies++;
        return;
    }
    struct tscope__task *t = &s->tasks[slot];
    t->resumes++;
    if (thread != t->thread)
        t->bits |= TSCOPE__T_MOVED;
    if (t->type)
        tscope__type_saw_thread(s, t->type, thread);
    tscope__settle_check_terminal(s, slot);
}

/* Closes the task's segment on this thread; returns 0, or -1 (anomaly) if
 * the task is not running here. */
static int close_here(struct tscope__store *s, uint32_t thread, uint32_t slot, uint64_t ts)
{
    if (slot == TSCOPE__NONE || thread >= s->nstacks)
        return -1;
    struct tscope__tstack *st = &s->stacks[thread];
    int i = stack_find(st, slot);
    if (i < 0)
        return -1;
    stack_close(s, st, (uint32_t)i, ts);
    return 0;
}

/* The slot of task id as it ends or yields on `thread`: normally the top of
 * the thread's stack (no lookup), else the task table. */
static uint32_t closing_slot(struct tscope__store *s, uint32_t thread, uint64_t id)
{
    if (thread < s->nstacks) {
        const struct tscope__tstack *st = &s->stacks[thread];
        if (st->n && s->tasks[st->seg[st->n - 1].slot].id == id)
            return st->seg[st->n - 1].slot;
    }
    uint32_t slot = tscope__task_find(s, id);
    return slot != TSCOPE__NONE ? slot : running_here(s, thread, id); /* unmapped START task */
}

static void on_end(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    uint32_t slot = closing_slot(s, thread, r->id);
    if (close_here(s, thread, slot, r->ts)) {
        s->anomalies++;
        if (slot == TSCOPE__NONE)
            return;
    }
    struct tscope__task *t = &s->tasks[slot];
    t->bits |= TSCOPE__T_ENDED;
    t->end_ts = r->ts;
    if ((t->bits & (TSCOPE__T_CREATED | TSCOPE__T_RESOLVED | TSCOPE__T_MOVED)) ==
            (TSCOPE__T_CREATED | TSCOPE__T_RESOLVED) &&
        t->yields == t->resumes && !t->open && t->thread == thread) {
        /* Created (so its parent is known) and run on this thread only,
         * also across yields (a taskwait): every record of its life, and
         * every create of a child it made, was in this thread's ring before
         * this end, so no event of another thread can change its numbers
         * any more.  The others wait a round (store.h). */
        tscope__settle_finalize(s, slot);
        return;
    }
    tscope__settle_check_terminal(s, slot);
}

static void on_yield(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    uint32_t slot = closing_slot(s, thread, r->id);
    if (close_here(s, thread, slot, r->ts)) {
        s->anomalies++;
        return;
    }
    struct tscope__task *t = &s->tasks[slot];
    t->yields++;
    if (!(t->bits & TSCOPE__T_MAPPED)) { /* a reused id: its older task gives way */
        uint32_t other = tscope__task_find(s, t->id);
        if (other != TSCOPE__NONE)
            tscope__task_unmap(s, other);
    }
    if (!(s->tasks[slot].bits & TSCOPE__T_MAPPED) && map_put(s, s->tasks[slot].id, slot) == 0)
        s->tasks[slot].bits |= TSCOPE__T_MAPPED; /* a START task: resume must find it */
    tscope__settle_check_terminal(s, slot);
}

static void on_cancel(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    uint32_t slot = task_get(s, r->id, 0);
    if (slot == TSCOPE__NONE) {
        s->anomalies++;
        return;
    }
    close_here(s, thread, slot, r->ts); /* running here: cancelling ends it */
    struct tscope__task *t = &s->tasks[slot];
    t->bits |= TSCOPE__T_CANCELLED;
    if (!t->end_ts)
        t->end_ts = r->ts;
    tscope__settle_check_terminal(s, slot);
}

static void on_queued(struct tscope__store *s, const struct tscope__rec *r)
{
    /* Only for a known task: a queued applied after its task was settled
     * must not leave a slot behind (its time is then missing from the
     * instance record, nothing else). */
    uint32_t slot = tscope__task_find(s, r->id);
    if (slot == TSCOPE__NONE)
        return;
    if (!s->tasks[slot].queued_ts)
        s->tasks[slot].queued_ts = r->ts;
}

void tscope__replay_apply(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r)
{
    switch (r->kind) {
    case TSCOPE__REC_CREATE:
        on_create(s, thread, r);
        break;
    case TSCOPE__REC_QUEUED:
        on_queued(s, r);
        break;
    case TSCOPE__REC_BEGIN:
        on_begin(s, thread, r);
        break;
    case TSCOPE__REC_START:
        on_start(s, thread, r);
        break;
    case TSCOPE__REC_END:
        on_end(s, thread, r);
        break;
    case TSCOPE__REC_YIELD:
        on_yield(s, thread, r);
        break;
    case TSCOPE__REC_RESUME:
        on_resume(s, thread, r);
        break;
    case TSCOPE__REC_CANCEL:
        on_cancel(s, thread, r);
        break;
    default:
        s->anomalies++;
    }
}
