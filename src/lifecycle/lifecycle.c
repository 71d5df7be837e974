/* lifecycle.c - the composition root: tscope_init / tscope_finalize,
 * registration entry points, errors and version.
 *
 * It sits above every subsystem (core, profile, tools, sampler, policies,
 * exporters) and is the one place that wires them together (wiring.c);
 * the core includes nothing above itself.
 *
 * init: configuration -> clock -> store -> consumer -> switch on.
 * finalize: switch off -> stop the consumer -> drain every ring in this
 * thread -> settle and complete the store -> write the outputs (the last
 * two: ending.c, which the recovery from a crash journal shares).  It also
 * runs when SIGTERM, SIGINT or SIGHUP ends the program (signals.c).  The store
 * stays for queries until the next tscope_init.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/filter.h"
#include "core/names.h"
#include "core/thread_local.h"
#include "core/hooks.h"
#include "export/export.h"
#include "export/output.h"
#include "export/pictures.h"
#include "profile/profile.h"
#include "live/live.h"
#include "policy/policy.h"
#include "profile/query.h"
#include "profile/shard.h"
#include "profile/store.h"
#include "sampler/sampler.h"
#include "taskscope/taskscope.h"
#include "tool/tools.h"
#include "trace/writer.h"
#include "ending.h"
#include "exit.h"
#include "journal.h"
#include "signals.h"
#include "wiring.h"

struct tscope__core tscope__g = {
    .off_code = TSCOPE_ESTATE,
    .reg_lock = PTHREAD_MUTEX_INITIALIZER,
    .free_slots = UINT32_MAX,
    .cons_lock = PTHREAD_MUTEX_INITIALIZER,
    .cons_done = PTHREAD_COND_INITIALIZER,
};

/* Serialises init and finalize against each other. */
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;

const char *tscope_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define TSCOPE_ERR_TEXT(name, value, text)                                                         \
    case TSCOPE_E##name:                                                                           \
        return text;
        TSCOPE_ERRNO_MAP(TSCOPE_ERR_TEXT)
#undef TSCOPE_ERR_TEXT
    default:
        return "unknown error";
    }
}

const char *tscope_err_name(int err)
{
    switch (err) {
    case 0:
        return "0";
#define TSCOPE_ERR_NAME(name, value, text)                                                         \
    case TSCOPE_E##name:                                                                           \
        return "TSCOPE_E" #name;
        TSCOPE_ERRNO_MAP(TSCOPE_ERR_NAME)
#undef TSCOPE_ERR_NAME
    default:
        return "TSCOPE_E?";
    }
}

unsigned tscope_version(void)
{
    return TSCOPE_VERSION_HEX;
}

#define STR2(x) #x
#define STR(x) STR2(x)

const char *tscope_version_string(void)
{
    return STR(TSCOPE_VERSION_MAJOR) "." STR(TSCOPE_VERSION_MINOR) "." STR(TSCOPE_VERSION_PATCH);
}

int tscope_type_register(const char *name, tscope_type_t *out)
{
    return tscope__names_intern(&tscope__types, name, out);
}

int tscope_type_set_attrs(tscope_type_t type, unsigned attrs)
{
    if (attrs & ~(TSCOPE_TYPE_WAIT | TSCOPE_TYPE_BARRIER))
        return TSCOPE_EINVAL;
    return tscope__names_add_attrs(&tscope__types, type, attrs);
}

int tscope_type_measured(tscope_type_t type)
{
    return !tscope__excluded(type);
}

int tscope_counter_register(const char *name, tscope_counter_t *out)
{
    return tscope__names_intern(&tscope__counters, name, out);
}

int tscope_event_register(const char *name, tscope_event_t *out)
{
    return tscope__names_intern(&tscope__events, name, out);
}

int tscope_is_enabled(void)
{
    return atomic_load_explicit(&tscope__g.run, memory_order_relaxed) != TSCOPE__RUN_OFF;
}

const char *tscope_output_dir(void)
{
    return tscope__g.outdir;
}

/* Empties the rings of threads registered in an earlier init/finalize cycle
 * (finalize drained them). */
static void reset_threads(void)
{
    uint32_t n = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__thread *t = tscope__g.threads[i];
        atomic_store(&t->dropped, 0);
        atomic_store(&t->waits, 0);
        if (atomic_load(&t->ring_freed))
            continue;
        uint64_t tail;
        tscope__ring_readable(&t->ring, &tail);
        t->ring.tail_seen = tail;
    }
    atomic_store(&tscope__g.unregistered_dropped, 0);
}

/* Under `taskscope run` (a folder prepared for this process, the run's or,
 * for a descendant of the program it started, the descendant's own:
 * tscope__output_prepared): an empty file
 * .taskscope-PID.running in the output folder from init until finalize
 * starts writing, so that the launcher can tell a program that never started
 * measuring from one that ended without finalizing (killed, _exit); and the
 * crash journal (journal.c), from which the launcher rebuilds the outputs of
 * a program that could not write them. */
static char marker[1200];

static void marker_set(const struct tscope__config *cfg)
{
    const char *dir = tscope__output_prepared(1);
    if (!dir)
        return;
    snprintf(marker, sizeof marker, "%s/.taskscope-%ld.running", dir, (long)getpid());
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        marker[0] = 0; /* the launcher then says less; measuring goes on */
    else {
        /* why there will be no crash journal beside it, for the launcher
         * (unwritten: the launcher says less; the marker is still ours) */
        static const char off[] = TSCOPE__MARKER_NO_JOURNAL;
        if (!cfg->profiler && write(fd, off, sizeof off - 1) < 0) {
        }
        close(fd);
    }
    if (!marker[0] || !cfg->profiler)
        return;
    tscope__journal_start(dir, cfg->ring_size ? cfg->ring_size : 16384);
}

static void marker_clear(void)
{
    tscope__journal_stop();
    if (marker[0])
        unlink(marker);
    marker[0] = 0;
}

/* fork(): the consumer waits between rounds and the registry lock is held
 * across it, so that the child never inherits a lock (ours, the
 * allocator's, stdio's) held by a thread that does not exist there.  A
 * sanitizer's allocator has no fork handler of its own: without this a
 * child of an AddressSanitizer build could hang in its first malloc. */
static void fork_prepare(void)
{
    tscope__consumer_fork_hold();
    pthread_mutex_lock(&tscope__g.reg_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&tscope__g.reg_lock);
    tscope__consumer_fork_release();
}

/* The child has the parent's rings but none of its threads (no consumer
 * to drain them): measurement is off there, said in one line, and its exit
 * writes nothing.  The parent's measurement goes on. */
static void fork_child(void)
{
    pthread_mutex_unlock(&tscope__g.reg_lock);
    tscope__consumer_fork_release();
    marker[0] = 0; /* the parent's */
    tscope__journal_forget();
    tscope__trace_forget();
    tscope__signals_forget();
    tscope__live_forget();
    if (!tscope__g.initialised)
        return;
    atomic_store(&tscope__g.run, TSCOPE__RUN_OFF);
    __atomic_store_n(&tscope__g.off_code, 0, __ATOMIC_RELAXED);
    tscope__g.initialised = 0;
    tscope__g.consumer_running = 0;
    char line[160];
    int n = snprintf(line, sizeof line,
                     "taskscope: forked process %ld is not measured (its parent %ld still is; a "
                     "program it executes is, on its own)\n",
                     (long)getpid(), (long)getppid());
    if (n > 0 && write(2, line, (size_t)n) < 0)
        return;
}

/* TASKSCOPE_TRACE: the output folder is made now (the trace is written
 * while the program runs) and the trace writer subscribes to the consumer. */
static void trace_start(const struct tscope__config *cfg, int rank, int nranks)
{
    if (!cfg->trace)
        return;
    if (tscope__output_make_rank_dir(cfg->output_dir, rank, nranks, tscope__g.outdir,
                                     sizeof tscope__g.outdir, tscope__g.rundir,
                                     sizeof tscope__g.rundir)) {
        fprintf(stderr, "taskscope: error: cannot create output folder %s: %s; no trace\n",
                cfg->output_dir, strerror(errno));
        tscope__g.outdir[0] = 0;
        return;
    }
    if (tscope__trace_start(tscope__g.outdir, cfg, rank, nranks) == 0)
        tscope__subscribe(TSCOPE__SUB_TRACE,
                          &(struct tscope__subscriber){.batch = tscope__trace_batch,
                                                       .round = tscope__trace_round});
}

static void trace_stop(void)
{
    if (!tscope__subscribed(TSCOPE__SUB_TRACE))
        return;
    tscope__unsubscribe(TSCOPE__SUB_TRACE); /* the consumer has stopped */
    tscope__trace_stop();
    if (!tscope__output_prepared(0))
        tscope__note("trace in %s; convert it with: taskscope convert %s --to chrome (or otf2, "
                     "paraver)\n",
                     tscope__trace_path(), tscope__trace_path());
}

static _Atomic int n_at_finalize, init_again;

/* A program that exits without tscope_finalize still gets its outputs.
 * The note is for a program that called tscope_init itself: an adapter
 * that started measurement arms its own exit handler and a finalize hook,
 * but a preloaded one arms them in its constructor, before the C library
 * registers the loader's, so this (the library's destructor) runs first;
 * then the session is the adapter's unless someone called tscope_init
 * again (the program, while the adapter measured). */
static void finalize_at_exit(void)
{
    if (tscope__g.initialised) {
        if (!atomic_load(&n_at_finalize) || atomic_load(&init_again))
            tscope__note("the program exited without tscope_finalize(); finalizing now\n");
        tscope_finalize();
    }
}

int tscope_init(int rank, int nranks)
{
    if (nranks < 1 || nranks > 65536 || rank < 0 || rank >= nranks)
        return TSCOPE_EINVAL;
    pthread_mutex_lock(&life_lock);
    int rc = 0;
    if (tscope__g.initialised) {
        atomic_store(&init_again, 1);
        rc = TSCOPE_ESTATE;
        goto out;
    }
    struct tscope__config cfg;
    tscope__config_load(&cfg, stderr);
    tscope__pictures_use(cfg.pictures); /* also for the MPI global view's */
    /* once per process, and once per job: rank 0's (config.c) */
    static int environ_checked;
    if (rank == 0 && !environ_checked++)
        tscope__config_check_environ(stderr);
    cfg.aggregate = !cfg.profiler                    ? TSCOPE__AGG_NONE
                    : cfg.mode == TSCOPE__MODE_NAIVE ? TSCOPE__AGG_LOCKED
                                                     : TSCOPE__AGG_THREAD;
    const char *why;
    tscope__clock_setup(cfg.clock, &why);
    if (why)
        fprintf(stderr, "taskscope: warning: TASKSCOPE_CLOCK=tsc: %s; using CLOCK_MONOTONIC\n",
                why);
    struct tscope__store *store = tscope__store_new(&cfg, tscope__clock_now());
    if (!store) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    tscope__query_reset();
    tscope__store_free(tscope__g.store);
    tscope__g.store = store;
    tscope__shards_reset(store);
    /* before tscope_init starts a thread: the registration waits for an RCU
     * grace period when the process has more than one (~0.15-0.2 ms here,
     * 20 us alone) */
    tscope__threads_quiesce_setup();
    tscope__g.cfg = cfg;
    tscope__filter_install(cfg.filter_file, stderr); /* before the first event of this run */
    tscope__g.rank = rank;
    tscope__g.nranks = nranks;
    tscope__g.origin = store->origin;
    tscope__g.end_ticks = 0;
    tscope__g.outdir[0] = 0;
    tscope__g.rundir[0] = 0;
    tscope__g.finalised = 0;
    tscope__g.rounds_started = tscope__g.rounds_done = 0;
    reset_threads();
    tscope__g.initialised = 1;
    static int at_exit_registered;
    if (!at_exit_registered++) {
        atexit(finalize_at_exit);
        pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
    if (!cfg.enable) {
        __atomic_store_n(&tscope__g.off_code, 0, __ATOMIC_RELAXED);
        /* an earlier init's hooks would still be called (take: a clock read per event) */
        memset(&tscope__hooks, 0, sizeof tscope__hooks);
        tscope__subscribers_clear();
        goto out;
    }
    atomic_store(&tscope__init_pid, (long)getpid());
    tscope__tools_load(cfg.tools, rank, nranks, cfg.max_threads);
    tscope__wire(cfg.profiler);
    marker_set(&cfg); /* the journal's hooks: after the wiring, before the consumer */
    trace_start(&cfg, rank, nranks);
    tscope__wire_shadows();
    if (tscope__consumer_start()) {
        fprintf(stderr, "taskscope: error: cannot start the consumer thread; measurement off\n");
        __atomic_store_n(&tscope__g.off_code, 0, __ATOMIC_RELAXED);
        goto out;
    }
    int run = !cfg.profiler && !tscope__tools_batched_mask && !tscope__subscribed(TSCOPE__SUB_TRACE)
                  ? TSCOPE__RUN_TOOLS
              : tscope__tools_sync_events() ? TSCOPE__RUN_RING_TOOLS
                                            : TSCOPE__RUN_RING;
    atomic_store(&tscope__g.run, run);
    if (tscope__tls_self) /* registered in an earlier init: tell this init's tools */
        tscope__tools_thread(1, tscope__tls_self->index, tscope__tls_self->name);
    else
        tscope_thread_register("main");
    if (cfg.live[0] && cfg.sample_ms > cfg.live_ms) /* the live charts move at its period */
        tscope__g.cfg.sample_ms = cfg.live_ms;
    tscope__sampler_start(); /* after "main": the sampler's thread comes second */
    tscope__live_start(&cfg);
    tscope__signals_install();
out:
    pthread_mutex_unlock(&life_lock);
    return rc;
}

int tscope_set_rank(int rank, int nranks)
{
    if (nranks < 1 || nranks > 65536 || rank < 0 || rank >= nranks)
        return TSCOPE_EINVAL;
    pthread_mutex_lock(&life_lock);
    int rc = tscope__g.initialised ? 0 : TSCOPE_ESTATE;
    if (!rc) {
        tscope__g.rank = rank;
        tscope__g.nranks = nranks;
    }
    pthread_mutex_unlock(&life_lock);
    return rc;
}

/* Drains every ring completely in the calling thread (consumer stopped). */
static void final_drain(void)
{
    for (int quiet = 0; quiet < 2;) {
        uint64_t before = tscope__g.store->events;
        tscope__consumer_round();
        quiet = tscope__g.store->events == before ? quiet + 1 : 0;
    }
}

static void (*at_finalize[8])(void);

int tscope_atfinalize(void (*fn)(void))
{
    if (!fn)
        return TSCOPE_EINVAL;
    int i = atomic_fetch_add(&n_at_finalize, 1);
    if (i >= 8) {
        atomic_fetch_sub(&n_at_finalize, 1);
        return TSCOPE_ELIMIT;
    }
    at_finalize[i] = fn;
    return 0;
}

int tscope_finalize(void)
{
    if (tscope__g.initialised) /* the adapters end what they keep open */
        for (int i = 0; i < atomic_load(&n_at_finalize) && i < 8; i++)
            if (at_finalize[i])
                at_finalize[i]();
    pthread_mutex_lock(&life_lock);
    if (!tscope__g.initialised) {
        pthread_mutex_unlock(&life_lock);
        return TSCOPE_ESTATE;
    }
    atomic_store(&init_again, 0); /* a later session starts counting afresh */
    tscope__signals_remove();
    tscope__policy_stop_all();
    tscope__live_stop();    /* its last snapshot: before the sampler stops */
    tscope__sampler_stop(); /* its last samples still go into the rings */
    int was_on = atomic_exchange(&tscope__g.run, TSCOPE__RUN_OFF) != TSCOPE__RUN_OFF;
    __atomic_store_n(&tscope__g.off_code, TSCOPE_ESTATE, __ATOMIC_RELAXED);
    tscope__g.end_ticks = tscope__clock_now();
    tscope__consumer_stop();
    tscope__threads_quiesce(); /* no thread inside an event on its shard from here on */
    struct tscope__store *s = tscope__g.store;
    if (was_on) {
        final_drain();
        trace_stop();
        uint64_t end = tscope__g.end_ticks - tscope__g.origin;
        tscope__tools_finalize((uint64_t)tscope__clock_ns(end));
        tscope__unwire_tools();
    }
    /* ranks of a job: the global summary (src/global) replaces theirs */
    struct tscope__ending e = {.end = tscope__g.end_ticks,
                               .write = was_on && tscope__g.cfg.profiler,
                               .summary = tscope__g.nranks <= 1 ? stderr : NULL,
                               .sampled = tscope__sampler_rows() != 0};
    int rc = tscope__settle_snapshot_write(s, &e, NULL);
    if (rc == TSCOPE_ENOMEM)
        fprintf(stderr, "taskscope: error: out of memory building the profile; no output\n");
    /* only now: a process killed while it writes its outputs leaves its
     * crash journal, from which they are rebuilt */
    marker_clear();
    pthread_mutex_unlock(&life_lock);
    return rc;
}

int tscope_flush(void)
{
    if (tscope__g.finalised)
        return 0;
    if (!tscope__g.initialised)
        return TSCOPE_ESTATE;
    tscope__consumer_flush();
    return 0;
}
