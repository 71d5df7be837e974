/* cpu_time.c - tasks that compute and tasks that wait, for
 * tests/test_cpu_time_omp.sh (taskscope run --cpu-time through the OMPT
 * tool).  Each task construct sits in a function of its own, so its type is
 * named "FUNCTION (cpu_time.c:LINE)":
 * - spinning: 4 untied tasks that spin 10 ms, yield (taskyield: another
 *   task may run, or the task move to another thread), spin 10 ms more;
 * - sleeping: 4 tasks that sleep 20 ms (nanosleep).
 * The program prints its own readings of the spinning segments (the thread
 * CPU clock and the wall clock around each spin, summed): on a loaded
 * machine a spinning thread waits for a core at times, for taskscope as for
 * the program. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static uint64_t now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t own_cpu, own_wall;

static void spin_ms(int ms)
{
    uint64_t w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    while (now(CLOCK_MONOTONIC) - w0 < (uint64_t)ms * 1000000u) {
    }
    uint64_t c1 = now(CLOCK_THREAD_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
#pragma omp atomic
    own_cpu += c1 - c0;
#pragma omp atomic
    own_wall += w1 - w0;
}

static __attribute__((noinline)) void spinning(void)
{
#pragma omp task untied
    {
        spin_ms(10);
#pragma omp taskyield
        spin_ms(10);
    }
}

static __attribute__((noinline)) void sleeping(void)
{
#pragma omp task
    {
        struct timespec t = {0, 20 * 1000000L};
        while (nanosleep(&t, &t) != 0) {
        }
    }
}

int main(void)
{
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < 4; i++) {
            spinning();
            sleeping();
        }
#pragma omp taskwait
    }
    printf("own spinning: cpu_ns %llu wall_ns %llu\n", (unsigned long long)own_cpu,
           (unsigned long long)own_wall);
    return 0;
}
