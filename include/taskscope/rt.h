/* rt.h - taskscope's bundled task runtime: worker threads with
 * work-stealing deques, tasks with data dependencies, nested tasks and
 * taskwait, cancellation and a thread cap that can change while running.
 *
 * It reports everything it does through taskscope.h like a third-party
 * runtime would (create, queued, begin, end, yield/resume around taskwait,
 * cancel, one local dependency per edge with its hazard kind), so
 * tscope_init() must come before tscope_rt_init() for the tasks to be
 * measured (without it the runtime works, unmeasured).
 *
 * One runtime per process.  Functions return 0 or a negative TSCOPE_E* code.
 */
#ifndef TASKSCOPE_RT_H
#define TASKSCOPE_RT_H

#include <stddef.h>
#include <stdint.h>

#include "taskscope.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*tscope_rt_fn)(void *arg);
typedef struct tscope_rt_task tscope_rt_task_t; /* a handle (see tscope_rt_spawn) */

/* Dependency modes, ordered like OpenMP's depend clause: a reader waits for
 * the last writer of the address (RAW), a writer waits for the readers since
 * that write (WAR) or, if none, for the last writer (WAW).  An address named
 * twice in one list counts once (two different modes make it an inout). */
enum tscope_rt_dep_mode { TSCOPE_RT_IN = 1, TSCOPE_RT_OUT = 2, TSCOPE_RT_INOUT = 3 };

typedef struct tscope_rt_dep {
    const void *addr;
    int mode; /* enum tscope_rt_dep_mode */
} tscope_rt_dep_t;

typedef struct tscope_rt_spawn_opts {
    uint32_t struct_size;        /* sizeof(tscope_rt_spawn_opts_t) */
    tscope_type_t type;          /* task type (tscope_type_register); 0: untyped */
    int priority;                /* > 0: ready tasks with a priority run before those without */
    unsigned flags;              /* TSCOPE_TASK_SPLITTABLE / _PROCESSABLE */
    unsigned depth;              /* recursion depth, reported */
    const tscope_rt_dep_t *deps; /* data dependencies, may be NULL */
    size_t ndeps;
} tscope_rt_spawn_opts_t;

/* Starts the runtime with `threads` workers in all: the calling thread is
 * worker 0 (it runs tasks while it waits in tscope_rt_taskwait), threads-1
 * worker threads are started.  TSCOPE_ESTATE if already running. */
int tscope_rt_init(unsigned threads);
/* Waits for every task (descendants of finished tasks too), stops the
 * workers.  Call from the thread that
 * called tscope_rt_init. */
int tscope_rt_finalize(void);

/* Creates a task running fn(arg) as a child of the calling task (or of the
 * program, outside tasks).  opts may be NULL.  If handle is not NULL it
 * receives a reference to the task, to pass to tscope_rt_cancel/_wait and
 * to give back with tscope_rt_release. */
int tscope_rt_spawn(tscope_rt_fn fn, void *arg, const tscope_rt_spawn_opts_t *opts,
                    tscope_rt_task_t **handle);
/* Waits until every child of the calling task (or every task spawned
 * outside tasks, at top level) has finished, running other tasks
 * meanwhile; the waiting task is reported as yielded and resumed.
 * TSCOPE_ESTATE from a thread that is not a worker of the runtime. */
int tscope_rt_taskwait(void);
/* Cancels a task that has not started: it never runs, its dependants are
 * released, it is reported as cancelled.  TSCOPE_ESTATE if it already
 * started or finished. */
int tscope_rt_cancel(tscope_rt_task_t *task);
/* Waits for one task (running others meanwhile).  TSCOPE_ECANCELED if it
 * was cancelled.  TSCOPE_EINVAL, at once, for a wait that could never end:
 * for the calling task itself, for one of its ancestors, or for a task that
 * depends (through any chain of dependencies) on the calling task. */
int tscope_rt_wait(tscope_rt_task_t *task);
/* Gives back a handle from tscope_rt_spawn. */
void tscope_rt_release(tscope_rt_task_t *task);

/* Workers allowed to run tasks (1..threads); workers above it park and are
 * reported idle.  Takes effect within one scheduling step. */
int tscope_rt_set_thread_cap(unsigned cap);
unsigned tscope_rt_thread_cap(void);
unsigned tscope_rt_threads(void);
/* Index of the calling worker (0..threads-1), or -1 outside the runtime. */
int tscope_rt_worker(void);

/* A recursive parallel loop over [begin, end), AllScale style: a range
 * longer than `grain` is a splittable work item that spawns two halves
 * (depth + 1); a range of at most `grain` is a processable item that calls
 * body(b, e, arg).  Every item is a task of `type`, flagged and with its
 * recursion depth.  Returns when the whole range is done. */
typedef void (*tscope_rt_range_fn)(size_t b, size_t e, void *arg);
int tscope_rt_parallel_for(size_t begin, size_t end, size_t grain, tscope_rt_range_fn body,
                           void *arg, tscope_type_t type);

/* Pipelines and task pools (the patterns of compositional performance
 * modelling): stages connected by bounded queues, each stage a task pool of
 * `workers` threads of its own that take elements from the stage's input
 * (the first stage: straight from the run's array; the others: their
 * queue), call fn(element, arg) - reported as a task of the stage's type -
 * and pass the element on.  A task pool is a pipeline of one stage.  They
 * do not need tscope_rt_init (their threads are their own). */
typedef void (*tscope_rt_stage_fn)(void *element, void *arg);
typedef struct tscope_rt_pipeline tscope_rt_pipeline_t;

/* queue_capacity: elements each queue between stages holds (>= 1). */
int tscope_rt_pipeline_create(size_t queue_capacity, tscope_rt_pipeline_t **out);
/* Appends a stage (at most 16).  workers >= 1. */
int tscope_rt_pipeline_add_stage(tscope_rt_pipeline_t *p, tscope_rt_stage_fn fn, void *arg,
                                 unsigned workers, tscope_type_t type);
/* Processes the n elements (the first stage's workers take them in
 * chunks, in array order) and returns when each has passed every stage;
 * the calling thread only waits.  May be called again with new elements. */
int tscope_rt_pipeline_run(tscope_rt_pipeline_t *p, void **elements, size_t n);
void tscope_rt_pipeline_destroy(tscope_rt_pipeline_t *p);

typedef struct tscope_rt_stats {
    uint64_t spawned, completed, cancelled, stolen;
    uint64_t idle_ns; /* summed over workers */
} tscope_rt_stats_t;

int tscope_rt_stats(tscope_rt_stats_t *out);

#ifdef __cplusplus
}
#endif

#endif
