/* dashboard_guard.c - the HTTP side's bounds on its connections
 * (docs/dashboard.md, "Limits"), so that slow or idle clients cannot hold
 * the page from others.
 *
 * libmicrohttpd bounds the connections and times out idle ones, but its
 * timeout restarts with every byte: a client sending a byte every few
 * seconds keeps its connection, and enough of them keep everyone else
 * out.  Two rules here close that:
 *   - a deadline: a request must be whole (headers and body) within
 *     request_ms of the connection's opening or of its previous answer's
 *     end, else the connection is cut; while a request is being answered
 *     (a file, an SSE stream) there is none (libmicrohttpd's idle timeout
 *     and the SSE listeners' own bound apply);
 *   - room for newcomers: with limit connections open, a new one cuts the
 *     connection that has waited longest for its request, those that never
 *     carried the token (X-Taskscope-Token) first.  A browser's request is
 *     whole within milliseconds, so it always gets in; a client that holds
 *     a connection without finishing its request is the one cut.  No bound
 *     per address: browsers behind `ssh -L` share one.
 * libmicrohttpd's own limit (slots) is set above limit, so that a new
 * connection is not refused while the one it cut is still closing.
 *
 * Cutting is shutdown() of the connection's socket: its libmicrohttpd
 * thread sees the end and closes the connection as if the client had.
 * The socket stays open until libmicrohttpd's CLOSED notification, which
 * comes before it closes it, so under the lock a tracked socket is always
 * the connection's own.
 *
 * Concurrency: one mutex guards the table; the callbacks run in
 * libmicrohttpd's threads (the listening one: accept, notify; a
 * connection's own: answering, answered), the deadline thread wakes at the
 * earliest deadline (at most request_ms after it last slept: every new
 * deadline is at least that far).  Nothing is said on stderr: idle
 * browsers are cut routinely.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "dashboard_guard.h"

struct tracked {
    int used, fd;
    int cut;            /* shut down: closing, counted no more */
    int answering;      /* its request is whole, being answered */
    int authenticated;  /* a request of it carried the token */
    long long since_ms; /* its current request's deadline counts from here */
};

struct tscope__dash_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int stop;
    unsigned request_ms, limit;
    size_t nslots;
    struct tracked slots[];
};

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void cut(struct tracked *t)
{
    shutdown(t->fd, SHUT_RDWR);
    t->cut = 1;
}

/* Cuts the connections past their deadline; the earliest deadline left,
 * or -1.  Lock held. */
static long long cut_late(struct tscope__dash_guard *g)
{
    long long now = now_ms(), next = -1;
    for (size_t i = 0; i < g->nslots; i++) {
        struct tracked *t = &g->slots[i];
        if (!t->used || t->cut || t->answering)
            continue;
        long long due = t->since_ms + g->request_ms;
        if (now >= due)
            cut(t);
        else if (next < 0 || due < next)
            next = due;
    }
    return next;
}

static void *deadline_main(void *arg)
{
    struct tscope__dash_guard *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        long long next = cut_late(g), latest = now_ms() + g->request_ms;
        if (next < 0 || next > latest)
            next = latest;
        struct timespec until = {.tv_sec = next / 1000, .tv_nsec = (next % 1000) * 1000000};
        pthread_cond_timedwait(&g->wake, &g->lock, &until);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

struct tscope__dash_guard *tscope__dash_guard_new(unsigned request_ms, unsigned limit,
                                                  unsigned slots)
{
    struct tscope__dash_guard *g = calloc(1, sizeof *g + slots * sizeof g->slots[0]);
    pthread_condattr_t attr;
    int ok = g && pthread_condattr_init(&attr) == 0;
    if (ok) {
        ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&g->wake, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (ok && pthread_mutex_init(&g->lock, NULL) != 0) {
        pthread_cond_destroy(&g->wake);
        ok = 0;
    }
    if (ok) {
        g->request_ms = request_ms;
        g->limit = limit;
        g->nslots = slots;
        if (pthread_create(&g->thread, NULL, deadline_main, g) != 0) {
            pthread_cond_destroy(&g->wake);
            pthread_mutex_destroy(&g->lock);
            ok = 0;
        }
    }
    if (!ok) {
        fprintf(stderr, "taskscope dashboard: cannot start the HTTP connections' deadlines\n");
        free(g);
        return NULL;
    }
    return g;
}

void tscope__dash_guard_free(struct tscope__dash_guard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

enum MHD_Result tscope__dash_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    struct tscope__dash_guard *g = cls;
    (void)addr;
    (void)len;
    pthread_mutex_lock(&g->lock);
    size_t open = 0;
    struct tracked *oldest = NULL;
    for (size_t i = 0; i < g->nslots; i++) {
        struct tracked *t = &g->slots[i];
        if (!t->used || t->cut)
            continue;
        open++;
        if (!t->answering &&
            (!oldest || t->authenticated < oldest->authenticated ||
             (t->authenticated == oldest->authenticated && t->since_ms < oldest->since_ms)))
            oldest = t;
    }
    int room = open < g->limit;
    if (!room && oldest) {
        cut(oldest);
        room = 1;
    }
    pthread_mutex_unlock(&g->lock);
    return room ? MHD_YES : MHD_NO;
}

void tscope__dash_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                               enum MHD_ConnectionNotificationCode code)
{
    struct tscope__dash_guard *g = cls;
    pthread_mutex_lock(&g->lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct tracked *t = NULL;
        for (size_t i = 0; info && !t && i < g->nslots; i++)
            if (!g->slots[i].used)
                t = &g->slots[i];
        if (t)
            *t = (struct tracked){.used = 1, .fd = info->connect_fd, .since_ms = now_ms()};
        else if (info)
            shutdown(info->connect_fd, SHUT_RDWR); /* no room to track it: not kept */
        *socket_context = t;
    } else if (*socket_context) {
        ((struct tracked *)*socket_context)->used = 0;
        *socket_context = NULL;
    }
    pthread_mutex_unlock(&g->lock);
}

/* conn's entry, with g locked; NULL when it is not tracked (then nothing
 * is locked). */
static struct tracked *entry(struct tscope__dash_guard *g, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct tracked *t = info ? info->socket_context : NULL;
    if (t)
        pthread_mutex_lock(&g->lock);
    return t;
}

void tscope__dash_guard_answering(struct tscope__dash_guard *g, struct MHD_Connection *conn,
                                  int authenticated)
{
    struct tracked *t = entry(g, conn);
    if (!t)
        return;
    t->answering = 1;
    t->authenticated |= authenticated;
    pthread_mutex_unlock(&g->lock);
}

void tscope__dash_guard_answered(struct tscope__dash_guard *g, struct MHD_Connection *conn)
{
    struct tracked *t = entry(g, conn);
    if (!t)
        return;
    t->answering = 0;
    t->since_ms = now_ms();
    pthread_mutex_unlock(&g->lock);
}
