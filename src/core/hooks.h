/* hooks.h - where the subsystems built on the core plug into it.
 *
 * The core (rings, threads, event functions, the consumer) includes nothing
 * above it.  What it hands records to comes in two shapes:
 * - the subscribers: whatever consumes the ordered records a consumer round
 *   drains (the profile store's round ends and retired threads, the trace
 *   writer, the batched tool callbacks, the triggered policies), a list
 *   registered with tscope__subscribe in the order they are to be called;
 * - the hooks: one slot each for what is not a subscriber in that sense (the
 *   profile's batch apply, which returns the new tail, the shard's `take` on
 *   the producing thread, synchronous tools, the crash journal, the task
 *   debugger's gate).
 * Both are filled by the composition root (src/lifecycle/wiring.c) at
 * tscope_init before measurement is switched on, and emptied at the next
 * tscope_init: readers never see them change while events flow (the list
 * refuses changes while the consumer thread runs).  An empty hook means
 * nobody subscribed (the profiler off, no tools, no triggered policy).
 */
#ifndef TSCOPE_CORE_HOOKS_H
#define TSCOPE_CORE_HOOKS_H

#include <stdint.h>

#include "record.h"
#include "ring.h"

struct tscope__hooks {
    /* The profile: applies records [tail, stop) of thread's ring in one
     * batch under its own lock (a pair or EXT record straddling stop may
     * be read up to head) and returns the new tail. */
    uint64_t (*apply)(uint32_t thread, struct tscope__ring *r, uint64_t tail, uint64_t stop,
                      uint64_t head);

    /* The profile takes the events on the producing thread, in its shard (profile/shard_events.c):
     * r (its ts unset) and the EXT record's payload; returns the event's result (0 or a negative
     * TSCOPE_E* code), or 1 when it did not take it (measurement off, no slot, no memory, a kind it
     * leaves to the consumer): the ring path then goes on as without the hook. */
    int (*take)(const struct tscope__rec *r, uint64_t ext);

    /* Synchronous tool callbacks on the producing thread: one bit per
     * record kind that some callback wants. */
    uint32_t sync_kinds;
    void (*sync)(uint32_t thread, const struct tscope__rec *r, const struct tscope__rec *ext);

    /* The crash journal (src/lifecycle/journal.c), under `taskscope run`:
     * - slot_memory: the memory of a new thread slot (the thread struct,
     *   thread_bytes, followed by its ring in *ring), in a file that
     *   outlives the process; *ring_records may be changed for this slot (a
     *   power of two); NULL: ordinary memory.  Under the thread registry's
     *   lock.
     * - after_round: after every round (the clock's latest factor into the
     *   mapping's header).  Consumer thread.
     * - name_added: a new name in a name table, under that table's lock. */
    void *(*slot_memory)(uint32_t index, size_t thread_bytes, uint64_t *ring_records,
                         struct tscope__rec **ring);
    void (*after_round)(void);
    /* - slot_back: the pages of a slot_memory ring (`bytes` at `ring`),
     *   allocated at its first write: 0, or -1 (no room: the caller moves
     *   the ring to ordinary memory).  The ring's owner. */
    int (*slot_back)(void *ring, size_t bytes);
    /* - on_wake_async: the consumer was woken by tscope__consumer_wake_async
     *   (a signal handler: signals.c finalizes there).  Consumer thread,
     *   between rounds, no lock held. */
    void (*on_wake_async)(void);
    void (*name_added)(const void *table, uint32_t id, const char *name);
    /* - attrs_added: a name's attributes grew (a wait type, a sampled
     *   counter) to `attrs`, under that table's lock. */
    void (*attrs_added)(const void *table, uint32_t id, unsigned attrs);
    /* - durable: `bytes` of zeroed memory in a file that outlives the
     *   process (the mapping), tagged with kind, owner (thread slot)
     *   and index for the reader; NULL: ordinary memory.  Never freed;
     *   durable_owns says whether p came from it.  Any thread. */
    void *(*durable)(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes);
    int (*durable_owns)(const void *p);

    /* Thread begin (bit 0) and end (bit 1) wanted by tools, on the thread. */
    uint32_t thread_events;
    void (*thread)(int begin, uint32_t index, const char *name);

    /* The task debugger (src/live/debug.c), only while tscope__gate_armed
     * is nonzero: gate is called on the program's thread before task id of
     * type begins (tscope_task_begin, _start; type 0: the one given at its
     * create) and may hold the thread there (a pause, a breakpoint);
     * gate_create sees each task created meanwhile with its type, so the
     * gate knows the type of a task begun with type 0 (OMPT's). */
    void (*gate)(uint64_t id, uint32_t type);
    void (*gate_create)(uint64_t id, uint32_t type);
};

extern struct tscope__hooks tscope__hooks;

/* A subscriber of the consumer (consumer.c).  Every member may be NULL.
 * Consumer thread (or the finalizing thread once the consumer stopped),
 * outside the store lock; in the list's order for each call:
 * - wanted: the cheap test per batch (NULL: always); batch is called only
 *   when it returns nonzero;
 * - batch: records [from, to) of thread's ring, after the profile applied
 *   them (their slots are released after every subscriber saw them);
 * - round: the end of a consumer round (store.h explains rounds), after the
 *   clock's factor was refined;
 * - thread_gone: a retired thread's ring is drained, its slot is about to
 *   be reused (the store closes what it left running: unfinished). */
struct tscope__subscriber {
    int (*wanted)(void);
    void (*batch)(uint32_t thread, struct tscope__ring *r, uint64_t from, uint64_t to);
    void (*round)(void);
    void (*thread_gone)(uint32_t thread);
};

/* Subscribes s (copied) at `position`: subscribers are called in ascending
 * position, equal ones in the order they subscribed (the composition root
 * numbers the positions: wiring.h).  0; TSCOPE_ELIMIT when the list is full
 * (TSCOPE__SUBSCRIBERS_MAX); TSCOPE_ESTATE while the consumer thread runs
 * (the list never changes while events flow). */
#define TSCOPE__SUBSCRIBERS_MAX 8
int tscope__subscribe(int position, const struct tscope__subscriber *s);
/* Removes the subscriber at `position` (all of them there): 0, or
 * TSCOPE_ESTATE while the consumer thread runs. */
int tscope__unsubscribe(int position);
/* Empties the list: 0, or TSCOPE_ESTATE while the consumer thread runs. */
int tscope__subscribers_clear(void);
/* Whether a subscriber sits at `position`. */
int tscope__subscribed(int position);
/* Set by the debugger while a pause or a breakpoint is in force. */
extern _Atomic int tscope__gate_armed;
/* Shadows (record.h): the record kinds (bit 1 << kind) that a thread
 * aggregating its own tasks also hands on for an event its shard took.  Set
 * in parts: TSCOPE__SHADOW_RUN at tscope_init (the trace and the batched
 * tools: into the ring), TSCOPE__SHADOW_SYNC at tscope_init (the
 * synchronous tools: on the thread) and TSCOPE__SHADOW_POLICY by the policy
 * engine while a policy is triggered by task begins (into the ring).
 * tscope__shadow_kinds is the union (the one test an event pays),
 * tscope__shadow_ring what goes into the ring. */
enum { TSCOPE__SHADOW_RUN, TSCOPE__SHADOW_SYNC, TSCOPE__SHADOW_POLICY, TSCOPE__SHADOW_PARTS };
extern _Atomic uint32_t tscope__shadow_kinds;
extern _Atomic uint32_t tscope__shadow_ring;
void tscope__shadow_set(int part, uint32_t kinds);

#endif
