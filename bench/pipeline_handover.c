/* pipeline_handover.c - cost of handing an element from the feeding thread
 * to a one-worker task pool (src/rt/pipeline.c) with an empty task: the
 * queue's whole overhead per element, in the steady state.
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

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || reps < 1 || reps > 64)
        return 2;
    void **elements = calloc(n, sizeof *elements);
    double t[64];
    for (int r = 0; r < reps; r++) {
        tscope_rt_pipeline_t *p;
        if (!elements || tscope_rt_pipeline_create(16, &p) ||
            tscope_rt_pipeline_add_stage(p, nop, NULL, 1, 0))
            return 1;
        double t0 = bench_now_s();
        if (tscope_rt_pipeline_run(p, elements, n))
            return 1;
        t[r] = (bench_now_s() - t0) / (double)n * 1e9;
        tscope_rt_pipeline_destroy(p);
    }
    bench_result("pipeline_handover", "tpool1_nop", "ns_per_element", bench_median(t, reps), "ns");
    free(elements);
    return 0;
}
