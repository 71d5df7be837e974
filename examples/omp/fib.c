/* fib.c - recursive Fibonacci with OpenMP tasks and taskwait: the classic
 * test of per-task overhead (tiny tasks).  fib(n) creates 2*fib(n+1)-2
 * tasks below the root call.
 *
 *   usage: fib [N]        (default 27)
 *   prints: fib(N) = F, tasks T, threads P
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n)
{
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 27;
    if (n < 0 || n > 45) {
        fprintf(stderr, "fib: N must be 0..45\n");
        return 2;
    }
    long r = 0;
    int threads = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            threads = omp_get_num_threads();
            r = fib(n);
        }
    }
    /* tasks created: 2 per call with n >= 2, i.e. 2*fib(n+1) - 2 */
    long f1 = 0, f2 = 1;
    for (int i = 0; i < n + 1; i++) {
        long t = f1 + f2;
        f1 = f2;
        f2 = t;
    }
    printf("fib(%d) = %ld, tasks %ld, threads %d\n", n, r, 2 * f1 - 2, threads);
    return 0;
}
