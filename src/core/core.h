/* core.h - process-wide state of the measurement core.
 *
 * Who touches what:
 * - `run` is read by every event (relaxed atomic load, one branch) and
 *   written only by tscope_init/tscope_finalize.
 * - threads[] is appended under reg_lock and published through nthreads
 *   (release); the consumer reads it lock-free (acquire).
 * - Each tscope__thread's ring is written by its owner only and read by the
 *   consumer only (ring.h).
 * - The consumer's wake-up is coalesced: producers set wake_pending with one
 *   atomic exchange and signal only when it was clear.
 */
#ifndef TSCOPE_CORE_CORE_H
#define TSCOPE_CORE_CORE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "record.h"
#include "ring.h"

struct tscope__store;

/* RING_TOOLS: rings, and some event has a synchronous tool callback.  The
 * two ring modes are the odd values, so the fast path tests one bit for
 * both, and only RING_TOOLS goes on to the (out-of-line) tool delivery. */
enum tscope__run {
    TSCOPE__RUN_OFF = 0,
    TSCOPE__RUN_RING = 1,
    TSCOPE__RUN_RING_TOOLS = 3,
    TSCOPE__RUN_TOOLS = 4 /* profiler off, only synchronous tools: no ring at all */
};

#define TSCOPE__ENDED_BY_EXIT (-1)

struct tscope__thread {
    struct tscope__ring ring; /* first: the hot fields share its cache line */
    uint32_t index;
    _Atomic int retired;      /* owner unregistered or exited */
    _Atomic int in_event;     /* inside an event on its shard (profile/handles.c) */
    _Atomic int ring_freed;   /* consumer released the buffer; the slot may be reused */
    uint32_t next_free;       /* next reusable slot (under reg_lock) */
    _Atomic uint64_t dropped; /* records dropped (drop policy) */
    _Atomic uint64_t waits;   /* times the owner waited for space (wait policy) */
    uint64_t id_next, id_end; /* owner's block of task ids */
    char name[64];
    uint64_t read_pos;             /* consumer only: records before it are read and released */
    struct tscope__rec *slot_ring; /* the slot's ring memory in the crash journal's file */
    uint64_t slot_records;         /* its size in records; 0: ordinary memory */
    /* the slot's ring has its pages (hooks.slot_back at its first write: a
     * thread whose events its shard takes never writes it); -1: they could
     * not be had, and the ring is in ordinary memory (a recovery skips it) */
    int slot_backed;
    _Atomic int own; /* one of taskscope's own threads (the sampler's): not the program's (a
                      * reused slot is written while the totals read it) */
};

#define TSCOPE__THREADS_MAX 65536

struct tscope__core {
    _Atomic int run;         /* enum tscope__run: the hot-path switch */
    int off_code;            /* what events return while run is OFF */
    _Atomic int initialised; /* between init and finalize */
    _Atomic int finalised;   /* finalize ran: queries use the final store */
    struct tscope__config cfg;
    int rank, nranks;
    _Atomic int ended_by; /* the signal that ended the run (signals.c),
                             TSCOPE__ENDED_BY_EXIT for _exit() (exit.c), 0 */
    uint64_t origin;      /* clock ticks at init */
    uint64_t end_ticks;

    pthread_mutex_t reg_lock;
    _Atomic uint32_t nthreads;
    _Atomic uint64_t id_blocks;            /* task id blocks handed out */
    uint32_t free_slots;                   /* first reusable slot, UINT32_MAX none (reg_lock) */
    _Atomic uint64_t unregistered_dropped; /* events of threads that got no slot */

    /* consumer */
    pthread_t consumer;
    _Atomic int consumer_running; /* atomic: signal handlers read it */
    pthread_mutex_t cons_lock;
    sem_t cons_wake;          /* producers, flush, signal handlers -> consumer (sem_post is
                               * async-signal-safe) */
    pthread_cond_t cons_done; /* consumer -> flush waiters */
    _Atomic int wake_pending;
    _Atomic int async_pending; /* tscope__consumer_wake_async was called */
    int stop;
    int consumer_busy; /* between leaving cons_lock for a round and retaking it */
    uint64_t rounds_started, rounds_done;

    struct tscope__store *store;
    char outdir[1100];
    char rundir[1100]; /* the run folder of a job's ranks (nranks > 1), else "" */

    /* last: 512 KiB, of which a process touches the first page or so (the
     * fields above share as few pages as they can: each is a fault) */
    struct tscope__thread *threads[TSCOPE__THREADS_MAX];
};

extern struct tscope__core tscope__g;

/* Registers the calling thread (slow path of the first event). NULL on
 * failure (limit or memory); the event is then not recorded (and counted
 * in unregistered_dropped). */
struct tscope__thread *tscope__thread_self_slow(void);
/* Registers this process for tscope__threads_quiesce's barrier (init; the
 * quiesce itself in a forked child that did not). */
void tscope__threads_quiesce_setup(void);
/* After measurement was switched off: waits until no thread is inside an
 * event on its shard (in_event), so that finalize may finish the shards.
 * A membarrier makes every thread's flag visible, or its next read of run
 * see it off, without a fence on the event path. */
void tscope__threads_quiesce(void);
/* The consumer drained and freed the ring of a retired thread: its slot
 * (index, counters) goes to the next thread that registers. */
void tscope__thread_recycle(struct tscope__thread *t);
/* Starts one of taskscope's own threads, named for the OS (top -H, gdb,
 * perf; at most 15 characters) by itself as it starts; 0 or pthread's error. */
int tscope__thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name);
/* 1 on a thread started by tscope__thread_start. */
int tscope__thread_is_own(void);
/* A note on stderr ("taskscope: " + fmt), unless TASKSCOPE_QUIET (note.c). */
void tscope__note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A note about what this machine lacks, under a short key (a file name's
 * word): printed once per machine (TASKSCOPE_VERBOSE: every run), kept for
 * profile.json's "notes" always (note.c). */
void tscope__machine_note(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* This process's machine notes, at most cap, copied into out: how many. */
unsigned tscope__machine_notes(char out[][512], unsigned cap);
/* Stops one: sets *stop under lock, wakes every waiter on cond, joins
 * (sampler and policy threads; the consumer has its own). */
void tscope__thread_stop(pthread_t thread, pthread_mutex_t *lock, pthread_cond_t *cond, int *stop);

/* Consumer thread control (consumer.c). */
int tscope__consumer_start(void);
void tscope__consumer_stop(void);
/* Wakes the consumer unless a wake-up is already pending. */
void tscope__consumer_wake(void);
/* From a signal handler (async-signal-safe): wakes the consumer, which then
 * calls hooks.on_wake_async.  0, or -1 when no consumer runs. */
int tscope__consumer_wake_async(void);
/* Runs one full round in the calling thread (consumer or finalize).
 * Returns 1 if some ring was more than a quarter full (a flood), else 0. */
int tscope__consumer_round(void);
/* Appends n records to the calling thread's ring as one unit (events.c:
 * the full-ring policy applies; no tool delivery).  For records the
 * subsystems build themselves (the shards' instance records).  0 or a
 * TSCOPE_E* code. */
int tscope__emit_records(const struct tscope__rec *recs, unsigned n);
/* Blocks until events published before the call are processed and settled. */
void tscope__consumer_flush(void);
/* fork(): hold waits until the consumer is between rounds and keeps it
 * there (cons_lock held), so that no allocator or stdio lock of the child
 * is inherited held by the consumer, which does not exist there; release
 * lets it go on (parent) or only unlocks (child). */
void tscope__consumer_fork_hold(void);
void tscope__consumer_fork_release(void);

/* The CLOCK_REALTIME time `ns` from now: the deadline pthread_cond_timedwait
 * takes (consumer, sampler and policy threads). */
static inline struct timespec tscope__deadline_after(uint64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    ns += (uint64_t)t.tv_nsec;
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    return t;
}

/* The next CLOCK_REALTIME instant after now that is a whole multiple of
 * `period_ns`: the periodic threads (consumer, sampler) wake on one grid
 * of the clock, so that when their periods divide each other they wake
 * together and interrupt the program's threads once, not once each.  A
 * thread that falls behind skips to the next point of the grid. */
static inline struct timespec tscope__deadline_aligned(uint64_t period_ns)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    if (period_ns == 0)
        return t;
    uint64_t now = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    uint64_t next = (now / period_ns + 1) * period_ns;
    t.tv_sec = (time_t)(next / 1000000000u);
    t.tv_nsec = (long)(next % 1000000000u);
    return t;
}

#endif
