/* pthread_waits.c - the pthread adapter's optional waiting time: a mutex
 * lock that has to wait, and a condition-variable wait, become short tasks
 * ("mutex wait FUNCTION (FILE:LINE)", "condition wait ...", named by the
 * caller) on the program's threads, when TASKSCOPE_PTHREAD_WAITS is on
 * (`taskscope run --pthread-waits`).
 *
 * An uncontended lock costs one trylock more and no event; only a lock that
 * finds the mutex taken is timed.  Calls made by taskscope itself (its own
 * threads have no task; a call while an event is being recorded is marked
 * by a per-thread flag) go straight to the real functions, so the wrappers
 * never recurse into themselves.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pthread_adapter.h"
#include "srcloc.h"
#include "taskscope/taskscope.h"
#include "typecache.h"

typedef int (*lock_fn)(pthread_mutex_t *);
typedef int (*wait_fn)(pthread_cond_t *, pthread_mutex_t *);
typedef int (*timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

static lock_fn real_lock, real_trylock;
static wait_fn real_wait;
static timedwait_fn real_timedwait;
static int waits_on;
static __thread int inside;

enum { WAIT_MUTEX = 1, WAIT_COND = 2 };

static uint32_t make_wait_type(uint64_t key, void *arg)
{
    (void)arg;
    char loc[256], name[300];
    tscope__srcloc((const void *)(uintptr_t)(key & ((1ull << 56) - 1)), 1, loc, sizeof loc);
    snprintf(name, sizeof name, "%s %.255s",
             (key >> 56) == WAIT_MUTEX ? "mutex wait" : "condition wait", loc);
    name[255] = 0;
    tscope_type_t t = 0;
    return tscope_type_register(name, &t) ? 0 : t;
}

/* Starts a wait task for the caller at ra, or returns 0 when this wait is
 * not timed (off, not a program thread, or taskscope's own call: its
 * libraries' locks are not the program's waiting). */
static tscope_task_t *wait_begin(int kind, const void *ra)
{
    if (!waits_on || inside || !tscope__pthread_current() ||
        tscope__srcloc_same_object(ra, (const void *)tscope_init) ||
        tscope__srcloc_same_object(ra, (const void *)wait_begin))
        return NULL;
    inside = 1;
    uint32_t type = tscope__typecache_get(((uint64_t)kind << 56) | (uint64_t)(uintptr_t)ra,
                                          make_wait_type, NULL);
    tscope_task_t *task = tscope_task_start_h(tscope_task_id_next(), type);
    inside = 0;
    return task;
}

static void wait_end(tscope_task_t *task)
{
    if (!task)
        return;
    inside = 1;
    tscope_task_end_h(task);
    inside = 0;
}

static void resolve(void)
{
    real_lock = (lock_fn)dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_trylock = (lock_fn)dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_wait = (wait_fn)dlsym(RTLD_NEXT, "pthread_cond_wait");
    real_timedwait = (timedwait_fn)dlsym(RTLD_NEXT, "pthread_cond_timedwait");
}

void tscope__pthread_waits_init(void)
{
    resolve();
    const char *v = getenv("TASKSCOPE_PTHREAD_WAITS");
    if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off") ||
        !strcmp(v, "false"))
        return;
    if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "true")) {
        waits_on = real_lock && real_trylock && real_wait && real_timedwait;
        return;
    }
    fprintf(stderr,
            "taskscope: warning: TASKSCOPE_PTHREAD_WAITS=%s is not 1/0, yes/no, on/off or "
            "true/false; mutex and condition waits are not measured\n",
            v);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!real_lock)
        resolve();
    if (!waits_on || inside)
        return real_lock(m);
    int rc = real_trylock(m);
    if (rc != EBUSY)
        return rc;
    tscope_task_t *id = wait_begin(WAIT_MUTEX, __builtin_return_address(0));
    rc = real_lock(m);
    wait_end(id);
    return rc;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (!real_wait)
        resolve();
    tscope_task_t *id = wait_begin(WAIT_COND, __builtin_return_address(0));
    int rc = real_wait(c, m);
    wait_end(id);
    return rc;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    if (!real_timedwait)
        resolve();
    tscope_task_t *id = wait_begin(WAIT_COND, __builtin_return_address(0));
    int rc = real_timedwait(c, m, t);
    wait_end(id);
    return rc;
}
