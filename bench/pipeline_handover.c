/* pipeline_handover.c - what the pipeline pattern (src/rt/pipeline.c) costs
 * per element with empty tasks, in the steady state:
 *   tpool1_nop    a one-worker task pool: the worker claims elements from
 *                 the input array (the cost of claiming and calling);
 *   pipe_nop_nop  two one-worker stages: adds the hand-over of each element
 *                 through the bounded queue between them.
 *
 * usage: bench_pipeline_handover [ELEMENTS] [REPS]  (100,000 and 5; median)
 */
#include <taskscope/rt.h>

#include "bench.h"

static void nop(void *e, void *a)
{
    (void)e;
    (void)a;
}

static double per_element_ns(void **elements, size_t n, int stages)
{
    tscope_rt_pipeline_t *p;
    if (tscope_rt_pipeline_create(16, &p))
        exit(1);
    for (int s = 0; s < stages; s++)
        if (tscope_rt_pipeline_add_stage(p, nop, NULL, 1, 0))
            exit(1);
    double t0 = bench_now_s();
    if (tscope_rt_pipeline_run(p, elements, n))
        exit(1);
    double t = (bench_now_s() - t0) / (double)n * 1e9;
    tscope_rt_pipeline_destroy(p);
    return t;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || reps < 1 || reps > 64)
        return 2;
    void **elements = calloc(n, sizeof *elements);
    if (!elements)
        return 1;
    double pool[64], pipe[64];
    for (int r = 0; r < reps; r++) {
        pool[r] = per_element_ns(elements, n, 1);
        pipe[r] = per_element_ns(elements, n, 2);
    }
    bench_result("pipeline_handover", "tpool1_nop", "ns_per_element", bench_median(pool, reps),
                 "ns");
    bench_result("pipeline_handover", "pipe_nop_nop", "ns_per_element", bench_median(pipe, reps),
                 "ns");
    free(elements);
    return 0;
}
