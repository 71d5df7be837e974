/* pipeline.c - pipelines of task pools connected by bounded queues.
 *
 * Stage i has its own worker threads (started by each run and joined at its
 * end) reading queue i; the last stage only counts.  The caller feeds queue
 * 0 and closes it after the last element; a stage closes the next queue when
 * it has passed on all n elements.  Each element's passage through a stage
 * is reported as a task of the stage's type: created and queued when the
 * element enters the stage's queue, begun and ended by the worker that
 * processes it (so queue waits show as the time between queued and begin).
 * A queue is a ring under a mutex with two condition variables: producers
 * wait while it is full, consumers while it is empty and open; both poll
 * for ~20 us before they sleep (q_wait).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rt.h"

#define MAX_STAGES 16

struct item {
    void *element;
    uint64_t task; /* the element's task in the stage this queue feeds */
};

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    struct item *items;
    size_t cap, head;
    _Atomic size_t count; /* written under lock; read without it to poll */
    _Atomic int closed;
};

struct stage {
    tscope_rt_stage_fn fn;
    void *arg;
    unsigned workers;
    tscope_type_t type;
    size_t passed; /* elements this stage finished in the current run (queue lock of out) */
};

struct tscope_rt_pipeline {
    size_t qcap;
    unsigned nstages;
    struct stage stages[MAX_STAGES];
    struct queue queues[MAX_STAGES + 1]; /* queues[i]: input of stage i; last: unused sink */
    size_t n;                            /* elements of the current run */
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
    q->head = q->count = 0;
    q->closed = 0;
    pthread_mutex_init(&q->lock, NULL);
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

/* Waits until ready(q) holds, first polling without the lock for up to
 * ~20 us (a hand-over between two running threads then costs no sleep and
 * no wake-up, which on a VM is tens of microseconds), then on cv.  Returns
 * with the lock held. */
static void q_wait(struct queue *q, pthread_cond_t *cv, int (*ready)(const struct queue *))
{
    pthread_mutex_lock(&q->lock);
    if (ready(q))
        return;
    pthread_mutex_unlock(&q->lock);
    double until = 0;
    for (unsigned spin = 0;; spin++) {
        if (ready(q)) /* racy peek; confirmed under the lock below */
            break;
        if (spin % 64 == 63) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
            if (until == 0)
                until = now + 20e-6;
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
    struct item it = {e, tscope_task_id_next()};
    tscope_task_create(it.task, 0, type, 0, 0, 0);
    /* a full queue polls too: cheap elements drain in less time than a
     * sleeping producer takes to wake up, and the stage would then starve */
    q_wait(q, &q->not_full, has_room);
    tscope_task_queued(it.task);
    q->items[(q->head + q->count++) % q->cap] = it;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

/* Next element, or NULL once the queue is closed and empty; *got says
 * whether an element (which may itself be NULL) was taken. */
static struct item q_pop(struct queue *q, int *got)
{
    q_wait(q, &q->not_empty, has_item_or_closed);
    struct item e = {NULL, 0};
    *got = q->count > 0;
    if (*got) {
        e = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return e;
}

static void q_close(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

static void *stage_worker(void *arg)
{
    struct worker_arg *wa = arg;
    tscope_rt_pipeline_t *p = wa->p;
    struct stage *s = &p->stages[wa->stage];
    tscope_thread_register(wa->name);
    int last = wa->stage + 1 == p->nstages;
    struct queue *in = &p->queues[wa->stage], *out = &p->queues[wa->stage + 1];
    for (;;) {
        int got;
        struct item it = q_pop(in, &got);
        if (!got)
            break;
        tscope_task_begin(it.task, 0);
        s->fn(it.element, s->arg);
        tscope_task_end(it.task);
        if (!last)
            q_push(out, it.element, p->stages[wa->stage + 1].type);
        pthread_mutex_lock(&out->lock);
        int all = ++s->passed == p->n;
        pthread_mutex_unlock(&out->lock);
        if (all && !last)
            q_close(out);
    }
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
    for (; nq <= p->nstages; nq++)
        if ((rc = q_init(&p->queues[nq], p->qcap)) != 0)
            break;
    for (unsigned i = 0; i < p->nstages; i++) {
        p->stages[i].passed = 0;
        total += p->stages[i].workers;
    }
    pthread_t *threads = calloc(total, sizeof *threads);
    struct worker_arg *args = calloc(total, sizeof *args);
    if (rc || !threads || !args) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    p->n = n;
    unsigned started = 0;
    for (unsigned s = 0; s < p->nstages; s++)
        for (unsigned k = 0; k < p->stages[s].workers; k++, started++) {
            struct worker_arg *a = &args[started];
            *a = (struct worker_arg){p, s, ""};
            snprintf(a->name, sizeof a->name, "pipe-s%u-w%u", s, k);
            if (tscope__rt_thread_start(&threads[started], stage_worker, a, a->name)) {
                rc = TSCOPE_ENOMEM; /* the stage runs with the workers it got */
                break;
            }
        }
    for (size_t i = 0; i < n; i++)
        q_push(&p->queues[0], elements[i], p->stages[0].type);
    q_close(&p->queues[0]);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
out:
    free(threads);
    free(args);
    for (unsigned i = 0; i < nq; i++)
        q_destroy(&p->queues[i]);
    return rc;
}

void tscope_rt_pipeline_destroy(tscope_rt_pipeline_t *p)
{
    free(p);
}
