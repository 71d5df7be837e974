/* paths.c - task graphs of busy-wait tasks of set lengths whose critical
 * paths are known, for tests/test_critpath.sh (built by clang on libomp and
 * by gcc on libgomp, run on libomp).  The test names the explicit tasks a,
 * b, c, ... in the order they are created (the compilers name their types
 * by different lines).
 *
 *   paths chain     a (40 ms) -> b (40) -> c (40) through depend(inout),
 *                   then a taskwait: the path is a, b, c
 *   paths diamond   a (10) -> b (30), a -> c (10, made in diamond() itself),
 *                   b and c -> d (10): a, b, d
 *   paths forkjoin  long (60) and three short (10) tasks, a taskwait, then
 *                   20 ms of the `single` itself: long, joined, the single
 *                   (at one thread: tasks run where they are made, all in a row)
 *   paths idle      two threads: one works 50 ms, the other 10 ms, a barrier
 *                   (40 ms of waiting), then the first 10 ms more: the first
 *                   thread's implicit task, no wait
 *   paths phases    two threads: the first works 50 ms, the second 10, a
 *                   barrier, then the first 10, the second 50: the first
 *                   thread's implicit task until the barrier, then the
 *                   second's
 * Run with OMP_NUM_THREADS=2.
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Busy for ms milliseconds of wall time. */
static void spin(double ms)
{
    double end = now_ms() + ms;
    while (now_ms() < end) {
    }
}

static int x, y, z1, z2;

static void task_a(double ms)
{
#pragma omp task depend(inout : x, y)
    spin(ms);
}

static void task_b(double ms)
{
#pragma omp task depend(inout : x) depend(out : z1)
    spin(ms);
}

static void task_c(double ms)
{
#pragma omp task depend(inout : x) depend(in : y) depend(out : z2)
    spin(ms);
}

static void task_d(void)
{
#pragma omp task depend(in : z1, z2)
    spin(10);
}

static void task_long(void)
{
#pragma omp task
    spin(60);
}

static void task_short(void)
{
#pragma omp task
    spin(10);
}

static void chain(void)
{
#pragma omp parallel
#pragma omp single
    {
        task_a(40);
        task_b(40);
        task_c(40);
#pragma omp taskwait
    }
}

static void diamond(void)
{
#pragma omp parallel
#pragma omp single
    {
        task_a(10);
        task_b(30);
        /* c reads y only: after a, beside b */
#pragma omp task depend(in : y) depend(out : z2)
        spin(10);
        task_d();
#pragma omp taskwait
    }
}

static void forkjoin(void)
{
#pragma omp parallel
#pragma omp single
    {
        task_long();
        for (int i = 0; i < 3; i++)
            task_short();
#pragma omp taskwait
        spin(20);
    }
}

static void idle(void)
{
#pragma omp parallel num_threads(2)
    {
        spin(omp_get_thread_num() == 0 ? 50 : 10);
#pragma omp barrier
        if (omp_get_thread_num() == 0)
            spin(10);
    }
}

static void phases(void)
{
#pragma omp parallel num_threads(2)
    {
        spin(omp_get_thread_num() == 0 ? 50 : 10);
#pragma omp barrier
        spin(omp_get_thread_num() == 0 ? 10 : 50);
    }
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "chain") == 0)
        chain();
    else if (strcmp(which, "diamond") == 0)
        diamond();
    else if (strcmp(which, "forkjoin") == 0)
        forkjoin();
    else if (strcmp(which, "idle") == 0)
        idle();
    else if (strcmp(which, "phases") == 0)
        phases();
    else {
        fprintf(stderr, "usage: paths chain|diamond|forkjoin|idle|phases\n");
        return 2;
    }
    printf("%s done\n", which);
    return 0;
}
