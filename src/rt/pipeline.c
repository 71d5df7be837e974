/* pipeline.c - pipelines of task pools connected by bounded queues.
 *
 * Stage i has its own worker threads (started by each run and joined at its
 * end); the last stage only counts.  The first stage's workers take the
 * run's elements straight from the caller's array: each claims a chunk of
 * the elements not yet taken (guided: 1/(2T) of the rest, down to single
 * elements at the end) with one compare-and-swap, so a task pool costs no
 * hand-over between threads and no feeding thread competes for the CPUs
 * (the caller only waits for the workers).  Stage i > 0 reads queue i; the
 * last worker of a stage to run out of elements closes the next queue.  Each
 * element's passage through a stage is reported as a task of the stage's
 * type: created and queued when the element enters the stage (claimed from
 * the array, or put into the stage's queue), begun and ended by the worker
 * that processes it (so queue waits show as the time between queued and
 * begin).  A queue is a ring under a mutex with two condition variables:
 * producers wait while it is full, consumers while it is empty and open;
 * both poll before they sleep (q_wait: up to 1 ms while the process's
 * pipeline workers fit on its CPUs, ~20 us when not), and the lock is an
 * adaptive mutex (spins briefly when taken).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define MAX_STAGES 16

struct item {
    void *element;
    tscope_task_t *task; /* the element's task in the stage this queue feeds (a handle:
                            created by the stage before, begun by this one) */
};

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    struct item *items;
    size_t cap, head;
    /* count and closed are written only under lock (relaxed stores: the lock
     * orders them for every reader that holds it) and read without it only
     * to poll (relaxed loads; a poll's answer is confirmed under the lock) */
    _Atomic size_t count;
    _Atomic int closed;
};

struct stage {
    tscope_rt_stage_fn fn;
    void *arg;
    unsigned workers;
    tscope_type_t type;
    _Atomic unsigned active; /* its workers still running in the current run: the last
                              * to finish closes the next stage's queue */
};

struct tscope_rt_pipeline {
    size_t qcap;
    unsigned nstages;
    struct stage stages[MAX_STAGES];
    struct queue queues[MAX_STAGES]; /* queues[i]: input of stage i > 0 (queues[0] unused) */
    size_t n;                        /* elements of the current run */
    void **elements;                 /* the current run's input (stage 0 claims from it) */
    _Atomic size_t next;             /* the first element not yet claimed */
};

struct worker_arg {
    tscope_rt_pipeline_t *p;
    unsigned stage;
    char name[32]; /* pipe-sS-wW */
};

static int q_init(struct queue *q, size_t cap)
{
    q->items = malloc(cap * sizeof *q->items);
    if (!q->items)
        return TSCOPE_ENOMEM;
    q->cap = cap;
    q->head = 0;
    /* no worker runs yet: the threads are started after this (pthread_create
     * orders these stores before anything they do) */
    atomic_store_explicit(&q->count, 0, memory_order_relaxed);
    atomic_store_explicit(&q->closed, 0, memory_order_relaxed);
    /* adaptive: a thread that finds the lock taken spins briefly before it
     * sleeps; the critical sections are a few loads and stores, and with a
     * plain mutex the stages slept on each other's locks (3 us per element
     * where spinning costs 0.5 us, docs/performance.md) */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&q->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_cond_init(&q->not_full, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    return 0;
}

static void q_destroy(struct queue *q)
{
    free(q->items);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
}

/* Pipeline workers running in this process, and the CPUs it may use: while
 * the workers fit on the CPUs, a waiting worker polls for up to 1 ms (no
 * one else needs its CPU, and sleeping costs the thread that wakes it
 * several microseconds per element: pipe(inc, nop) ran 25-35% slower than
 * inc alone with 20 us, docs/performance.md); with more workers than CPUs
 * only ~20 us, so that spinning does not take a CPU from working threads. */
static _Atomic unsigned running_workers;
static _Atomic int cpus;

static int cpu_count(void)
{
    int n = atomic_load_explicit(&cpus, memory_order_relaxed);
    if (n == 0) {
        cpu_set_t set;
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
        if (n < 1)
            n = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (n < 1)
            n = 1;
        atomic_store_explicit(&cpus, n, memory_order_relaxed);
    }
    return n;
}

/* Waits until ready(q) holds, first polling without the lock (see above;
 * a hand-over between two running threads then costs no sleep and no
 * wake-up, which on a VM is tens of microseconds), then on cv.  Returns
 * with the lock held. */
static void q_wait(struct queue *q, pthread_cond_t *cv, int (*ready)(const struct queue *))
{
    pthread_mutex_lock(&q->lock);
    if (ready(q))
        return;
    pthread_mutex_unlock(&q->lock);
    double budget =
        atomic_load_explicit(&running_workers, memory_order_relaxed) <= (unsigned)cpu_count()
            ? 1e-3
            : 20e-6;
    double until = 0;
    for (unsigned spin = 0;; spin++) {
        if (ready(q)) /* racy peek; confirmed under the lock below */
            break;
        if (spin % 64 == 63) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
            if (until == 0)
                until = now + budget;
            else if (now > until)
                break;
        }
    }
    pthread_mutex_lock(&q->lock);
    while (!ready(q))
        pthread_cond_wait(cv, &q->lock);
}

static int has_room(const struct queue *q)
{
    return atomic_load_explicit(&q->count, memory_order_relaxed) < q->cap;
}

static int has_item_or_closed(const struct queue *q)
{
    return atomic_load_explicit(&q->count, memory_order_relaxed) > 0 ||
           atomic_load_explicit(&q->closed, memory_order_relaxed);
}

/* Creates the element's task of the stage the queue feeds, then queues it. */
static void q_push(struct queue *q, void *e, tscope_type_t type)
{
    struct item it = {e, tscope_task_create_h(tscope_task_id_next(), NULL, type, 0, 0, 0)};
    /* a full queue polls too: cheap elements drain in less time than a
     * sleeping producer takes to wake up, and the stage would then starve */
    q_wait(q, &q->not_full, has_room);
    tscope_task_queued_h(it.task);
    size_t count = atomic_load_explicit(&q->count, memory_order_relaxed);
    q->items[(q->head + count) % q->cap] = it;
    atomic_store_explicit(&q->count, count + 1, memory_order_relaxed);
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* Next element, or NULL once the queue is closed and empty; *got says
 * whether an element (which may itself be NULL) was taken. */
static struct item q_pop(struct queue *q, int *got)
{
    q_wait(q, &q->not_empty, has_item_or_closed);
    struct item e = {NULL, NULL};
    size_t count = atomic_load_explicit(&q->count, memory_order_relaxed);
    *got = count > 0;
    if (*got) {
        e = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        atomic_store_explicit(&q->count, count - 1, memory_order_relaxed);
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return e;
}

static void q_close(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    atomic_store_explicit(&q->closed, 1, memory_order_relaxed);
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* Claims the next chunk of the run's elements for a first-stage worker:
 * returns how many (0: none left) and the first in *first. */
static size_t claim(tscope_rt_pipeline_t *p, unsigned workers, size_t *first)
{
    size_t cur = atomic_load_explicit(&p->next, memory_order_relaxed);
    for (;;) {
        if (cur >= p->n)
            return 0;
        size_t chunk = (p->n - cur) / (2 * (size_t)workers);
        if (chunk == 0)
            chunk = 1;
        if (atomic_compare_exchange_weak_explicit(&p->next, &cur, cur + chunk, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *first = cur;
            return chunk;
        }
    }
}

/* The next element for a worker of stage `stage`: claimed from the input
 * array (stage 0, *left counts down the current chunk) or popped from the
 * stage's queue; *got is 0 when the stage has no elements left. */
static struct item next_item(tscope_rt_pipeline_t *p, unsigned stage, size_t *at, size_t *left,
                             int *got)
{
    if (stage > 0)
        return q_pop(&p->queues[stage], got);
    if (*left == 0 && (*left = claim(p, p->stages[0].workers, at)) == 0) {
        *got = 0;
        return (struct item){NULL, NULL};
    }
    struct item it = {p->elements[(*at)++], NULL};
    (*left)--;
    it.task = tscope_task_create_h(tscope_task_id_next(), NULL, p->stages[0].type, 0, 0, 0);
    tscope_task_queued_h(it.task);
    *got = 1;
    return it;
}

/* k of stage s's workers are finished (or never started): the last one
 * closes the next stage's queue, after every element has been passed on. */
static void stage_done(tscope_rt_pipeline_t *p, unsigned s, unsigned k)
{
    if (atomic_fetch_sub(&p->stages[s].active, k) == k && s + 1 < p->nstages)
        q_close(&p->queues[s + 1]);
}

static void *stage_worker(void *arg)
{
    struct worker_arg *wa = arg;
    tscope_rt_pipeline_t *p = wa->p;
    struct stage *s = &p->stages[wa->stage];
    tscope_thread_register(wa->name);
    int last = wa->stage + 1 == p->nstages;
    struct queue *out = last ? NULL : &p->queues[wa->stage + 1];
    size_t at = 0, left = 0; /* stage 0: the chunk being processed */
    for (;;) {
        int got;
        struct item it = next_item(p, wa->stage, &at, &left, &got);
        if (!got)
            break;
        tscope_task_begin_h(it.task);
        s->fn(it.element, s->arg);
        tscope_task_end_h(it.task);
        if (!last)
            q_push(out, it.element, p->stages[wa->stage + 1].type);
    }
    stage_done(p, wa->stage, 1);
    tscope_thread_unregister();
    return NULL;
}

int tscope_rt_pipeline_create(size_t queue_capacity, tscope_rt_pipeline_t **out)
{
    if (!out || queue_capacity == 0)
        return TSCOPE_EINVAL;
    tscope_rt_pipeline_t *p = calloc(1, sizeof *p);
    if (!p)
        return TSCOPE_ENOMEM;
    p->qcap = queue_capacity;
    *out = p;
    return 0;
}

int tscope_rt_pipeline_add_stage(tscope_rt_pipeline_t *p, tscope_rt_stage_fn fn, void *arg,
                                 unsigned workers, tscope_type_t type)
{
    if (!p || !fn || workers < 1 || workers > 1024)
        return TSCOPE_EINVAL;
    if (p->nstages == MAX_STAGES)
        return TSCOPE_ELIMIT;
    p->stages[p->nstages++] = (struct stage){fn, arg, workers, type, 0};
    return 0;
}

int tscope_rt_pipeline_run(tscope_rt_pipeline_t *p, void **elements, size_t n)
{
    if (!p || (!elements && n))
        return TSCOPE_EINVAL;
    if (p->nstages == 0)
        return TSCOPE_ESTATE;
    if (n == 0)
        return 0;
    int rc = 0;
    unsigned nq = 0, total = 0;
    for (nq = 1; nq < p->nstages; nq++) /* stage 0 reads the array; the last passes nothing on */
        if ((rc = q_init(&p->queues[nq], p->qcap)) != 0)
            break;
    for (unsigned i = 0; i < p->nstages; i++) {
        atomic_store(&p->stages[i].active, p->stages[i].workers);
        total += p->stages[i].workers;
    }
    pthread_t *threads = calloc(total, sizeof *threads);
    struct worker_arg *args = calloc(total, sizeof *args);
    if (rc || !threads || !args) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    p->n = n;
    p->elements = elements;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_fetch_add(&running_workers, total);
    /* The last stage first: a stage that gets no thread at all stops the
     * run before the first stage (the only one that takes elements) starts. */
    unsigned started = 0;
    for (unsigned s = p->nstages; s-- > 0;) {
        unsigned got = 0;
        for (unsigned k = 0; k < p->stages[s].workers; k++, got++) {
            struct worker_arg *a = &args[started];
            *a = (struct worker_arg){p, s, ""};
            snprintf(a->name, sizeof a->name, "pipe-s%u-w%u", s, k);
            if (tscope__rt_thread_start(&threads[started], stage_worker, a, a->name))
                break;
            started++;
        }
        if (got == 0) {
            fprintf(stderr,
                    "taskscope: rt: cannot start a thread for pipeline stage %u; the run "
                    "processes nothing\n",
                    s);
            for (unsigned i = s + 1; i < p->nstages; i++)
                q_close(&p->queues[i]);
            rc = TSCOPE_ENOMEM;
            break;
        }
        if (got < p->stages[s].workers) {
            fprintf(stderr,
                    "taskscope: rt: pipeline stage %u runs with %u of %u threads (cannot "
                    "start more)\n",
                    s, got, p->stages[s].workers);
            stage_done(p, s, p->stages[s].workers - got);
        }
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    atomic_fetch_sub(&running_workers, total);
out:
    free(threads);
    free(args);
    for (unsigned i = 1; i < nq; i++)
        q_destroy(&p->queues[i]);
    return rc;
}

void tscope_rt_pipeline_destroy(tscope_rt_pipeline_t *p)
{
    free(p);
}
