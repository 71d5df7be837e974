/* runtime.c - workers, scheduling, spawn, taskwait, cancellation, thread
 * cap of the bundled runtime (include/taskscope/rt.h).
 *
 * Each worker owns a deque: it pushes and pops at the bottom (newest first,
 * depth-first like a recursive program), idle workers steal from the top
 * (oldest first, the largest pieces of a recursion).  A deque is an array
 * under its own mutex: simple and correct; the measurement of this runtime
 * is what matters here, not a lock-free deque.  Threads that are not
 * workers put ready tasks into the injection queue.  Worker 0 is the
 * thread that called tscope_rt_init; it runs tasks while it waits.
 *
 * A task finishes when its function returns; its children may still run
 * (wait for them with tscope_rt_taskwait).  Finishing releases the tasks
 * that depend on it and tells the parent.  Workers with nothing to do spin
 * briefly, then sleep on a condition variable (woken by spawns, 1 ms at
 * most); workers at or above the thread cap park on their own condition
 * variable (spawns do not wake them) until the cap changes.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"
#include "taskscope/policy.h"
#include "taskscope/sampler.h"

struct deque {
    pthread_mutex_t lock;
    struct tscope_rt_task **items;
    size_t head, tail, cap; /* items[head..tail) in a growing array, head = top */
    /* tail - head, stored under the lock, read without it: takers look
     * before they lock, so that idle workers scanning empty deques only read
     * (a failed trylock still takes the lock's cache line from its owner) */
    _Atomic size_t size;
};

/* Counts kept per worker: written by that worker alone (a load and a store,
 * no locked instruction on a line every worker writes), summed by readers
 * (count_total); rt.n holds those of other threads and of finished runs. */
enum { C_SPAWNED, C_COMPLETED, C_CANCELLED, C_STOLEN, NCOUNTS };

struct worker {
    _Atomic uint64_t n[NCOUNTS];
    pthread_t thread;
    char name[32]; /* rt-worker-N */
    struct deque dq;
    struct deque urgent; /* tasks with priority > 0: taken before dq */
    unsigned index;
    uint64_t rng;
    uint64_t idle_ns;
    uint64_t pushes;
};

static struct {
    atomic_int running; /* read by any thread (policies, the sampler) */
    unsigned nworkers;
    struct worker *workers;
    struct deque inject;
    _Atomic unsigned cap;
    _Atomic int schedule; /* enum rt_schedule: how a worker takes from its own deque */
    _Atomic int stop;
    pthread_mutex_t sleep_lock;
    pthread_cond_t sleep_cond;
    _Atomic int sleepers;
    _Atomic int wake_sent;      /* a broadcast is on its way to the current sleepers */
    struct tscope_rt_task root; /* the program: parent of top-level tasks */
    _Atomic uint64_t n[NCOUNTS], idle_ns;
    tscope_counter_t c_queue, c_idle, c_completed;
    pthread_cond_t park_cond; /* workers above the cap: only a cap change or the end wakes them */
} rt = {.sleep_lock = PTHREAD_MUTEX_INITIALIZER,
        .sleep_cond = PTHREAD_COND_INITIALIZER,
        .park_cond = PTHREAD_COND_INITIALIZER};

/* The "rt.schedule" parameter: a worker takes its own newest task (lifo:
 * depth-first, the default) or its oldest (fifo: breadth-first). */
enum rt_schedule { RT_LIFO = 0, RT_FIFO = 1 };
static const char *const schedule_names[] = {"lifo", "fifo"};

static _Thread_local struct worker *self;
static _Thread_local struct tscope_rt_task *current;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- deques ---------------------------------------------------------- */

static void dq_init(struct deque *d)
{
    pthread_mutex_init(&d->lock, NULL);
    d->items = NULL;
    d->head = d->tail = d->cap = 0;
    atomic_store_explicit(&d->size, 0, memory_order_relaxed);
}

/* Lock held: publishes the size for dq_empty. */
static void dq_sized(struct deque *d)
{
    atomic_store_explicit(&d->size, d->tail - d->head, memory_order_relaxed);
}

/* A look without the lock; a task pushed meanwhile is found at the next look
 * (an idle worker looks again before it sleeps, and sleeps at most 1 ms). */
static int dq_empty(const struct deque *d)
{
    return atomic_load_explicit(&d->size, memory_order_relaxed) == 0;
}

static void dq_free(struct deque *d)
{
    free(d->items);
    pthread_mutex_destroy(&d->lock);
}

/* Lock held.  Returns 0 or -1 without memory. */
static int dq_push_locked(struct deque *d, struct tscope_rt_task *t)
{
    if (d->tail == d->cap) {
        size_t live = d->tail - d->head;
        if (d->head > d->cap / 2) { /* slide down instead of growing */
            memmove(d->items, d->items + d->head, live * sizeof *d->items);
        } else {
            size_t ncap = d->cap ? d->cap * 2 : 64;
            struct tscope_rt_task **n = malloc(ncap * sizeof *n);
            if (!n)
                return -1;
            if (live)
                memcpy(n, d->items + d->head, live * sizeof *n);
            free(d->items);
            d->items = n;
            d->cap = ncap;
        }
        d->head = 0;
        d->tail = live;
    }
    d->items[d->tail++] = t;
    dq_sized(d);
    return 0;
}

static size_t dq_push(struct deque *d, struct tscope_rt_task *t)
{
    pthread_mutex_lock(&d->lock);
    while (dq_push_locked(d, t)) { /* out of memory: let others drain, retry */
        pthread_mutex_unlock(&d->lock);
        sched_yield();
        pthread_mutex_lock(&d->lock);
    }
    size_t n = d->tail - d->head;
    pthread_mutex_unlock(&d->lock);
    return n;
}

static struct tscope_rt_task *dq_pop_bottom(struct deque *d)
{
    struct tscope_rt_task *t = NULL;
    if (dq_empty(d))
        return NULL;
    pthread_mutex_lock(&d->lock);
    if (d->tail > d->head)
        t = d->items[--d->tail];
    dq_sized(d);
    pthread_mutex_unlock(&d->lock);
    return t;
}

/* The oldest task: the owner (fifo schedule) waits for the lock; a thief
 * (steal) does not, it tries another victim instead. */
static struct tscope_rt_task *dq_take_top(struct deque *d, int steal)
{
    struct tscope_rt_task *t = NULL;
    if (dq_empty(d))
        return NULL;
    if (steal ? pthread_mutex_trylock(&d->lock) != 0 : pthread_mutex_lock(&d->lock) != 0)
        return NULL;
    if (d->tail > d->head)
        t = d->items[d->head++];
    dq_sized(d);
    pthread_mutex_unlock(&d->lock);
    return t;
}

/* ---- counts ---------------------------------------------------------- */

static void count(int c)
{
    if (self) {
        _Atomic uint64_t *n = &self->n[c];
        atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
                              memory_order_release);
    } else {
        atomic_fetch_add_explicit(&rt.n[c], 1, memory_order_release);
    }
}

static uint64_t count_total(int c)
{
    uint64_t sum = atomic_load_explicit(&rt.n[c], memory_order_acquire);
    for (unsigned i = 0; rt.workers && i < rt.nworkers; i++)
        sum += atomic_load_explicit(&rt.workers[i].n[c], memory_order_acquire);
    return sum;
}

/* ---- tasks ----------------------------------------------------------- */

void tscope__rt_task_release(struct tscope_rt_task *t)
{
    if (t && t != &rt.root && atomic_fetch_sub(&t->refs, 1) == 1)
        tscope__rt_record_free(t);
}

/* Wakes sleeping workers: one broadcast per sleep, however many tasks are
 * pushed before they are up again (a broadcast is a system call). */
static void wake_sleepers(void)
{
    if (atomic_load_explicit(&rt.sleepers, memory_order_relaxed) &&
        !atomic_exchange(&rt.wake_sent, 1)) {
        pthread_mutex_lock(&rt.sleep_lock);
        pthread_cond_broadcast(&rt.sleep_cond);
        pthread_mutex_unlock(&rt.sleep_lock);
    }
}

/* Puts a task whose dependencies are met into a queue. */
static void make_ready(struct tscope_rt_task *t)
{
    int expected = RT_CREATED;
    if (atomic_compare_exchange_strong(&t->state, &expected, RT_QUEUEING)) {
        tscope_task_queued_h(t->h);
        atomic_store(&t->state, RT_READY);
    } /* else cancelled: queued anyway, the worker that takes it finishes it */
    struct deque *target = !self ? &rt.inject : t->priority > 0 ? &self->urgent : &self->dq;
    size_t len = dq_push(target, t);
    if (rt.c_queue && self && ++self->pushes % 16 == 0) /* a sample every 16 pushes */
        tscope_counter_sample(rt.c_queue, (double)len);
    wake_sleepers();
}

/* The end of a task (run or cancelled): release dependants, tell the parent.
 * Successors are queued after deps_lock is released: the lock guards the
 * counts, not the queues nor the queued events. */
static void finish(struct tscope_rt_task *t, int state)
{
    atomic_store(&t->state, state); /* before deps_lock: see deps.c */
    uint32_t nready = 0;
    if (t->has_deps) {
        pthread_mutex_lock(&tscope__rt_deps_lock);
        for (uint32_t i = 0; i < t->nsucc; i++)
            if (--t->succ[i]->deps_pending == 0)
                t->succ[nready++] = t->succ[i]; /* t is finished: no edge is added now */
        t->nsucc = 0;
        tscope__rt_deps_done(t);
        pthread_mutex_unlock(&tscope__rt_deps_lock);
    }
    for (uint32_t i = 0; i < nready; i++)
        make_ready(t->succ[i]);
    count(C_COMPLETED);
    if (state == RT_CANCELLED)
        count(C_CANCELLED);
    if (rt.c_completed && self &&
        atomic_load_explicit(&self->n[C_COMPLETED], memory_order_relaxed) % 1024 == 0)
        tscope_counter_sample(rt.c_completed, (double)count_total(C_COMPLETED));
    struct tscope_rt_task *parent = t->parent;
    atomic_fetch_sub_explicit(&parent->children, 1, memory_order_release);
    tscope__rt_task_release(parent);
    tscope__rt_task_release(t); /* the runtime's own reference */
}

static void run(struct tscope_rt_task *t)
{
    int expected = RT_READY;
    if (!atomic_compare_exchange_strong(&t->state, &expected, RT_RUNNING)) {
        finish(t, RT_CANCELLED); /* cancelled while queued: never runs */
        return;
    }
    struct tscope_rt_task *outer = current;
    current = t;
    tscope_task_begin_h(t->h);
    t->fn(t->arg);
    tscope_task_end_h(t->h);
    t->h = NULL;
    current = outer;
    finish(t, RT_DONE);
}

static uint64_t next_rand(struct worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* Steals from another worker's deque (`urgent` or `dq`), or NULL. */
static struct tscope_rt_task *steal(struct worker *w, int urgent)
{
    unsigned n = rt.nworkers, start = (unsigned)(next_rand(w) % n);
    for (unsigned k = 0; k < n; k++) {
        struct worker *v = &rt.workers[(start + k) % n];
        struct tscope_rt_task *t;
        if (v != w && (t = dq_take_top(urgent ? &v->urgent : &v->dq, 1))) {
            count(C_STOLEN);
            return t;
        }
    }
    return NULL;
}

/* A task for worker w to run, or NULL: tasks with a priority first (own,
 * then others'), then the own deque, the injection queue, stealing. */
static struct tscope_rt_task *find_task(struct worker *w)
{
    struct tscope_rt_task *t;
    int fifo = atomic_load_explicit(&rt.schedule, memory_order_relaxed) == RT_FIFO;
    if ((t = dq_pop_bottom(&w->urgent)) || (t = steal(w, 1)) ||
        (t = fifo ? dq_take_top(&w->dq, 0) : dq_pop_bottom(&w->dq)) ||
        (t = dq_take_top(&rt.inject, 1)) || (t = steal(w, 0)))
        return t;
    return NULL;
}

/* Waits a little for work: yields the CPU 64 times, then sleeps up to 1 ms
 * (a parked worker, park, sleeps at once).  Counts the sleeping time as
 * idle.  Yielding longer (~200 us) was tried: stencils got 20% slower. */
static void idle_wait(struct worker *w, unsigned *spins, int park)
{
    if (!park && ++*spins < 64) {
        sched_yield();
        return;
    }
    uint64_t t0 = now_ns();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += park ? 100000000 : 1000000; /* parked: 100 ms, a safety net only */
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&rt.sleep_lock);
    if (park) { /* not a sleeper: spawns do not wake parked workers */
        if (!atomic_load(&rt.stop) && w->index >= atomic_load(&rt.cap))
            pthread_cond_timedwait(&rt.park_cond, &rt.sleep_lock, &until);
    } else {
        atomic_fetch_add(&rt.sleepers, 1);
        atomic_store(&rt.wake_sent, 0); /* the next push wakes us */
        if (!atomic_load(&rt.stop))
            pthread_cond_timedwait(&rt.sleep_cond, &rt.sleep_lock, &until);
        atomic_fetch_sub(&rt.sleepers, 1);
    }
    pthread_mutex_unlock(&rt.sleep_lock);
    uint64_t idle = now_ns() - t0;
    w->idle_ns += idle;
    atomic_fetch_add_explicit(&rt.idle_ns, idle, memory_order_relaxed);
    if (rt.c_idle)
        tscope_counter_sample(rt.c_idle, (double)w->idle_ns);
    *spins = 0;
}

int tscope__rt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name)
{
    int rc = pthread_create(thread, NULL, fn, arg);
    if (rc == 0) {
        char os[16]; /* the kernel's limit: longer names are cut */
        size_t n = strnlen(name, sizeof os - 1);
        memcpy(os, name, n);
        os[n] = 0;
        pthread_setname_np(*thread, os);
    }
    return rc;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    self = w;
    tscope_thread_register(w->name);
    tscope__rt_records_start();
    unsigned spins = 0;
    while (!atomic_load(&rt.stop)) {
        if (w->index >= atomic_load_explicit(&rt.cap, memory_order_relaxed)) {
            idle_wait(w, &spins, 1); /* parked above the cap: sleep, not spin */
            continue;
        }
        struct tscope_rt_task *t = find_task(w);
        if (t) {
            spins = 0;
            run(t);
        } else {
            idle_wait(w, &spins, 0);
        }
    }
    tscope__rt_records_stop();
    return NULL;
}

/* ---- public API ------------------------------------------------------ */

static int param_set_cap(double v, void *data)
{
    (void)data;
    return tscope_rt_set_thread_cap((unsigned)v);
}

static double param_get_cap(void *data)
{
    (void)data;
    return tscope_rt_thread_cap();
}

static int param_set_schedule(double v, void *data)
{
    (void)data;
    atomic_store(&rt.schedule, (int)v);
    return 0;
}

static double param_get_schedule(void *data)
{
    (void)data;
    return atomic_load(&rt.schedule);
}

/* The runtime's state for the sampler (include/taskscope/sampler.h):
 * rt.idle_rate (idle share of the workers' time since the last sample),
 * rt.active_threads (the thread cap), rt.throughput_tasks_per_s, and
 * rt.tasks_in_flight (spawned, not finished). */
static struct {
    uint64_t idle_ns, completed;
} sampled;

static void sample_runtime(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    uint64_t idle = atomic_load(&rt.idle_ns), done = count_total(C_COMPLETED);
    uint64_t spawned = count_total(C_SPAWNED); /* after completed: never fewer */
    unsigned cap = atomic_load(&rt.cap);
    if (seconds > 0) {
        double rate = (double)(idle - sampled.idle_ns) * 1e-9 / (seconds * rt.nworkers);
        emit(ctx, "rt.idle_rate", rate > 1 ? 1 : rate);
        emit(ctx, "rt.throughput_tasks_per_s", (double)(done - sampled.completed) / seconds);
    }
    emit(ctx, "rt.active_threads", cap);
    emit(ctx, "rt.tasks_in_flight", (double)(spawned - done));
    sampled.idle_ns = idle;
    sampled.completed = done;
}

/* The runtime's knobs for policies and tuners (include/taskscope/policy.h). */
static void register_params(unsigned threads)
{
    tscope_param_desc_t cap = {sizeof cap, "rt.thread_cap", TSCOPE_PARAM_INT, 1,   threads, NULL,
                               0,          param_set_cap,   param_get_cap,    NULL};
    tscope_param_desc_t sched = {sizeof sched,
                                 "rt.schedule",
                                 TSCOPE_PARAM_CHOICE,
                                 0,
                                 0,
                                 schedule_names,
                                 2,
                                 param_set_schedule,
                                 param_get_schedule,
                                 NULL};
    if (tscope_param_register(&cap) || tscope_param_register(&sched))
        fprintf(stderr, "taskscope: runtime: %s\n", tscope_param_last_error());
    sampled.idle_ns = sampled.completed = 0;
    tscope_sampler_source_register("rt", sample_runtime, NULL);
}

int tscope_rt_init(unsigned threads)
{
    if (threads < 1 || threads > 4096)
        return TSCOPE_EINVAL;
    if (atomic_load(&rt.running))
        return TSCOPE_ESTATE;
    rt.workers = calloc(threads, sizeof *rt.workers);
    if (!rt.workers)
        return TSCOPE_ENOMEM;
    rt.nworkers = threads;
    atomic_store(&rt.cap, threads);
    atomic_store(&rt.stop, 0);
    for (int c = 0; c < NCOUNTS; c++)
        atomic_store(&rt.n[c], 0);
    atomic_store(&rt.idle_ns, 0);
    memset(&rt.root, 0, sizeof rt.root);
    atomic_store(&rt.root.state, RT_RUNNING);
    dq_init(&rt.inject);
    rt.c_queue = rt.c_idle = rt.c_completed = 0;
    if (tscope_is_enabled()) {
        tscope_counter_register("rt.queue_length", &rt.c_queue);
        tscope_counter_register("rt.idle_ns", &rt.c_idle);
        tscope_counter_register("rt.tasks_completed", &rt.c_completed);
    }
    for (unsigned i = 0; i < threads; i++) {
        rt.workers[i].index = i;
        rt.workers[i].rng = 0x9E3779B97F4A7C15ull * (i + 1);
        dq_init(&rt.workers[i].dq);
        dq_init(&rt.workers[i].urgent);
    }
    self = &rt.workers[0];
    current = NULL;
    tscope__rt_records_start();
    atomic_store(&rt.schedule, RT_LIFO);
    atomic_store(&rt.running, 1);
    for (unsigned i = 1; i < threads; i++) {
        struct worker *w = &rt.workers[i];
        snprintf(w->name, sizeof w->name, "rt-worker-%u", i);
        if (tscope__rt_thread_start(&w->thread, worker_main, w, w->name)) {
            rt.nworkers = i; /* run with the workers we got */
            atomic_store(&rt.cap, i);
            break;
        }
    }
    register_params(rt.nworkers);
    tscope_policy_autostart(); /* TASKSCOPE_POLICY, if any */
    return 0;
}

static int help_until(int (*done)(void *), void *arg);

/* Every task spawned has finished (descendants of finished tasks too). */
static int all_finished(void *arg)
{
    (void)arg;
    uint64_t done = count_total(C_COMPLETED); /* first: spawned is then never fewer */
    return done == count_total(C_SPAWNED);
}

int tscope_rt_finalize(void)
{
    if (!atomic_load(&rt.running) || self != &rt.workers[0])
        return TSCOPE_ESTATE;
    struct tscope_rt_task *outer = current;
    current = NULL;
    help_until(all_finished, NULL);
    current = outer;
    tscope_throttle_stop();
    tscope_powercap_stop();
    tscope_param_unregister("rt.thread_cap");
    tscope_param_unregister("rt.schedule");
    tscope_sampler_source_unregister("rt");
    atomic_store(&rt.stop, 1);
    pthread_mutex_lock(&rt.sleep_lock);
    pthread_cond_broadcast(&rt.sleep_cond);
    pthread_cond_broadcast(&rt.park_cond);
    pthread_mutex_unlock(&rt.sleep_lock);
    for (unsigned i = 1; i < rt.nworkers; i++)
        pthread_join(rt.workers[i].thread, NULL);
    pthread_mutex_lock(&tscope__rt_deps_lock);
    tscope__rt_deps_clear();
    pthread_mutex_unlock(&tscope__rt_deps_lock);
    for (unsigned i = 0; i < rt.nworkers; i++) {
        dq_free(&rt.workers[i].dq);
        dq_free(&rt.workers[i].urgent);
    }
    dq_free(&rt.inject);
    for (int c = 0; c < NCOUNTS; c++) /* the stats outlive the workers */
        atomic_store(&rt.n[c], count_total(c));
    struct worker *workers = rt.workers;
    rt.workers = NULL;
    free(workers);
    self = NULL;
    tscope__rt_records_stop();
    tscope__rt_records_drop_pool();
    atomic_store(&rt.running, 0);
    return 0;
}

int tscope_rt_spawn(tscope_rt_fn fn, void *arg, const tscope_rt_spawn_opts_t *opts,
                    tscope_rt_task_t **handle)
{
    if (!fn || (opts && opts->struct_size < sizeof *opts) || (opts && opts->ndeps && !opts->deps))
        return TSCOPE_EINVAL;
    if (!atomic_load(&rt.running))
        return TSCOPE_ESTATE;
    struct tscope_rt_task *t = tscope__rt_record_new();
    if (!t)
        return TSCOPE_ENOMEM;
    struct tscope_rt_task *parent = current ? current : &rt.root;
    t->fn = fn;
    t->arg = arg;
    t->id = tscope_task_id_next();
    t->type = opts ? opts->type : 0;
    t->parent = parent;
    t->priority = opts ? opts->priority : 0;
    atomic_store(&t->refs, 1 + (handle != NULL));
    atomic_fetch_add(&parent->refs, 1);
    atomic_fetch_add(&parent->children, 1);
    count(C_SPAWNED);
    t->h = tscope_task_create_h(t->id, parent == &rt.root ? NULL : parent->h, opts ? opts->type : 0,
                                opts ? opts->flags & TSCOPE_TASK_FLAGS_ALL : 0,
                                opts ? opts->depth : 0, opts ? opts->priority : 0);
    if (handle)
        *handle = t;
    int ready = 1;
    if (opts && opts->ndeps) {
        t->has_deps = 1;
        pthread_mutex_lock(&tscope__rt_deps_lock);
        tscope__rt_deps_add(t, opts->deps, opts->ndeps);
        ready = t->deps_pending == 0; /* no predecessor: nobody else queues it */
        pthread_mutex_unlock(&tscope__rt_deps_lock);
    }
    if (ready)
        make_ready(t);
    return 0;
}

/* Runs other tasks until *done says so.  Returns TSCOPE_ESTATE outside
 * the runtime's workers. */
static int help_until(int (*done)(void *), void *arg)
{
    struct worker *w = self;
    if (!w)
        return TSCOPE_ESTATE;
    struct tscope_rt_task *waiting = current;
    if (waiting)
        tscope_task_yield_h(waiting->h);
    unsigned spins = 0;
    while (!done(arg)) {
        struct tscope_rt_task *t =
            w->index < atomic_load_explicit(&rt.cap, memory_order_relaxed) || w->index == 0
                ? find_task(w)
                : NULL;
        if (t) {
            spins = 0;
            run(t);
        } else if (++spins < 64) {
            sched_yield();
        } else {
            struct timespec pause = {0, 20000};
            nanosleep(&pause, NULL);
            spins = 64;
        }
    }
    if (waiting)
        tscope_task_resume_h(waiting->h);
    return 0;
}

static int children_done(void *arg)
{
    struct tscope_rt_task *t = arg;
    return atomic_load_explicit(&t->children, memory_order_acquire) == 0;
}

int tscope_rt_taskwait(void)
{
    if (!atomic_load(&rt.running))
        return TSCOPE_ESTATE;
    return help_until(children_done, current ? current : &rt.root);
}

static int task_finished(void *arg)
{
    struct tscope_rt_task *t = arg;
    int s = atomic_load(&t->state);
    return s == RT_DONE || s == RT_CANCELLED;
}

/* 1 if `to` can only run after `from` finished: `to` is reachable from
 * `from` over dependency edges.  deps_lock held. */
static int reachable(struct tscope_rt_task *from, struct tscope_rt_task *to)
{
    size_t cap = 64, n = 0, seen = 0;
    struct tscope_rt_task **stack = malloc(cap * sizeof *stack);
    if (!stack)
        return 0;
    stack[n++] = from;
    int found = 0;
    while (n && !found && seen++ < 100000) { /* bounded: never a hang */
        struct tscope_rt_task *x = stack[--n];
        for (uint32_t i = 0; i < x->nsucc && !found; i++) {
            if (x->succ[i] == to) {
                found = 1;
            } else {
                if (n == cap) {
                    struct tscope_rt_task **g = realloc(stack, 2 * cap * sizeof *g);
                    if (!g)
                        break;
                    stack = g;
                    cap *= 2;
                }
                stack[n++] = x->succ[i];
            }
        }
    }
    free(stack);
    return found;
}

int tscope_rt_wait(tscope_rt_task_t *t)
{
    if (!t)
        return TSCOPE_EINVAL;
    if (!atomic_load(&rt.running))
        return TSCOPE_ESTATE;
    /* Waits that could never end are refused: for itself, for an ancestor
     * (which waits for this task's end), or for a task that depends on the
     * waiting one. */
    for (struct tscope_rt_task *a = current; a; a = a->parent)
        if (a == t)
            return TSCOPE_EINVAL;
    if (current) {
        pthread_mutex_lock(&tscope__rt_deps_lock);
        int cycle = reachable(current, t);
        pthread_mutex_unlock(&tscope__rt_deps_lock);
        if (cycle)
            return TSCOPE_EINVAL;
    }
    int rc = help_until(task_finished, t);
    if (rc)
        return rc;
    return atomic_load(&t->state) == RT_CANCELLED ? TSCOPE_ECANCELED : 0;
}

int tscope_rt_cancel(tscope_rt_task_t *t)
{
    if (!t)
        return TSCOPE_EINVAL;
    int s = atomic_load(&t->state);
    while (s == RT_CREATED || s == RT_READY || s == RT_QUEUEING) {
        if (s == RT_QUEUEING) { /* being queued right now: wait for READY */
            sched_yield();
            s = atomic_load(&t->state);
            continue;
        }
        if (atomic_compare_exchange_weak(&t->state, &s, RT_CANCELLED)) {
            tscope_task_cancel_h(t->h);
            t->h = NULL;
            /* a queued task is finished by the worker that dequeues it; one
             * still waiting for dependencies, when they are met */
            return 0;
        }
    }
    return TSCOPE_ESTATE;
}

void tscope_rt_release(tscope_rt_task_t *t)
{
    tscope__rt_task_release(t);
}

int tscope_rt_set_thread_cap(unsigned cap)
{
    if (!atomic_load(&rt.running))
        return TSCOPE_ESTATE;
    if (cap < 1 || cap > rt.nworkers)
        return TSCOPE_EINVAL;
    atomic_store(&rt.cap, cap);
    pthread_mutex_lock(&rt.sleep_lock);
    pthread_cond_broadcast(&rt.park_cond);
    pthread_mutex_unlock(&rt.sleep_lock);
    return 0;
}

unsigned tscope_rt_thread_cap(void)
{
    return atomic_load(&rt.running) ? atomic_load(&rt.cap) : 0;
}

unsigned tscope_rt_threads(void)
{
    return atomic_load(&rt.running) ? rt.nworkers : 0;
}

int tscope_rt_worker(void)
{
    return self ? (int)self->index : -1;
}

int tscope_rt_stats(tscope_rt_stats_t *out)
{
    if (!out)
        return TSCOPE_EINVAL;
    out->completed = count_total(C_COMPLETED);
    out->spawned = count_total(C_SPAWNED);
    out->cancelled = count_total(C_CANCELLED);
    out->stolen = count_total(C_STOLEN);
    out->idle_ns = atomic_load(&rt.idle_ns);
    return 0;
}
