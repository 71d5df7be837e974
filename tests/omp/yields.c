/* yields.c - tasks switched out a known number of times, for the `yields`
 * count of the OMPT tool (tests/test_adapters.sh; docs/output-formats.md
 * defines it: each time the runtime runs another task on the thread of a
 * task that has not ended, or an untied task is switched out).
 *
 *   usage: yields CASE K [THREADS]   (2 unless said)
 *   CASE: taskwait   a task creates K children, then waits: it runs them
 *         taskgroup  the same in a taskgroup, run at its end
 *         undeferred a task creates K undeferred (if(0)) children
 *         yield      the implicit task creates a task and yields, K times
 *         untied     an untied task creates K children, then waits
 *         untiedleaves  the same with untied children (BOTS sparselu's shape)
 *         none       a task waits K times with no child to run
 *   prints: "CASE K ran N" (N: the leaves that ran)
 *
 * Two threads; the second spins in the program's own code (no task
 * scheduling point, so it never steals a task) until the first is done, so
 * the first thread runs every task of the case, and each switch is
 * certain: the waiting task runs each of its K children (yields K), or the
 * implicit task runs each task it yields to (yields K), or nothing runs
 * (yields 0).  The tied children themselves never switch (yields 0).  With
 * one thread libomp runs each task where it is created: the same counts.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int done;
static atomic_long ran;

static void leaf(void)
{
    atomic_fetch_add(&ran, 1);
}

static void waiter(const char *what, int k)
{
    if (strcmp(what, "taskwait") == 0) {
        for (int i = 0; i < k; i++) {
#pragma omp task
            leaf();
        }
#pragma omp taskwait
    } else if (strcmp(what, "taskgroup") == 0) {
#pragma omp taskgroup
        {
            for (int i = 0; i < k; i++) {
#pragma omp task
                leaf();
            }
        }
    } else if (strcmp(what, "undeferred") == 0) {
        for (int i = 0; i < k; i++) {
#pragma omp task if (0)
            leaf();
        }
    } else if (strcmp(what, "none") == 0) {
        for (int i = 0; i < k; i++) {
#pragma omp taskwait
            leaf();
        }
    }
}

static void first_thread(const char *what, int k)
{
    if (strcmp(what, "yield") == 0) {
        for (int i = 0; i < k; i++) {
#pragma omp task
            leaf();
#pragma omp taskyield
        }
    } else if (strcmp(what, "untied") == 0) {
#pragma omp task untied
        {
            for (int i = 0; i < k; i++) {
#pragma omp task
                leaf();
            }
#pragma omp taskwait
        }
#pragma omp taskwait
    } else if (strcmp(what, "untiedleaves") == 0) {
#pragma omp task untied
        {
            for (int i = 0; i < k; i++) {
#pragma omp task untied
                leaf();
            }
#pragma omp taskwait
        }
#pragma omp taskwait
    } else {
#pragma omp task
        waiter(what, k);
#pragma omp taskwait
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    int k = argc > 2 ? atoi(argv[2]) : 0;
    int want = argc > 3 ? atoi(argv[3]) : 2;
    int threads = 0;
#pragma omp parallel num_threads(want)
    {
        if (omp_get_thread_num() == 0) {
            threads = omp_get_num_threads();
            first_thread(what, k);
            atomic_store(&done, 1);
        } else {
            while (!atomic_load(&done))
                ; /* no task scheduling point: nothing stolen */
        }
    }
    if (threads != want) {
        fprintf(stderr, "yields: needs %d threads, got %d\n", want, threads);
        return 1;
    }
    printf("%s %d ran %ld\n", what, k, atomic_load(&ran));
    return 0;
}
