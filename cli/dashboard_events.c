/* dashboard_events.c - Server-Sent Events: the reference-counted event
 * texts and the hub that queues them to every listener (GET /api/events).
 *
 * An event's text is built once (by the store, for a snapshot, a process
 * change or an ACK) and shared: publishing takes one reference per listener
 * that has room, nothing is copied.  Each listener has a bounded queue
 * (TSCOPE__DASH_LISTENER_EVENTS events, TSCOPE__DASH_LISTENER_BYTES bytes);
 * publish never waits: an event that does not fit is dropped for that
 * listener only and its stream later says ": dropped N events", so a slow
 * browser costs itself data, never the ingest thread time (one that stops
 * reading altogether holds at most its queue's bound).
 *
 * Cost: a listener's reads are paced: after a read that emptied its queue
 * the next one waits READ_ROUND_MS (20 ms), so the events of many
 * processes go out in one write instead of one write and one thread
 * wake-up each (64 processes at 10 snapshots/s: 50 writes a second, not
 * 640).  A read that filled libmicrohttpd's buffer is not paced.
 *
 * Concurrency: one mutex (hub->lock) guards the list of listeners, their
 * queues and stopped; the ingest thread publishes, each listener's HTTP
 * thread reads its own queue, waiting on its own condition variable (on
 * CLOCK_MONOTONIC) at most TSCOPE__DASH_KEEPALIVE_S before it writes a
 * ": keepalive" comment.  Reference counts are atomic, since the last
 * reference to a snapshot may be the store's or a listener's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dashboard.h"

#define READ_ROUND_MS 20

struct tscope__dash_event *tscope__dash_event_new(const char *name, const char *head,
                                                  const char *body, size_t body_len,
                                                  const char *tail)
{
    size_t nl = strlen(name), hl = strlen(head), tl = strlen(tail);
    /* "event: " name "\ndata: " head body tail "\n\n" */
    size_t len = 7 + nl + 7 + hl + body_len + tl + 2;
    struct tscope__dash_event *e = malloc(sizeof *e + len + 1);
    if (!e)
        return NULL;
    atomic_init(&e->refs, 1);
    char *p = e->text;
    memcpy(p, "event: ", 7);
    memcpy(p += 7, name, nl);
    memcpy(p += nl, "\ndata: ", 7);
    memcpy(p += 7, head, hl);
    e->body_off = (size_t)(p + hl - e->text);
    e->body_len = body_len;
    memcpy(p += hl, body, body_len);
    memcpy(p += body_len, tail, tl);
    memcpy(p += tl, "\n\n", 3);
    e->len = len;
    return e;
}

void tscope__dash_event_ref(struct tscope__dash_event *e)
{
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

void tscope__dash_event_unref(struct tscope__dash_event *e)
{
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
        free(e);
}

struct tscope__dash_listener {
    struct tscope__dash_hub *hub;
    struct tscope__dash_listener *prev, *next;
    pthread_cond_t wake;
    struct tscope__dash_event *queue[TSCOPE__DASH_LISTENER_EVENTS]; /* a ring */
    size_t head, count, bytes;
    size_t given;          /* bytes of queue[head] already read */
    unsigned long dropped; /* events dropped and not yet said */
    char note[64];         /* a comment or field being read, outside the queue */
    size_t note_len, note_given;
    struct timespec next_read; /* paced: not before (when the last read emptied the queue) */
};

struct tscope__dash_hub {
    pthread_mutex_t lock;
    struct tscope__dash_listener *first;
    int listeners, stopped;
};

struct tscope__dash_hub *tscope__dash_hub_new(void)
{
    struct tscope__dash_hub *h = calloc(1, sizeof *h);
    if (h && pthread_mutex_init(&h->lock, NULL) != 0) {
        free(h);
        return NULL;
    }
    return h;
}

void tscope__dash_hub_publish(struct tscope__dash_hub *h, struct tscope__dash_event *e)
{
    pthread_mutex_lock(&h->lock);
    for (struct tscope__dash_listener *l = h->first; l; l = l->next) {
        if (l->count == TSCOPE__DASH_LISTENER_EVENTS ||
            l->bytes + e->len > TSCOPE__DASH_LISTENER_BYTES) {
            l->dropped++;
            continue;
        }
        tscope__dash_event_ref(e);
        l->queue[(l->head + l->count++) % TSCOPE__DASH_LISTENER_EVENTS] = e;
        l->bytes += e->len;
        pthread_cond_signal(&l->wake);
    }
    pthread_mutex_unlock(&h->lock);
}

void tscope__dash_hub_stop(struct tscope__dash_hub *h)
{
    pthread_mutex_lock(&h->lock);
    h->stopped = 1;
    for (struct tscope__dash_listener *l = h->first; l; l = l->next)
        pthread_cond_broadcast(&l->wake);
    pthread_mutex_unlock(&h->lock);
}

void tscope__dash_hub_free(struct tscope__dash_hub *h)
{
    if (!h)
        return;
    /* libmicrohttpd closed every stream before: no listener is left */
    pthread_mutex_destroy(&h->lock);
    free(h);
}

static void set_note(struct tscope__dash_listener *l, const char *text)
{
    l->note_len = strlen(text);
    if (l->note_len >= sizeof l->note)
        l->note_len = sizeof l->note - 1;
    memcpy(l->note, text, l->note_len);
    l->note_given = 0;
}

struct tscope__dash_listener *tscope__dash_listen(struct tscope__dash_hub *h)
{
    struct tscope__dash_listener *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&l->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0) {
        free(l);
        return NULL;
    }
    l->hub = h;
    /* the browser's EventSource reconnects after 1 s when a stream ends */
    set_note(l, "retry: 1000\n\n");
    pthread_mutex_lock(&h->lock);
    if (h->stopped || h->listeners >= TSCOPE__DASH_MAX_LISTENERS) {
        pthread_mutex_unlock(&h->lock);
        pthread_cond_destroy(&l->wake);
        free(l);
        return NULL;
    }
    l->next = h->first;
    if (h->first)
        h->first->prev = l;
    h->first = l;
    h->listeners++;
    pthread_mutex_unlock(&h->lock);
    return l;
}

/* Copies what is ready (the note, then queued events) into buf[0, max):
 * the bytes written.  Called with the hub locked. */
static size_t fill(struct tscope__dash_listener *l, char *buf, size_t max)
{
    size_t w = 0;
    while (w < max) {
        if (l->note_given < l->note_len) {
            size_t k = l->note_len - l->note_given;
            if (k > max - w)
                k = max - w;
            memcpy(buf + w, l->note + l->note_given, k);
            l->note_given += k;
            w += k;
            continue;
        }
        if (l->dropped && l->given == 0) {
            char text[64];
            snprintf(text, sizeof text, ": dropped %lu events\n\n", l->dropped);
            set_note(l, text);
            l->dropped = 0;
            continue;
        }
        if (l->count == 0)
            break;
        struct tscope__dash_event *e = l->queue[l->head];
        size_t k = e->len - l->given;
        if (k > max - w)
            k = max - w;
        memcpy(buf + w, e->text + l->given, k);
        l->given += k;
        w += k;
        if (l->given == e->len) {
            l->head = (l->head + 1) % TSCOPE__DASH_LISTENER_EVENTS;
            l->count--;
            l->bytes -= e->len;
            l->given = 0;
            tscope__dash_event_unref(e);
        }
    }
    return w;
}

ssize_t tscope__dash_listener_read(struct tscope__dash_listener *l, char *buf, size_t max)
{
    struct tscope__dash_hub *h = l->hub;
    struct timespec deadline;
    /* next_read is this reader's own: no lock needed to read it */
    while (l->next_read.tv_sec &&
           clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &l->next_read, NULL) == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += TSCOPE__DASH_KEEPALIVE_S;
    ssize_t w = 0;
    pthread_mutex_lock(&h->lock);
    while (!h->stopped) {
        w = (ssize_t)fill(l, buf, max);
        if (w > 0 || max == 0)
            break;
        if (pthread_cond_timedwait(&l->wake, &h->lock, &deadline) == ETIMEDOUT && l->count == 0) {
            set_note(l, ": keepalive\n\n");
            clock_gettime(CLOCK_MONOTONIC, &deadline);
            deadline.tv_sec += TSCOPE__DASH_KEEPALIVE_S;
        }
    }
    if (h->stopped)
        w = -1; /* MHD_CONTENT_READER_END_OF_STREAM */
    int drained = l->count == 0 && l->note_given == l->note_len;
    pthread_mutex_unlock(&h->lock);
    l->next_read.tv_sec = 0;
    if (w > 0 && drained) {
        clock_gettime(CLOCK_MONOTONIC, &l->next_read);
        l->next_read.tv_nsec += READ_ROUND_MS * 1000000L;
        if (l->next_read.tv_nsec >= 1000000000L) {
            l->next_read.tv_sec++;
            l->next_read.tv_nsec -= 1000000000L;
        }
    }
    return w;
}

void tscope__dash_listener_close(struct tscope__dash_listener *l)
{
    if (!l)
        return;
    struct tscope__dash_hub *h = l->hub;
    pthread_mutex_lock(&h->lock);
    if (l->prev)
        l->prev->next = l->next;
    else
        h->first = l->next;
    if (l->next)
        l->next->prev = l->prev;
    h->listeners--;
    pthread_mutex_unlock(&h->lock);
    for (size_t i = 0; i < l->count; i++)
        tscope__dash_event_unref(l->queue[(l->head + i) % TSCOPE__DASH_LISTENER_EVENTS]);
    pthread_cond_destroy(&l->wake);
    free(l);
}
