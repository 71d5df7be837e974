/* stencil.h - the 1-D Jacobi stencil u'[i] = (u[i-1] + u[i] + u[i+1]) / 3
 * (fixed boundaries) on the bundled runtime, shared by the benchmarks: the
 * grid in ST_BLOCKS blocks, one task per block and sweep.  stencil() is the
 * chain form (a taskwait per sweep); rt_bench also spawns the blocks with
 * dependencies.  The initial grid is stencil_initial(i) so that a
 * sequential reference can be recomputed. */
#ifndef TSCOPE_BENCH_STENCIL_H
#define TSCOPE_BENCH_STENCIL_H

#include <stdlib.h>

#include <taskscope/rt.h>

#include "bench.h"

enum { ST_BLOCKS = 64 };
static size_t st_n, st_block;
static double *st_buf[2];

struct sweep_block {
    int sweep;
    size_t block;
};

static inline double stencil_initial(size_t i)
{
    return (double)(i % 17);
}

static void stencil_block(void *arg)
{
    struct sweep_block *sb = arg;
    const double *in = st_buf[sb->sweep % 2];
    double *out = st_buf[(sb->sweep + 1) % 2];
    size_t b = sb->block * st_block, e = b + st_block;
    for (size_t i = b; i < e; i++)
        out[i] = (i == 0 || i == st_n - 1) ? in[i] : (in[i - 1] + in[i] + in[i + 1]) / 3.0;
}

/* Seconds for `sweeps` sweeps (tscope_rt_init done by the caller). */
static inline double stencil(int sweeps)
{
    static struct sweep_block items[ST_BLOCKS];
    double t0 = bench_now_s();
    for (int s = 0; s < sweeps; s++) {
        for (size_t k = 0; k < ST_BLOCKS; k++) {
            items[k] = (struct sweep_block){s, k};
            tscope_rt_spawn(stencil_block, &items[k], NULL, NULL);
        }
        tscope_rt_taskwait();
    }
    return bench_now_s() - t0;
}

/* (Re)allocates the grid: points per block, the task size. */
static inline void stencil_setup(size_t points_per_block)
{
    st_block = points_per_block;
    st_n = st_block * ST_BLOCKS;
    for (int k = 0; k < 2; k++) {
        free(st_buf[k]);
        st_buf[k] = malloc(st_n * sizeof(double));
        for (size_t i = 0; i < st_n; i++)
            st_buf[k][i] = stencil_initial(i);
    }
}

static inline void stencil_teardown(void)
{
    for (int k = 0; k < 2; k++) {
        free(st_buf[k]);
        st_buf[k] = NULL;
    }
}

#endif
