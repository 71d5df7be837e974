/* dummy.c - the zero tool: registers every event with an empty callback.
 * It measures what the tools interface itself costs (TASKSCOPE_TOOLS=dummy).
 * TASKSCOPE_DUMMY_DELIVERY=sync|batched (default sync: the costlier path). */
#include <stdlib.h>
#include <string.h>

#include <taskscope/tool.h>

#define EMPTY(E, name, params, args)                                                               \
    static void empty_##name params {}
TSCOPE_TOOL_EVENTS(EMPTY)
#undef EMPTY

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg)
{
    const char *d = getenv("TASKSCOPE_DUMMY_DELIVERY");
    int delivery = d && strcmp(d, "batched") == 0 ? TSCOPE_TOOL_BATCHED : TSCOPE_TOOL_SYNC;
    reg->abi_version = TSCOPE_TOOL_ABI_VERSION;
    reg->name = "dummy";
#define REGISTER(E, name, params, args)                                                            \
    if (api->set_callback(api->handle, TSCOPE_TOOL_EVENT_##E,                                      \
                          (tscope_tool_callback_t)empty_##name, delivery) < 0)                     \
        return -1;
    TSCOPE_TOOL_EVENTS(REGISTER)
#undef REGISTER
    return 0;
}
