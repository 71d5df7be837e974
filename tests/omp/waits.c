/* waits.c - waiting drawn as waiting (tests/test_waits.sh):
 *   waits barrier   two threads: thread 0 computes 300 ms in a task, thread
 *                   1 waits for it at the barrier (heatmap's threads.csv:
 *                   thread 1 waiting, not working)
 *   waits qs N      a quicksort of N ints whose two halves are tasks with
 *                   depend clauses and a taskwait (every task has a type:
 *                   no "(untyped)" column in concurrency.csv) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void swap(int *a, int *b)
{
    int t = *a;
    *a = *b;
    *b = t;
}

static void quicksort(int *a, int lo, int hi)
{
    if (hi - lo < 64) {
        for (int i = lo + 1; i <= hi; i++)
            for (int j = i; j > lo && a[j - 1] > a[j]; j--)
                swap(&a[j], &a[j - 1]);
        return;
    }
    int p = a[hi], i = lo;
    for (int j = lo; j < hi; j++)
        if (a[j] < p)
            swap(&a[i++], &a[j]);
    swap(&a[i], &a[hi]);
#pragma omp task depend(inout : a[lo]) firstprivate(lo, i)
    quicksort(a, lo, i - 1);
#pragma omp task depend(inout : a[hi]) firstprivate(hi, i)
    quicksort(a, i + 1, hi);
#pragma omp taskwait
}

static double spin(double s)
{
    double t0 = omp_get_wtime(), x = 0;
    while (omp_get_wtime() - t0 < s)
        x += 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "barrier";
    if (!strcmp(mode, "barrier")) {
        double r = 0;
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 0) {
#pragma omp task
                r = spin(0.3);
            }
#pragma omp barrier
        }
        printf("computed %d\n", r > 0);
        return 0;
    }
    int n = argc > 2 ? atoi(argv[2]) : 200000;
    int *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return 1;
    srand(1);
    for (int i = 0; i < n; i++)
        a[i] = rand();
#pragma omp parallel
#pragma omp single
    quicksort(a, 0, n - 1);
    for (int i = 1; i < n; i++)
        if (a[i - 1] > a[i]) {
            printf("unsorted\n");
            return 1;
        }
    printf("sorted %d\n", n);
    free(a);
    return 0;
}
