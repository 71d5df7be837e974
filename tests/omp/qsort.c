/* qsort.c - a recursive OpenMP quicksort whose taskwait is the function's
 * last statement: gcc -O2 makes it a tail jump to GOMP_taskwait, and the
 * runtime reports the caller's return address (test_adapters: the taskwait
 * is still named after quicksort and its line).  Prints how many calls
 * reached the taskwait. */
#include <stdio.h>
#include <stdlib.h>

static int waits;

static void insertion(int *a, int n)
{
    for (int i = 1; i < n; i++) {
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static int partition(int *a, int n)
{
    int p = a[n / 2], i = -1, j = n;
    for (;;) {
        do
            i++;
        while (a[i] < p);
        do
            j--;
        while (a[j] > p);
        if (i >= j)
            return j + 1;
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

void quicksort(int *a, int n)
{
    if (n < 64) {
        insertion(a, n);
        return;
    }
    int m = partition(a, n);
#pragma omp atomic
    waits++;
#pragma omp task
    quicksort(a, m);
#pragma omp task
    quicksort(a + m, n - m);
#pragma omp taskwait
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return 1;
    unsigned x = 12345;
    for (int i = 0; i < n; i++)
        a[i] = (int)((x = x * 1103515245u + 12345u) >> 8);
#pragma omp parallel
#pragma omp single
    quicksort(a, n);
    for (int i = 1; i < n; i++)
        if (a[i - 1] > a[i]) {
            puts("not sorted");
            return 1;
        }
    printf("%d\n", waits);
    free(a);
    return 0;
}
