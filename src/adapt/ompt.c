/* ompt.c - the OMPT tool: OpenMP programs reported as taskscope events.
 *
 * libomp finds this tool through ompt_start_tool (the program links the
 * library, LD_PRELOAD, or OMP_TOOL_LIBRARIES); its initialize callback
 * starts taskscope (unless the program did) and its finalize, or exit(),
 * writes the outputs.  It uses only the public API, as any runtime would.
 *
 * Mapping (docs/adapters.md has the full table):
 * - explicit task: create (parent = encountering task, OMPT flags) at
 *   task_create, begin when first scheduled, end at complete/cancel/detach;
 * - initial and implicit tasks: tasks whose parent is the parallel region;
 * - parallel regions, worksharing constructs and sync regions (barrier,
 *   taskwait, taskgroup, ...): "pseudo-tasks" started and ended on the thread
 *   (tscope_task_start), so waiting time shows per construct and thread;
 *   sync regions' types carry TSCOPE_TYPE_WAIT (no work on the critical path),
 *   barriers' TSCOPE_TYPE_BARRIER too (the team waits for its last thread);
 * - depend clauses: one edge per predecessor with its hazards (hazards.c); a
 *   taskwait with depend clauses (and the wait for an if(0) task's) is a
 *   taskwait construct with its edges.
 *
 * Each thread keeps a shadow stack of what runs on it, mirroring the
 * profile's replay stack.  A task switched away from stays on the stack
 * (libomp runs the next task on top of it, as a nested call), so self
 * time excludes what ran inside, and running time is self time plus
 * everything nested.  Only a task that is left while not on top of where
 * execution continues is yielded, and resumed where it continues: an untied
 * task at every switch (it may continue on any thread), a tied one when
 * what ran above it is left.  This costs create + begin + end
 * per task (a yield/resume pair only when a task really migrates), not five
 * events; the tied task a task begins on top of counts the switch as a
 * yield (tscope_task_begin_nested_h, tscope_task_switched_h: a count, its
 * times unchanged), so that `yields` counts every switch out, as libomp
 * reports them.
 *
 * A task's ompt_data_t holds its taskscope handle (tscope_task_t: the
 * record that carries the task between threads, from taskscope's pools),
 * its depth, an "untied" and a "begun" bit; a parallel region's holds the handle of its
 * pseudo-task and its type.  Task types come from codeptr_ra through
 * typecache.c (resolved once per address).
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hazards.h"
#include "lifecycle.h"
#include "srcloc.h"
#include "tailcall.h"
#include "taskscope/policy.h"
#include "taskscope/taskscope.h"
#include "typecache.h"

/* ---- task data packing --------------------------------------------------- */

#define PTR_MASK ((1ull << 48) - 1) /* user-space addresses fit in 48 bits */
#define ID_BITS ((1ull << 48) - 1)  /* a task id below its rank bits */
#define DEPTH_SHIFT 48
#define DEPTH_MAX 0xFFFu /* deeper tasks are given this depth */
/* its children had depend clauses: their address histories go at its end
 * (kept here, where a switch out and a resume elsewhere keep it too) */
#define DEPS (1ull << 60)
/* a task of a type the filter file excludes (tscope_type_measured): the
 * pointer is its nearest measured ancestor's handle, for its children;
 * nothing is recorded of it, its time stays with what it runs inside */
#define THROUGH (1ull << 61)
#define UNTIED (1ull << 62) /* may continue on another thread after a switch */
#define BEGUN (1ull << 63)

static inline tscope_task_t *handle_of(uint64_t value)
{
    return (tscope_task_t *)(uintptr_t)(value & PTR_MASK);
}

static inline unsigned depth_of(uint64_t value)
{
    return (unsigned)(value >> DEPTH_SHIFT) & DEPTH_MAX;
}

static inline uint64_t pack_depth(unsigned depth)
{
    return (uint64_t)(depth > DEPTH_MAX ? DEPTH_MAX : depth) << DEPTH_SHIFT;
}

static inline uint64_t pack(tscope_task_t *h, unsigned depth, uint64_t begun)
{
    if (!h)
        return 0; /* not measured */
    return ((uint64_t)(uintptr_t)h & PTR_MASK) | pack_depth(depth) | begun;
}

/* ---- task types ------------------------------------------------------------ */

/* A cache key is a code address tagged in its top byte with what it names
 * (user-space addresses leave that byte free), or a parallel region's type
 * id tagged likewise for what derives from the region. */
enum tag {
    TAG_TASK = 1,         /* explicit task at this address */
    TAG_PARALLEL,         /* parallel region */
    TAG_IMPLICIT,         /* implicit task of the parallel region type in the key */
    TAG_TASKLOOP,         /* taskloop construct at a user return address */
    TAG_SYNC = 16,        /* + ompt_sync_region_t */
    TAG_REGION_SYNC = 32, /* + ompt_sync_region_t, at an address inside the
                             runtime: by the parallel region's type */
    TAG_WORK = 48,        /* + ompt_work_t */
    TAG_TASK_SYNC = 64    /* + ompt_sync_region_t, at an address inside the
                             runtime: by the encountering task's type (low
                             28 bits) and its region's (above) */
};
#define KEY(tag, v) (((uint64_t)(tag) << 56) | ((uint64_t)(v) & ((1ull << 56) - 1)))

static const char *sync_name(int kind)
{
    switch (kind) {
    case ompt_sync_region_taskwait:
        return "taskwait";
    case ompt_sync_region_taskgroup:
        return "taskgroup";
    case ompt_sync_region_reduction:
        return "reduction";
    case ompt_sync_region_barrier_explicit:
        return "barrier";
    case ompt_sync_region_barrier_implementation:
        return "barrier (runtime)";
    case ompt_sync_region_barrier_implicit_workshare:
        return "barrier (end of worksharing)";
    case ompt_sync_region_barrier_implicit_parallel:
    case ompt_sync_region_barrier_implicit:
        return "barrier (implicit)";
    case ompt_sync_region_barrier_teams:
        return "barrier (teams)";
    default:
        return "barrier";
    }
}

/* The word in the runtime entries of a sync region kind (tailcall.h); NULL
 * for kinds the program does not call by name. */
static const char *sync_word(int kind)
{
    switch (kind) {
    case ompt_sync_region_taskwait:
        return "taskwait";
    case ompt_sync_region_taskgroup:
        return "taskgroup";
    case ompt_sync_region_barrier_explicit:
        return "barrier";
    default:
        return NULL;
    }
}

static const char *work_name(int kind)
{
    switch (kind) {
    case ompt_work_loop:
        return "loop";
    case ompt_work_sections:
        return "sections";
    case ompt_work_single_executor:
        return "single";
    case ompt_work_single_other:
        return "single (others wait)";
    case ompt_work_workshare:
        return "workshare";
    case ompt_work_distribute:
        return "distribute";
    case ompt_work_taskloop:
        return "taskloop";
    default:
        return "scope";
    }
}

static const void *runtime_code; /* an address inside the OpenMP runtime */
static tscope_type_t type_initial;

/* Registers a type name, cut to the 255 bytes a name may have; 0 (untyped)
 * when it cannot be registered. */
static uint32_t register_name(char *name)
{
    if (strlen(name) > 255)
        name[255] = 0;
    tscope_type_t t = 0;
    return tscope_type_register(name, &t) ? 0 : t;
}

/* Registers the type of a sync region of this kind: a wait, whose self
 * time is no work on the critical path; a barrier (every kind but taskwait,
 * taskgroup and reduction) waits for the whole team. */
static uint32_t register_wait(char *name, int kind)
{
    uint32_t t = register_name(name);
    int team = kind != ompt_sync_region_taskwait && kind != ompt_sync_region_taskgroup &&
               kind != ompt_sync_region_reduction;
    if (t)
        tscope_type_set_attrs(t, TSCOPE_TYPE_WAIT | (team ? TSCOPE_TYPE_BARRIER : 0));
    return t;
}

/* The type of what the runtime reports at an address inside itself with
 * nothing better to name it by (rare: registered when first needed). */
static uint32_t type_in_runtime(void)
{
    char name[] = "task (inside the OpenMP runtime)";
    return register_name(name);
}

/* Strips "parallel " from a parallel region's type name: its location. */
static void region_location(uint32_t parallel_type, char *buf, size_t len)
{
    char name[256];
    if (tscope_type_name(parallel_type, name, sizeof name)) {
        snprintf(buf, len, "(unknown location)");
        return;
    }
    const char *p = strncmp(name, "parallel ", 9) == 0 ? name + 9 : name;
    snprintf(buf, len, "%.*s", (int)len - 1, p);
}

/* The outlined function (gcc's FN._omp_fn.N) of task and parallel region
 * types, where its creation showed it (tailcall.h): a sync region a task
 * reaches by a tail jump is named after that jump.  Used by make_type
 * only, under the type cache's lock. */
#define OUTLINED 1024
static struct {
    uint32_t type;
    const void *fn;
} outlined[OUTLINED];
static unsigned n_outlined;

static void outlined_put(uint32_t type, const void *fn)
{
    if (type && fn && n_outlined < OUTLINED)
        outlined[n_outlined++] = (__typeof__(outlined[0])){type, fn};
}

static const void *outlined_of(uint32_t type)
{
    for (unsigned i = 0; i < n_outlined; i++)
        if (outlined[i].type == type)
            return outlined[i].fn;
    return NULL;
}

static uint32_t make_type(uint64_t key, void *arg);

/* A sync region reported from inside the runtime, in a task of type
 * `task` (its region's type `parallel`): gcc tail-jumped to the runtime
 * from the task's function or one it tail-jumps to; the construct is
 * named after that jump, or else by its region as before. */
static uint32_t make_task_sync(int kind, uint32_t task, uint32_t parallel)
{
    const void *fn = outlined_of(task);
    char name[512], loc[256];
    if (!fn && tscope_type_name(task, name, sizeof name) == 0 &&
        strncmp(name, "implicit task ", 14) == 0)
        fn = outlined_of(parallel); /* the region's body runs in its implicit task */
    const void *at = tscope__tail_site(fn, sync_word(kind));
    if (at) {
        tscope__srcloc(at, 0, loc, sizeof loc);
        snprintf(name, sizeof name, "%s %s", sync_name(kind), loc);
        return register_wait(name, kind);
    }
    return parallel ? make_type(KEY(TAG_REGION_SYNC + kind, parallel), NULL) : type_in_runtime();
}

/* typecache maker: a key -> a registered type (0: a task created inside the
 * OpenMP runtime, named by its taskloop instead). */
static uint32_t make_type(uint64_t key, void *arg)
{
    (void)arg;
    unsigned tag = (unsigned)(key >> 56);
    uint64_t v = key & ((1ull << 56) - 1);
    const void *addr = (const void *)(uintptr_t)v;
    char loc[256], name[512];
    if (tag >= TAG_TASK_SYNC)
        return make_task_sync((int)(tag - TAG_TASK_SYNC), (uint32_t)(v & 0xfffffff),
                              (uint32_t)(v >> 28));
    if (tag == TAG_IMPLICIT || (tag >= TAG_REGION_SYNC && tag < TAG_WORK)) {
        region_location((uint32_t)v, loc, sizeof loc);
        snprintf(name, sizeof name, "%s %s",
                 tag == TAG_IMPLICIT ? "implicit task" : sync_name((int)(tag - TAG_REGION_SYNC)),
                 loc);
        return tag == TAG_IMPLICIT ? register_name(name)
                                   : register_wait(name, (int)(tag - TAG_REGION_SYNC));
    }
    if ((tag == TAG_TASK || (tag >= TAG_SYNC && tag < TAG_REGION_SYNC)) && runtime_code &&
        tscope__srcloc_same_object(addr, runtime_code))
        return 0; /* inside the runtime: the caller names it otherwise */
    const void *tail = tag >= TAG_SYNC && tag < TAG_REGION_SYNC
                           ? tscope__tail_behind_call(addr, sync_word((int)(tag - TAG_SYNC)))
                           : NULL;
    if (tail) /* the call's callee tail-jumps to the runtime: named there */
        tscope__srcloc(tail, 0, loc, sizeof loc);
    else
        tscope__srcloc(addr, 1, loc, sizeof loc);
    if (tag == TAG_TASK) { /* "fib (fib.c:17)", or "task (x.c:9)" in outlined code */
        snprintf(name, sizeof name, "%s%s", loc[0] == '(' ? "task " : "", loc);
        uint32_t t = register_name(name);
        outlined_put(t, tscope__tail_outlined(addr));
        return t;
    } else if (tag == TAG_PARALLEL) {
        snprintf(name, sizeof name, "parallel %s", loc);
        uint32_t t = register_name(name);
        outlined_put(t, tscope__tail_outlined(addr));
        return t;
    } else if (tag == TAG_TASKLOOP)
        snprintf(name, sizeof name, "taskloop %s", loc);
    else if (tag >= TAG_WORK)
        snprintf(name, sizeof name, "%s %s", work_name((int)(tag - TAG_WORK)), loc);
    else {
        snprintf(name, sizeof name, "%s %s", sync_name((int)(tag - TAG_SYNC)), loc);
        return register_wait(name, (int)(tag - TAG_SYNC));
    }
    return register_name(name);
}

static inline uint32_t type_of(uint64_t key)
{
    return tscope__typecache_get(key, make_type, NULL);
}

/* ---- per-thread shadow stack ------------------------------------------------ */

enum frame_kind { F_TASK, F_PARALLEL, F_SYNC, F_WORK };

struct frame {
    tscope_task_t *h; /* NULL: not measured */
    uint8_t kind;
    uint8_t untied; /* an untied task (F_TASK) */
    uint8_t deps;   /* it created tasks with depend clauses here: at its end
                       their address histories go (tscope__hazards_forget) */
};

struct tstate {
    struct frame *f;
    uint32_t n, cap;
    uint64_t dep_parent;      /* the id of the task that created the last task with
                                 depend clauses (on_dependences follows its create) */
    uint64_t through_id;      /* that task's id and type when the filter file */
    uint32_t through_type;    /* excludes it (THROUGH), for its edges' count */
    unsigned dep_flags;       /* that task's TSCOPE__HAZARDS_* (a taskwait's list) */
    const void *sync_codeptr; /* of the latest sync region begun here */
};

static __thread struct tstate *self;

static struct tstate *state(void)
{
    if (__builtin_expect(self != NULL, 1))
        return self;
    self = calloc(1, sizeof *self);
    return self;
}

static void push(struct tstate *st, tscope_task_t *h, uint8_t kind, uint8_t untied, uint8_t deps)
{
    if (!st)
        return;
    if (st->n == st->cap) {
        uint32_t cap = st->cap ? 2 * st->cap : 32;
        struct frame *f = realloc(st->f, cap * sizeof *f);
        if (!f)
            return; /* out of memory: the profile shows the task unfinished */
        st->f = f;
        st->cap = cap;
    }
    st->f[st->n++] = (struct frame){h, kind, untied, deps};
}

static __attribute__((noinline, cold)) void frame_forget(const struct frame *f)
{
    if (f->h)
        tscope__hazards_forget(tscope_task_handle_id(f->h));
}

/* A frame that ends: its children's address histories go with it (out of
 * line: the task path keeps one test). */
static inline void frame_ends(const struct frame *f)
{
    if (__builtin_expect(f->deps, 0))
        frame_forget(f);
}

/* Index of the topmost task frame of this handle; -1 if none. */
static int find_task(const struct tstate *st, const tscope_task_t *h)
{
    if (!st || !h)
        return -1;
    for (uint32_t i = st->n; i-- > 0;)
        if (st->f[i].h == h)
            return (int)i;
    return -1;
}

/* Task `enc`, running here, has children with depend clauses: its value and
 * its frame say so (the frame's bit ends it; the value's gives the bit to
 * the frame it gets when it resumes, on any thread).  Not for a task the
 * filter excludes: its children's histories are its measured ancestor's. */
static void mark_deps(struct tstate *st, ompt_data_t *enc)
{
    if (!enc || !enc->value || (enc->value & THROUGH))
        return;
    enc->value |= DEPS;
    int i = find_task(st, handle_of(enc->value));
    if (i >= 0)
        st->f[i].deps = 1;
}

/* Index of the topmost frame of a construct kind that belongs to the task
 * running here (above the topmost task frame); -1 if none. */
static int find_construct(const struct tstate *st, uint8_t kind)
{
    if (!st)
        return -1;
    for (uint32_t i = st->n; i-- > 0 && st->f[i].kind != F_TASK;)
        if (st->f[i].kind == kind)
            return (int)i;
    return -1;
}

/* Leaves every frame above index i: tied tasks are suspended (yield), an
 * untied one has finished (finished_untied), constructs end. */
static void close_above(struct tstate *st, int i)
{
    while (st->n > (uint32_t)(i + 1)) {
        struct frame *f = &st->f[--st->n];
        if (f->kind == F_TASK && !f->untied) {
            tscope_task_yield_h(f->h);
        } else {
            frame_ends(f);
            tscope_task_end_h(f->h);
        }
    }
}

/* An untied task runs in parts: at each task scheduling point it queues its
 * continuation, reports the switch and returns, and any thread may run the
 * next part.  libomp reports the task complete on the thread whose part
 * returns last; when the continuation's thread ran the final part and
 * returned first (the earlier part still on its way out), the completion
 * comes from the earlier thread, where the task is not on the stack, and the
 * final part's thread reports nothing: the task stays on top of its stack
 * (BOTS health at 4 threads: 1-3 of 2.25 M tasks "unfinished" in a third of
 * the runs).  An untied task on top while the runtime reports another
 * current task is such a task: it ends here, at the first event of this
 * thread after it returned.  (A part that did not finish the task reported
 * its switch and left the stack then.) */
static void finished_untied_slow(struct tstate *st, const ompt_data_t *current)
{
    tscope_task_t *cur = current && current->value ? handle_of(current->value) : NULL;
    while (st->n && st->f[st->n - 1].untied && st->f[st->n - 1].h != cur) {
        frame_ends(&st->f[--st->n]);
        tscope_task_end_h(st->f[st->n].h);
    }
}

static inline void finished_untied(struct tstate *st, const ompt_data_t *current)
{
    if (st && st->n && __builtin_expect(st->f[st->n - 1].untied, 0))
        finished_untied_slow(st, current);
}

/* Task frame j continues to run here: the constructs it is in (the frames
 * right above it, a taskwait say) stay; tasks above them, and what those
 * are in, are left. */
static void continue_task(struct tstate *st, int j)
{
    int k = j + 1;
    while ((uint32_t)k < st->n && st->f[k].kind != F_TASK)
        k++;
    close_above(st, k - 1);
}

/* Ends the frame at index i (and leaves what is above it). */
static void end_frame(struct tstate *st, int i, int cancelled)
{
    close_above(st, i);
    tscope_task_t *h = st->f[i].h;
    frame_ends(&st->f[i]);
    st->n = (uint32_t)i;
    if (cancelled)
        tscope_task_cancel_h(h);
    else
        tscope_task_end_h(h);
}

/* Starts a construct (parallel region, sync region, worksharing) here. */
static inline __attribute__((always_inline)) void
start_construct(struct tstate *st, uint32_t type, uint8_t kind, tscope_task_t **h_out)
{
    tscope_task_t *h = tscope_task_start_h(tscope_task_id_next(), type);
    push(st ? st : state(), h, kind, 0, 0);
    if (h_out)
        *h_out = h;
}

static void end_construct(struct tstate *st, uint8_t kind)
{
    int i = find_construct(st, kind);
    if (i >= 0)
        end_frame(st, i, 0);
}

/* ---- the thread cap -------------------------------------------------------------- */

/* "omp.thread_cap" (include/taskscope/policy.h's thread-cap convention), so
 * that the throttling and power-capping policies steer OpenMP programs as
 * they steer the bundled runtime.  OpenMP lets the number of threads change
 * only through the nthreads ICV of the task that encounters a parallel
 * region, and omp_set_num_threads may be called only by that task's thread:
 * the setter (a policy's thread, the dashboard's) only stores the cap, and
 * the thread that begins a top-level parallel region (level 0: the ICV of
 * the initial task, which every later top-level region inherits) applies it
 * with omp_set_num_threads in the parallel-begin callback.  libomp (LLVM
 * 14) sizes the team after that callback, so the cap holds from the region
 * whose begin applied it; at the parallel-end callback it would not (after
 * a region of one thread libomp still reports level 1 there, and the call
 * sets the ICV of a task that is gone).  The range is 1 .. the threads a
 * region would have had at the first top-level region, when the parameter
 * is registered and TASKSCOPE_POLICY's policy started.  Nested regions, a
 * num_threads clause and the program's own omp_set_num_threads between two
 * changes of the cap are left as they are.  The OpenMP entry points come
 * from the runtime that loaded this tool (dlsym), so the tool links none. */
static struct {
    atomic_int state;   /* 0: not registered, 1: registering or registered, 2: failed */
    atomic_uint cap;    /* the value set last */
    atomic_int pending; /* set since it was last applied */
    void (*set_num_threads)(int);
    int (*get_level)(void);
} cap_param;

static int thread_cap_set(double v, void *data)
{
    (void)data;
    atomic_store(&cap_param.cap, (unsigned)v);
    atomic_store(&cap_param.pending, 1);
    return 0;
}

static double thread_cap_get(void *data)
{
    (void)data;
    return atomic_load(&cap_param.cap);
}

static void thread_cap_unregister(void)
{
    if (atomic_load(&cap_param.state) == 1 && tscope_param_unregister("omp.thread_cap") == 0)
        atomic_store(&cap_param.state, 0); /* the next tscope_init's first region again */
}

/* At the first top-level parallel region: the parameter, then the policy. */
static void thread_cap_register(void)
{
    int (*get_max_threads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    if (!cap_param.set_num_threads) { /* once: later inits' regions may read them meanwhile */
        cap_param.set_num_threads = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
        cap_param.get_level = (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_level");
    }
    if (!get_max_threads || !cap_param.set_num_threads || !cap_param.get_level) {
        atomic_store(&cap_param.state, 2); /* not an OpenMP runtime we know: no cap */
        return;
    }
    if (cap_param.get_level() != 0) {
        atomic_store(&cap_param.state, 0); /* at a top-level region */
        return;
    }
    int max = get_max_threads();
    atomic_store(&cap_param.cap, max > 1 ? (unsigned)max : 1u);
    atomic_store(&cap_param.pending, 0);
    tscope_param_desc_t d = {.struct_size = sizeof d,
                             .name = "omp.thread_cap",
                             .kind = TSCOPE_PARAM_INT,
                             .min = 1,
                             .max = max > 1 ? max : 1,
                             .set = thread_cap_set,
                             .get = thread_cap_get};
    if (tscope_param_register(&d)) {
        atomic_store(&cap_param.state, 2);
        return;
    }
    static int hooked;
    if (!hooked++)
        tscope_atfinalize(thread_cap_unregister);
    tscope_policy_autostart(); /* TASKSCOPE_POLICY, if any */
}

/* The parallel-begin callback, on the thread that encounters the region:
 * two relaxed loads unless the cap changed or is still to be registered. */
static inline void thread_cap_at_parallel_begin(void)
{
    if (__builtin_expect(atomic_load_explicit(&cap_param.state, memory_order_relaxed) == 0, 0) &&
        atomic_exchange(&cap_param.state, 1) == 0)
        thread_cap_register();
    if (__builtin_expect(atomic_load_explicit(&cap_param.pending, memory_order_relaxed), 0) &&
        atomic_exchange(&cap_param.pending, 0)) {
        if (cap_param.get_level() == 0)
            cap_param.set_num_threads((int)atomic_load(&cap_param.cap));
        else
            atomic_store(&cap_param.pending, 1); /* a nested region: at the next top-level one */
    }
}

/* ---- callbacks ----------------------------------------------------------------- */

static atomic_uint worker_count;

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data)
{
    (void)data;
    char name[32];
    if (type == ompt_thread_initial)
        snprintf(name, sizeof name, "main");
    else if (type == ompt_thread_worker)
        snprintf(name, sizeof name, "omp-worker-%u", atomic_fetch_add(&worker_count, 1) + 1);
    else
        snprintf(name, sizeof name, "omp-other");
    tscope_thread_register(name);
    state();
}

/* Ends everything running on this thread (the thread or the program ends). */
static void end_all(struct tstate *st)
{
    while (st && st->n) {
        frame_ends(&st->f[--st->n]);
        tscope_task_end_h(st->f[st->n].h);
    }
}

static void on_thread_end(ompt_data_t *data)
{
    (void)data;
    struct tstate *st = self;
    end_all(st);
    tscope_thread_unregister();
    if (st) {
        free(st->f);
        free(st);
        self = NULL;
    }
}

static unsigned map_flags(int f)
{
    unsigned out = 0;
    if (f & ompt_task_undeferred)
        out |= TSCOPE_TASK_UNDEFERRED;
    if (f & ompt_task_untied)
        out |= TSCOPE_TASK_UNTIED;
    if (f & ompt_task_final)
        out |= TSCOPE_TASK_FINAL;
    if (f & ompt_task_mergeable)
        out |= TSCOPE_TASK_MERGEABLE;
    if (f & (int)ompt_task_merged)
        out |= TSCOPE_TASK_INCLUDED;
    return out;
}

/* The latest taskloop of each task that encountered one: libomp makes a
 * taskloop's tasks inside itself, on the encountering thread and, for a
 * large one it splits recursively, on others (from tasks of its own, whose
 * chunk tasks it reports as created by the encountering task, also after
 * the construct's end: the taskgroup around it waits for them); each is
 * named by the taskloop's line.  A fixed table, the oldest entry reused
 * when it is full (a task's taskloop past the 64 latest then has its late
 * tasks named "inside the OpenMP runtime"). */
#define TASKLOOPS 64
static struct {
    _Atomic(const ompt_data_t *) task;
    _Atomic uint32_t type;
} taskloops[TASKLOOPS];
static atomic_uint taskloops_next;

static void taskloop_begin(const ompt_data_t *task, uint32_t type)
{
    if (!task)
        return;
    int at = -1;
    for (int i = 0; i < TASKLOOPS && at < 0; i++)
        if (atomic_load_explicit(&taskloops[i].task, memory_order_relaxed) == task)
            at = i;
    for (int i = 0; i < TASKLOOPS && at < 0; i++) {
        const ompt_data_t *none = NULL;
        if (atomic_load_explicit(&taskloops[i].task, memory_order_relaxed) == NULL &&
            atomic_compare_exchange_strong(&taskloops[i].task, &none, task))
            at = i;
    }
    if (at < 0) {
        at = (int)(atomic_fetch_add(&taskloops_next, 1) % TASKLOOPS);
        atomic_store(&taskloops[at].type, 0);
        atomic_store(&taskloops[at].task, task);
    }
    atomic_store(&taskloops[at].type, type);
}

/* The type of a task made inside the runtime by encountering task enc. */
static uint32_t taskloop_type(const ompt_data_t *enc)
{
    for (int i = 0; enc && i < TASKLOOPS; i++)
        if (atomic_load_explicit(&taskloops[i].task, memory_order_acquire) == enc) {
            uint32_t type = atomic_load(&taskloops[i].type);
            if (type)
                return type;
        }
    return type_in_runtime();
}

/* A taskwait with depend clauses, or the wait for an if(0) task's
 * dependences: libomp reports a pseudo-task (ompt_task_taskwait) with the
 * list, and its schedule with ompt_taskwait_complete when the wait ends.
 * It is a taskwait construct here, from its create to that schedule, named
 * by its line, with the dependence edges to it (on_dependences). */
static void taskwait_depend(ompt_data_t *enc, ompt_data_t *task, const void *codeptr)
{
    struct tstate *st = state();
    uint32_t type = type_of(KEY(TAG_SYNC + ompt_sync_region_taskwait, codeptr));
    tscope_task_t *h = NULL;
    mark_deps(st, enc); /* its list may name addresses no child used: they go at its end */
    start_construct(st, type ? type : type_in_runtime(), F_SYNC, &h);
    task->value = h ? pack(h, 0, BEGUN) : 0;
    if (st) {
        st->dep_parent = enc && enc->value ? tscope_task_handle_id(handle_of(enc->value)) : 0;
        st->dep_flags = TSCOPE__HAZARDS_WAIT;
    }
}

/* The first return address on this thread's stack that lies outside the
 * OpenMP runtime and this tool: where the program called the runtime. */
static const void *program_caller(void)
{
    void *frames[24];
    int n = backtrace(frames, 24);
    for (int i = 1; i < n; i++)
        if (!tscope__srcloc_same_object(frames[i], (const void *)program_caller) &&
            !tscope__srcloc_same_object(frames[i], runtime_code))
            return frames[i];
    return NULL;
}

/* The address a task created by an untied task was created at.  libomp
 * (GOMP_task of a gcc-built program) may report the return address it
 * stored for the sync region the thread is in instead (the first leaf an
 * untied generator creates inside the implicit barrier where the thread
 * runs it: "main (x.c:96)", the parallel region's line); then the program's
 * own call, found on the stack, names it. */
static const void *untied_child_codeptr(const void *codeptr)
{
    const struct tstate *st = self;
    if (!st || codeptr != st->sync_codeptr)
        return codeptr;
    const void *ra = program_caller();
    return ra ? ra : codeptr;
}

static void on_task_create(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *task,
                           int flags, int has_deps, const void *codeptr)
{
    (void)frame;
    if (!task)
        return;
    if (!(flags & ompt_task_explicit)) {
        if ((flags & ompt_task_taskwait) && has_deps) {
            taskwait_depend(enc, task, codeptr);
            return;
        }
        task->value = 0; /* target tasks: not measured */
        return;
    }
    unsigned depth = enc && enc->value ? depth_of(enc->value) + 1 : 1;
    if (__builtin_expect(enc && (enc->value & UNTIED), 0))
        codeptr = untied_child_codeptr(codeptr);
    uint32_t type = type_of(KEY(TAG_TASK, codeptr));
    if (!type) /* created inside the runtime: a taskloop's task */
        type = taskloop_type(enc);
    uint64_t id = tscope_task_id_next();
    tscope_task_t *parent = enc && enc->value ? handle_of(enc->value) : NULL;
    tscope_task_t *h = tscope_task_create_h(id, parent, type, map_flags(flags), depth, 0);
    uint64_t through = 0;
    if (__builtin_expect(!h, 0) && !tscope_type_measured(type)) {
        /* excluded (counted by the create): its children hang on its
         * measured ancestor, its edges are counted as filtered */
        through = id;
        task->value = ((uint64_t)(uintptr_t)parent & PTR_MASK) | pack_depth(depth) | THROUGH;
    } else {
        task->value = pack(h, depth, (flags & ompt_task_untied) ? UNTIED : 0);
    }
    if (has_deps) { /* the parent its dependences are among (on_dependences) */
        struct tstate *st = state();
        if (st) {
            mark_deps(st, enc);
            st->dep_parent = parent ? tscope_task_handle_id(parent) : 0;
            st->dep_flags = 0;
            st->through_id = through;
            st->through_type = type;
        }
    }
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
    struct tstate *st = state();
    if (!st)
        return;
    if (status == ompt_task_early_fulfill || status == ompt_task_late_fulfill)
        return; /* a detached task's event: its execution ended at detach */
    if (st->n && __builtin_expect(st->f[st->n - 1].untied, 0) && prior != next)
        finished_untied_slow(st, prior); /* (a switch to itself names no other task) */
    tscope_task_t *below = NULL;         /* a tied task switched out, under the next one */
    if (prior && prior->value && !(prior->value & THROUGH) &&
        (status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_detach ||
         status == ompt_taskwait_complete)) {
        int i = find_task(st, handle_of(prior->value));
        if (i >= 0)
            end_frame(st, i, status == ompt_task_cancel);
    } else if (prior && (prior->value & UNTIED)) {
        /* An untied task switched out (at a taskwait, a taskyield) may be
         * continued by any thread: it is suspended here, not kept below
         * what runs next as a tied one is, or its frame would stay on this
         * thread's stack while it ends on another (the profile then had it
         * unfinished: BOTS sparselu lost up to 1,211 of 2,777 tasks at 4
         * threads).  A switch to itself is its part continued at once by
         * its next part (libomp in a team of one thread): nothing else
         * ran, no switch. */
        int i = prior == next ? -1 : find_task(st, handle_of(prior->value));
        if (i >= 0) {
            close_above(st, i);
            st->n = (uint32_t)i;
            tscope_task_yield_h(handle_of(prior->value));
        }
    } else if (prior && prior->value && !(prior->value & THROUGH) &&
               (status == ompt_task_switch || status == ompt_task_yield)) {
        /* A tied task left for the next one (a taskwait or a taskgroup's
         * end running a child, a taskyield, an undeferred child, a
         * barrier) stays below it on this thread's stack: its switch
         * counts as a yield (docs/output-formats.md), its times unchanged.
         * (A worker's implicit task ended at its join barrier has no
         * handle.) */
        below = handle_of(prior->value);
    }
    if (!next || !next->value || (next->value & THROUGH))
        return; /* not measured, or excluded: what runs here gets its time */
    uint64_t v = next->value;
    tscope_task_t *h = handle_of(v);
    if (!(v & BEGUN)) { /* the common case: a task's first run */
        next->value = v | BEGUN;
        tscope_task_begin_nested_h(h, below);
        push(st, h, F_TASK, (v & UNTIED) != 0, (v & DEPS) != 0);
        return;
    }
    int j = find_task(st, h);
    if (j >= 0) { /* continues here: whatever ran above it is left */
        continue_task(st, j);
        return;
    }
    if (below)
        tscope_task_switched_h(below);
    tscope_task_resume_h(h); /* suspended earlier, maybe on another thread */
    push(st, h, F_TASK, (v & UNTIED) != 0, (v & DEPS) != 0);
}

static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned actual, unsigned index, int flags)
{
    (void)actual;
    (void)index;
    if (!task)
        return;
    struct tstate *st = state();
    if (ep == ompt_scope_end) {
        int i = task->value ? find_task(st, handle_of(task->value)) : -1;
        if (i >= 0)
            end_frame(st, i, 0);
        return;
    }
    tscope_task_t *h;
    if (flags & ompt_task_initial) {
        h = tscope_task_start_h(tscope_task_id_next(), type_initial);
    } else {
        /* below the region's pseudo-task, which runs on the primary thread
         * until the region ends, after every implicit task began */
        uint64_t pv = parallel ? parallel->value : 0;
        uint32_t type = pv ? type_of(KEY(TAG_IMPLICIT, pv >> 48)) : type_in_runtime();
        h = tscope_task_create_h(tscope_task_id_next(), pv ? handle_of(pv) : NULL, type, 0, 0, 0);
        tscope_task_begin_h(h);
    }
    task->value = pack(h, 0, BEGUN);
    push(st, h, F_TASK, 0, 0);
}

static void on_parallel_begin(ompt_data_t *enc, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned requested, int flags, const void *codeptr)
{
    (void)frame;
    (void)requested;
    if (!parallel || (flags & ompt_parallel_league))
        return;
    thread_cap_at_parallel_begin();
    struct tstate *st = self;
    finished_untied(st, enc);
    uint32_t type = type_of(KEY(TAG_PARALLEL, codeptr));
    tscope_task_t *h;
    start_construct(st, type, F_PARALLEL, &h);
    /* the type for what derives from the region, even when not measured */
    parallel->value = ((uint64_t)type << 48) | ((uint64_t)(uintptr_t)h & PTR_MASK);
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *enc, int flags, const void *codeptr)
{
    (void)enc;
    (void)codeptr;
    if (!parallel || !parallel->value || (flags & ompt_parallel_league))
        return;
    struct tstate *st = self;
    int i = find_construct(st, F_PARALLEL);
    if (i >= 0)
        end_frame(st, i, 0);
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                           ompt_data_t *task, const void *codeptr)
{
    struct tstate *st = self;
    finished_untied(st, task);
    if (ep == ompt_scope_end) {
        end_construct(st, F_SYNC);
        return;
    }
    if (!codeptr && (kind == ompt_sync_region_barrier_implicit ||
                     kind == ompt_sync_region_barrier_implicit_parallel)) {
        /* A worker reached the join barrier of its region.  libomp reports
         * it leaving there (and its implicit task ending) only at the next
         * fork or at shutdown, after taskscope wrote its outputs; so the
         * worker's implicit task ends here and the wait counts as idle. */
        int i = task && task->value ? find_task(st, handle_of(task->value)) : -1;
        if (i >= 0) {
            end_frame(st, i, 0);
            task->value = 0; /* ended: a task_schedule back to it in the barrier is no resume */
        }
        return;
    }
    if (st)
        st->sync_codeptr = codeptr;
    uint32_t type = type_of(KEY(TAG_SYNC + kind, codeptr));
    if (!type) { /* reported at an address inside libomp: by the task it is in */
        uint64_t pt = parallel && parallel->value ? parallel->value >> 48 : 0;
        uint64_t tt = task && task->value && !(task->value & THROUGH)
                          ? tscope_task_handle_type(handle_of(task->value)) & 0xfffffff
                          : 0;
        type = tt || pt ? type_of(KEY(TAG_TASK_SYNC + kind, pt << 28 | tt)) : type_in_runtime();
    }
    start_construct(st, type, F_SYNC, NULL);
}

static void on_work(ompt_work_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel,
                    ompt_data_t *task, uint64_t count, const void *codeptr)
{
    (void)parallel;
    (void)count;
    struct tstate *st = state();
    finished_untied(st, task);
    if (ep == ompt_scope_end) {
        end_construct(st, F_WORK);
        return;
    }
    uint32_t type;
    if (kind == ompt_work_taskloop && runtime_code &&
        tscope__srcloc_same_object(codeptr, runtime_code)) {
        /* libomp reports taskloops inside itself: name the construct and
         * its tasks by the program's line (one unwind per taskloop) */
        const void *ra = program_caller();
        type = type_of(KEY(TAG_TASKLOOP, ra));
        taskloop_begin(task, ra ? type_of(KEY(TAG_TASK, ra)) : type_in_runtime());
    } else {
        type = type_of(KEY(TAG_WORK + kind, codeptr));
    }
    start_construct(st, type, F_WORK, NULL);
}

/* The hazard tracker keeps a task as its id's low 48 bits with its type
 * above (the rank bits, the same for every task here, put back at the
 * edge), so that an edge from a task that ended still has its type. */
#define KEY_TYPE_SHIFT 48
static uint64_t rank_bits; /* the top 16 bits of this process's task ids */

static uint64_t task_key(tscope_task_t *h)
{
    return (tscope_task_handle_id(h) & ID_BITS) |
           ((uint64_t)tscope_task_handle_type(h) << KEY_TYPE_SHIFT);
}

static void edge(uint64_t from, uint64_t to, unsigned hazards, uint32_t naddrs, const void *addr)
{
    tscope_dep_edge(rank_bits | (from & ID_BITS), (tscope_type_t)(from >> KEY_TYPE_SHIFT),
                    rank_bits | (to & ID_BITS), (tscope_type_t)(to >> KEY_TYPE_SHIFT), hazards,
                    naddrs, addr);
}

/* The accesses of a depend list, on the stack up to this many. */
#define DEPS_ON_STACK 64

static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps)
{
    if (!task || !task->value || ndeps <= 0)
        return;
    /* reported right after task_create, on the creating thread */
    struct tstate *st = self;
    uint64_t parent = st ? st->dep_parent : 0;
    unsigned flags = st ? st->dep_flags : 0;
    uint64_t id;
    if (task->value & THROUGH) { /* excluded: its edges reach taskscope to be counted */
        if (!st || !st->through_id)
            return;
        id = (st->through_id & ID_BITS) | ((uint64_t)st->through_type << KEY_TYPE_SHIFT);
        st->through_id = 0;
    } else {
        id = task_key(handle_of(task->value));
    }
    if (!(id & ID_BITS))
        return; /* not measured */
    struct tscope__access_item small[DEPS_ON_STACK], *list = small;
    if (ndeps > DEPS_ON_STACK && !(list = malloc((size_t)ndeps * sizeof *list)))
        return; /* out of memory: no edges for this task */
    int n = 0;
    for (int i = 0; i < ndeps; i++) {
        int access;
        uintptr_t addr = (uintptr_t)deps[i].variable.ptr;
        switch (addr == 0 || addr == UINTPTR_MAX ? ompt_dependence_type_inout
                                                 : deps[i].dependence_type) {
        case ompt_dependence_type_in:
            access = TSCOPE__ACCESS_IN;
            break;
        case ompt_dependence_type_out:
            access = TSCOPE__ACCESS_OUT;
            break;
        case ompt_dependence_type_inout:
            access = TSCOPE__ACCESS_INOUT;
            break;
        case ompt_dependence_type_mutexinoutset:
            access = TSCOPE__ACCESS_MUTEX;
            break;
        case ompt_dependence_type_inoutset:
            access = TSCOPE__ACCESS_SET;
            break;
        default:
            continue; /* doacross source/sink: not task dependencies */
        }
        /* omp_all_memory: address NULL or ~0 whatever the type (libomp 14
         * reports it as inoutset, in or none, as the compiler's flags go) */
        list[n++] = (struct tscope__access_item){deps[i].variable.ptr, access};
    }
    tscope__hazards_task(parent, id, list, n, flags, edge);
    if (list != small)
        free(list);
}

/* ---- start and stop ------------------------------------------------------------ */

/* What the finalizing thread has open (its initial task, a construct) ends
 * at the tool's stop, and there when another adapter finalizes (the MPI
 * adapter at MPI_Finalize). */
static void end_mine(void)
{
    end_all(self);
}

static void forget(void)
{
    tscope__hazards_reset();
    tscope__typecache_reset();
}

static struct tscope__adapter life = {.name = "OMPT tool", .end_open = end_mine, .forget = forget};

#define CALLBACKS(X)                                                                               \
    X(ompt_callback_thread_begin, on_thread_begin, 1)                                              \
    X(ompt_callback_thread_end, on_thread_end, 1)                                                  \
    X(ompt_callback_task_create, on_task_create, 1)                                                \
    X(ompt_callback_task_schedule, on_task_schedule, 1)                                            \
    X(ompt_callback_implicit_task, on_implicit_task, 1)                                            \
    X(ompt_callback_parallel_begin, on_parallel_begin, 0)                                          \
    X(ompt_callback_parallel_end, on_parallel_end, 0)                                              \
    X(ompt_callback_sync_region, on_sync_region, 0)                                                \
    X(ompt_callback_work, on_work, 0)                                                              \
    X(ompt_callback_dependences, on_dependences, 0)

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device;
    (void)data;
    if (tscope__adapter_start(&life, TSCOPE__RANK_FROM_ENV, 0) ||
        !tscope__adapter_measuring(&life)) /* TASKSCOPE_ENABLE=0: no callbacks at all */
        return 0;
    runtime_code = (const void *)lookup;
    rank_bits = tscope_task_id_next() & ~ID_BITS;
    char initial[] = "initial task";
    type_initial = register_name(initial);
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set) {
        fprintf(stderr, "taskscope: OMPT tool: the OpenMP runtime offers no ompt_set_callback; "
                        "the program runs unprofiled\n");
        tscope__adapter_decline(&life);
        return 0;
    }
#define SET(event, fn, needed)                                                                     \
    if (set(event, (ompt_callback_t)fn) == ompt_set_never && needed)                               \
        fprintf(stderr, "taskscope: OMPT tool: the OpenMP runtime never reports " #event           \
                        "; the profile lacks what it reports\n");
    CALLBACKS(SET)
#undef SET
    tscope__adapter_arm(&life);
    return 1;
}

static void finalize(ompt_data_t *data)
{
    (void)data;
    tscope__adapter_stop(&life);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    if (omp_version < 201611) {
        fprintf(stderr,
                "taskscope: OMPT tool: %s implements OpenMP tools interface version %u; taskscope "
                "needs 201611 (OpenMP 5.0) or later; the program runs unprofiled\n",
                runtime_version ? runtime_version : "the OpenMP runtime", omp_version);
        return NULL;
    }
    return &result;
}
