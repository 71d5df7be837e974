/* events.c - the event functions of taskscope.h: the hot path.
 *
 * With the profiler on, an event goes first to the profile's `take` hook
 * (hooks.h), which aggregates it in the calling thread's shard and puts a
 * shadow in the ring only when the trace, a tool or a policy wants it.
 * What reaches the ring costs: one relaxed load of the run switch (one
 * branch when measuring is off), a thread-local pointer, a ring-space check
 * against the producer's private copies of head and tail, a timestamp, a
 * 32-byte record written in place, and a release store of head.  No lock,
 * no allocation, no system call, no string handling.
 *
 * With the profiler switched off, an event for synchronous tools goes to
 * them directly (no ring), and one no tool wants costs two tests.
 *
 * Everything else is the slow path (emit_slow): the thread's first event,
 * a ring past half full (refresh the consumer's tail, wake the consumer), a
 * full ring (the wait or drop policy) and measurement off.  Synchronous
 * tool callbacks run after the record is written, on the producing thread.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "hazard.h"
#include "core.h"
#include "hooks.h"
#include "taskscope/taskscope.h"
#include "thread_local.h"

/* Synchronous tool delivery of a record (and its EXT), if a tool wants it. */
static __attribute__((noinline)) void
tools_sync(struct tscope__thread *t, const struct tscope__rec *rec, const struct tscope__rec *ext)
{
    if (tscope__hooks.sync_kinds & (1u << rec->kind))
        tscope__hooks.sync(t->index, rec, ext);
}

/* A thread slot's ring in the mapping gets its pages at its first write
 * (half is 0 until then: the fast path's test sends that write here):
 * most threads' events go to their shards, and 0.5 MiB of pages a thread
 * (the default ring) was the largest part of what starting one cost.
 * Without room for them the ring moves to ordinary memory (the thread's
 * slot says so: a recovery skips that ring); 0, or TSCOPE_ENOMEM. */
static __attribute__((noinline)) int ring_back(struct tscope__thread *t)
{
    struct tscope__ring *r = &t->ring;
    size_t bytes = r->size * sizeof *r->buf;
    if (t->slot_backed == 0 && tscope__hooks.slot_back &&
        tscope__hooks.slot_back(r->buf, bytes) == 0) {
        t->slot_backed = 1;
    } else {
        /* nothing was published: the consumer has not read buf */
        struct tscope__rec *buf = aligned_alloc(64, bytes);
        if (!buf)
            return TSCOPE_ENOMEM;
        r->buf = buf;
        r->external = 0;
        t->slot_backed = -1;
    }
    r->half = r->size / 2;
    return 0;
}

/* Waits for room for n records in t's ring (the wait policy) or counts
 * them dropped (the drop policy, or measurement switched off meanwhile):
 * 0 when there is room, else TSCOPE_EDROPPED. */
static int ring_reserve(struct tscope__thread *t, unsigned n)
{
    struct tscope__ring *r = &t->ring;
    if (__builtin_expect(r->half == 0, 0) && ring_back(t)) {
        atomic_store_explicit(&t->dropped,
                              atomic_load_explicit(&t->dropped, memory_order_relaxed) + n,
                              memory_order_relaxed);
        return TSCOPE_EDROPPED;
    }
    int waited = 0;
    for (;;) {
        r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        uint64_t fill = r->head_local - r->tail_seen;
        if (fill + n > r->half)
            tscope__consumer_wake();
        if (fill + n <= r->size)
            return 0;
        if (tscope__g.cfg.full_policy == TSCOPE__FULL_DROP ||
            atomic_load_explicit(&tscope__g.run, memory_order_relaxed) == TSCOPE__RUN_OFF) {
            atomic_store_explicit(&t->dropped,
                                  atomic_load_explicit(&t->dropped, memory_order_relaxed) + n,
                                  memory_order_relaxed);
            return TSCOPE_EDROPPED;
        }
        if (!waited++)
            atomic_store_explicit(&t->waits,
                                  atomic_load_explicit(&t->waits, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
        if (waited < 4) {
            sched_yield();
        } else {
            struct timespec pause = {0, 20 * 1000};
            nanosleep(&pause, NULL);
        }
    }
}

static int emit_slow(int run, struct tscope__rec rec, const uint64_t *ext_id)
{
    struct tscope__thread *t = tscope__thread_self();
    if (!t) { /* no slot (TASKSCOPE_MAX_THREADS) or no memory: lost, and counted */
        atomic_fetch_add_explicit(&tscope__g.unregistered_dropped, ext_id ? 2 : 1,
                                  memory_order_relaxed);
        return TSCOPE_ELIMIT;
    }
    struct tscope__rec ext = {.kind = TSCOPE__REC_EXT, .ts = rec.ts, .id = ext_id ? *ext_id : 0};
    if (run == TSCOPE__RUN_TOOLS) { /* no profiler, no batched tools: deliver, keep nothing */
        tools_sync(t, &rec, ext_id ? &ext : NULL);
        return 0;
    }
    unsigned n = ext_id ? 2 : 1;
    int rc = ring_reserve(t, n);
    if (rc)
        return rc;
    struct tscope__ring *r = &t->ring;
    *tscope__ring_slot(r, r->head_local) = rec;
    if (ext_id)
        *tscope__ring_slot(r, r->head_local + 1) = ext;
    tscope__ring_publish(r, n);
    tools_sync(t, &rec, ext_id ? &ext : NULL);
    return 0;
}

int tscope__emit_records(const struct tscope__rec *recs, unsigned n)
{
    struct tscope__thread *t = tscope__thread_self();
    if (!t) {
        atomic_fetch_add_explicit(&tscope__g.unregistered_dropped, n, memory_order_relaxed);
        return TSCOPE_ELIMIT;
    }
    int rc = ring_reserve(t, n);
    if (rc)
        return rc;
    struct tscope__ring *r = &t->ring;
    for (unsigned i = 0; i < n; i++)
        *tscope__ring_slot(r, r->head_local + i) = recs[i];
    tscope__ring_publish(r, n);
    return 0;
}

/* Appends one record (and an EXT record carrying *ext_id, if given), or
 * hands it to the profile's `take` when the threads aggregate their own
 * events (hooks.h). */
static inline int emit(uint8_t kind, uint64_t id, uint64_t arg, uint16_t type, int16_t prio,
                       uint16_t depth, uint8_t flags, const uint64_t *ext_id)
{
    if (tscope__hooks.take) {
        struct tscope__rec r = {0, id, arg, type, prio, depth, flags, kind};
        int rc = tscope__hooks.take(&r, ext_id ? *ext_id : 0);
        if (rc <= 0)
            return rc;
    }
    int run = atomic_load_explicit(&tscope__g.run, memory_order_relaxed);
    /* RING and RING_TOOLS are the odd values: one bit test for both */
    if (__builtin_expect((run & 1) && !ext_id, 1)) {
        struct tscope__thread *t = tscope__tls_self;
        if (__builtin_expect(t != NULL, 1)) {
            struct tscope__ring *r = &t->ring;
            if (__builtin_expect(r->head_local + 1 - r->tail_seen <= r->half, 1)) {
                struct tscope__rec *rec = tscope__ring_slot(r, r->head_local);
                rec->ts = tscope__clock_now();
                rec->id = id;
                rec->arg = arg;
                rec->type = type;
                rec->prio = prio;
                rec->depth = depth;
                rec->flags = flags;
                rec->kind = kind;
                tscope__ring_publish(r, 1);
                if (__builtin_expect(run == TSCOPE__RUN_RING_TOOLS, 0))
                    tools_sync(t, rec, NULL);
                return 0;
            }
        }
    }
    if (run == TSCOPE__RUN_OFF)
        return __atomic_load_n(&tscope__g.off_code, __ATOMIC_RELAXED);
    if (run == TSCOPE__RUN_TOOLS) { /* profiler off: synchronous tools only, no ring */
        if (!(tscope__hooks.sync_kinds & (1u << kind)))
            return 0; /* no tool wants this event */
        struct tscope__thread *t = tscope__tls_self;
        if (__builtin_expect(t != NULL, 1)) {
            struct tscope__rec rec = {tscope__clock_now(), id, arg, type, prio, depth, flags, kind};
            struct tscope__rec ext = {
                .kind = TSCOPE__REC_EXT, .ts = rec.ts, .id = ext_id ? *ext_id : 0};
            tscope__hooks.sync(t->index, &rec, ext_id ? &ext : NULL);
            return 0;
        }
    }
    struct tscope__rec rec = {tscope__clock_now(), id, arg, type, prio, depth, flags, kind};
    return emit_slow(run, rec, ext_id);
}

/* Id 0 means "no task" (taskscope.h): an event on it is refused, never
 * recorded (the store's task index keeps 0 for its empty entries). */
#define TASK_EVENT(name, kind)                                                                     \
    int name(uint64_t id)                                                                          \
    {                                                                                              \
        if (__builtin_expect(id == 0, 0))                                                          \
            return TSCOPE_EINVAL;                                                                  \
        return emit(kind, id, 0, 0, 0, 0, 0, NULL);                                                \
    }

TASK_EVENT(tscope_task_queued, TSCOPE__REC_QUEUED)
TASK_EVENT(tscope_task_end, TSCOPE__REC_END)
TASK_EVENT(tscope_task_cancel, TSCOPE__REC_CANCEL)
TASK_EVENT(tscope_task_yield, TSCOPE__REC_YIELD)
TASK_EVENT(tscope_task_resume, TSCOPE__REC_RESUME)

/* The task debugger's gate (hooks.h): armed only while a pause or a
 * breakpoint is set, so a begin pays one relaxed load otherwise. */
_Atomic int tscope__gate_armed;
_Atomic uint32_t tscope__shadow_kinds;
_Atomic uint32_t tscope__shadow_ring;

void tscope__shadow_set(int part, uint32_t kinds)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint32_t parts[TSCOPE__SHADOW_PARTS];
    if (part < 0 || part >= TSCOPE__SHADOW_PARTS)
        return;
    pthread_mutex_lock(&lock);
    parts[part] = kinds & TSCOPE__REC_SHADOW_KINDS;
    uint32_t ring = parts[TSCOPE__SHADOW_RUN] | parts[TSCOPE__SHADOW_POLICY];
    atomic_store(&tscope__shadow_ring, ring);
    atomic_store(&tscope__shadow_kinds, ring | parts[TSCOPE__SHADOW_SYNC]);
    pthread_mutex_unlock(&lock);
}

int tscope_task_begin(uint64_t id, tscope_type_t type)
{
    if (__builtin_expect(id == 0 || type > TSCOPE__MAX_IDS, 0))
        return TSCOPE_EINVAL;
    if (__builtin_expect(atomic_load_explicit(&tscope__gate_armed, memory_order_relaxed), 0) &&
        tscope__hooks.gate)
        tscope__hooks.gate(id, type);
    return emit(TSCOPE__REC_BEGIN, id, 0, (uint16_t)type, 0, 0, 0, NULL);
}

int tscope_task_start(uint64_t id, tscope_type_t type)
{
    if (__builtin_expect(id == 0 || type > TSCOPE__MAX_IDS, 0))
        return TSCOPE_EINVAL;
    if (__builtin_expect(atomic_load_explicit(&tscope__gate_armed, memory_order_relaxed), 0) &&
        tscope__hooks.gate)
        tscope__hooks.gate(id, type);
    return emit(TSCOPE__REC_START, id, 0, (uint16_t)type, 0, 0, 0, NULL);
}

int tscope_task_create(uint64_t id, uint64_t parent, tscope_type_t type, unsigned flags,
                       unsigned depth, int priority)
{
    if (__builtin_expect(id == 0 || type > TSCOPE__MAX_IDS || (flags & ~TSCOPE_TASK_FLAGS_ALL), 0))
        return TSCOPE_EINVAL;
    int16_t prio = priority > INT16_MAX   ? INT16_MAX
                   : priority < INT16_MIN ? INT16_MIN
                                          : (int16_t)priority;
    uint16_t d = depth > 0xFFFFu ? 0xFFFF : (uint16_t)depth;
    if (__builtin_expect(atomic_load_explicit(&tscope__gate_armed, memory_order_relaxed), 0) &&
        tscope__hooks.gate_create)
        tscope__hooks.gate_create(id, type);
    return emit(TSCOPE__REC_CREATE, id, parent, (uint16_t)type, prio, d, (uint8_t)flags, NULL);
}

/* A local edge's record: flags the hazard bits, prio the address count
 * (at most 65535), the address in an EXT record. */
int tscope_dep_edge(uint64_t from, tscope_type_t from_type, uint64_t to, tscope_type_t to_type,
                    unsigned hazards, uint32_t naddrs, const void *addr)
{
    if (!hazards || (hazards & ~TSCOPE_HAZARD_ALL) || !naddrs || from_type > TSCOPE__MAX_IDS ||
        to_type > TSCOPE__MAX_IDS)
        return TSCOPE_EINVAL;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    uint16_t n = naddrs > 0xFFFFu ? 0xFFFF : (uint16_t)naddrs;
    return emit(TSCOPE__REC_DEP_LOCAL, from, to, (uint16_t)from_type, (int16_t)n, (uint16_t)to_type,
                (uint8_t)hazards, &a);
}

int tscope_dep_local(uint64_t from, uint64_t to, const void *addr, tscope_hazard_t kind)
{
    return tscope_dep_local_typed(from, 0, to, 0, addr, kind);
}

int tscope_dep_local_typed(uint64_t from, tscope_type_t from_type, uint64_t to,
                           tscope_type_t to_type, const void *addr, tscope_hazard_t kind)
{
    unsigned bits = tscope__hazard_bits((int)kind);
    return bits ? tscope_dep_edge(from, from_type, to, to_type, bits, 1, addr) : TSCOPE_EINVAL;
}

int tscope_dep_remote(uint64_t from, int from_rank, uint64_t to, int to_rank, const void *addr,
                      tscope_dep_dir_t dir)
{
    if (dir < TSCOPE_DEP_IN || dir > TSCOPE_DEP_COPYIN || from_rank < 0 || from_rank > 0xFFFF ||
        to_rank < 0 || to_rank > 0xFFFF)
        return TSCOPE_EINVAL;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    return emit(TSCOPE__REC_DEP_REMOTE, from, to, (uint16_t)from_rank, 0, (uint16_t)to_rank,
                (uint8_t)dir, &a);
}

int tscope_message(int peer, uint64_t bytes, int tag, unsigned flags)
{
    unsigned dir = flags & (TSCOPE_MSG_SEND | TSCOPE_MSG_RECV);
    if (peer < 0 || peer > 0xFFFF || (dir != TSCOPE_MSG_SEND && dir != TSCOPE_MSG_RECV) ||
        (flags & ~(TSCOPE_MSG_SEND | TSCOPE_MSG_RECV | TSCOPE_MSG_COLLECTIVE)))
        return TSCOPE_EINVAL;
    return emit(TSCOPE__REC_MESSAGE, (uint64_t)(uint32_t)tag, bytes, 0, 0, (uint16_t)peer,
                (uint8_t)flags, NULL);
}

int tscope_counter_sample(tscope_counter_t counter, double value)
{
    if (counter == 0 || counter > TSCOPE__MAX_IDS)
        return TSCOPE_EINVAL;
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return emit(TSCOPE__REC_COUNTER, 0, bits, (uint16_t)counter, 0, 0, 0, NULL);
}

int tscope_custom_event(tscope_event_t event, uint64_t payload)
{
    if (event == 0 || event > TSCOPE__MAX_IDS)
        return TSCOPE_EINVAL;
    return emit(TSCOPE__REC_CUSTOM, 0, payload, (uint16_t)event, 0, 0, 0, NULL);
}
