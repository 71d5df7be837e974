/* lifecycle.c - an adapter's start and stop (lifecycle.h): the one sequence
 * the OMPT tool, the pthread wrapper and the MPI adapter share.
 *
 * The exit handler is registered with on_exit, which takes the adapter's
 * struct as its argument and shares atexit's list (handlers run in reverse
 * order of registration), so it runs before tscope_init's own handler,
 * registered at the first tscope_init.  Public API only.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lifecycle.h"
#include "taskscope/taskscope.h"

int tscope__adapter_start(struct tscope__adapter *a, int rank, int nranks)
{
    int given = rank != TSCOPE__RANK_FROM_ENV;
    if (!given) {
        rank = 0;
        nranks = 1;
        tscope_rank_from_env(&rank, &nranks);
    }
    int rc = tscope_init(rank, nranks);
    a->owner = rc == 0;
    if (rc == TSCOPE_ESTATE) { /* an adapter or the program started it */
        if (given)
            tscope_set_rank(rank, nranks);
        return 0;
    }
    if (rc) {
        if (given)
            fprintf(stderr,
                    "taskscope: %s: tscope_init failed on rank %d (%s); the program runs "
                    "unprofiled\n",
                    a->name, rank, tscope_strerror(rc));
        else
            fprintf(stderr, "taskscope: %s: tscope_init failed (%s); the program runs unprofiled\n",
                    a->name, tscope_strerror(rc));
    }
    return rc;
}

void tscope__adapter_decline(struct tscope__adapter *a)
{
    if (a->owner)
        tscope_finalize();
}

int tscope__adapter_measuring(struct tscope__adapter *a)
{
    if (tscope_is_enabled())
        return 1;
    tscope__adapter_decline(a);
    return 0;
}

static void at_exit(int status, void *arg)
{
    (void)status;
    tscope__adapter_stop(arg);
}

void tscope__adapter_arm(struct tscope__adapter *a)
{
    atomic_store(&a->stopped, 0);
    if (a->owner && !a->exit_hooked) {
        a->exit_hooked = 1;
        on_exit(at_exit, a);
    }
    if (a->end_open && !a->finalize_hooked) {
        a->finalize_hooked = 1;
        tscope_atfinalize(a->end_open);
    }
}

int tscope__adapter_stopping(struct tscope__adapter *a)
{
    return !atomic_exchange(&a->stopped, 1);
}

void tscope__adapter_stop(struct tscope__adapter *a)
{
    if (!tscope__adapter_stopping(a))
        return;
    if (a->end_open)
        a->end_open();
    if (a->owner)
        tscope_finalize();
    if (a->forget)
        a->forget();
}
