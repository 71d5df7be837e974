/* handles.c - the task events on handles (taskscope.h, tscope_task_*_h).
 *
 * With the profiler on, each event goes to the calling thread's shard
 * (shard.c): the thread aggregates the task itself, and its ring gets the
 * event only as a shadow record (record.h) when the trace, a tool or a
 * triggered policy wants that kind.  With the profiler off (the tools
 * alone) a handle is a record that carries the task's id and type, and
 * each event is the id-based event of events.c.  The choice is made once per run
 * (tscope_init), so a handle never changes path while it lives.  The task
 * debugger's gate sees each begin (and, while armed, each create) with its
 * type on both paths.  A create or start of a type the filter file
 * excludes is one test of that type's byte and a count (filtered()): it
 * gives no handle, so the task's other events cost the NULL test.
 */
#include "core/clock.h"
#include "core/core.h"
#include "core/filter.h"
#include "core/hooks.h"
#include "core/thread_local.h"
#include "producer.h"
#include "shard.h"
#include "taskscope/taskscope.h"

/* What an event returns while measurement is off (taskscope.h). */
static inline int off_code(void)
{
    return __atomic_load_n(&tscope__g.off_code, __ATOMIC_RELAXED);
}

/* 1 if the task's events go through the rings (the consumer mode). */
static inline int ring_task(const tscope_task_t *task)
{
    return __atomic_load_n(&task->state, __ATOMIC_RELAXED) & TSCOPE__TR_RING;
}

/* A task of a type the filter file excludes (core/filter.h): no handle,
 * nothing recorded, so its time stays with the task it runs inside; counted
 * in the calling thread's shard.  NULL. */
static __attribute__((noinline)) tscope_task_t *filtered(void)
{
    struct tscope__thread *th = enter();
    if (th) {
        tscope__shard_filtered(th->index);
        leave(th);
    }
    return NULL;
}

static inline int gate_armed(void)
{
    return atomic_load_explicit(&tscope__gate_armed, memory_order_relaxed);
}

tscope_task_t *tscope_task_create_h(uint64_t id, tscope_task_t *parent, tscope_type_t type,
                                    unsigned flags, unsigned depth, int priority)
{
    if (id == 0 || type > TSCOPE__MAX_IDS || (flags & ~TSCOPE_TASK_FLAGS_ALL))
        return NULL;
    if (__builtin_expect(__atomic_load_n(&tscope__type_excluded[type], __ATOMIC_RELAXED), 0))
        return filtered();
    int16_t prio = priority > INT16_MAX   ? INT16_MAX
                   : priority < INT16_MIN ? INT16_MIN
                                          : (int16_t)priority;
    uint16_t d = depth > 0xFFFFu ? 0xFFFF : (uint16_t)depth;
    if (tscope__g.cfg.aggregate && __builtin_expect(gate_armed(), 0) && tscope__hooks.gate_create)
        tscope__hooks.gate_create(id, type);
    struct tscope__thread *th = enter();
    if (th) {
        uint64_t now = tscope__clock_now();
        tscope_task_t *h = tscope__shard_create(th->index, now, id, parent, (uint16_t)type,
                                                (uint8_t)flags, d, prio);
        if (h)
            shadow(th, TSCOPE__REC_CREATE, now, id, tscope__shard_live(parent) ? parent->id : 0,
                   (uint16_t)type, prio, d, (uint8_t)flags);
        leave(th);
        return h;
    }
    if (atomic_load_explicit(&tscope__g.run, memory_order_relaxed) == TSCOPE__RUN_OFF)
        return NULL;
    struct tscope__thread *t = tscope__thread_self();
    if (!t)
        return NULL;
    /* a create the full ring dropped still gets its handle: the begin then
     * creates the task implicitly, as with ids */
    int rc = tscope_task_create(id, tscope__shard_live(parent) ? parent->id : 0, type, flags, depth,
                                priority);
    if (rc && rc != TSCOPE_EDROPPED)
        return NULL;
    return tscope__shard_ring_record(t->index, id, (uint16_t)type);
}

tscope_task_t *tscope_task_start_h(uint64_t id, tscope_type_t type)
{
    if (id == 0 || type > TSCOPE__MAX_IDS)
        return NULL;
    if (__builtin_expect(__atomic_load_n(&tscope__type_excluded[type], __ATOMIC_RELAXED), 0))
        return filtered();
    if (tscope__g.cfg.aggregate && __builtin_expect(gate_armed(), 0) && tscope__hooks.gate)
        tscope__hooks.gate(id, type); /* may hold the thread: outside the event */
    struct tscope__thread *th = enter();
    if (th) {
        uint64_t now = tscope__clock_now();
        tscope_task_t *h = tscope__shard_start(th->index, now, id, (uint16_t)type);
        if (h)
            shadow(th, TSCOPE__REC_START, now, id, 0, (uint16_t)type, 0, 0, 0);
        leave(th);
        return h;
    }
    if (atomic_load_explicit(&tscope__g.run, memory_order_relaxed) == TSCOPE__RUN_OFF)
        return NULL;
    struct tscope__thread *t = tscope__thread_self();
    int rc = t ? tscope_task_start(id, type) : TSCOPE_ELIMIT;
    if (rc && rc != TSCOPE_EDROPPED)
        return NULL;
    return tscope__shard_ring_record(t->index, id, (uint16_t)type);
}

int tscope_task_queued_h(tscope_task_t *task)
{
    if (!tscope__shard_live(task)) /* NULL, ended, or of an earlier tscope_init */
        return TSCOPE_EINVAL;
    if (ring_task(task))
        return tscope_task_queued(task->id);
    struct tscope__thread *th = enter();
    if (!th)
        return off_code();
    tscope__shard_queued(th->index); /* counted as an event, as the replay does */
    shadow(th, TSCOPE__REC_QUEUED, tscope__clock_now(), task->id, 0, 0, 0, 0, 0);
    leave(th);
    return 0;
}

/* Begins task on the calling thread; below (NULL: none), a task running
 * here, is switched out for it (tscope_task_switched_h) in the same event. */
static inline int begin(tscope_task_t *task, tscope_task_t *below)
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    if (ring_task(task))
        return tscope_task_begin(task->id, task->type);
    if (__builtin_expect(gate_armed(), 0) && tscope__hooks.gate)
        tscope__hooks.gate(task->id, task->type); /* may hold the thread: outside the event */
    struct tscope__thread *th = enter();
    if (!th)
        return off_code();
    if (below && tscope__shard_live(below)) /* first: below needs no register across the begin */
        tscope__shard_switched(below);
    uint64_t now = tscope__clock_now();
    int rc = tscope__shard_begin(th->index, now, task);
    if (rc == 0)
        shadow(th, TSCOPE__REC_BEGIN, now, task->id, 0, task->type, 0, 0, 0);
    leave(th);
    return rc;
}

int tscope_task_begin_h(tscope_task_t *task)
{
    return begin(task, NULL);
}

int tscope_task_begin_nested_h(tscope_task_t *task, tscope_task_t *below)
{
    return begin(task, below);
}

/* An event of kind `kind` on a handle's task: `ring` is the id-based event
 * (the record is given back to the pool after it when `release`: end and
 * cancel), `shard` the thread mode's. */
static int task_event(tscope_task_t *task, uint8_t kind, int (*ring)(uint64_t),
                      int (*shard)(uint32_t, uint64_t, struct tscope_task *), int release)
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    if (ring_task(task)) {
        int rc = ring(task->id);
        struct tscope__thread *t = release ? tscope__thread_self() : NULL;
        if (t)
            tscope__shard_release(t->index, task);
        return rc;
    }
    struct tscope__thread *th = enter();
    if (!th)
        return off_code();
    uint64_t now = tscope__clock_now();
    uint64_t id = task->id; /* an end may give the record back */
    int rc = shard(th->index, now, task);
    if (rc == 0)
        shadow(th, kind, now, id, 0, 0, 0, 0, 0);
    leave(th);
    return rc;
}

int tscope_task_end_h(tscope_task_t *task)
{
    return task_event(task, TSCOPE__REC_END, tscope_task_end, tscope__shard_end, 1);
}

int tscope_task_cancel_h(tscope_task_t *task)
{
    return task_event(task, TSCOPE__REC_CANCEL, tscope_task_cancel, tscope__shard_cancel, 1);
}

int tscope_task_yield_h(tscope_task_t *task)
{
    return task_event(task, TSCOPE__REC_YIELD, tscope_task_yield, tscope__shard_yield, 0);
}

int tscope_task_resume_h(tscope_task_t *task)
{
    return task_event(task, TSCOPE__REC_RESUME, tscope_task_resume, tscope__shard_resume, 0);
}

int tscope_task_switched_h(tscope_task_t *task)
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    if (ring_task(task))
        return 0; /* the tools alone: no profile counts it */
    struct tscope__thread *th = enter();
    if (!th)
        return off_code();
    tscope__shard_switched(task);
    leave(th);
    return 0;
}

uint64_t tscope_task_handle_id(const tscope_task_t *task)
{
    return tscope__shard_live(task) ? task->id : 0;
}

tscope_type_t tscope_task_handle_type(const tscope_task_t *task)
{
    return tscope__shard_live(task) ? task->type : 0;
}
