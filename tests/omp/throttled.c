/* throttled.c - a plain OpenMP program (it knows nothing of taskscope) for
 * tests/test_omp_throttle.sh: top-level parallel regions one after another,
 * each a few hundred microseconds of work per thread, and the team size of
 * each region as the program sees it (omp_get_num_threads).  It prints the
 * sizes as runs, "throttled: 4x120 2x80 1x75 ...", once it has seen the team
 * shrink to one thread and grow again (a throttling search going down and
 * back up) or MAX_S seconds have passed.
 *   usage: throttled MAX_S
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double max_s = argc > 1 ? atof(argv[1]) : 20, t0 = now();
    int sizes[64], runs[64], n = 0, seen_one = 0;
    while (now() - t0 < max_s) {
        int team = 0;
#pragma omp parallel
        {
#pragma omp single
            team = omp_get_num_threads();
            double end = now() + 300e-6;
            while (now() < end)
                ;
        }
        if (n && sizes[n - 1] == team) {
            runs[n - 1]++;
        } else if (n < 64) {
            sizes[n] = team;
            runs[n++] = 1;
        }
        seen_one |= team == 1;
        if (seen_one && team > 1)
            break;
    }
    printf("throttled:");
    for (int i = 0; i < n; i++)
        printf(" %dx%d", sizes[i], runs[i]);
    printf("\n");
    return 0;
}
