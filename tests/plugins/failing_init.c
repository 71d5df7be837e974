/* failing_init.c - test plugin whose init fails after registering a
 * callback: taskscope must drop it, so the callback never runs. */
#include <stdlib.h>

#include <taskscope/tool.h>

static void must_not_run(const tscope_tool_ctx_t *ctx, uint64_t task)
{
    (void)ctx;
    (void)task;
    abort();
}

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg)
{
    reg->abi_version = TSCOPE_TOOL_ABI_VERSION;
    api->set_callback(api->handle, TSCOPE_TOOL_EVENT_TASK_END, (tscope_tool_callback_t)must_not_run,
                      TSCOPE_TOOL_BATCHED);
    return TSCOPE_EIO;
}
