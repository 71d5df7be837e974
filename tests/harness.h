/* harness.h - helpers for tests that drive the library through its public
 * API with a manual clock (1 tick = 1 ns), so expected times are exact. */
#ifndef TSCOPE_TESTS_HARNESS_H
#define TSCOPE_TESTS_HARNESS_H

#include <stdlib.h>

#include "core/clock.h"
#include "taskscope/taskscope.h"
#include "test.h"

/* Initialises taskscope with a manual clock at time 1000 and no outputs. */
static inline void harness_init(void)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    tscope__clock_use_manual(1000);
    ASSERT_OK(tscope_init(0, 1));
}

/* Sets the manual clock to 1000 + t. */
static inline void at(uint64_t t)
{
    tscope__clock_manual_set(1000 + t);
}

static inline tscope_type_t type_named(const char *name)
{
    tscope_type_t t;
    ASSERT_OK(tscope_type_register(name, &t));
    return t;
}

static inline tscope_type_stats_t type_stats(tscope_type_t t)
{
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(t, &st));
    return st;
}

static inline tscope_task_info_t task_info(uint64_t id)
{
    tscope_task_info_t ti;
    ASSERT_OK(tscope_query_task(id, &ti));
    return ti;
}

#endif
