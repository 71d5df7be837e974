/* producer.h - entering an event on the calling thread's shard, and the
 * shadow record of an event a shard took (record.h): shared by the task
 * events on handles (handles.c) and the other events a thread aggregates
 * itself (shard_events.c).  Private to src/profile.
 */
#ifndef TSCOPE_PROFILE_PRODUCER_H
#define TSCOPE_PROFILE_PRODUCER_H

#include "core/core.h"
#include "core/hooks.h"
#include "core/thread_local.h"

/* Naive mode (TASKSCOPE_MODE=naive, the benchmarks' baseline): every event
 * holds one lock of the whole process (recursive: a synchronous tool may
 * make an event from its callback).  shard_events.c. */
void tscope__naive_lock(void);
void tscope__naive_unlock(void);

/* Enters an event on the calling thread's shard: its thread when the
 * profile aggregates on the threads and measurement is on, else NULL (the
 * profiler off, or measurement off).  The thread's in_event flag is set
 * before run is read again, so that tscope_finalize, which switches run off
 * and then waits for every flag (tscope__threads_quiesce), never finishes
 * the shards under an event. */
static inline struct tscope__thread *enter(void)
{
    if (!(atomic_load_explicit(&tscope__g.run, memory_order_relaxed) & 1) ||
        !tscope__g.cfg.aggregate)
        return NULL;
    struct tscope__thread *t = tscope__thread_self();
    if (!t)
        return NULL;
    atomic_store_explicit(&t->in_event, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the quiesce's membarrier is the other half */
    if (__builtin_expect(atomic_load_explicit(&tscope__g.run, memory_order_relaxed) & 1, 1)) {
        if (__builtin_expect(tscope__g.cfg.aggregate == TSCOPE__AGG_LOCKED, 0))
            tscope__naive_lock();
        return t;
    }
    atomic_store_explicit(&t->in_event, 0, memory_order_release);
    return NULL;
}

static inline void leave(struct tscope__thread *t)
{
    if (__builtin_expect(tscope__g.cfg.aggregate == TSCOPE__AGG_LOCKED, 0))
        tscope__naive_unlock();
    atomic_store_explicit(&t->in_event, 0, memory_order_release);
}

/* The shadow of an event a shard took (record.h): into the ring for the
 * trace, batched tools and triggered policies, to the synchronous tools on
 * this thread; whichever of them want this kind (hooks.h).  ext: the EXT
 * record's payload of a dependency, else NULL. */
static __attribute__((noinline)) void shadow_out(struct tscope__thread *th, struct tscope__rec r,
                                                 const uint64_t *ext)
{
    uint32_t bit = 1u << r.kind;
    struct tscope__rec x[2] = {r, {.kind = TSCOPE__REC_EXT, .ts = r.ts, .id = ext ? *ext : 0}};
    if (atomic_load_explicit(&tscope__shadow_ring, memory_order_relaxed) & bit) {
        x[0].flags |= TSCOPE__REC_SHADOW;
        tscope__emit_records(x, ext ? 2 : 1);
        x[0].flags = r.flags;
    }
    if (tscope__hooks.sync_kinds & bit)
        tscope__hooks.sync(th->index, &x[0], ext ? &x[1] : NULL);
}

static inline void shadow_ext(struct tscope__thread *th, uint8_t kind, uint64_t ts, uint64_t id,
                              uint64_t arg, uint16_t type, int16_t prio, uint16_t depth,
                              uint8_t flags, const uint64_t *ext)
{
    if (__builtin_expect(
            atomic_load_explicit(&tscope__shadow_kinds, memory_order_relaxed) & (1u << kind), 0))
        shadow_out(th, (struct tscope__rec){ts, id, arg, type, prio, depth, flags, kind}, ext);
}

static inline void shadow(struct tscope__thread *th, uint8_t kind, uint64_t ts, uint64_t id,
                          uint64_t arg, uint16_t type, int16_t prio, uint16_t depth, uint8_t flags)
{
    shadow_ext(th, kind, ts, id, arg, type, prio, depth, flags, NULL);
}

#endif
