/* ids.c - the id-based task events (taskscope.h: tscope_task_create,
 * _begin, _start, _end, _yield, _resume, _cancel, _queued) on a thread that
 * aggregates its own tasks: each is the event of the task's record
 * (shard.c), found by its id.
 *
 * A task made by tscope_task_start lives on its thread's stack only: its
 * end (or yield) finds it at the top, or further down, of the stack with no
 * shared lookup.  A task made by tscope_task_create, or begun without a
 * create (implicitly created then, its parent the task running on the
 * thread, as the consumer's replay does), and a started task that yields
 * (a resume elsewhere must find it), are in the id map (idmap.c) until they
 * end or are cancelled.  An event the map cannot place (an end of an id
 * never begun, a resume of one never yielded) is counted as an anomaly and
 * as an event, as the replay counts it.
 *
 * The events come in the order the program makes them (a create returns
 * before another thread can begin the task), so nothing waits for a round.
 */
#include "idmap.h"
#include "shard.h"
#include "shard_int.h"
#include "taskscope/taskscope.h"

/* The record of task id running on shard s (top first), or NULL. */
static struct tscope_task *running_here(const struct tscope__shard *s, uint64_t id)
{
    for (uint32_t i = s->n; i-- > 0;)
        if (s->seg[i].t->id == id)
            return s->seg[i].t;
    return NULL;
}

/* The record of task id seen from shard s: on its stack, else mapped. */
static struct tscope_task *find(const struct tscope__shard *s, uint64_t id)
{
    struct tscope_task *t = running_here(s, id);
    return t ? t : tscope__idmap_get(id);
}

/* Maps t under its id (an id mapped already is an anomaly: the first keeps it). */
static void map(struct tscope__shard *s, struct tscope_task *t)
{
    if (tscope__idmap_put(t->id, t) == 0)
        ST(t->state, (uint16_t)(LD(t->state) | TSCOPE__TR_MAPPED));
    else
        count_total(s, &s->totals.anomalies);
}

static void unmap(struct tscope_task *t)
{
    if (LD(t->state) & TSCOPE__TR_MAPPED) {
        tscope__idmap_del(t->id, t);
        ST(t->state, (uint16_t)(LD(t->state) & ~TSCOPE__TR_MAPPED));
    }
}

/* An event on no record: counted, as the replay counts it. */
static int unplaced(struct tscope__shard *s)
{
    count_event(s);
    count_total(s, &s->totals.anomalies);
    return 0;
}

uint16_t tscope__ids_type(uint32_t thread, uint64_t id)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    struct tscope_task *t = s && id ? find(s, id) : NULL;
    return t && tscope__shard_live(t) ? t->type : 0;
}

int tscope__ids_event(uint32_t thread, uint64_t ts, const struct tscope__rec *r)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s)
        return 1;
    struct tscope_task *t;
    switch (r->kind) {
    case TSCOPE__REC_START:
        tscope__shard_start(thread, ts, r->id, r->type); /* counts a failure itself */
        return 0;
    case TSCOPE__REC_CREATE:
        if (tscope__idmap_get(r->id))
            return unplaced(s); /* created twice: the first stays */
        t = tscope__shard_create(thread, ts, r->id, r->arg ? find(s, r->arg) : NULL, r->type,
                                 r->flags, r->depth, r->prio);
        if (t)
            map(s, t);
        return 0;
    case TSCOPE__REC_BEGIN:
        t = tscope__idmap_get(r->id);
        if (!t) { /* created implicitly: its parent is the task running here */
            t = tscope__shard_create(thread, ts, r->id, s->n ? s->seg[s->n - 1].t : NULL, r->type,
                                     0, 0, 0);
            if (!t)
                return 0;
            map(s, t);
            ST(s->totals.events, LD(s->totals.events) - 1); /* one event, not two */
        }
        tscope__shard_begin(thread, ts, t);
        return 0;
    case TSCOPE__REC_END:
    case TSCOPE__REC_CANCEL:
        t = s->n && s->seg[s->n - 1].t->id == r->id ? s->seg[s->n - 1].t : find(s, r->id);
        if (!t)
            return unplaced(s);
        unmap(t); /* before: the end gives the record back */
        if (r->kind == TSCOPE__REC_END)
            tscope__shard_end(thread, ts, t);
        else
            tscope__shard_cancel(thread, ts, t);
        return 0;
    case TSCOPE__REC_YIELD:
        t = s->n && s->seg[s->n - 1].t->id == r->id ? s->seg[s->n - 1].t : find(s, r->id);
        if (!t)
            return unplaced(s);
        if (!(LD(t->state) & TSCOPE__TR_MAPPED))
            map(s, t); /* a started task: its resume may come elsewhere */
        tscope__shard_yield(thread, ts, t);
        return 0;
    case TSCOPE__REC_RESUME:
        t = tscope__idmap_get(r->id);
        if (!t)
            return unplaced(s);
        tscope__shard_resume(thread, ts, t);
        return 0;
    case TSCOPE__REC_QUEUED:
        tscope__shard_queued(thread); /* an event, whether known or not */
        return 0;
    default:
        return 1;
    }
}
