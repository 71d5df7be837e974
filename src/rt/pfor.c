/* pfor.c - recursive parallel-for on splittable/processable work items
 * (AllScale's model): split in halves down to the grain, then process. */
#include <stdlib.h>

#include "rt.h"

struct item {
    size_t b, e, grain;
    unsigned depth;
    tscope_rt_range_fn body;
    void *arg;
    tscope_type_t type;
};

static void run_item(void *p)
{
    struct item *it = p;
    if (it->e - it->b <= it->grain) {
        it->body(it->b, it->e, it->arg);
        return;
    }
    size_t mid = it->b + (it->e - it->b) / 2;
    struct item half[2] = {*it, *it};
    half[0].e = mid;
    half[1].b = mid;
    for (int k = 0; k < 2; k++) {
        half[k].depth = it->depth + 1;
        unsigned flags =
            half[k].e - half[k].b <= it->grain ? TSCOPE_TASK_PROCESSABLE : TSCOPE_TASK_SPLITTABLE;
        tscope_rt_spawn_opts_t o = {sizeof o, it->type, 0, flags, half[k].depth, NULL, 0};
        if (tscope_rt_spawn(run_item, &half[k], &o, NULL) != 0)
            run_item(&half[k]); /* no memory for a task: do it here */
    }
    tscope_rt_taskwait();
}

int tscope_rt_parallel_for(size_t begin, size_t end, size_t grain, tscope_rt_range_fn body,
                           void *arg, tscope_type_t type)
{
    if (!body || end < begin || grain == 0)
        return TSCOPE_EINVAL;
    if (begin == end)
        return 0;
    struct item root = {begin, end, grain, 0, body, arg, type};
    unsigned flags = end - begin <= grain ? TSCOPE_TASK_PROCESSABLE : TSCOPE_TASK_SPLITTABLE;
    tscope_rt_spawn_opts_t o = {sizeof o, type, 0, flags, 0, NULL, 0};
    tscope_rt_task_t *h;
    int rc = tscope_rt_spawn(run_item, &root, &o, &h);
    if (rc)
        return rc;
    rc = tscope_rt_wait(h);
    tscope_rt_release(h);
    return rc;
}
