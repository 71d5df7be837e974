/* tool.h - the taskscope tools interface: plugins that receive task events.
 *
 * A plugin is a shared library named in TASKSCOPE_TOOLS (colon-separated;
 * several at once, loaded in order).  It exports one function,
 *
 *     int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);
 *
 * (TSCOPE_TOOL_INIT_SYMBOL; the suffix is the ABI's first version: the
 * plugin says in reg->abi_version which version it was built for, and
 * versions 1 and 2 load).  taskscope calls
 * it once from tscope_init().  The plugin fills *reg (its name, its data
 * pointer, an optional finalize function) and registers a callback per event
 * it wants with api->set_callback(), choosing for each where it runs:
 *
 *   TSCOPE_TOOL_SYNC     on the producing thread, at the moment of the event
 *                        (what a debugger or a runtime-steering tool needs);
 *   TSCOPE_TOOL_BATCHED  on taskscope's consumer thread, shortly after the
 *                        event, in each thread's event order (cheap for the
 *                        application); events still in the rings when
 *                        tscope_finalize() runs are delivered on its thread.
 *
 * set_callback answers like OMPT's ompt_set_result_t: TSCOPE_TOOL_ALWAYS
 * (delivered every time), TSCOPE_TOOL_SOMETIMES (batched delivery while the
 * drop policy may lose events), TSCOPE_TOOL_NEVER (this event is not produced
 * in this configuration), or a negative TSCOPE_E* error.  Returning a
 * negative value from the init function, or failing to load, costs one
 * warning line; the program runs on without that plugin.
 *
 * Every struct that crosses the boundary starts with its size (append-only
 * ABI).  Callbacks must not call taskscope event functions.  An event that
 * no plugin registered costs nothing on the producing thread.
 */
#ifndef TASKSCOPE_TOOL_H
#define TASKSCOPE_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "taskscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: the DEP_EDGE event (one per pair of tasks, every hazard). */
#define TSCOPE_TOOL_ABI_VERSION 2
#define TSCOPE_TOOL_INIT_SYMBOL "tscope_tool_init_v1"

/* Passed to every callback. */
typedef struct tscope_tool_ctx {
    uint32_t struct_size;
    uint32_t thread;  /* index of the thread the event happened on */
    uint64_t time_ns; /* when, in ns since tscope_init */
    void *tool_data;  /* the plugin's reg->tool_data */
} tscope_tool_ctx_t;

typedef struct tscope_tool_init_info {
    uint32_t struct_size;
    int rank, nranks;
    uint32_t max_threads;
    const char *program; /* short name of the program */
} tscope_tool_init_info_t;

/* A local dependence edge (ABI version 2): task `to` depends on `from`. */
typedef struct tscope_tool_dep {
    uint32_t struct_size;
    uint64_t from, to;
    tscope_type_t from_type, to_type; /* as recorded (0: not given) */
    unsigned hazards;                 /* TSCOPE_HAZARD_* bits */
    uint32_t naddrs;                  /* addresses causing it */
    const void *addr;                 /* the first of them */
} tscope_tool_dep_t;

typedef struct tscope_tool_task {
    uint32_t struct_size;
    uint64_t id, parent;
    tscope_type_t type;
    unsigned flags; /* TSCOPE_TASK_* */
    unsigned depth;
    int priority;
} tscope_tool_task_t;

/* The event list: one X-macro generates the event enum, the typed callback
 * signatures, the dispatch table and the enabled bits.
 * X(ENUM_SUFFIX, name, (callback parameters), (call arguments)) */
#define TSCOPE_TOOL_EVENTS(X)                                                                      \
    X(INIT, init, (const tscope_tool_ctx_t *ctx, const tscope_tool_init_info_t *info),             \
      (ctx, info))                                                                                 \
    X(FINALIZE, finalize, (const tscope_tool_ctx_t *ctx), (ctx))                                   \
    X(THREAD_BEGIN, thread_begin, (const tscope_tool_ctx_t *ctx, const char *name), (ctx, name))   \
    X(THREAD_END, thread_end, (const tscope_tool_ctx_t *ctx), (ctx))                               \
    X(TASK_CREATE, task_create, (const tscope_tool_ctx_t *ctx, const tscope_tool_task_t *task),    \
      (ctx, task))                                                                                 \
    X(TASK_QUEUED, task_queued, (const tscope_tool_ctx_t *ctx, uint64_t task), (ctx, task))        \
    X(TASK_BEGIN, task_begin, (const tscope_tool_ctx_t *ctx, uint64_t task, tscope_type_t type),   \
      (ctx, task, type))                                                                           \
    X(TASK_END, task_end, (const tscope_tool_ctx_t *ctx, uint64_t task), (ctx, task))              \
    X(TASK_CANCEL, task_cancel, (const tscope_tool_ctx_t *ctx, uint64_t task), (ctx, task))        \
    X(TASK_YIELD, task_yield, (const tscope_tool_ctx_t *ctx, uint64_t task), (ctx, task))          \
    X(TASK_RESUME, task_resume, (const tscope_tool_ctx_t *ctx, uint64_t task), (ctx, task))        \
    /* version 1: one call per edge, kind its first ordering hazard (none for an edge of           \
     * mutual exclusion only) */                                                                   \
    X(DEP_LOCAL, dep_local,                                                                        \
      (const tscope_tool_ctx_t *ctx, uint64_t from, uint64_t to, const void *addr,                 \
       tscope_hazard_t kind),                                                                      \
      (ctx, from, to, addr, kind))                                                                 \
    X(DEP_REMOTE, dep_remote,                                                                      \
      (const tscope_tool_ctx_t *ctx, uint64_t from, int from_rank, uint64_t to, int to_rank,       \
       const void *addr, tscope_dep_dir_t dir),                                                    \
      (ctx, from, from_rank, to, to_rank, addr, dir))                                              \
    X(COUNTER, counter, (const tscope_tool_ctx_t *ctx, tscope_counter_t counter, double value),    \
      (ctx, counter, value))                                                                       \
    X(CUSTOM, custom, (const tscope_tool_ctx_t *ctx, tscope_event_t event, uint64_t payload),      \
      (ctx, event, payload))                                                                       \
    X(DEP_EDGE, dep_edge, (const tscope_tool_ctx_t *ctx, const tscope_tool_dep_t *dep), (ctx, dep))

typedef enum tscope_tool_event {
#define TSCOPE_TOOL_ENUM(E, name, params, args) TSCOPE_TOOL_EVENT_##E,
    TSCOPE_TOOL_EVENTS(TSCOPE_TOOL_ENUM)
#undef TSCOPE_TOOL_ENUM
        TSCOPE_TOOL_EVENT_COUNT
} tscope_tool_event_t;

/* Typed callbacks: tscope_tool_task_begin_cb and so on. */
#define TSCOPE_TOOL_TYPEDEF(E, name, params, args) typedef void(*tscope_tool_##name##_cb) params;
TSCOPE_TOOL_EVENTS(TSCOPE_TOOL_TYPEDEF)
#undef TSCOPE_TOOL_TYPEDEF

/* set_callback takes any of them cast to this type. */
typedef void (*tscope_tool_callback_t)(void);

enum tscope_tool_delivery { TSCOPE_TOOL_SYNC = 1, TSCOPE_TOOL_BATCHED = 2 };

enum tscope_tool_set_result {
    TSCOPE_TOOL_NEVER = 0,
    TSCOPE_TOOL_SOMETIMES = 1,
    TSCOPE_TOOL_ALWAYS = 2
};

typedef struct tscope_tool_handle tscope_tool_handle_t; /* opaque: one per loaded plugin */

typedef struct tscope_tool_api {
    uint32_t struct_size;
    uint32_t abi_version; /* TSCOPE_TOOL_ABI_VERSION of the loading taskscope */
    tscope_tool_handle_t *handle;
    /* Registers cb for event with the given delivery; see the top of file. */
    int (*set_callback)(tscope_tool_handle_t *handle, tscope_tool_event_t event,
                        tscope_tool_callback_t cb, int delivery);
    /* Name lookups (copy into buf; 0 or TSCOPE_ENOENT). */
    int (*type_name)(tscope_type_t type, char *buf, size_t len);
    int (*counter_name)(tscope_counter_t counter, char *buf, size_t len);
    int (*event_name)(tscope_event_t event, char *buf, size_t len);
    /* The name of an event of this interface ("task_begin"). */
    const char *(*tool_event_name)(tscope_tool_event_t event);
} tscope_tool_api_t;

typedef struct tscope_tool_reg {
    uint32_t struct_size; /* set by taskscope before the call */
    uint32_t abi_version; /* the plugin sets TSCOPE_TOOL_ABI_VERSION */
    const char *name;     /* the plugin sets a short name (static storage) */
    void *tool_data;      /* passed back in every ctx */
    /* Called once at tscope_finalize, after the FINALIZE event; may be NULL. */
    void (*finalize)(void *tool_data);
} tscope_tool_reg_t;

typedef int (*tscope_tool_init_fn)(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

#ifdef __cplusplus
}
#endif

#endif
