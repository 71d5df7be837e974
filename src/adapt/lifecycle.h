/* lifecycle.h - how an adapter starts and stops measurement (lifecycle.c).
 *
 * The OMPT tool, the pthread wrapper and the MPI adapter each start taskscope
 * when the program starts (or MPI_Init runs), unless another adapter or the
 * program did: the first tscope_init owns measurement and finalizes it; the
 * others measure into it and finalize nothing.  An owner writes the outputs
 * at exit() (its handler runs before tscope_init's own), or earlier when its
 * runtime ends (OMPT's finalize); what an adapter keeps open on a thread (a
 * shadow stack, the main thread's task) ends at its stop and when another
 * adapter finalizes first (tscope_atfinalize: MPI_Finalize).  The MPI adapter
 * ends the job's measurement itself, whoever owns it (tscope__adapter_stopping).
 *
 * Each adapter keeps its own struct tscope__adapter (static in its file) and
 * passes it to every call: this code is compiled into each adapter library,
 * and when several are loaded, a call may bind to another library's copy.
 * Start and stop only: nothing here runs per task. */
#ifndef TSCOPE_ADAPT_LIFECYCLE_H
#define TSCOPE_ADAPT_LIFECYCLE_H

#include <stdatomic.h>

struct tscope__adapter {
    const char *name;       /* in its messages: "OMPT tool" */
    void (*end_open)(void); /* ends what it keeps open on the calling thread; NULL: nothing */
    void (*forget)(void);   /* after its stop: drops what held for this measurement; NULL */
    /* the helper's */
    int owner;           /* its tscope_init started measurement: it finalizes */
    atomic_int stopped;  /* stopped since it was last armed */
    int exit_hooked;     /* its exit handler is registered */
    int finalize_hooked; /* end_open is registered with tscope_atfinalize */
};

#define TSCOPE__RANK_FROM_ENV (-1) /* the rank an MPI launcher gave, else 0 of 1 */

/* Starts measurement for adapter a: tscope_init with rank of nranks
 * (TSCOPE__RANK_FROM_ENV: tscope_rank_from_env's, or 0 of 1).  Measurement
 * already started (TSCOPE_ESTATE) is no error: a is then no owner, and a
 * rank given is set (tscope_set_rank).  Returns 0, or tscope_init's error,
 * said in one line on stderr (the program then runs unprofiled). */
int tscope__adapter_start(struct tscope__adapter *a, int rank, int nranks);

/* 1 when events are recorded; else 0, and measurement a owns is finalized
 * (TASKSCOPE_ENABLE=0: nothing to write at exit). */
int tscope__adapter_measuring(struct tscope__adapter *a);

/* a measures nothing after all: measurement it owns is finalized. */
void tscope__adapter_decline(struct tscope__adapter *a);

/* a measures: tscope__adapter_stop runs at exit() when a owns measurement
 * (registered once, after tscope_init's own handler, so that it runs before
 * it), and end_open when another adapter finalizes (registered once); a
 * stopped earlier can stop again. */
void tscope__adapter_arm(struct tscope__adapter *a);

/* 1 the first time since a was armed (a stops now: the caller ends
 * measurement), 0 after. */
int tscope__adapter_stopping(struct tscope__adapter *a);

/* Stops a once (later calls return at once): end_open, tscope_finalize
 * when a owns measurement, forget. */
void tscope__adapter_stop(struct tscope__adapter *a);

#endif
