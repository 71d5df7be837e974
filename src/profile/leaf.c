/* leaf.c - the consumer's fast path for leaf tasks.
 *
 * A START record immediately followed in the same ring by the END of the
 * same task is a leaf: a task that ran on one thread, created nothing that
 * ran inside it, and never yielded - the commonest pattern (timers, loop
 * bodies, the tasks at the bottom of a recursion).  Its numbers are final at
 * once: parent = the task on top of the thread's stack, self time =
 * running time = elapsed time = end - start.  No task slot is used.
 *
 * Consecutive leaves of one type below the same parent node are added up in
 * a batch (exact integer sums, as acc.h) and folded into the type, node and
 * edge statistics in one step.  The batch is flushed before any other record
 * is applied and before the store lock is released (consumer.c), so no
 * query or event ever sees it half applied.  Lock held for everything here.
 */
#include "store.h"
#include "taskscope/taskscope.h"

void tscope__store_flush_leaves(struct tscope__store *s)
{
    struct tscope__leaf_batch *b = &s->leaves;
    uint64_t n = b->acc.n;
    if (!n)
        return;
    struct tscope__type_acc *ta = &s->types[b->type];
    ta->created += n;
    ta->calls += n;
    /* a leaf's self, running and elapsed times are all end - start */
    tscope__acc_merge(&ta->self, &b->acc);
    tscope__acc_merge(&ta->running, &b->acc);
    tscope__acc_merge(&ta->elapsed, &b->acc);
    if (!b->inside)
        ta->running_total += b->acc.sum;
    if (!b->nested)
        ta->elapsed_total += b->acc.sum;
    tscope__stack_count(s, b->thread, 0, b->type, n, b->acc.sum, b->inside ? 0 : b->acc.sum,
                        b->nested ? 0 : b->acc.sum);
    struct tscope__node *node = &s->nodes[b->node];
    node->calls += n;
    node->self += b->acc.sum;
    if (!(b->step & TSCOPE__STEP_FOLDED) || !b->inside)
        node->running += b->acc.sum;
    if (!(b->step & TSCOPE__STEP_FOLDED))
        node->elapsed += b->acc.sum;
    if (b->edge != TSCOPE__NONE)
        s->edges[b->edge].count += n;
    if (b->tl_bin != UINT32_MAX) {
        struct tscope__timeline *tl = &s->tl;
        tscope__tl_add_at(tl, &tl->type, &tl->ntype, b->type, b->tl_bin, b->acc.sum);
        if (tscope__tl_waits(tl, b->type)) /* a waiting leaf: the thread waited */
            tscope__tl_add_at(tl, &tl->wait, &tl->nwait, b->thread, b->tl_bin, b->acc.sum);
        if (b->tl_top)
            tscope__tl_add_at(tl, &tl->thread, &tl->nthread, b->thread, b->tl_bin, b->acc.sum);
        else if (b->tl_gap) {
            tscope__tl_add_at(tl, &tl->type, &tl->ntype, b->tl_ptype, b->tl_bin, b->tl_gap);
            if (tscope__tl_waits(tl, b->tl_ptype))
                tscope__tl_add_at(tl, &tl->wait, &tl->nwait, b->thread, b->tl_bin, b->tl_gap);
        }
    }
    s->created += n;
    s->completed += n;
    tscope__type_saw_thread(s, b->type, b->thread);
    b->acc = (struct tscope__acc){0};
}

int tscope__store_apply_leaf(struct tscope__store *s, uint32_t thread,
                             const struct tscope__rec *start, const struct tscope__rec *end)
{
    struct tscope__tstack *st = tscope__stack_of(s, thread);
    if (!st || tscope__store_grow_types(s, start->type))
        return -1;
    uint32_t pnode = 0, pslot = TSCOPE__NONE;
    uint16_t ptype = TSCOPE__ROOT_TYPE;
    /* the timeline: the leaf, and the parent's time since it last was the
     * top, in one bin? then they go to the batch's sums */
    struct tscope__timeline *tl = &s->tl;
    uint64_t from = st->n ? st->seg[st->n - 1].self_since : start->ts;
    uint64_t bin = (end->ts - 1 - tl->origin) >> tl->shift;
    int one_bin = from >= tl->origin && end->ts > from && bin < TSCOPE__TL_BINS &&
                  ((from - tl->origin) >> tl->shift) == bin;
    if (st->n) {
        struct tscope__segment *top = &st->seg[st->n - 1];
        const struct tscope__task *p = &s->tasks[top->slot];
        if (!(p->bits & TSCOPE__T_RESOLVED))
            return -1; /* the parent's place in the tree is not known yet */
        pslot = top->slot;
        pnode = p->node;
        if (pnode != 0)
            ptype = p->type;
        /* what push + close would do to the parent's self time */
        top->self_acc += start->ts - top->self_since;
    }
    struct tscope__leaf_batch *b = &s->leaves;
    if (b->acc.n && (b->thread != thread || b->pnode != pnode || b->type != start->type ||
                     b->pslot != pslot || b->tl_bin != (one_bin ? bin : UINT32_MAX)))
        tscope__store_flush_leaves(s); /* before an add below may widen the bins */
    if (!one_bin) {
        if (st->n)
            tscope__tl_self_on(tl, st->seg[st->n - 1].type, thread, from, start->ts);
        else
            tscope__tl_busy(tl, thread, start->ts, end->ts);
        tscope__tl_self_on(tl, start->type, thread, start->ts, end->ts);
    }
    tscope__tl_point(tl, start->id, end->ts, end->ts - start->ts, start->type);
    if (st->n)
        st->seg[st->n - 1].self_since = end->ts;
    if (!b->acc.n) {
        b->tl_bin = one_bin ? (uint32_t)bin : UINT32_MAX;
        b->tl_top = !st->n;
        b->tl_ptype = st->n ? st->seg[st->n - 1].type : 0;
        b->tl_gap = 0;
        b->thread = thread;
        b->pnode = pnode;
        b->type = start->type;
        b->node = tscope__settle_node(s, pnode, ptype, start->type, &b->edge, &b->step);
        b->inside = start->type < st->nopen && st->open[start->type] != 0;
        b->pslot = pslot;
        b->nested = (uint8_t)tscope__settle_nested(s, pslot, start->type);
    }
    uint64_t d = end->ts - start->ts;
    tscope__acc_add(&b->acc, d);
    if (one_bin && st->n)
        b->tl_gap += start->ts - from;
    s->events += 2;
    st->events += 2;
    uint16_t tdepth = pslot == TSCOPE__NONE             ? 0
                      : s->tasks[pslot].tdepth < 0xFFFE ? (uint16_t)(s->tasks[pslot].tdepth + 1)
                                                        : 0xFFFE;
    uint32_t kept = TSCOPE__NONE;
    if (tscope__inst_capped(s, tdepth) && !tscope__inst_filtered(s)) {
        s->cut_off++; /* the common case once the graph is full: no record */
    } else {
        struct tscope__task t = {.id = start->id,
                                 .parent_id = pslot == TSCOPE__NONE ? 0 : s->tasks[pslot].id,
                                 .create_ts = start->ts,
                                 .begin_ts = start->ts,
                                 .end_ts = end->ts,
                                 .self = d,
                                 .running = d,
                                 .thread = thread,
                                 .type = start->type,
                                 .tdepth = tdepth};
        kept = tscope__settle_record_instance(s, &t, TSCOPE_TASK_DONE);
    }
    if (kept == TSCOPE__NONE && pslot != TSCOPE__NONE) { /* counted in its parent, running here */
        s->tasks[pslot].below_n++;
        s->tasks[pslot].below += d;
    }
    return 0;
}
