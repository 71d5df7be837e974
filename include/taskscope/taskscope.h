/* taskscope.h - public API of taskscope: task events, counters, introspection.
 *
 * A program (or a task runtime) reports what its tasks do through the event
 * functions below; taskscope timestamps each event and aggregates it on the
 * calling thread, in that thread's own shard of the profile (no lock shared
 * with other threads, no system call); what a trace or a tool needs record
 * by record also goes into the thread's ring buffer, which a consumer
 * thread drains.  The introspection functions query the profile while the
 * program runs and after tscope_finalize().
 *
 * Conventions:
 * - Every function returns 0 or a negative TSCOPE_E* code (tscope_strerror()).
 * - Before tscope_init() and when the master switch TASKSCOPE_ENABLE is off,
 *   event functions do nothing; they return 0 when disabled on purpose and
 *   TSCOPE_ESTATE when the library is not initialised.
 * - Task ids are 64-bit: the rank in the top 16 bits, a counter below
 *   (tscope_task_id_next()).  Id 0 means "no task": a task event on it
 *   returns TSCOPE_EINVAL and records nothing.
 * - Times returned by queries are nanoseconds.
 * - All functions are thread-safe.  Event functions register the calling
 *   thread implicitly on its first event.
 * - The header is C11 (a field under two names is an anonymous union) and
 *   C++.
 */
#ifndef TASKSCOPE_TASKSCOPE_H
#define TASKSCOPE_TASKSCOPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSCOPE_VERSION_MAJOR 0
#define TSCOPE_VERSION_MINOR 2
#define TSCOPE_VERSION_PATCH 0
#define TSCOPE_VERSION_HEX                                                                         \
    ((TSCOPE_VERSION_MAJOR << 16) | (TSCOPE_VERSION_MINOR << 8) | TSCOPE_VERSION_PATCH)

/* Error codes: one X-macro generates the constants, tscope_strerror() and
 * tscope_err_name(). */
#define TSCOPE_ERRNO_MAP(X)                                                                        \
    X(INVAL, -1, "invalid argument")                                                               \
    X(NOMEM, -2, "out of memory")                                                                  \
    X(STATE, -3, "wrong library state (not initialised, or already finalised)")                    \
    X(NOENT, -4, "no such task, type, counter or event")                                           \
    X(LIMIT, -5, "a fixed limit was reached")                                                      \
    X(DROPPED, -6, "event dropped: the thread's ring was full (drop policy)")                      \
    X(IO, -7, "input/output error")                                                                \
    X(EXIST, -8, "output folder already exists")                                                   \
    X(FORMAT, -9, "malformed input")                                                               \
    X(CANCELED, -10, "the task was cancelled")                                                     \
    X(NOTKEPT, -11, "task not kept in the instance graph (TASKSCOPE_INSTANCE_CAP reached)")

enum {
#define TSCOPE_ERR_ENUM(name, value, text) TSCOPE_E##name = (value),
    TSCOPE_ERRNO_MAP(TSCOPE_ERR_ENUM)
#undef TSCOPE_ERR_ENUM
};

/* Returns a static description of an error code; never NULL. */
const char *tscope_strerror(int err);
/* Returns the symbolic name ("TSCOPE_EINVAL") of an error code; never NULL. */
const char *tscope_err_name(int err);
/* Returns TSCOPE_VERSION_HEX of the library actually linked. */
unsigned tscope_version(void);
/* Returns "major.minor.patch". */
const char *tscope_version_string(void);

typedef uint32_t tscope_type_t;    /* task type id, 1..65534 (0: untyped) */
typedef uint32_t tscope_counter_t; /* counter id, 1..65534 */
typedef uint32_t tscope_event_t;   /* custom event id, 1..65534 */

/* Task flags: AllScale's work-item variants, and OpenMP's task kinds (set
 * by the OMPT adapter; docs/adapters.md). */
#define TSCOPE_TASK_SPLITTABLE 0x1u
#define TSCOPE_TASK_PROCESSABLE 0x2u
#define TSCOPE_TASK_UNDEFERRED 0x4u /* the creator waited for it (if(0), final) */
#define TSCOPE_TASK_UNTIED 0x8u     /* may continue on another thread */
#define TSCOPE_TASK_FINAL 0x10u     /* final: its descendants are included */
#define TSCOPE_TASK_MERGEABLE 0x20u
#define TSCOPE_TASK_INCLUDED 0x40u /* ran merged into its creator's data environment */
#define TSCOPE_TASK_FLAGS_ALL 0x7Fu

/* Local dependency hazard kinds (dependence API version 1: one per call). */
typedef enum tscope_hazard {
    TSCOPE_DEP_RAW = 1, /* read after write (true dependency) */
    TSCOPE_DEP_WAR = 2, /* write after read (anti dependency) */
    TSCOPE_DEP_WAW = 3  /* write after write (output dependency) */
} tscope_hazard_t;

/* Dependence API version 2: one edge per ordered pair of tasks, carrying
 * every hazard that causes it as bits, and the number of addresses. */
#define TSCOPE_DEP_API_VERSION 2
#define TSCOPE_HAZARD_RAW 0x1u   /* read after write */
#define TSCOPE_HAZARD_WAR 0x2u   /* write after read */
#define TSCOPE_HAZARD_WAW 0x4u   /* write after write */
#define TSCOPE_HAZARD_MUTEX 0x8u /* mutually exclusive (mutexinoutset): orders nothing */
#define TSCOPE_HAZARD_ORDER (TSCOPE_HAZARD_RAW | TSCOPE_HAZARD_WAR | TSCOPE_HAZARD_WAW)
#define TSCOPE_HAZARD_ALL (TSCOPE_HAZARD_ORDER | TSCOPE_HAZARD_MUTEX)

/* Remote dependency directions (DASH). */
typedef enum tscope_dep_dir {
    TSCOPE_DEP_IN = 1,
    TSCOPE_DEP_OUT = 2,
    TSCOPE_DEP_COPYIN = 3
} tscope_dep_dir_t;

/* ---- lifecycle ---------------------------------------------------------- */

/* Initialises taskscope for this process: reads the TASKSCOPE_* environment,
 * calibrates the clock and starts the consumer thread.  rank is this
 * process's rank (0..nranks-1, at most 65535), nranks the number of ranks (1
 * without MPI).  Returns TSCOPE_ESTATE if already initialised, TSCOPE_EINVAL
 * for bad ranks.  An invalid environment variable is not an error: a warning
 * line is printed and its default is used. */
int tscope_init(int rank, int nranks);

/* The rank and number of ranks an MPI launcher (Open MPI's mpirun, MPICH's
 * Hydra, a PMIx launcher, Slurm's srun) put into this process's
 * environment: returns 1 with both set, or 0 (neither touched) outside such
 * a launcher.  For a tscope_init that runs before MPI_Init. */
int tscope_rank_from_env(int *rank, int *nranks);

/* What a program is to an MPI job, by its file name (a path's last
 * component): TSCOPE_LAUNCHER_RANKS for a launcher that starts the ranks
 * (mpirun, mpiexec, srun, ...: `taskscope run` goes after it, not before),
 * TSCOPE_LAUNCHER_DAEMON for a process such a launcher, or an MPI library
 * in a program, starts to serve the ranks (orted, hydra_pmi_proxy,
 * slurmstepd, ...: no part of the program, although it may inherit an
 * adapter's LD_PRELOAD), 0 for anything else (and NULL). */
enum { TSCOPE_LAUNCHER_RANKS = 1, TSCOPE_LAUNCHER_DAEMON = 2 };
int tscope_mpi_launcher(const char *program);

/* Corrects the rank after tscope_init (an adapter that learns it in
 * MPI_Init): task ids taken from now on carry it, and the outputs are
 * written for it.  TSCOPE_EINVAL for bad ranks, TSCOPE_ESTATE when not
 * initialised. */
int tscope_set_rank(int rank, int nranks);

/* Stops measurement: drains every ring, completes the profile (tasks begun and
 * never ended are reported as unfinished), writes the outputs configured by
 * TASKSCOPE_OUTPUTS into the output folder and stops the consumer thread.
 * Queries keep working afterwards.  Returns the first output error, if any;
 * the remaining outputs are still written. */
int tscope_finalize(void);

/* ---- the global view of a job's ranks ---------------------------------------
 * The collectives of the caller's transport (MPI, a runtime's own) that
 * tscope_finalize_global reduces the ranks' profiles with.  Every rank
 * calls each one in the same order, as with MPI collectives; each returns
 * 0, or nonzero when it failed.  The MPI adapter fills them with PMPI. */
typedef enum tscope_reduce_op {
    TSCOPE_REDUCE_SUM = 1,
    TSCOPE_REDUCE_MIN,
    TSCOPE_REDUCE_MAX
} tscope_reduce_op_t;

typedef struct tscope_comm {
    size_t struct_size; /* sizeof(tscope_comm_t) */
    void *ctx;          /* passed to each function */
    int rank, size;
    /* root's bytes to every rank */
    int (*bcast)(void *ctx, void *buf, size_t bytes, int root);
    /* elementwise over the ranks' n values, into out at root only */
    int (*reduce)(void *ctx, const int64_t *in, int64_t *out, size_t n, tscope_reduce_op_t op,
                  int root);
    /* each rank's `bytes` bytes, rank after rank, into out at root, where
     * counts[i] says how many rank i sends (counts only read at root) */
    int (*gatherv)(void *ctx, const void *in, size_t bytes, void *out, const size_t *counts,
                   int root);
} tscope_comm_t;

/* Finalizes this rank (tscope_finalize: its outputs in RUN/rank-N) and
 * reduces every rank's profile over comm into the job's global view, which
 * rank 0 writes to RUN/global (docs/mpi.md).  Collective: every rank calls
 * it.  Returns 0 or the first error (this rank's outputs, the reduction:
 * TSCOPE_EIO). */
int tscope_finalize_global(const tscope_comm_t *comm);

/* Registers fn to run at the start of tscope_finalize, in the finalizing
 * thread, while events are still recorded: an adapter ends there what it
 * keeps open (the program's root task, a shadow stack) when another
 * adapter finalizes first (the MPI adapter at MPI_Finalize).  fn must not
 * call tscope_init or tscope_finalize.  At most 8; TSCOPE_ELIMIT beyond. */
int tscope_atfinalize(void (*fn)(void));

/* 1 when events are being recorded, 0 otherwise. */
int tscope_is_enabled(void);

/* Where tscope_finalize() wrote its outputs ("" before that or when no file
 * output was configured).  The string stays valid until the next tscope_init(). */
const char *tscope_output_dir(void);

/* Registers the calling thread with a name (copied; NULL gives "thread-N").
 * Optional: a thread's first event registers it implicitly.  Returns
 * TSCOPE_ELIMIT beyond TASKSCOPE_MAX_THREADS threads. */
int tscope_thread_register(const char *name);
/* Marks the calling thread as finished; its ring is drained and released. */
int tscope_thread_unregister(void);

/* Interns a name and returns its id in *out; the same name always gives the
 * same id.  Takes a lock: call once per name, not per event.  Names longer
 * than 255 bytes are TSCOPE_EINVAL. */
int tscope_type_register(const char *name, tscope_type_t *out);
int tscope_counter_register(const char *name, tscope_counter_t *out);
int tscope_event_register(const char *name, tscope_event_t *out);

/* Task type attributes (tscope_type_set_attrs).  TSCOPE_TYPE_WAIT: its
 * tasks wait (a barrier, taskwait, taskgroup): their self time is waiting,
 * not work, and the critical path gives them no weight.  TSCOPE_TYPE_BARRIER
 * (with TSCOPE_TYPE_WAIT): its tasks wait for their whole team, each
 * thread's at once (a barrier): the critical path joins the team there. */
#define TSCOPE_TYPE_WAIT 1u
#define TSCOPE_TYPE_BARRIER 2u
/* Adds attributes (TSCOPE_TYPE_* bits) to a registered task type; they
 * stay for the life of the process and go into profile.json.  Takes a lock:
 * call once per type.  TSCOPE_ENOENT for an unknown type, TSCOPE_EINVAL for
 * bits this version does not know. */
int tscope_type_set_attrs(tscope_type_t type, unsigned attrs);
/* 0 when the filter file in force (TASKSCOPE_FILTER_FILE, docs/filter.md)
 * excludes this type's tasks from measurement, else 1.  Decided once, when
 * the type is registered (or at tscope_init for one registered before);
 * tscope_task_create_h and tscope_task_start_h then return NULL for it,
 * counted as filtered, and the task's time stays with the task it runs
 * inside.  No lock: a runtime may ask per task. */
int tscope_type_measured(tscope_type_t type);

/* Returns a new task id unique across threads and ranks (rank in the top 16
 * bits).  No lock: each thread takes ids from its own block. */
uint64_t tscope_task_id_next(void);

/* ---- task events (the hot path) ------------------------------------------ */

/* A task was created by `parent` (0: none).  flags: TSCOPE_TASK_*; depth is
 * the recursion depth (clamped to 65535); priority is clamped to int16. */
int tscope_task_create(uint64_t id, uint64_t parent, tscope_type_t type, unsigned flags,
                       unsigned depth, int priority);
/* The task was put into a ready queue. */
int tscope_task_queued(uint64_t id);
/* The task starts running on the calling thread.  type may be 0 when the task
 * was created with tscope_task_create(); a task that was never created is
 * created implicitly here, its parent being the task running on this thread. */
int tscope_task_begin(uint64_t id, tscope_type_t type);
/* Creates and begins a task in one event: the task that runs on the calling
 * thread (if any) is its parent.  This is the cheapest way to time a piece of
 * work (an APEX-style timer): the consumer settles such a task as soon as it
 * ends, without a task-table lookup.  Do not also call tscope_task_create. */
int tscope_task_start(uint64_t id, tscope_type_t type);
/* The task finished on the calling thread. */
int tscope_task_end(uint64_t id);
/* The task was cancelled.  If it runs on the calling thread this also ends it. */
int tscope_task_cancel(uint64_t id);
/* The task leaves the calling thread without finishing (taskwait, suspension);
 * it may resume later on any thread. */
int tscope_task_yield(uint64_t id);
/* A yielded task continues on the calling thread. */
int tscope_task_resume(uint64_t id);

/* ---- task events on handles ---------------------------------------------- */

/* A task's handle: its record while it lives, which the runtime keeps next
 * to its own task (OpenMP's ompt_data_t, a task struct) so that what must
 * cross threads travels with the task instead of through a lookup by id.
 * With TASKSCOPE_AGGREGATE=thread each thread then adds the tasks it runs
 * to its own shard of the profile (no ring, no consumer replay); otherwise
 * these calls are the id-based events above.  A handle is valid from its
 * create (or start) until its end or cancel, and only between tscope_init
 * and tscope_finalize; every call refuses NULL, a handle that ended and one of
 * an earlier tscope_init with TSCOPE_EINVAL, touching nothing. */
typedef struct tscope_task tscope_task_t;
/* Creates task id (nonzero) below `parent` (NULL: none); NULL when it is not
 * measured (measurement off, bad arguments, no memory). */
tscope_task_t *tscope_task_create_h(uint64_t id, tscope_task_t *parent, tscope_type_t type,
                                    unsigned flags, unsigned depth, int priority);
/* Creates and begins task id on the calling thread, below the task that
 * runs there (tscope_task_start). */
tscope_task_t *tscope_task_start_h(uint64_t id, tscope_type_t type);
/* The task was put into a ready queue (the id-based event; with
 * TASKSCOPE_AGGREGATE=thread an event counted, and one the trace and tools
 * see, with no time in the profile). */
int tscope_task_queued_h(tscope_task_t *task);
int tscope_task_begin_h(tscope_task_t *task);
/* Ends the task; the handle is then invalid. */
int tscope_task_end_h(tscope_task_t *task);
/* Cancels the task (ending it if it runs here); the handle is then invalid. */
int tscope_task_cancel_h(tscope_task_t *task);
int tscope_task_yield_h(tscope_task_t *task);
int tscope_task_resume_h(tscope_task_t *task);
/* The task, running on the calling thread, is switched out while another
 * task runs there nested inside it (a task scheduling point: a taskwait or
 * a taskgroup's end that runs a child, a taskyield, an undeferred child):
 * it counts one yield (its type's `yields`), and nothing else changes - it
 * stays on the thread's stack, and the nested task's time is in its
 * running time as any nested task's is.  A count only: no record, nothing
 * for the trace or the tools; with the profiler off it does nothing. */
int tscope_task_switched_h(tscope_task_t *task);
/* tscope_task_begin_h(task) and tscope_task_switched_h(below) in one event
 * (below: the task it begins nested in, switched out for it; NULL, or one
 * that is not live: the begin alone).  The OpenMP adapter's common case. */
int tscope_task_begin_nested_h(tscope_task_t *task, tscope_task_t *below);
/* The id and the type the task was created with (0 for NULL). */
uint64_t tscope_task_handle_id(const tscope_task_t *task);
tscope_type_t tscope_task_handle_type(const tscope_task_t *task);

/* Task `to` depends on task `from` (both of this process): `hazards` is a
 * non-zero mask of TSCOPE_HAZARD_* (an edge with only TSCOPE_HAZARD_MUTEX
 * says the two are mutually exclusive, not ordered), `naddrs` (>= 1) the
 * number of addresses that cause it and `addr` the first of them (NULL:
 * omp_all_memory).  Record each pair once: every output counts edges.
 * A type 0 is looked up (a task the profile no longer holds - one that
 * ended, or one a thread aggregates itself - then counts as untyped). */
int tscope_dep_edge(uint64_t from, tscope_type_t from_type, uint64_t to, tscope_type_t to_type,
                    unsigned hazards, uint32_t naddrs, const void *addr);
/* Dependence API version 1: `to` depends on `from` through address `addr`
 * with hazard `kind`; recorded as an edge of one address (a pair named
 * through several addresses then counts several times). */
int tscope_dep_local(uint64_t from, uint64_t to, const void *addr, tscope_hazard_t kind);
/* The same with both tasks' types (version 1). */
int tscope_dep_local_typed(uint64_t from, tscope_type_t from_type, uint64_t to,
                           tscope_type_t to_type, const void *addr, tscope_hazard_t kind);
/* Task `from` on rank from_rank and task `to` on rank to_rank are connected
 * through `addr` in direction `dir`. */
int tscope_dep_remote(uint64_t from, int from_rank, uint64_t to, int to_rank, const void *addr,
                      tscope_dep_dir_t dir);

/* Messages between ranks (MPI, a runtime's own transport): one message of
 * `bytes` sent to (TSCOPE_MSG_SEND) or received from (TSCOPE_MSG_RECV) rank
 * `peer` (0..65535), with the transport's tag.  TSCOPE_MSG_COLLECTIVE marks
 * the share of a collective operation attributed to that peer.  The
 * profile counts messages and bytes per peer (profile.json "messages"). */
#define TSCOPE_MSG_SEND 1u
#define TSCOPE_MSG_RECV 2u
#define TSCOPE_MSG_COLLECTIVE 4u
int tscope_message(int peer, uint64_t bytes, int tag, unsigned flags);

/* Records a value of a registered counter. */
int tscope_counter_sample(tscope_counter_t counter, double value);
/* Records an occurrence of a registered custom event with a payload. */
int tscope_custom_event(tscope_event_t event, uint64_t payload);

/* Makes every event recorded (by any thread) before this call visible to the
 * queries below.  Blocks until the consumer has processed them. */
int tscope_flush(void);

/* ---- introspection (copies; callable from any thread, also after finalize) */

typedef struct tscope_stats {
    uint64_t count;
    double sum, min, max, mean, stddev; /* population standard deviation */
} tscope_stats_t;

typedef struct tscope_type_stats {
    tscope_type_t type;
    uint64_t created;    /* tasks created with this type */
    uint64_t calls;      /* tasks of this type that ended */
    uint64_t yields;     /* yields of ended tasks */
    uint64_t cancelled;  /* tasks cancelled (not counted in calls) */
    uint64_t unfinished; /* begun, never ended (known at finalize) */
    /* The three times of each ended task (docs/output-formats.md):
     * self: running, without the tasks nested inside it on its thread;
     * running: running, nested tasks included (time yielded excluded);
     * elapsed: from its begin to its end (yields and waits included).
     * count/min/max/mean/stddev describe single tasks, sum adds them all.
     * excl_ns and incl_ns are the names before self_ns and running_ns: the
     * same fields. */
    union {
        tscope_stats_t self_ns;
        tscope_stats_t excl_ns;
    };
    union {
        tscope_stats_t running_ns;
        tscope_stats_t incl_ns;
    };
    uint32_t threads; /* distinct threads that ran tasks of this type */
    tscope_stats_t elapsed_ns;
    /* The type's share of the run, recursion counted once (as TAU does):
     * running time outside segments of the same type on the same thread,
     * elapsed time of the tasks without an ancestor of the same type.
     * Neither exceeds the run's duration times its threads. */
    double running_total_ns, elapsed_total_ns;
} tscope_type_stats_t;

/* Statistics of one task type.  TSCOPE_ENOENT for an unknown id. */
int tscope_query_type(tscope_type_t type, tscope_type_stats_t *out);
/* Statistics of all registered types, ordered by id: fills up to cap entries
 * and sets *count to the number of types (which may exceed cap). */
int tscope_query_types(tscope_type_stats_t *out, size_t cap, size_t *count);
/* Copies the name of a type/counter/event into buf (truncated to len-1). */
int tscope_type_name(tscope_type_t type, char *buf, size_t len);
int tscope_counter_name(tscope_counter_t counter, char *buf, size_t len);

enum tscope_task_state {
    TSCOPE_TASK_LIVE = 0,      /* created or running, not finished yet */
    TSCOPE_TASK_DONE = 1,      /* ended */
    TSCOPE_TASK_CANCELLED = 2, /* cancelled */
    TSCOPE_TASK_UNFINISHED = 3 /* begun and never ended by finalize */
};

typedef struct tscope_task_info {
    uint64_t id, parent;
    tscope_type_t type;
    unsigned flags, depth;
    int priority;
    int state;       /* enum tscope_task_state */
    uint32_t thread; /* thread index of the first begin */
    uint32_t yields;
    double begin_ns, end_ns; /* since tscope_init; end_ns 0 while live */
    /* self and running time, so far for a live task (excl_ns and incl_ns:
     * the names before, the same fields) */
    union {
        double self_ns;
        double excl_ns;
    };
    union {
        double running_ns;
        double incl_ns;
    };
    double elapsed_ns; /* end_ns - begin_ns; 0 while live */
} tscope_task_info_t;

/* One task.  Live tasks and tasks in the instance graph can be queried;
 * TSCOPE_ENOTKEPT for a task the instance cap left out (or an unknown task
 * once the cap was reached), TSCOPE_ENOENT otherwise (unknown, filtered). */
int tscope_query_task(uint64_t id, tscope_task_info_t *out);

typedef struct tscope_subtree {
    uint64_t tasks; /* the task and its recorded descendants */
    double time_ns; /* sum of their self times */
    int complete;   /* 1 if every descendant is in the instance graph */
} tscope_subtree_t;

/* Total time of an ended task and all its descendants (on any thread).
 * When the instance graph is capped it keeps the tasks closest to the root
 * (every task down to the depth that fits) and adds the tasks below that
 * depth to their deepest kept ancestor, so the root's subtree stays exact.
 * TSCOPE_ENOTKEPT for a task the cap left out, TSCOPE_ENOENT if unknown. */
int tscope_query_subtree(uint64_t id, tscope_subtree_t *out);
/* Statistics of the running times of a recorded task's recorded children. */
int tscope_query_children(uint64_t id, tscope_stats_t *out);

typedef struct tscope_dep_info {
    uint64_t task; /* the task at the other end of the edge */
    int kind;      /* remote: tscope_dep_dir_t; local: the edge's first hazard as a
                      tscope_hazard_t (RAW before WAR before WAW; 0: mutual exclusion only) */
    int remote;    /* 1: recorded with tscope_dep_remote */
    int rank;      /* the other task's rank */
} tscope_dep_info_t;

/* The dependency edges of a task, as recorded (the first
 * TASKSCOPE_INSTANCE_CAP edges of the run): its predecessors (the tasks it
 * depends on) and successors.  Fills up to pred_cap / succ_cap entries
 * (either array may be NULL with cap 0) and sets *npred / *nsucc to the full
 * counts.  TSCOPE_ENOENT when the task is unknown and has no edges.
 * (Dependence API version 1; tscope_query_dep_edges gives every hazard.) */
int tscope_query_deps(uint64_t id, tscope_dep_info_t *pred, size_t pred_cap, size_t *npred,
                      tscope_dep_info_t *succ, size_t succ_cap, size_t *nsucc);

/* One dependence edge of a task (dependence API version 2). */
typedef struct tscope_dep_edge_info {
    uint64_t task;    /* the task at the other end of the edge */
    unsigned hazards; /* local: TSCOPE_HAZARD_* bits; remote: 0 */
    uint32_t naddrs;  /* local: addresses causing it; remote: 1 */
    uint64_t addr;    /* the first address (0: omp_all_memory or none) */
    int remote;       /* 1: recorded with tscope_dep_remote */
    int dir;          /* remote: tscope_dep_dir_t; local: 0 */
    int rank;         /* the other task's rank */
} tscope_dep_edge_info_t;

/* As tscope_query_deps, with each edge's hazards and address count. */
int tscope_query_dep_edges(uint64_t id, tscope_dep_edge_info_t *pred, size_t pred_cap,
                           size_t *npred, tscope_dep_edge_info_t *succ, size_t succ_cap,
                           size_t *nsucc);

typedef struct tscope_counter_stats {
    uint64_t count;
    double min, max, mean, stddev, last;
} tscope_counter_stats_t;

int tscope_query_counter(tscope_counter_t counter, tscope_counter_stats_t *out);

/* Messages to and from one peer rank (tscope_message): point to point, and
 * the shares of collective operations attributed to the peer. */
typedef struct tscope_peer_stats {
    int peer;
    uint64_t sent, sent_bytes, recv, recv_bytes;
    uint64_t coll_sent, coll_sent_bytes, coll_recv, coll_recv_bytes;
} tscope_peer_stats_t;
/* The peers this process exchanged messages with, ordered by rank: fills up
 * to cap entries and sets *count to their number (which may exceed cap). */
int tscope_query_messages(tscope_peer_stats_t *out, size_t cap, size_t *count);

typedef struct tscope_totals {
    uint64_t events;            /* events processed by the consumer */
    uint64_t events_dropped;    /* events lost to full rings (drop policy) */
    uint64_t ring_waits;        /* times a producer waited for ring space */
    uint64_t tasks_created;     /* create events */
    uint64_t tasks_completed;   /* ended tasks */
    uint64_t tasks_cancelled;   /* cancelled tasks */
    uint64_t tasks_unfinished;  /* begun, never ended (known at finalize) */
    uint64_t tasks_live;        /* not yet completed */
    uint64_t instances;         /* tasks in the instance graph */
    uint64_t instances_cut_off; /* tasks left out because the cap was reached */
    uint64_t dependencies;      /* dependency events */
    uint64_t anomalies;         /* events that did not fit a task's state */
    uint32_t threads;           /* the program's threads that registered (not taskscope's) */
    uint32_t types;             /* registered task types */
    double elapsed_ns;          /* since tscope_init (until finalize) */
} tscope_totals_t;

int tscope_query_totals(tscope_totals_t *out);

#ifdef __cplusplus
}
#endif

#endif
