/* ring.h - single-producer/single-consumer ring of event records.
 *
 * The owning thread is the only producer, the consumer thread the only
 * consumer.  head and tail are free-running 64-bit counters (never wrap in
 * practice); slot = counter & mask.  The producer keeps private copies of
 * head and of the last tail it saw, so an ordinary append touches only its
 * own cache lines: write the record(s), then publish head with a release
 * store.  The consumer reads head with acquire, reads the records, and
 * publishes tail with release so the producer may reuse the slots.
 *
 * Layout: buf, mask and the sizes never change after init and sit on a
 * line of their own.  Had they shared head's line (written by every event),
 * each record the consumer located through them would have pulled that line
 * from the producer's core: 70% of the consumer's ring reading, measured
 * (docs/performance.md).
 */
#ifndef TSCOPE_CORE_RING_H
#define TSCOPE_CORE_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "record.h"

struct tscope__ring {
    /* read-only after init: both sides keep this line cached, no traffic */
    _Alignas(64) struct tscope__rec *buf;
    uint64_t size; /* power of two */
    uint64_t mask;
    uint64_t half; /* 0: the memory is not usable yet (a thread slot's ring whose pages
                      come at its first write: events.c's ring_reserve) */
    int external;  /* buf belongs to someone else (a thread slot's mapping) */
    /* producer side: written by every event; the consumer reads head once
     * per round */
    _Alignas(64) _Atomic uint64_t head; /* published: records [tail, head) are readable */
    uint64_t head_local;                /* producer's copy of head */
    uint64_t tail_seen;                 /* producer's last view of tail */
    /* consumer side */
    _Alignas(64) _Atomic uint64_t tail;
};

/* Sets up an empty ring of `size` records (a power of two) in buf, or in
 * memory of its own when buf is NULL.  Returns 0 or TSCOPE_ENOMEM. */
int tscope__ring_init(struct tscope__ring *r, uint64_t size, struct tscope__rec *buf);
void tscope__ring_free(struct tscope__ring *r);

/* The producer's published head (acquire): records before it are whole. */
static inline uint64_t tscope__ring_head(struct tscope__ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire);
}

/* Records readable by the consumer now (acquire). */
static inline uint64_t tscope__ring_readable(struct tscope__ring *r, uint64_t *tail_out)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    *tail_out = tail;
    return head - tail;
}

static inline struct tscope__rec *tscope__ring_slot(struct tscope__ring *r, uint64_t counter)
{
    return &r->buf[counter & r->mask];
}

/* Consumer: the records up to `tail` may be overwritten. */
static inline void tscope__ring_release(struct tscope__ring *r, uint64_t tail)
{
    atomic_store_explicit(&r->tail, tail, memory_order_release);
}

/* Producer: publishes n records written at head_local. */
static inline void tscope__ring_publish(struct tscope__ring *r, unsigned n)
{
    r->head_local += n;
    atomic_store_explicit(&r->head, r->head_local, memory_order_release);
}

#endif
