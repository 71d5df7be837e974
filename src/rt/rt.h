/* rt.h - internals of the bundled runtime (include/taskscope/rt.h).
 *
 * Locks, never nested: deps_lock (dependency counts), a deque's lock; the
 * dependence tracker's own lock (src/hazards) is taken only inside deps_lock.  Task
 * states change by atomic compare-and-swap; reference counts are atomic.
 */
#ifndef TSCOPE_RT_RT_H
#define TSCOPE_RT_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "taskscope/rt.h"

/* CREATED -> QUEUEING -> READY -> RUNNING -> DONE, or CREATED/READY ->
 * CANCELLED.  QUEUEING covers the report of the queued event, so that a
 * cancel is never reported between "it was decided to queue" and "queued". */
enum rt_state { RT_CREATED = 0, RT_QUEUEING, RT_READY, RT_RUNNING, RT_DONE, RT_CANCELLED };

struct tscope_rt_task {
    tscope_rt_fn fn;
    void *arg;
    uint64_t id;                   /* taskscope task id */
    tscope_task_t *h;              /* its handle from create until its end or cancel */
    tscope_type_t type;            /* its task type, given again at its begin */
    struct tscope_rt_task *parent; /* holds a reference; NULL for the program root */
    _Atomic int state;
    _Atomic int refs;
    _Atomic uint64_t children; /* spawned children not yet finished */
    int priority;              /* > 0: taken before tasks without priority */
    int has_deps;              /* declared dependencies: in the address table, may get successors */
    /* guarded by deps_lock */
    uint64_t dep_key;             /* the dependence tracker's key (0: no dependencies) */
    uint32_t deps_pending;        /* predecessors not yet finished */
    struct tscope_rt_task **succ; /* successors to release at the end */
    uint32_t nsucc, cap_succ;
};

/* runtime.c: starts one of the runtime's threads and names it `name` for
 * the OS (top -H, gdb, perf; 15 characters kept) before anyone can look;
 * the thread registers with taskscope under the same name.  0 or
 * pthread_create's error. */
int tscope__rt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name);

/* records.c: task records, recycled per worker thread.  A worker calls
 * start when it begins and stop when it ends (stop frees its list); the
 * pool is dropped when the runtime has stopped. */
void tscope__rt_records_start(void);
void tscope__rt_records_stop(void);
void tscope__rt_records_drop_pool(void);
/* A zeroed record, or NULL. */
struct tscope_rt_task *tscope__rt_record_new(void);
/* Frees the record and its successor array. */
void tscope__rt_record_free(struct tscope_rt_task *t);

/* deps.c: dependency tracking (deps_lock held by the caller where stated).
 * Only tasks that declare dependencies enter the address table, so only they
 * can gain successors: tasks without take no global lock at all. */
extern pthread_mutex_t tscope__rt_deps_lock;
/* Adds the edges of a new task t for its dependencies; lock held.  Returns
 * 0 or TSCOPE_ENOMEM (the task then runs without the missing edges). */
int tscope__rt_deps_add(struct tscope_rt_task *t, const tscope_rt_dep_t *deps, size_t n);
/* t ended (run or cancelled): it is no predecessor any more; lock held. */
void tscope__rt_deps_done(struct tscope_rt_task *t);
/* Forgets every address (runtime shutdown); lock held. */
void tscope__rt_deps_clear(void);

/* runtime.c */
void tscope__rt_task_release(struct tscope_rt_task *t);

#endif
