/* ompt_truth.c - what the OpenMP runtime itself reports, to check
 * taskscope's counts against (tests/test_adapters.sh): an OMPT tool that
 * counts, per explicit task's code address, the tasks created, those
 * completed, and the task_schedule callbacks that leave one of them for
 * another task without ending it (status ompt_task_switch or
 * ompt_task_yield: its switches, for `yields`), and the same switches of
 * implicit (and initial) tasks.  At finalize it writes to the file named by
 * OMPT_TRUTH_OUT one line "created completed switched" per address
 * (sorted), then "implicit N".  Nothing of taskscope is in it. */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 4096 /* distinct task addresses (open addressing) */

static struct slot {
    _Atomic(const void *) addr;
    _Atomic uint64_t created, completed, switched;
} slots[SLOTS];
static struct slot implicit; /* every implicit task (its addr stays NULL) */

static struct slot *slot_of(const void *addr)
{
    uintptr_t h = ((uintptr_t)addr * 0x9E3779B97F4A7C15ull) >> 52;
    for (unsigned i = 0; i < SLOTS; i++) {
        struct slot *s = &slots[(h + i) % SLOTS];
        const void *want = NULL;
        if (s->addr == addr || atomic_compare_exchange_strong(&s->addr, &want, addr) ||
            want == addr)
            return s;
    }
    return NULL;
}

static void on_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *task, int flags,
                      int has_deps, const void *codeptr)
{
    (void)enc, (void)frame, (void)has_deps;
    struct slot *s = (flags & ompt_task_explicit) ? slot_of(codeptr) : NULL;
    task->ptr = s;
    if (s)
        atomic_fetch_add(&s->created, 1);
}

static void on_implicit(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                        unsigned actual, unsigned index, int flags)
{
    (void)parallel, (void)actual, (void)index, (void)flags;
    if (ep == ompt_scope_begin && task)
        task->ptr = &implicit;
}

static void on_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
    struct slot *s = prior ? prior->ptr : NULL;
    if (!s)
        return;
    if (s != &implicit && (status == ompt_task_complete || status == ompt_task_cancel))
        atomic_fetch_add(&s->completed, 1);
    /* (libomp reports an untied task's part continued at once by its next
     * part, in a team of one thread, as a switch to itself: nothing else
     * ran, so no switch) */
    else if (prior != next && (status == ompt_task_switch || status == ompt_task_yield))
        atomic_fetch_add(&s->switched, 1);
}

static int by_counts(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static void finalize(ompt_data_t *data)
{
    (void)data;
    static uint64_t rows[SLOTS][3];
    unsigned n = 0;
    for (unsigned i = 0; i < SLOTS; i++)
        if (slots[i].addr) {
            rows[n][0] = slots[i].created;
            rows[n][1] = slots[i].completed;
            rows[n][2] = slots[i].switched;
            n++;
        }
    qsort(rows, n, sizeof rows[0], by_counts);
    const char *path = getenv("OMPT_TRUTH_OUT");
    FILE *f = path ? fopen(path, "w") : stderr;
    if (!f)
        return;
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "%llu %llu %llu\n", (unsigned long long)rows[i][0],
                (unsigned long long)rows[i][1], (unsigned long long)rows[i][2]);
    fprintf(f, "implicit %llu\n", (unsigned long long)implicit.switched);
    if (f != stderr)
        fclose(f);
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    set(ompt_callback_task_create, (ompt_callback_t)on_create);
    set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit);
    set(ompt_callback_task_schedule, (ompt_callback_t)on_schedule);
    return 1;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime);

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime)
{
    (void)version, (void)runtime;
    static ompt_start_tool_result_t r = {initialize, finalize, {0}};
    return &r;
}
