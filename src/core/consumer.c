/* consumer.c - the consumer thread: drains the rings into the store.
 *
 * Wake-ups are coalesced: the thread sleeps for TASKSCOPE_PERIOD_MS or until
 * a producer whose ring passed half full (or a flush) sets wake_pending and
 * posts the semaphore; a burst of such producers posts once.  A semaphore,
 * not a condition variable, so that a signal handler can wake it too
 * (tscope__consumer_wake_async: signals.c has the thread that would
 * otherwise wait for signals finalize here, one thread less to start and
 * join in every measured process).
 *
 * A round = snapshot every ring's head, apply everything up to the snapshot,
 * then end the round (store.h explains why rounds matter).
 * Work is bounded per store-lock hold (TASKSCOPE_BATCH records), so queries
 * from other threads are never blocked for long, whatever the event flood.
 * Each batch goes to the profile's apply hook, then to the subscribers
 * (hooks.h) in their list's order, one call each per batch; each round end
 * and each retired thread to them likewise.  The list is a fixed array
 * filled before the consumer thread starts and left alone while it runs
 * (tscope__subscribe refuses then), so reading it takes no lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "core.h"
#include "hooks.h"
#include "taskscope/taskscope.h"

struct tscope__hooks tscope__hooks;

static struct {
    int position;
    struct tscope__subscriber s;
} subs[TSCOPE__SUBSCRIBERS_MAX];
static unsigned nsubs;

int tscope__subscribe(int position, const struct tscope__subscriber *s)
{
    if (tscope__g.consumer_running)
        return TSCOPE_ESTATE;
    if (nsubs == TSCOPE__SUBSCRIBERS_MAX)
        return TSCOPE_ELIMIT;
    unsigned at = nsubs;
    while (at > 0 && subs[at - 1].position > position) /* after equal ones */
        at--;
    memmove(&subs[at + 1], &subs[at], (nsubs - at) * sizeof subs[0]);
    subs[at].position = position;
    subs[at].s = *s;
    nsubs++;
    return 0;
}

int tscope__unsubscribe(int position)
{
    if (tscope__g.consumer_running)
        return TSCOPE_ESTATE;
    unsigned keep = 0;
    for (unsigned i = 0; i < nsubs; i++)
        if (subs[i].position != position)
            subs[keep++] = subs[i];
    nsubs = keep;
    return 0;
}

int tscope__subscribers_clear(void)
{
    if (tscope__g.consumer_running)
        return TSCOPE_ESTATE;
    nsubs = 0;
    return 0;
}

int tscope__subscribed(int position)
{
    for (unsigned i = 0; i < nsubs; i++)
        if (subs[i].position == position)
            return 1;
    return 0;
}

void tscope__consumer_wake(void)
{
    if (atomic_load_explicit(&tscope__g.wake_pending, memory_order_relaxed) ||
        atomic_exchange(&tscope__g.wake_pending, 1))
        return;
    sem_post(&tscope__g.cons_wake);
}

int tscope__consumer_wake_async(void)
{
    if (!tscope__g.consumer_running)
        return -1;
    atomic_store(&tscope__g.async_pending, 1);
    sem_post(&tscope__g.cons_wake);
    return 0;
}

/* Releases ring space up to what was read. */
static void release(struct tscope__thread *t, uint64_t applied)
{
    struct tscope__ring *r = &t->ring;
    if (atomic_load_explicit(&r->tail, memory_order_relaxed) != applied)
        tscope__ring_release(r, applied);
}

/* Hands ring records [tail, head) of thread t on in batches of
 * TASKSCOPE_BATCH: the profile applies each batch under its lock, then the
 * subscribers see it; then the slots are released.
 * Returns the new read position. */
static uint64_t drain_ring(struct tscope__thread *t, uint64_t tail, uint64_t head)
{
    struct tscope__ring *r = &t->ring;
    uint32_t batch = tscope__g.cfg.batch ? tscope__g.cfg.batch : 65536;
    while (tail < head) {
        uint64_t stop = head - tail > batch ? tail + batch : head;
        uint64_t batch_start = tail;
        tail = tscope__hooks.apply ? tscope__hooks.apply(t->index, r, tail, stop, head) : stop;
        for (unsigned i = 0; i < nsubs; i++) {
            const struct tscope__subscriber *s = &subs[i].s;
            if (s->batch && (!s->wanted || s->wanted()))
                s->batch(t->index, r, batch_start, tail);
        }
        t->read_pos = tail;
        release(t, tail);
    }
    return tail;
}

int tscope__consumer_round(void)
{
    int busiest = 0;
    pthread_mutex_lock(&tscope__g.cons_lock);
    tscope__g.rounds_started++;
    pthread_mutex_unlock(&tscope__g.cons_lock);

    uint32_t n = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__thread *t = tscope__g.threads[i];
        if (atomic_load_explicit(&t->ring_freed, memory_order_acquire))
            continue;
        int retired = atomic_load_explicit(&t->retired, memory_order_acquire);
        uint64_t avail = tscope__ring_head(&t->ring) - t->read_pos;
        if (avail)
            drain_ring(t, t->read_pos, t->read_pos + avail);
        if (avail * 4 > t->ring.size) /* relative to this ring's size */
            busiest = 1;
        if (retired && tscope__ring_head(&t->ring) == t->read_pos) {
            release(t, t->read_pos); /* the slot is about to be reused */
            for (unsigned k = 0; k < nsubs; k++)
                if (subs[k].s.thread_gone)
                    subs[k].s.thread_gone(t->index);
            tscope__ring_free(&t->ring);
            tscope__thread_recycle(t);
        }
    }
    tscope__clock_refine(); /* before the round ends: the trace writes the factor there */
    for (unsigned i = 0; i < nsubs; i++)
        if (subs[i].s.round)
            subs[i].s.round();

    pthread_mutex_lock(&tscope__g.cons_lock);
    tscope__g.rounds_done++;
    pthread_cond_broadcast(&tscope__g.cons_done);
    pthread_mutex_unlock(&tscope__g.cons_lock);
    return busiest;
}

/* Sleeps until the period's next point of the grid or a wake-up (the
 * semaphore counts them: none is lost while a round runs). */
static void sleep_until_woken(void)
{
    struct timespec until = tscope__deadline_aligned((uint64_t)tscope__g.cfg.period_ms * 1000000u);
    while (sem_timedwait(&tscope__g.cons_wake, &until) != 0 && errno == EINTR)
        ;
}

static void *consumer_main(void *arg)
{
    (void)arg;
    int flooded = 0;
    for (;;) {
        /* After a round that found a ring over a quarter full, go on at
         * once: producers are flooding and sleeping would only make them
         * wait.  Otherwise sleep until the period ends or a wake-up. */
        if (!flooded && !atomic_load(&tscope__g.wake_pending) &&
            !atomic_load(&tscope__g.async_pending))
            sleep_until_woken();
        atomic_store(&tscope__g.wake_pending, 0);
        if (atomic_exchange(&tscope__g.async_pending, 0) && tscope__hooks.on_wake_async)
            tscope__hooks.on_wake_async(); /* may finalize: stop is then set */
        pthread_mutex_lock(&tscope__g.cons_lock);
        if (tscope__g.stop)
            break;
        tscope__g.consumer_busy = 1;
        pthread_mutex_unlock(&tscope__g.cons_lock);
        flooded = tscope__consumer_round() != 0;
        if (tscope__hooks.after_round)
            tscope__hooks.after_round();
        pthread_mutex_lock(&tscope__g.cons_lock);
        tscope__g.consumer_busy = 0;
        pthread_cond_broadcast(&tscope__g.cons_done);
        pthread_mutex_unlock(&tscope__g.cons_lock);
    }
    pthread_mutex_unlock(&tscope__g.cons_lock);
    return NULL;
}

int tscope__consumer_start(void)
{
    tscope__g.stop = 0;
    atomic_store(&tscope__g.wake_pending, 0);
    atomic_store(&tscope__g.async_pending, 0);
    if (sem_init(&tscope__g.cons_wake, 0, 0))
        return -1;
    if (tscope__thread_start(&tscope__g.consumer, consumer_main, NULL, "tscope-consumer")) {
        sem_destroy(&tscope__g.cons_wake);
        return -1;
    }
    tscope__g.consumer_running = 1;
    return 0;
}

/* On the consumer itself (a finalize it runs after a signal) it is only
 * told to end after this round: it cannot join itself. */
void tscope__consumer_stop(void)
{
    if (!tscope__g.consumer_running)
        return;
    int self = pthread_equal(pthread_self(), tscope__g.consumer);
    pthread_mutex_lock(&tscope__g.cons_lock);
    tscope__g.stop = 1;
    pthread_cond_broadcast(&tscope__g.cons_done); /* a flush waiting ends */
    pthread_mutex_unlock(&tscope__g.cons_lock);
    tscope__g.consumer_running = 0;
    if (self)
        return;
    sem_post(&tscope__g.cons_wake);
    pthread_join(tscope__g.consumer, NULL);
    sem_destroy(&tscope__g.cons_wake);
}

void tscope__consumer_fork_hold(void)
{
    pthread_mutex_lock(&tscope__g.cons_lock);
    if (!tscope__g.consumer_running || pthread_equal(pthread_self(), tscope__g.consumer))
        return; /* a fork from the consumer's own hooks: it is where it is */
    while (tscope__g.consumer_busy && !tscope__g.stop)
        pthread_cond_wait(&tscope__g.cons_done, &tscope__g.cons_lock);
}

void tscope__consumer_fork_release(void)
{
    pthread_mutex_unlock(&tscope__g.cons_lock);
}

void tscope__consumer_flush(void)
{
    pthread_mutex_lock(&tscope__g.cons_lock);
    uint64_t target = tscope__g.rounds_started + 2;
    while (tscope__g.rounds_done < target && tscope__g.consumer_running && !tscope__g.stop) {
        atomic_store(&tscope__g.wake_pending, 1);
        sem_post(&tscope__g.cons_wake);
        pthread_cond_wait(&tscope__g.cons_done, &tscope__g.cons_lock);
    }
    pthread_mutex_unlock(&tscope__g.cons_lock);
}
