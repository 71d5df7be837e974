/* threads.c - thread registry and task id blocks.
 *
 * A thread registers on its first event (or explicitly): it gets an index, a
 * ring, and a slot in tscope__g.threads[], published with a release store of
 * nthreads so the consumer can walk the array without a lock.  Registrations
 * outlive tscope_finalize: a later tscope_init reuses them (rings are empty
 * after finalize).  A thread that exits or unregisters is marked retired; the
 * consumer frees its ring once drained and puts the slot on a free list,
 * from which the next thread to register takes it (index, counters and all):
 * a program that starts threads for short jobs, thousands over its run, needs
 * as many slots as it has threads alive at once, not one per thread it ever
 * started.  Per-thread numbers are therefore per slot.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>

#include "core.h"
#include "taskscope/taskscope.h"
#include "thread_local.h"
#include "hooks.h"

_Thread_local struct tscope__thread *tscope__tls_self __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static _Atomic int limit_warned;

/* Runs on the ending thread (its key destructor, or unregister).  An event
 * it records later (another destructor) registers it afresh: the retired
 * slot may already belong to someone else. */
static void on_thread_exit(void *arg)
{
    struct tscope__thread *t = arg;
    tscope__tls_self = NULL;
    if (tscope__hooks.thread_events & 2)
        tscope__hooks.thread(0, t->index, t->name);
    atomic_store_explicit(&t->retired, 1, memory_order_release);
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

/* initial-exec, as tscope__tls_self: set in own_main, read in signal handlers (signals.c, exit.c),
 * where a first access through __tls_get_addr could allocate */
static _Thread_local int own_thread __attribute__((tls_model("initial-exec")));

static struct tscope__thread *register_self(const char *name)
{
    pthread_once(&exit_key_once, make_exit_key);
    pthread_mutex_lock(&tscope__g.reg_lock);
    uint32_t idx = atomic_load_explicit(&tscope__g.nthreads, memory_order_relaxed);
    uint32_t limit = tscope__g.cfg.max_threads ? tscope__g.cfg.max_threads : TSCOPE__THREADS_MAX;
    struct tscope__thread *t = NULL;
    uint32_t ring = tscope__g.cfg.ring_size ? tscope__g.cfg.ring_size : 16384;
    if (tscope__g.free_slots != UINT32_MAX) {
        t = tscope__g.threads[tscope__g.free_slots];
        /* a slot in the journal's file keeps its ring there, of its size */
        if (tscope__ring_init(&t->ring, t->slot_ring ? t->slot_records : ring, t->slot_ring)) {
            t = NULL;
            goto out;
        }
        if (t->slot_ring && t->slot_backed != 1) /* pages at its first write, or the */
            t->ring.half = 0;                    /* ring to ordinary memory again there */
        t->read_pos = 0; /* the consumer reads the new ring from its start */
        tscope__g.free_slots = t->next_free;
        atomic_store_explicit(&t->retired, 0, memory_order_relaxed);
        t->id_next = t->id_end = 0;
        if (name)
            snprintf(t->name, sizeof t->name, "%s", name);
        else
            snprintf(t->name, sizeof t->name, "thread-%u", t->index);
        t->own = own_thread;
        /* publishes the fresh ring to the consumer */
        atomic_store_explicit(&t->ring_freed, 0, memory_order_release);
        goto out;
    }
    if (idx >= limit || idx >= TSCOPE__THREADS_MAX) {
        if (!atomic_exchange(&limit_warned, 1))
            fprintf(stderr,
                    "taskscope: warning: more than %u threads (TASKSCOPE_MAX_THREADS); events "
                    "of further threads are not recorded\n",
                    limit);
        goto out;
    }
    /* in the crash journal's file when there is one (the hook), else
     * aligned like its ring (64 B): calloc's 16 would let a neighbouring
     * allocation share the cache line of the ring's head or of id_next */
    struct tscope__rec *mapped = NULL;
    uint64_t records = ring;
    t = tscope__hooks.slot_memory ? tscope__hooks.slot_memory(idx, sizeof *t, &records, &mapped)
                                  : NULL;
    if (!t) {
        mapped = NULL;
        records = ring;
        t = aligned_alloc(_Alignof(struct tscope__thread), sizeof *t);
    }
    if (t)
        memset(t, 0, sizeof *t);
    if (!t || tscope__ring_init(&t->ring, records, mapped)) {
        free(t); /* a mapped slot cannot fail here */
        t = NULL;
        goto out;
    }
    t->slot_ring = mapped;
    t->slot_records = mapped ? records : 0;
    if (mapped)
        t->ring.half = 0; /* its pages come at its first write (ring_reserve) */
    t->index = idx;
    if (name)
        snprintf(t->name, sizeof t->name, "%s", name);
    else
        snprintf(t->name, sizeof t->name, "thread-%u", idx);
    t->own = own_thread;
    tscope__g.threads[idx] = t;
    atomic_store_explicit(&tscope__g.nthreads, idx + 1, memory_order_release);
out:
    pthread_mutex_unlock(&tscope__g.reg_lock);
    if (t) {
        tscope__tls_self = t;
        pthread_setspecific(exit_key, t);
        if (tscope__hooks.thread_events & 1)
            tscope__hooks.thread(1, t->index, t->name);
    }
    return t;
}

/* registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED: the pid that registered
 * (a forked child is not: it registers again), minus it when that failed */
static _Atomic long membarrier_by;

void tscope__threads_quiesce_setup(void)
{
    long pid = (long)getpid(), by = atomic_load(&membarrier_by);
    if (by != pid && by != -pid)
        atomic_store(&membarrier_by,
                     syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
                         ? pid
                         : -pid);
}

void tscope__threads_quiesce(void)
{
    tscope__threads_quiesce_setup(); /* init did, unless in a forked child */
    if (atomic_load(&membarrier_by) < 0 ||
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        /* no membarrier: a thread is between its flag and its read of run
         * for a few instructions; a millisecond covers that */
        atomic_thread_fence(memory_order_seq_cst);
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    uint32_t n = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__thread *t = tscope__g.threads[i];
        for (unsigned spins = 0;
             t && atomic_load_explicit(&t->in_event, memory_order_acquire) && spins < 100000;
             spins++)
            sched_yield(); /* an event is short: a cache miss on the store lock at most */
    }
}

void tscope__thread_recycle(struct tscope__thread *t)
{
    pthread_mutex_lock(&tscope__g.reg_lock);
    atomic_store_explicit(&t->ring_freed, 1, memory_order_release);
    t->next_free = tscope__g.free_slots;
    tscope__g.free_slots = t->index;
    pthread_mutex_unlock(&tscope__g.reg_lock);
}

struct tscope__thread *tscope__thread_self_slow(void)
{
    if (tscope__tls_self)
        return tscope__tls_self;
    return register_self(NULL);
}

int tscope_thread_register(const char *name)
{
    struct tscope__thread *t = tscope__tls_self;
    if (t) {
        if (name) {
            pthread_mutex_lock(&tscope__g.reg_lock); /* the exporters read names under it */
            snprintf(t->name, sizeof t->name, "%s", name);
            pthread_mutex_unlock(&tscope__g.reg_lock);
        }
        return 0;
    }
    return register_self(name) ? 0 : TSCOPE_ELIMIT;
}

int tscope_thread_unregister(void)
{
    struct tscope__thread *t = tscope__tls_self;
    if (!t)
        return TSCOPE_ENOENT;
    tscope__tls_self = NULL;
    pthread_setspecific(exit_key, NULL);
    on_thread_exit(t);
    return 0;
}

#define ID_BLOCK 4096u
#define ID_COUNTER_BITS 48

uint64_t tscope_task_id_next(void)
{
    struct tscope__thread *t = tscope__thread_self();
    uint64_t rank = (uint64_t)(uint16_t)tscope__g.rank << ID_COUNTER_BITS;
    if (!t) /* no registration possible: a shared block per call */
        return rank | (atomic_fetch_add(&tscope__g.id_blocks, 1) * ID_BLOCK + 1);
    if (t->id_next == t->id_end) {
        uint64_t block = atomic_fetch_add(&tscope__g.id_blocks, 1);
        t->id_next = block * ID_BLOCK + 1; /* never 0 */
        t->id_end = t->id_next + ID_BLOCK;
    }
    return rank | (t->id_next++ & ((1ull << ID_COUNTER_BITS) - 1));
}

int tscope__thread_is_own(void)
{
    return own_thread;
}

struct own_start {
    void *(*fn)(void *);
    void *arg;
    char name[16]; /* the OS's limit: 15 characters */
};

static void *own_main(void *p)
{
    struct own_start s = *(struct own_start *)p;
    free(p);
    own_thread = 1;
    /* named by itself (a write to /proc/self/task/TID/comm): the thread
     * that started it, the program's, does not wait for that */
    pthread_setname_np(pthread_self(), s.name);
    return s.fn(s.arg);
}

int tscope__thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name)
{
    struct own_start *s = malloc(sizeof *s);
    if (!s)
        return ENOMEM;
    *s = (struct own_start){fn, arg, ""};
    snprintf(s->name, sizeof s->name, "%s", name);
    /* The thread starts with the program's asynchronous signals blocked
     * (it inherits the mask): the program's handlers never run on it, and a
     * handler that waits for taskscope (signals.c) never waits for itself. */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(thread, NULL, own_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        free(s);
    return rc;
}

void tscope__thread_stop(pthread_t thread, pthread_mutex_t *lock, pthread_cond_t *cond, int *stop)
{
    pthread_mutex_lock(lock);
    *stop = 1;
    pthread_cond_broadcast(cond);
    pthread_mutex_unlock(lock);
    pthread_join(thread, NULL);
}
