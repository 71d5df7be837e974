/* cholesky.c - blocked Cholesky factorisation A = L*L^T with OpenMP tasks
 * and depend clauses (potrf, trsm, syrk, gemm per block: the classic
 * task-dependency benchmark).  Checks the result against A.
 *
 *   usage: cholesky [NB] [BS]   (NB x NB blocks of BS x BS, default 8 x 64)
 *   prints: cholesky NBxNB blocks of BS: tasks T, max error E, threads P
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int nb, bs;
#define BLK(A, i, j) ((A)[(size_t)(i)*nb + (j)])

static void potrf(double *a)
{
    for (int j = 0; j < bs; j++) {
        double d = a[j * bs + j];
        for (int k = 0; k < j; k++)
            d -= a[j * bs + k] * a[j * bs + k];
        d = sqrt(d);
        a[j * bs + j] = d;
        for (int i = j + 1; i < bs; i++) {
            double s = a[i * bs + j];
            for (int k = 0; k < j; k++)
                s -= a[i * bs + k] * a[j * bs + k];
            a[i * bs + j] = s / d;
        }
        for (int i = 0; i < j; i++)
            a[i * bs + j] = 0;
    }
}

/* b = b * inv(l)^T, l lower triangular */
static void trsm(const double *l, double *b)
{
    for (int i = 0; i < bs; i++)
        for (int j = 0; j < bs; j++) {
            double s = b[i * bs + j];
            for (int k = 0; k < j; k++)
                s -= b[i * bs + k] * l[j * bs + k];
            b[i * bs + j] = s / l[j * bs + j];
        }
}

/* c -= a * b^T */
static void gemm(const double *a, const double *b, double *c)
{
    for (int i = 0; i < bs; i++)
        for (int j = 0; j < bs; j++) {
            double s = 0;
            for (int k = 0; k < bs; k++)
                s += a[i * bs + k] * b[j * bs + k];
            c[i * bs + j] -= s;
        }
}

int main(int argc, char **argv)
{
    nb = argc > 1 ? atoi(argv[1]) : 8;
    bs = argc > 2 ? atoi(argv[2]) : 64;
    if (nb < 1 || nb > 64 || bs < 1 || bs > 512) {
        fprintf(stderr, "cholesky: NB must be 1..64 and BS 1..512\n");
        return 2;
    }
    int n = nb * bs;
    double **A = calloc((size_t)nb * nb, sizeof *A);
    double *orig = malloc((size_t)n * n * sizeof *orig);
    if (!A || !orig)
        return 1;
    /* symmetric positive definite: random symmetric + n on the diagonal */
    srand(1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double v = (double)rand() / RAND_MAX + (i == j ? n : 0);
            orig[(size_t)i * n + j] = orig[(size_t)j * n + i] = v;
        }
    for (int bi = 0; bi < nb; bi++)
        for (int bj = 0; bj < nb; bj++) {
            double *b = malloc((size_t)bs * bs * sizeof *b);
            for (int i = 0; i < bs; i++)
                for (int j = 0; j < bs; j++)
                    b[i * bs + j] = orig[(size_t)(bi * bs + i) * n + bj * bs + j];
            BLK(A, bi, bj) = b;
        }
    long tasks = 0;
    int threads = 0;
#pragma omp parallel
#pragma omp single
    {
        threads = omp_get_num_threads();
        for (int k = 0; k < nb; k++) {
            double *akk = BLK(A, k, k);
#pragma omp task depend(inout : akk[0])
            potrf(akk);
            tasks++;
            for (int i = k + 1; i < nb; i++) {
                double *aik = BLK(A, i, k);
#pragma omp task depend(in : akk[0]) depend(inout : aik[0])
                trsm(akk, aik);
                tasks++;
            }
            for (int i = k + 1; i < nb; i++) {
                double *aik = BLK(A, i, k);
                for (int j = k + 1; j < i; j++) {
                    double *ajk = BLK(A, j, k), *aij = BLK(A, i, j);
#pragma omp task depend(in : aik[0], ajk[0]) depend(inout : aij[0])
                    gemm(aik, ajk, aij);
                    tasks++;
                }
                double *aii = BLK(A, i, i);
#pragma omp task depend(in : aik[0]) depend(inout : aii[0])
                gemm(aik, aik, aii); /* syrk */
                tasks++;
            }
        }
    }
    /* check: (L * L^T)[i][j] against the original, lower triangle */
    double err = 0;
    for (int i = 0; i < n; i += 7)
        for (int j = 0; j <= i; j += 5) {
            double s = 0;
            for (int k = 0; k <= j; k++)
                s += BLK(A, i / bs, k / bs)[(i % bs) * bs + k % bs] *
                     BLK(A, j / bs, k / bs)[(j % bs) * bs + k % bs];
            double e = fabs(s - orig[(size_t)i * n + j]);
            err = e > err ? e : err;
        }
    printf("cholesky %dx%d blocks of %d: tasks %ld, max error %.3g, threads %d\n", nb, nb, bs,
           tasks, err, threads);
    for (int i = 0; i < nb * nb; i++)
        free(A[i]);
    free(A);
    free(orig);
    return err < 1e-6 * n ? 0 : 1;
}
