/* live_tasks.c - a plain OpenMP program (it knows nothing of taskscope) for
 * tests/test_live_ompt.sh, the task debugger through OMPT: rounds of tasks
 * in one parallel region, each round 8 "split" tasks that create 4 "leaf"
 * tasks each (a leaf spins about 20 us) and wait for them.  It runs until
 * the file STOPFILE exists (checked between rounds) or 60 s have passed,
 * then prints "live_tasks: rounds R, leaf tasks L" - its own count, which
 * the profile's calls of the leaf type must equal.
 *   usage: live_tasks STOPFILE
 */
#include <omp.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static long leaves;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void leaf_tasks(void)
{
    for (int j = 0; j < 4; j++) {
#pragma omp task
        {
            double end = now() + 20e-6;
            while (now() < end)
                ;
#pragma omp atomic
            leaves++;
        }
    }
#pragma omp taskwait
}

__attribute__((noinline)) static void split_tasks(void)
{
    for (int i = 0; i < 8; i++) {
#pragma omp task
        leaf_tasks();
    }
#pragma omp taskwait
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: live_tasks STOPFILE\n");
        return 2;
    }
    long rounds = 0;
    double limit = now() + 60;
#pragma omp parallel
#pragma omp single
    while (access(argv[1], F_OK) != 0 && now() < limit) {
        split_tasks();
        rounds++;
    }
    printf("live_tasks: rounds %ld, leaf tasks %ld\n", rounds, leaves);
    return 0;
}
