/* bad_abi.c - test plugin built for another tools interface: it exports only
 * tscope_tool_init_v2, so taskscope must refuse it with a clear line. */
#include <taskscope/tool.h>

int tscope_tool_init_v2(const void *api, void *reg);

int tscope_tool_init_v2(const void *api, void *reg)
{
    (void)api;
    (void)reg;
    return 0;
}
