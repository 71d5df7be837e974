/* wrong_version.c - test plugin whose registration declares another ABI
 * version than its init symbol: refused, its callbacks never called. */
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
    api->set_callback(api->handle, TSCOPE_TOOL_EVENT_TASK_END, (tscope_tool_callback_t)must_not_run,
                      TSCOPE_TOOL_SYNC);
    reg->abi_version = 99;
    return 0;
}
