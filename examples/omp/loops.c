/* loops.c - a `parallel for` loop nest with no tasks at all: a Jacobi
 * stencil over a 2-D grid, static and dynamic schedules, and a reduction.
 * What a profile of it shows is regions, loops and barriers per thread.
 *
 *   usage: loops [N] [STEPS]   (default 512 x 512, 50 steps)
 *   prints: loops NxN, STEPS steps: residual R, threads P
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512;
    int steps = argc > 2 ? atoi(argv[2]) : 50;
    if (n < 3 || n > 8192 || steps < 1) {
        fprintf(stderr, "loops: N must be 3..8192, STEPS >= 1\n");
        return 2;
    }
    double *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b);
    if (!a || !b)
        return 1;
    for (int i = 0; i < n; i++)
        a[i] = b[i] = 1.0; /* hot top edge */
    double residual = 0;
    int threads = 0;
    for (int s = 0; s < steps; s++) {
        residual = 0;
#pragma omp parallel
        {
#pragma omp single
            threads = omp_get_num_threads();
#pragma omp for schedule(static)
            for (int i = 1; i < n - 1; i++)
                for (int j = 1; j < n - 1; j++)
                    b[(size_t)i * n + j] =
                        0.25 * (a[(size_t)(i - 1) * n + j] + a[(size_t)(i + 1) * n + j] +
                                a[(size_t)i * n + j - 1] + a[(size_t)i * n + j + 1]);
#pragma omp for schedule(dynamic, 16) reduction(+ : residual)
            for (int i = 1; i < n - 1; i++)
                for (int j = 1; j < n - 1; j++) {
                    double d = b[(size_t)i * n + j] - a[(size_t)i * n + j];
                    residual += d * d;
                    a[(size_t)i * n + j] = b[(size_t)i * n + j];
                }
        }
    }
    printf("loops %dx%d, %d steps: residual %.6g, threads %d\n", n, n, steps, residual, threads);
    free(a);
    free(b);
    return 0;
}
