/* handles.c - the task events on handles (taskscope.h, tscope_task_*_h).
 *
 * With TASKSCOPE_AGGREGATE=thread and the ring path on, each event goes to
 * the calling thread's shard (shard.c): the thread aggregates the task
 * itself and nothing enters its ring.  Otherwise a handle is a record that
 * carries the task's id and type, and each event is the id-based event of
 * events.c.  The choice is made once per run (tscope_init), so a handle
 * never changes path while it lives.  The task debugger's gate sees each
 * begin (and, while armed, each create) with its type on both paths.
 */
#include "core/clock.h"
#include "core/core.h"
#include "core/hooks.h"
#include "core/thread_local.h"
#include "shard.h"
#include "taskscope/taskscope.h"

/* The calling thread's index when handle events go to the shards, else
 * UINT32_MAX (the ring path, or measurement off). */
static inline uint32_t shard_thread(void)
{
    int run = atomic_load_explicit(&tscope__g.run, memory_order_relaxed);
    if (!(run & 1) || tscope__g.cfg.aggregate != TSCOPE__AGG_THREAD)
        return UINT32_MAX;
    struct tscope__thread *t = tscope__thread_self();
    return t ? t->index : UINT32_MAX;
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
    int16_t prio = priority > INT16_MAX   ? INT16_MAX
                   : priority < INT16_MIN ? INT16_MIN
                                          : (int16_t)priority;
    uint16_t d = depth > 0xFFFFu ? 0xFFFF : (uint16_t)depth;
    uint32_t th = shard_thread();
    if (th != UINT32_MAX) {
        if (__builtin_expect(gate_armed(), 0) && tscope__hooks.gate_create)
            tscope__hooks.gate_create(id, type);
        return tscope__shard_create(th, tscope__clock_now(), id, parent, (uint16_t)type,
                                    (uint8_t)flags, d, prio);
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
    uint32_t th = shard_thread();
    if (th != UINT32_MAX) {
        if (__builtin_expect(gate_armed(), 0) && tscope__hooks.gate)
            tscope__hooks.gate(id, type);
        return tscope__shard_start(th, tscope__clock_now(), id, (uint16_t)type);
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
    return task->state & TSCOPE__TR_RING ? tscope_task_queued(task->id) : 0;
}

int tscope_task_begin_h(tscope_task_t *task)
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    if (task->state & TSCOPE__TR_RING)
        return tscope_task_begin(task->id, task->type);
    uint32_t th = shard_thread();
    if (th == UINT32_MAX)
        return tscope__g.off_code;
    if (__builtin_expect(gate_armed(), 0) && tscope__hooks.gate)
        tscope__hooks.gate(task->id, task->type);
    return tscope__shard_begin(th, tscope__clock_now(), task);
}

/* Ends or cancels a handle's task; `ring` is the id-based event. */
static int finish(tscope_task_t *task, int (*ring)(uint64_t),
                  int (*shard)(uint32_t, uint64_t, struct tscope_task *))
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    struct tscope__thread *t = tscope__thread_self();
    if (task->state & TSCOPE__TR_RING) {
        int rc = ring(task->id);
        if (t)
            tscope__shard_release(t->index, task);
        return rc;
    }
    uint32_t th = shard_thread();
    if (th == UINT32_MAX)
        return tscope__g.off_code;
    return shard(th, tscope__clock_now(), task);
}

int tscope_task_end_h(tscope_task_t *task)
{
    return finish(task, tscope_task_end, tscope__shard_end);
}

int tscope_task_cancel_h(tscope_task_t *task)
{
    return finish(task, tscope_task_cancel, tscope__shard_cancel);
}

int tscope_task_yield_h(tscope_task_t *task)
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    if (task->state & TSCOPE__TR_RING)
        return tscope_task_yield(task->id);
    uint32_t th = shard_thread();
    return th == UINT32_MAX ? tscope__g.off_code
                            : tscope__shard_yield(th, tscope__clock_now(), task);
}

int tscope_task_resume_h(tscope_task_t *task)
{
    if (!tscope__shard_live(task))
        return TSCOPE_EINVAL;
    if (task->state & TSCOPE__TR_RING)
        return tscope_task_resume(task->id);
    uint32_t th = shard_thread();
    return th == UINT32_MAX ? tscope__g.off_code
                            : tscope__shard_resume(th, tscope__clock_now(), task);
}

uint64_t tscope_task_handle_id(const tscope_task_t *task)
{
    return tscope__shard_live(task) ? task->id : 0;
}
