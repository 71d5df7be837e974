/* record.h - the fixed-size binary event record that producers append to
 * their ring, which the consumer applies to the store (what a shard did not
 * take) or hands to the trace and the tools (a shadow of what a shard took).
 *
 * 32 bytes, no pointers, no strings.  Fields are reused per kind; the table
 * below is the only place that says which field means what.
 *
 *   kind        id        arg            type     prio   depth     flags
 *   CREATE      task      parent         type     prio   depth     TSCOPE_TASK_*
 *   QUEUED      task      -              -        -      -         -
 *   BEGIN       task      -              type     -      -         -
 *   START       task      -              type     -      -         -   (create+begin)
 *   END/CANCEL/YIELD/RESUME  task        -        -      -         -
 *   DEP_LOCAL   from      to             fromtype naddrs totype    TSCOPE_HAZARD_* + EXT
 *   DEP_REMOTE  from      to             fromrank -      torank    direction   + EXT
 *   COUNTER     -         value (bits)   counter  -      -         -
 *   CUSTOM      -         payload        event    -      -         -
 *   MESSAGE     tag       bytes          -        -      peer      TSCOPE_MSG_*
 *   EXT         address (in id), follows the record that needs it
 *   INSTANCE    task      parent         type     prio   depth     TSCOPE_TASK_*  + 2 EXT:
 *               (ts: end)  EXT 1: ts create, id begin, arg self, type tree depth, prio state,
 *                                 flags 1: some task counts below it
 *                          EXT 2: ts running, id nearest eligible ancestor, arg thread<<32|yields
 *   BELOW       ancestor  tasks          -        -      -         1: cut off
 *               (ts: their self ticks)
 *   POINT       task      elapsed ticks  type     -      -         -   (ts: its end; only
 *               in a shard's log, never in a ring: the duration sample)
 *
 * A DEP_LOCAL's types are 0 unless the runtime gave them (tscope_dep_edge); its
 * prio holds the address count as a uint16_t (at most 65535).
 * INSTANCE and BELOW come from threads that aggregate their own tasks
 * (src/profile/shard.c): a finished task for the instance graph, and tasks
 * left out of it counted in their nearest ancestor that may be kept.
 *
 * A record whose flags carry TSCOPE__REC_SHADOW is a shadow: a thread that
 * aggregates its own tasks has the event in its shard already (a handle
 * task's event, a counter sample, a custom event, a message), and the
 * record is in the ring only for whoever needs the events in order (the
 * trace, batched tools, triggered policies); the profile skips it,
 * everyone else sees it without the bit.
 */
#ifndef TSCOPE_CORE_RECORD_H
#define TSCOPE_CORE_RECORD_H

#include <stdint.h>

enum tscope__rec_kind {
    TSCOPE__REC_CREATE = 1,
    TSCOPE__REC_QUEUED,
    TSCOPE__REC_BEGIN,
    TSCOPE__REC_END,
    TSCOPE__REC_CANCEL,
    TSCOPE__REC_YIELD,
    TSCOPE__REC_RESUME,
    TSCOPE__REC_DEP_LOCAL,
    TSCOPE__REC_DEP_REMOTE,
    TSCOPE__REC_COUNTER,
    TSCOPE__REC_CUSTOM,
    TSCOPE__REC_EXT,
    TSCOPE__REC_START,
    TSCOPE__REC_MESSAGE,
    TSCOPE__REC_INSTANCE,
    TSCOPE__REC_BELOW,
    TSCOPE__REC_LAST = TSCOPE__REC_BELOW, /* the highest kind a producer writes */
    TSCOPE__REC_POINT /* in a shard's log only: a task for the duration sample */
};

struct tscope__rec {
    uint64_t ts;  /* clock ticks (see clock.h) */
    uint64_t id;  /* task id, dependency source, or EXT payload */
    uint64_t arg; /* parent, dependency target, counter value bits, payload */
    uint16_t type;
    int16_t prio;
    uint16_t depth;
    uint8_t flags;
    uint8_t kind;
};

_Static_assert(sizeof(struct tscope__rec) == 32, "event records must stay 32 bytes");

#define TSCOPE__MAX_IDS 0xFFFEu /* type, counter and event ids are 1..0xFFFE */

/* The task record kinds (a mask of 1 << kind). */
#define TSCOPE__REC_TASK_KINDS                                                                     \
    ((1u << TSCOPE__REC_CREATE) | (1u << TSCOPE__REC_QUEUED) | (1u << TSCOPE__REC_BEGIN) |         \
     (1u << TSCOPE__REC_END) | (1u << TSCOPE__REC_CANCEL) | (1u << TSCOPE__REC_YIELD) |            \
     (1u << TSCOPE__REC_RESUME) | (1u << TSCOPE__REC_START))

/* The kinds a thread that aggregates its own may hand on as shadows: every
 * kind of the event API (task records, dependencies, counter samples,
 * custom events, messages). */
#define TSCOPE__REC_SHADOW_KINDS                                                                   \
    (TSCOPE__REC_TASK_KINDS | (1u << TSCOPE__REC_COUNTER) | (1u << TSCOPE__REC_CUSTOM) |           \
     (1u << TSCOPE__REC_MESSAGE) | (1u << TSCOPE__REC_DEP_LOCAL) | (1u << TSCOPE__REC_DEP_REMOTE))

/* The flag of a shadow record (above); TSCOPE_TASK_FLAGS_ALL is 0x7F,
 * TSCOPE_MSG_* use the low three bits, hazards and directions values up
 * to 3. */
#define TSCOPE__REC_SHADOW 0x80u

static inline int tscope__rec_shadow(const struct tscope__rec *r)
{
    return (r->flags & TSCOPE__REC_SHADOW) && r->kind < 32 &&
           ((1u << r->kind) & TSCOPE__REC_SHADOW_KINDS);
}

/* The EXT records that follow a record of this kind (published with it). */
static inline unsigned tscope__rec_exts(const struct tscope__rec *r)
{
    return r->kind == TSCOPE__REC_DEP_LOCAL || r->kind == TSCOPE__REC_DEP_REMOTE ? 1
           : r->kind == TSCOPE__REC_INSTANCE                                     ? 2
                                                                                 : 0;
}

#endif
