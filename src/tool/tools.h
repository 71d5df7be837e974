/* tools.h - internal side of the tools interface (include/taskscope/tool.h).
 *
 * Loaded plugins and their callbacks live in tables written only by
 * tscope_init (before measurement is switched on) and cleared by the next
 * tscope_init; readers (producers for synchronous delivery, the consumer
 * for batched delivery) never see them change.  tscope__tools_sync_mask and
 * tscope__tools_batched_mask hold one bit per event that has a callback.
 */
#ifndef TSCOPE_TOOL_TOOLS_H
#define TSCOPE_TOOL_TOOLS_H

#include <stdint.h>

#include "core/record.h"
#include "taskscope/tool.h"

#define TSCOPE__TOOLS_MAX 16

/* One loaded plugin (the opaque handle of tool.h). */
struct tscope_tool_handle {
    char path[1024];
    void *dl;
    tscope_tool_reg_t reg;
};

extern uint32_t tscope__tools_sync_mask;
extern uint32_t tscope__tools_batched_mask;

/* Loads the colon-separated plugin list (TASKSCOPE_TOOLS); each failure is
 * one warning line on stderr.  Then delivers INIT.  Returns the number of
 * plugins loaded. */
int tscope__tools_load(const char *list, int rank, int nranks, uint32_t max_threads);
/* Delivers FINALIZE, calls each plugin's finalize and forgets the plugins
 * (the libraries stay loaded: a callback may still be on a stack). */
void tscope__tools_finalize(uint64_t time_ns);
/* 1 if some record-producing event has a synchronous callback. */
int tscope__tools_sync_events(void);

/* Delivers the events of one record (and its EXT) with the given delivery
 * (TSCOPE_TOOL_SYNC on the producer, TSCOPE_TOOL_BATCHED on the consumer). */
void tscope__tools_deliver(int delivery, uint32_t thread, const struct tscope__rec *r,
                           const struct tscope__rec *ext);
/* THREAD_BEGIN / THREAD_END on the calling thread. */
void tscope__tools_thread(int begin, uint32_t thread, const char *name);

/* The tool-event bits a record kind produces (inline: at a call site with
 * a constant kind it folds to a constant). */
static inline uint32_t tscope__tools_rec_bits(unsigned kind)
{
#define TSCOPE__TB(e) (1u << TSCOPE_TOOL_EVENT_##e)
    switch (kind) {
    case TSCOPE__REC_CREATE:
        return TSCOPE__TB(TASK_CREATE);
    case TSCOPE__REC_START:
        return TSCOPE__TB(TASK_CREATE) | TSCOPE__TB(TASK_BEGIN);
    case TSCOPE__REC_QUEUED:
        return TSCOPE__TB(TASK_QUEUED);
    case TSCOPE__REC_BEGIN:
        return TSCOPE__TB(TASK_BEGIN);
    case TSCOPE__REC_END:
        return TSCOPE__TB(TASK_END);
    case TSCOPE__REC_CANCEL:
        return TSCOPE__TB(TASK_CANCEL);
    case TSCOPE__REC_YIELD:
        return TSCOPE__TB(TASK_YIELD);
    case TSCOPE__REC_RESUME:
        return TSCOPE__TB(TASK_RESUME);
    case TSCOPE__REC_DEP_LOCAL:
        return TSCOPE__TB(DEP_LOCAL) | TSCOPE__TB(DEP_EDGE);
    case TSCOPE__REC_DEP_REMOTE:
        return TSCOPE__TB(DEP_REMOTE);
    case TSCOPE__REC_COUNTER:
        return TSCOPE__TB(COUNTER);
    case TSCOPE__REC_CUSTOM:
        return TSCOPE__TB(CUSTOM);
    default:
        return 0;
    }
#undef TSCOPE__TB
}

/* registry.c, for load.c */
int tscope__tools_set_callback(tscope_tool_handle_t *h, tscope_tool_event_t event,
                               tscope_tool_callback_t cb, int delivery);
void tscope__tools_forget(tscope_tool_handle_t *h);
void tscope__tools_reset(void);
void tscope__tools_lifecycle(tscope_tool_handle_t *h, int init, const tscope_tool_init_info_t *info,
                             uint64_t time_ns);

#endif
