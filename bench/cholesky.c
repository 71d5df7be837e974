/* cholesky.c - blocked Cholesky factorisation (lower, A = L L^T) on the
 * bundled runtime with task dependencies: potrf on the diagonal tile, trsm
 * below it, syrk and gemm updates of the trailing matrix - each a task on
 * tiles, BLAS and LAPACK from Debian's OpenBLAS / LAPACKE, OpenBLAS itself
 * single-threaded inside the tasks.  Verified against LAPACKE_dpotrf on the
 * whole matrix. */
#include "cholesky.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>
#include <taskscope/rt.h>

struct tile_op {
    int op; /* 0 potrf, 1 trsm, 2 syrk, 3 gemm */
    double *a, *b, *c;
    int bs;
    int *failed;
};

static void run_op(void *arg)
{
    struct tile_op *t = arg;
    int bs = t->bs;
    switch (t->op) {
    case 0: /* A_kk = chol(A_kk) */
        if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', bs, t->c, bs) != 0)
            *t->failed = 1;
        break;
    case 1: /* A_ik = A_ik * L_kk^-T */
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, bs, bs, 1.0,
                    t->a, bs, t->c, bs);
        break;
    case 2: /* A_ii -= A_ik A_ik^T */
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, bs, bs, -1.0, t->a, bs, 1.0, t->c, bs);
        break;
    default: /* A_ij -= A_ik A_jk^T */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, bs, bs, bs, -1.0, t->a, bs, t->b, bs,
                    1.0, t->c, bs);
    }
}

int cholesky_run(int n, int bs)
{
    openblas_set_num_threads(1);
    int nb = n / bs;
    n = nb * bs;
    double **tile = calloc((size_t)nb * nb, sizeof *tile);
    double *full = malloc((size_t)n * n * sizeof *full);
    if (!tile || !full)
        return -1;
    /* a symmetric, diagonally dominant (so positive definite) matrix */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            full[(size_t)j * n + i] = 1.0 / (1.0 + fabs((double)(i - j))) + (i == j ? n : 0);
    for (int tj = 0; tj < nb; tj++)
        for (int ti = tj; ti < nb; ti++) {
            double *t = malloc((size_t)bs * bs * sizeof *t);
            if (!t)
                return -1;
            for (int j = 0; j < bs; j++)
                for (int i = 0; i < bs; i++)
                    t[(size_t)j * bs + i] = full[(size_t)(tj * bs + j) * n + ti * bs + i];
            tile[ti * nb + tj] = t;
        }
    static const char *names[4] = {"chol_potrf", "chol_trsm", "chol_syrk", "chol_gemm"};
    tscope_type_t types[4];
    for (int k = 0; k < 4; k++)
        tscope_type_register(names[k], &types[k]);
    size_t nops = (size_t)nb * nb * nb + 16, next = 0;
    struct tile_op *ops = malloc(nops * sizeof *ops);
    int failed = 0;
#define T(i, j) tile[(i)*nb + (j)]
#define SPAWN(OP, A, B, C, ...)                                                                    \
    do {                                                                                           \
        ops[next] = (struct tile_op){OP, A, B, C, bs, &failed};                                    \
        tscope_rt_dep_t d[] = {__VA_ARGS__};                                                       \
        tscope_rt_spawn_opts_t o = {sizeof o, types[OP], 0, 0, 0, d, sizeof d / sizeof d[0]};      \
        tscope_rt_spawn(run_op, &ops[next++], &o, NULL);                                           \
    } while (0)
    for (int k = 0; k < nb; k++) {
        SPAWN(0, NULL, NULL, T(k, k), {T(k, k), TSCOPE_RT_INOUT});
        for (int i = k + 1; i < nb; i++)
            SPAWN(1, T(k, k), NULL, T(i, k), {T(k, k), TSCOPE_RT_IN}, {T(i, k), TSCOPE_RT_INOUT});
        for (int i = k + 1; i < nb; i++) {
            SPAWN(2, T(i, k), NULL, T(i, i), {T(i, k), TSCOPE_RT_IN}, {T(i, i), TSCOPE_RT_INOUT});
            for (int j = k + 1; j < i; j++)
                SPAWN(3, T(i, k), T(j, k), T(i, j), {T(i, k), TSCOPE_RT_IN},
                      {T(j, k), TSCOPE_RT_IN}, {T(i, j), TSCOPE_RT_INOUT});
        }
    }
    tscope_rt_taskwait();
    /* reference: the whole matrix at once */
    int rc = failed || LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, full, n) != 0 ? -1 : 0;
    double maxdiff = 0;
    for (int tj = 0; tj < nb && !rc; tj++)
        for (int ti = tj; ti < nb; ti++)
            for (int j = 0; j < bs; j++)
                for (int i = 0; i < bs; i++) {
                    int gi = ti * bs + i, gj = tj * bs + j;
                    if (gi < gj)
                        continue;
                    double want = full[(size_t)gj * n + gi];
                    double got = T(ti, tj)[(size_t)j * bs + i];
                    double diff = fabs(got - want) / (fabs(want) + 1e-300);
                    if (fabs(want) > 1e-12 && diff > maxdiff)
                        maxdiff = diff;
                }
    if (maxdiff > 1e-9)
        rc = -1;
    for (int i = 0; i < nb * nb; i++)
        free(tile[i]);
    free(tile);
    free(full);
    free(ops);
    return rc;
}
