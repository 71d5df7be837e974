/* pthread.c - the pthread adapter: each thread's start function is a task.
 *
 * Preloaded into an unmodified program (LD_PRELOAD, `taskscope run
 * --pthread`), it starts taskscope in a constructor, runs the main thread as
 * a root task named after the program, and wraps pthread_create: the new
 * thread's start function runs as a task whose type is the function's name
 * and whose parent is the task that created the thread (created on the
 * creating thread, begun on the new one); threads that taskscope itself
 * starts (sampler, policies) are left alone.  The task ends when the function
 * returns, or at pthread_exit / cancellation (a cleanup handler).  exit()
 * ends the root task and writes the outputs.  A program that never calls
 * pthread_create pays nothing but the root task.  Mutex and condition waits
 * as tasks, on request: pthread_waits.c.
 *
 * Uses only the public API; the real pthread_create comes from dlsym(RTLD_NEXT).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"
#include "pthread_adapter.h"
#include "srcloc.h"
#include "taskscope/taskscope.h"
#include "typecache.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn real_create;
/* Tasks as handles: as each thread aggregates its own tasks, a thread's
 * task holds what runs in it, an OpenMP region or an MPI call, as a parent
 * does. */
static __thread tscope_task_t *current; /* the task running on this thread */
static tscope_task_t *root;             /* the main thread's task */

tscope_task_t *tscope__pthread_current(void)
{
    return current;
}

struct start {
    void *(*fn)(void *);
    void *arg;
    tscope_task_t *task;
};

static uint32_t make_type(uint64_t key, void *arg)
{
    (void)arg;
    char name[256];
    tscope__srcloc((const void *)(uintptr_t)key, 0, name, sizeof name);
    tscope_type_t t = 0;
    tscope_type_register(name, &t);
    return t;
}

static void task_done(void *task)
{
    tscope_task_end_h(*(tscope_task_t **)task);
}

static void *trampoline(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    tscope_task_begin_h(s.task);
    current = s.task;
    void *ret;
    pthread_cleanup_push(task_done, &s.task);
    ret = s.fn(s.arg);
    pthread_cleanup_pop(1);
    tscope_thread_unregister();
    return ret;
}

/* Threads an MPI library and its runtime start for themselves (progress,
 * PMIx, event loops) are not the program's tasks. */
static int runtime_thread(const void *creator)
{
    static const char *const libs[] = {"libmpi",    "libopen-pal", "libopen-rte", "libpmix",
                                       "libevent",  "libucp",      "libucs",      "libuct",
                                       "libfabric", "libpsm",      "libhwloc",    "libprrte"};
    Dl_info info;
    if (!creator || !dladdr(creator, &info) || !info.dli_fname)
        return 0;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
        if (!strncmp(base, libs[i], strlen(libs[i])))
            return 1;
    return 0;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (!real_create) {
        real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
        if (!real_create)
            return EAGAIN;
    }
    /* taskscope's own threads (sampler, policies) are not the program's */
    const void *creator = __builtin_return_address(0);
    int own =
        tscope__srcloc_same_object(creator, (const void *)tscope_init) || runtime_thread(creator);
    struct start *s = tscope_is_enabled() && !own ? malloc(sizeof *s) : NULL;
    if (!s)
        return real_create(thread, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    uint32_t type = tscope__typecache_get((uint64_t)(uintptr_t)fn, make_type, NULL);
    s->task = tscope_task_create_h(tscope_task_id_next(), current, type, 0, 0, 0);
    int rc = real_create(thread, attr, trampoline, s);
    if (rc) {
        tscope_task_cancel_h(s->task);
        free(s);
    }
    return rc;
}

static pthread_t main_thread;

/* The main thread's task ends when measurement does: at exit, or earlier
 * when another adapter finalizes (tscope_atfinalize: MPI_Finalize). */
static void end_root(void)
{
    if (root && pthread_equal(pthread_self(), main_thread)) {
        tscope_task_end_h(root);
        root = NULL;
        current = NULL;
    }
}

static struct tscope__adapter life = {.name = "pthread adapter", .end_open = end_root};

static const char *program_name(void)
{
    extern char *program_invocation_short_name;
    return program_invocation_short_name && *program_invocation_short_name
               ? program_invocation_short_name
               : "main";
}

__attribute__((constructor)) static void start(void)
{
    /* an MPI launcher, or its daemon (Open MPI's singleton orted, started by
     * a measured MPI program), inherits the preload: no part of the program */
    if (tscope_mpi_launcher(program_name()))
        return;
    if (tscope__adapter_start(&life, TSCOPE__RANK_FROM_ENV, 0))
        return;
    tscope__pthread_waits_init();
    if (!tscope__adapter_measuring(&life) || !life.owner)
        return; /* off (TASKSCOPE_ENABLE=0), or the program reports its own tasks */
    tscope_type_t t = 0;
    if (tscope_type_register(program_name(), &t) == 0) {
        root = tscope_task_start_h(tscope_task_id_next(), t);
        current = root;
        main_thread = pthread_self();
    }
    tscope__adapter_arm(&life); /* at exit: end_root, then the outputs */
}
