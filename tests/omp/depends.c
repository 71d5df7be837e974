/* depends.c - OpenMP programs whose dependence edges are known, for
 * test_adapters.sh, built by clang and by gcc.  Each task's line ends with
 * a comment naming its letter; the test finds the letters' lines here and
 * maps the profile's task types "(depends.c:LINE)" to them:
 *   depends pairs  one edge per pair of tasks: several addresses, an address
 *                  named twice
 *   depends mutex  out, mutexinoutset, mutexinoutset, in: the two
 *                  mutexinoutset tasks exclude each other, not ordered
 *   depends wait   the depend clauses of an if(0) task and of a taskwait
 * The expected edges are in the comments (every writer is an inout to the
 * runtime's tools interface: libomp 14 reports depend(out) so). */
#include <stdio.h>
#include <string.h>

static volatile long sink;

static void pairs(void)
{
    int x = 0, y = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task depend(out : x, y) /* A */
        x = y = 1;
#pragma omp task depend(in : x) depend(in : y) /* B: A->B RAW on 2 addresses */
        sink += x + y;
#pragma omp task depend(inout : x, x) depend(in : x) /* C: B->C WAR, 1 address */
        x++;
#pragma omp task depend(in : x, x) /* D: C->D RAW */
        sink += x;
#pragma omp task depend(out : y) depend(in : x) /* E: B->E WAR (y), C->E RAW (x) */
        y = x;
    }
    printf("pairs x=%d y=%d\n", x, y);
}

static void mutex(void)
{
    int x = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task depend(out : x) /* A */
        x = 1;
#pragma omp task depend(mutexinoutset : x) /* B: A->B RAW+WAW */
        x += 2;
#pragma omp task depend(mutexinoutset : x) /* C: A->C RAW+WAW, B-C mutex */
        x += 3;
#pragma omp task depend(in : x) /* D: B->D RAW, C->D RAW */
        sink += x;
    }
    printf("mutex x=%d\n", x);
}

static void waits(void)
{
    int x = 0, y = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task depend(out : x) /* A */
        x = 1;
#pragma omp task if (0) depend(in : x) /* B: A->(wait at B) RAW */
        sink += x;
#pragma omp task depend(out : y) /* C */
        y = 2;
#pragma omp taskwait depend(in : y) /* W: C->W RAW */
#pragma omp task depend(in : x)     /* D: A->D RAW (the waits are no access) */
        sink += x + y;
    }
    printf("wait x=%d y=%d\n", x, y);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "pairs"))
        pairs();
    else if (!strcmp(mode, "mutex"))
        mutex();
    else if (!strcmp(mode, "wait"))
        waits();
    else {
        fprintf(stderr, "usage: depends pairs|mutex|wait\n");
        return 2;
    }
    return 0;
}
