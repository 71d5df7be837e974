/* ompt_counting.c - the floor of any OMPT-based tool: an OMPT tool that
 * only counts task-create and task-schedule callbacks (per thread, no
 * shared cache line) and prints the counts at finalize.  `scripts/bench
 * ompt` compares taskscope's OMPT tool with it (bench/ompt.sh). */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static __thread uint64_t creates, schedules;
static _Atomic uint64_t total_creates, total_schedules;

static void on_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *task, int flags,
                      int has_deps, const void *codeptr)
{
    (void)enc, (void)frame, (void)task, (void)flags, (void)has_deps, (void)codeptr;
    creates++;
}

static void on_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
    (void)prior, (void)status, (void)next;
    schedules++;
}

static void on_thread_end(ompt_data_t *data)
{
    (void)data;
    atomic_fetch_add(&total_creates, creates);
    atomic_fetch_add(&total_schedules, schedules);
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    set(ompt_callback_task_create, (ompt_callback_t)on_create);
    set(ompt_callback_task_schedule, (ompt_callback_t)on_schedule);
    set(ompt_callback_thread_end, (ompt_callback_t)on_thread_end);
    return 1;
}

static void finalize(ompt_data_t *data)
{
    (void)data;
    on_thread_end(NULL); /* the initial thread's counts */
    fprintf(stderr, "ompt_counting: %llu task creates, %llu task schedules\n",
            (unsigned long long)total_creates, (unsigned long long)total_schedules);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime);

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime)
{
    (void)version, (void)runtime;
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    return &result;
}
