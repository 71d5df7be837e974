/* wiring.c - connects the subsystems to the core (core/hooks.h): the
 * profile (each thread's events through `take`, the consumer's rounds and
 * whatever a shard could not take), the tool plugins (synchronous, batched,
 * thread begin/end) and the triggered policies.  The consumer's subscribers
 * are registered here in the order wiring.h numbers (the trace writer's by
 * lifecycle.c when a trace starts).
 *
 * The composition root (lifecycle.c) calls tscope__wire after loading the
 * plugins and before switching measurement on; nothing here runs per event
 * except the functions it installs.
 */
#include <stdatomic.h>

#include "core/core.h"
#include "core/hooks.h"
#include "live/debug.h"
#include "policy/policy.h"
#include "profile/shard.h"
#include "profile/store.h"
#include "tool/tools.h"
#include "wiring.h"

static void tools_sync(uint32_t thread, const struct tscope__rec *r, const struct tscope__rec *ext)
{
    tscope__tools_deliver(TSCOPE_TOOL_SYNC, thread, r, ext);
}

/* The record at *c of ring (and in *ext its EXT record, or NULL: none or
 * cut off at `to`); *c moves to its last EXT record. */
static const struct tscope__rec *record_at(struct tscope__ring *ring, uint64_t *c, uint64_t to,
                                           const struct tscope__rec **ext)
{
    const struct tscope__rec *rec = tscope__ring_slot(ring, *c);
    unsigned exts = tscope__rec_exts(rec);
    *ext = NULL;
    if (exts && *c + exts < to) {
        *ext = tscope__ring_slot(ring, *c + 1);
        *c += exts;
    }
    return rec;
}

static int tools_wanted(void)
{
    return tscope__tools_batched_mask != 0;
}

/* Hands records [from, to) of a thread's ring to the batched tool
 * callbacks, outside the store lock (they may query). */
static void tools_batch(uint32_t thread, struct tscope__ring *ring, uint64_t from, uint64_t to)
{
    for (uint64_t c = from; c < to; c++) {
        const struct tscope__rec *ext;
        const struct tscope__rec *rec = record_at(ring, &c, to, &ext);
        if (tscope__tools_batched_mask & tscope__tools_rec_bits(rec->kind))
            tscope__tools_deliver(TSCOPE_TOOL_BATCHED, thread, rec, ext);
    }
}

static int policy_wanted(void)
{
    return atomic_load_explicit(&tscope__policy_trigger_mask, memory_order_relaxed) != 0;
}

/* Hands the records of a kind some triggered policy wants to the policy
 * engine, outside the store lock. */
static void policy_batch(uint32_t thread, struct tscope__ring *ring, uint64_t from, uint64_t to)
{
    uint32_t triggers = atomic_load_explicit(&tscope__policy_trigger_mask, memory_order_relaxed);
    for (uint64_t c = from; c < to; c++) {
        const struct tscope__rec *ext;
        const struct tscope__rec *rec = record_at(ring, &c, to, &ext);
        if (triggers & (1u << rec->kind))
            tscope__policy_trigger(thread, rec);
    }
}

void tscope__wire(int profiler)
{
    struct tscope__hooks h = {0};
    /* rounds still settle the (empty) store without the profiler */
    struct tscope__subscriber store = {.round = tscope__store_round_done};
    if (profiler) {
        h.apply = tscope__store_apply_ring;
        h.take = tscope__shard_take;
        store.thread_gone = tscope__store_thread_gone;
    }
    tscope__subscribers_clear();
    tscope__subscribe(TSCOPE__SUB_STORE, &store);
    tscope__subscribe(TSCOPE__SUB_TOOLS,
                      &(struct tscope__subscriber){.wanted = tools_wanted, .batch = tools_batch});
    tscope__subscribe(TSCOPE__SUB_POLICY,
                      &(struct tscope__subscriber){.wanted = policy_wanted, .batch = policy_batch});
    for (unsigned kind = 1; kind < 32; kind++)
        if (tscope__tools_sync_mask & tscope__tools_rec_bits(kind))
            h.sync_kinds |= 1u << kind;
    h.sync = tools_sync;
    if (tscope__tools_sync_mask & (1u << TSCOPE_TOOL_EVENT_THREAD_BEGIN))
        h.thread_events |= 1;
    if (tscope__tools_sync_mask & (1u << TSCOPE_TOOL_EVENT_THREAD_END))
        h.thread_events |= 2;
    h.thread = tscope__tools_thread;
    if (tscope__g.cfg.live[0]) { /* the dashboard's task debugger */
        h.gate = tscope__live_gate;
        h.gate_create = tscope__live_gate_create;
    }
    tscope__hooks = h;
}

void tscope__wire_shadows(void)
{
    uint32_t ring = tscope__subscribed(TSCOPE__SUB_TRACE) ? TSCOPE__REC_SHADOW_KINDS : 0;
    for (unsigned kind = 1; kind < 32; kind++)
        if (tscope__tools_batched_mask & tscope__tools_rec_bits(kind))
            ring |= 1u << kind;
    tscope__shadow_set(TSCOPE__SHADOW_RUN, ring);
    tscope__shadow_set(TSCOPE__SHADOW_SYNC, tscope__hooks.sync_kinds);
}

void tscope__unwire_tools(void)
{
    tscope__hooks.sync_kinds = 0;
    tscope__hooks.thread_events = 0;
    tscope__shadow_set(TSCOPE__SHADOW_RUN, 0);
    tscope__shadow_set(TSCOPE__SHADOW_SYNC, 0);
}
