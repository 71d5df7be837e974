/* counting.c - test plugin: counts the events it receives per event kind
 * and the threads they were delivered on.  Built twice, as counting_a and
 * counting_b (TOOL_NAME), so two copies can be loaded at once.
 *
 *   <TOOL_NAME>_DELIVERY=sync|batched   (default sync), e.g. counting_a_DELIVERY
 *   COUNTING_ORDER_FILE=path         appends "<TOOL_NAME> init" at INIT
 *
 * The test reads the counts through the exported counting_results symbol. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <taskscope/tool.h>

#ifndef TOOL_NAME
#define TOOL_NAME "counting"
#endif

struct counting_results {
    _Atomic uint64_t count[TSCOPE_TOOL_EVENT_COUNT];
    _Atomic uint64_t on_producer; /* task events delivered on the thread they happened on */
    _Atomic int finalized;
    uint64_t last_time_ns;
    _Atomic uintptr_t dep_addr_sum; /* the dependency events' addresses, summed */
};

__attribute__((visibility("default"))) struct counting_results counting_results;

static _Thread_local uint32_t my_thread = UINT32_MAX; /* set by thread_begin (sync) */

#define COUNTER(E, name, params, args)                                                             \
    static void count_##name params                                                                \
    {                                                                                              \
        atomic_fetch_add(&counting_results.count[TSCOPE_TOOL_EVENT_##E], 1);                       \
        if (my_thread == ctx->thread)                                                              \
            atomic_fetch_add(&counting_results.on_producer, 1);                                    \
    }
TSCOPE_TOOL_EVENTS(COUNTER)
#undef COUNTER

static void on_dep_local(const tscope_tool_ctx_t *ctx, uint64_t from, uint64_t to, const void *addr,
                         tscope_hazard_t kind)
{
    count_dep_local(ctx, from, to, addr, kind);
    atomic_fetch_add(&counting_results.dep_addr_sum, (uintptr_t)addr);
}

static void on_dep_remote(const tscope_tool_ctx_t *ctx, uint64_t from, int from_rank, uint64_t to,
                          int to_rank, const void *addr, tscope_dep_dir_t dir)
{
    count_dep_remote(ctx, from, from_rank, to, to_rank, addr, dir);
    atomic_fetch_add(&counting_results.dep_addr_sum, (uintptr_t)addr);
}

static void order_note(void)
{
    const char *path = getenv("COUNTING_ORDER_FILE");
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s init\n", TOOL_NAME);
        fclose(f);
    }
}

static void on_init(const tscope_tool_ctx_t *ctx, const tscope_tool_init_info_t *info)
{
    (void)info;
    atomic_fetch_add(&counting_results.count[TSCOPE_TOOL_EVENT_INIT], 1);
    counting_results.last_time_ns = ctx->time_ns;
    order_note();
}

static void on_thread_begin(const tscope_tool_ctx_t *ctx, const char *name)
{
    (void)name;
    my_thread = ctx->thread;
    atomic_fetch_add(&counting_results.count[TSCOPE_TOOL_EVENT_THREAD_BEGIN], 1);
}

static void done(void *data)
{
    (void)data;
    atomic_store(&counting_results.finalized, 1);
}

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg)
{
    memset(&counting_results, 0, sizeof counting_results);
    const char *d = getenv(TOOL_NAME "_DELIVERY");
    int delivery = d && strcmp(d, "batched") == 0 ? TSCOPE_TOOL_BATCHED : TSCOPE_TOOL_SYNC;
    reg->abi_version = TSCOPE_TOOL_ABI_VERSION;
    reg->name = TOOL_NAME;
    reg->finalize = done;
#define REGISTER(E, name, params, args)                                                            \
    if (TSCOPE_TOOL_EVENT_##E != TSCOPE_TOOL_EVENT_INIT &&                                         \
        TSCOPE_TOOL_EVENT_##E != TSCOPE_TOOL_EVENT_THREAD_BEGIN &&                                 \
        TSCOPE_TOOL_EVENT_##E != TSCOPE_TOOL_EVENT_DEP_LOCAL &&                                    \
        TSCOPE_TOOL_EVENT_##E != TSCOPE_TOOL_EVENT_DEP_REMOTE &&                                   \
        api->set_callback(api->handle, TSCOPE_TOOL_EVENT_##E,                                      \
                          (tscope_tool_callback_t)count_##name, delivery) != TSCOPE_TOOL_ALWAYS)   \
        return -1;
    TSCOPE_TOOL_EVENTS(REGISTER)
#undef REGISTER
    if (api->set_callback(api->handle, TSCOPE_TOOL_EVENT_INIT, (tscope_tool_callback_t)on_init,
                          TSCOPE_TOOL_SYNC) != TSCOPE_TOOL_ALWAYS ||
        api->set_callback(api->handle, TSCOPE_TOOL_EVENT_THREAD_BEGIN,
                          (tscope_tool_callback_t)on_thread_begin,
                          TSCOPE_TOOL_SYNC) != TSCOPE_TOOL_ALWAYS ||
        api->set_callback(api->handle, TSCOPE_TOOL_EVENT_DEP_LOCAL,
                          (tscope_tool_callback_t)on_dep_local, delivery) != TSCOPE_TOOL_ALWAYS ||
        api->set_callback(api->handle, TSCOPE_TOOL_EVENT_DEP_REMOTE,
                          (tscope_tool_callback_t)on_dep_remote, delivery) != TSCOPE_TOOL_ALWAYS)
        return -1;
    /* bad registrations are refused */
    if (api->set_callback(api->handle, TSCOPE_TOOL_EVENT_COUNT, (tscope_tool_callback_t)on_init,
                          TSCOPE_TOOL_SYNC) != TSCOPE_EINVAL ||
        api->set_callback(api->handle, TSCOPE_TOOL_EVENT_TASK_END, (tscope_tool_callback_t)on_init,
                          7) != TSCOPE_EINVAL)
        return -1;
    if (strcmp(api->tool_event_name(TSCOPE_TOOL_EVENT_TASK_BEGIN), "task_begin") != 0)
        return -1;
    return 0;
}
