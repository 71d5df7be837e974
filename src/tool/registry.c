/* registry.c - callback tables of the tools interface and the delivery of
 * events to them.
 *
 * For each event and each delivery mode, an array of (callback, tool data)
 * in plugin load order.  One X-macro expansion turns a record into calls of
 * the typed callbacks.  See tools.h for the concurrency rules.  Every entry
 * names a non-NULL handle: set_callback rejects NULL (TSCOPE_EINVAL), and
 * forget and lifecycle ignore it, so delivery never dereferences one.
 */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/hazard.h"
#include "core/names.h"
#include "tools.h"

struct entry {
    tscope_tool_callback_t cb;
    tscope_tool_handle_t *h;
};

static struct entry table[2][TSCOPE_TOOL_EVENT_COUNT][TSCOPE__TOOLS_MAX];
static int counts[2][TSCOPE_TOOL_EVENT_COUNT];

uint32_t tscope__tools_sync_mask;
uint32_t tscope__tools_batched_mask;

#define BIT(e) (1u << TSCOPE_TOOL_EVENT_##e)

int tscope__tools_sync_events(void)
{
    return (tscope__tools_sync_mask &
            ~(BIT(INIT) | BIT(FINALIZE) | BIT(THREAD_BEGIN) | BIT(THREAD_END))) != 0;
}

/* Delivery index: 0 synchronous, 1 batched. */
static int mode_index(int delivery)
{
    return delivery == TSCOPE_TOOL_BATCHED;
}

void tscope__tools_reset(void)
{
    memset(counts, 0, sizeof counts);
    tscope__tools_sync_mask = tscope__tools_batched_mask = 0;
}

void tscope__tools_forget(tscope_tool_handle_t *h)
{
    if (!h) /* no plugin: nothing to forget (a NULL must not match every entry) */
        return;
    tscope__tools_sync_mask = tscope__tools_batched_mask = 0;
    for (int m = 0; m < 2; m++) {
        for (int ev = 0; ev < TSCOPE_TOOL_EVENT_COUNT; ev++) {
            int keep = 0;
            for (int i = 0; i < counts[m][ev]; i++)
                if (table[m][ev][i].h != h)
                    table[m][ev][keep++] = table[m][ev][i];
            counts[m][ev] = keep;
            if (keep)
                *(m ? &tscope__tools_batched_mask : &tscope__tools_sync_mask) |= 1u << ev;
        }
    }
}

int tscope__tools_set_callback(tscope_tool_handle_t *h, tscope_tool_event_t event,
                               tscope_tool_callback_t cb, int delivery)
{
    /* a NULL handle would be dereferenced at every delivery */
    if (!h || (unsigned)event >= TSCOPE_TOOL_EVENT_COUNT || !cb ||
        (delivery != TSCOPE_TOOL_SYNC && delivery != TSCOPE_TOOL_BATCHED))
        return TSCOPE_EINVAL;
    /* lifecycle and thread events happen on their own thread: always sync */
    int lifecycle =
        (1u << event) & (BIT(INIT) | BIT(FINALIZE) | BIT(THREAD_BEGIN) | BIT(THREAD_END));
    if (lifecycle)
        delivery = TSCOPE_TOOL_SYNC;
    int m = mode_index(delivery);
    if (counts[m][event] >= TSCOPE__TOOLS_MAX)
        return TSCOPE_ELIMIT;
    table[m][event][counts[m][event]++] = (struct entry){cb, h};
    if (m)
        tscope__tools_batched_mask |= 1u << event;
    else
        tscope__tools_sync_mask |= 1u << event;
    if (m && !lifecycle && tscope__g.cfg.full_policy == TSCOPE__FULL_DROP)
        return TSCOPE_TOOL_SOMETIMES; /* dropped events are not delivered */
    return TSCOPE_TOOL_ALWAYS;
}

/* Calls every callback of event E for delivery index m. */
#define CALL_ALL(m, E, name, ...)                                                                  \
    do {                                                                                           \
        for (int i_ = 0; i_ < counts[m][TSCOPE_TOOL_EVENT_##E]; i_++) {                            \
            const struct entry *e_ = &table[m][TSCOPE_TOOL_EVENT_##E][i_];                         \
            ctx.tool_data = e_->h->reg.tool_data;                                                  \
            ((tscope_tool_##name##_cb)e_->cb)(&ctx, __VA_ARGS__);                                  \
        }                                                                                          \
    } while (0)

void tscope__tools_deliver(int delivery, uint32_t thread, const struct tscope__rec *r,
                           const struct tscope__rec *ext)
{
    int m = mode_index(delivery);
    tscope_tool_ctx_t ctx = {sizeof ctx, thread, 0, NULL};
    uint64_t origin = tscope__g.origin;
    ctx.time_ns = r->ts > origin ? (uint64_t)tscope__clock_ns(r->ts - origin) : 0;
    uint8_t flags = r->flags & (uint8_t)~TSCOPE__REC_SHADOW; /* a shadow's mark (record.h) */
    switch (r->kind) {
    case TSCOPE__REC_CREATE:
    case TSCOPE__REC_START: {
        tscope_tool_task_t task = {sizeof task, r->id, r->kind == TSCOPE__REC_CREATE ? r->arg : 0,
                                   r->type,     flags, r->depth,
                                   r->prio};
        CALL_ALL(m, TASK_CREATE, task_create, &task);
        if (r->kind == TSCOPE__REC_START)
            CALL_ALL(m, TASK_BEGIN, task_begin, r->id, r->type);
        break;
    }
    case TSCOPE__REC_QUEUED:
        CALL_ALL(m, TASK_QUEUED, task_queued, r->id);
        break;
    case TSCOPE__REC_BEGIN:
        CALL_ALL(m, TASK_BEGIN, task_begin, r->id, r->type);
        break;
    case TSCOPE__REC_END:
        CALL_ALL(m, TASK_END, task_end, r->id);
        break;
    case TSCOPE__REC_CANCEL:
        CALL_ALL(m, TASK_CANCEL, task_cancel, r->id);
        break;
    case TSCOPE__REC_YIELD:
        CALL_ALL(m, TASK_YIELD, task_yield, r->id);
        break;
    case TSCOPE__REC_RESUME:
        CALL_ALL(m, TASK_RESUME, task_resume, r->id);
        break;
    case TSCOPE__REC_DEP_LOCAL: {
        const void *addr = (const void *)(uintptr_t)(ext ? ext->id : 0);
        tscope_tool_dep_t dep = {sizeof dep,        r->id, r->arg, r->type, r->depth, flags,
                                 (uint16_t)r->prio, addr};
        CALL_ALL(m, DEP_EDGE, dep_edge, &dep);
        if (tscope__hazard_kind(flags)) /* version 1 */
            CALL_ALL(m, DEP_LOCAL, dep_local, r->id, r->arg, addr,
                     (tscope_hazard_t)tscope__hazard_kind(flags));
        break;
    }
    case TSCOPE__REC_DEP_REMOTE:
        CALL_ALL(m, DEP_REMOTE, dep_remote, r->id, (int)r->type, r->arg, (int)r->depth,
                 (const void *)(uintptr_t)(ext ? ext->id : 0), (tscope_dep_dir_t)flags);
        break;
    case TSCOPE__REC_COUNTER: {
        double v;
        memcpy(&v, &r->arg, sizeof v);
        CALL_ALL(m, COUNTER, counter, r->type, v);
        break;
    }
    case TSCOPE__REC_CUSTOM:
        CALL_ALL(m, CUSTOM, custom, r->type, r->arg);
        break;
    default:
        break;
    }
}

void tscope__tools_thread(int begin, uint32_t thread, const char *name)
{
    uint64_t origin = tscope__g.origin, now = tscope__clock_now();
    tscope_tool_ctx_t ctx = {sizeof ctx, thread,
                             now > origin ? (uint64_t)tscope__clock_ns(now - origin) : 0, NULL};
    if (begin)
        CALL_ALL(0, THREAD_BEGIN, thread_begin, name);
    else
        for (int i = 0; i < counts[0][TSCOPE_TOOL_EVENT_THREAD_END]; i++) {
            const struct entry *e = &table[0][TSCOPE_TOOL_EVENT_THREAD_END][i];
            ctx.tool_data = e->h->reg.tool_data;
            ((tscope_tool_thread_end_cb)e->cb)(&ctx);
        }
}

/* INIT or FINALIZE for one plugin (each gets them once, in load order). */
void tscope__tools_lifecycle(tscope_tool_handle_t *h, int init, const tscope_tool_init_info_t *info,
                             uint64_t time_ns)
{
    if (!h)
        return;
    tscope_tool_ctx_t ctx = {sizeof ctx, 0, time_ns, h->reg.tool_data};
    tscope_tool_event_t ev = init ? TSCOPE_TOOL_EVENT_INIT : TSCOPE_TOOL_EVENT_FINALIZE;
    for (int i = 0; i < counts[0][ev]; i++) {
        const struct entry *e = &table[0][ev][i];
        if (e->h != h)
            continue;
        if (init)
            ((tscope_tool_init_cb)e->cb)(&ctx, info);
        else
            ((tscope_tool_finalize_cb)e->cb)(&ctx);
    }
}
