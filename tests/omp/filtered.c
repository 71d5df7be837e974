/* filtered.c - task types for the filter file's test (tests/test_filter.sh).
 *
 * Each task construct sits in a function of its own, so its type is named
 * "FUNCTION (filtered.c:LINE)":
 * - parent_of_leaves: one task whose body runs 8 leaf_a tasks undeferred
 *   (if(0): they run inside it, on its thread);
 * - leaf_kept: 8 tasks of the same work as a leaf_a, each on its own;
 * - a chain on one variable: dep_kept -> leaf_dep -> leaf_dep -> dep_kept
 *   (inout: 3 edges);
 * - other_task (filtered_other.c): 3 tasks.
 * The filter of the test excludes leaf*, includes "leaf_kept *" again and
 * excludes the file *_other.c: 13 tasks and 3 edges are then left out, and
 * parent_of_leaves's self time holds the 8 leaf_a tasks' work.
 */
#include <stdio.h>

void other_task(long n);
void spin(long n);

volatile long sink;

void spin(long n)
{
    for (long i = 0; i < n; i++)
        sink = sink + i;
}

#define WORK 2000000L

static __attribute__((noinline)) void leaf_a(void)
{
#pragma omp task if (0)
    spin(WORK);
}

static __attribute__((noinline)) void leaf_kept(void)
{
#pragma omp task if (0)
    spin(WORK);
}

static __attribute__((noinline)) void parent_of_leaves(void)
{
#pragma omp task
    {
        for (int i = 0; i < 8; i++)
            leaf_a();
    }
}

static __attribute__((noinline)) void dep_kept(int *x)
{
#pragma omp task depend(inout : x[0])
    spin(WORK / 10);
}

static __attribute__((noinline)) void leaf_dep(int *x)
{
#pragma omp task depend(inout : x[0])
    spin(WORK / 10);
}

int main(void)
{
    int x[1] = {0};
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        parent_of_leaves();
#pragma omp taskwait
        for (int i = 0; i < 8; i++)
            leaf_kept();
        dep_kept(x);
        leaf_dep(x);
        leaf_dep(x);
        dep_kept(x);
#pragma omp taskwait
        for (int i = 0; i < 3; i++)
            other_task(WORK / 10);
    }
    printf("filtered: done\n");
    return 0;
}
