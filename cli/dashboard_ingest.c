/* dashboard_ingest.c - the ingest thread: every measured process's TCP
 * connection, read and written with poll() on non-blocking sockets.
 *
 * One thread owns the listening socket, every connection and its buffers;
 * nothing else touches them, so they need no lock.  Per connection: an
 * input buffer that grows to hold one whole frame (at most the protocol's
 * TSCOPE__LIVE_FRAME_MAX), parsed with tscope__live_parse; each frame goes
 * to the store (HELLO, SNAPSHOT, ACK); a bad one (magic, version, size)
 * ends that connection with one line on stderr, the others go on.  Reading
 * is bounded per connection and wake-up (READ_BUDGET), so one fast sender
 * cannot starve the rest.
 *
 * Commands come from the HTTP threads through a mutex-guarded queue
 * (bounded: MAX_PENDING requests) and a self-pipe that wakes poll(); the
 * thread copies each COMMAND frame into its target connections' output
 * buffers (bounded: OUT_MAX; a process that does not read its commands
 * loses new ones, said on stderr) and sends them as the sockets allow.
 *
 * Connections are bounded (docs/dashboard.md, "Limits"), and none can be
 * held: a connection is unauthenticated until its process proved it knows
 * the secret (authenticate(), below).  At most
 * UNAUTH_MAX are unauthenticated at a time (a new one closes the oldest of
 * them that has had a round to authenticate: processes authenticate at
 * once, so the oldest is one holding on; with none such, new ones wait in
 * the listening socket's backlog for the next round), each must authenticate within
 * limits.ingest_auth_ms, and may hold at most UNAUTH_IN_MAX of a frame; authenticated ones are
 * bounded by the store's TSCOPE__DASH_MAX_PROCESSES, MAX_CONNS in all.  A frame must be whole
 * within limits.ingest_frame_ms of its first byte, an authenticated connection closes after
 * limits.ingest_idle_ms without a byte.  The input buffers grow with what has arrived (FIONREAD),
 * never with what a header claims, are freed once they hold no unfinished frame, and together stay
 * within limits.frame_memory (a quarter of --memory): a buffer that would
 * pass it closes the connection whose unfinished frame is the oldest
 * (possibly the one growing).  Each of these
 * closes says one line, at most one of a kind per SAY_EVERY_MS (then how
 * many more).  When accept() runs out of file descriptors, accepting
 * pauses for a second rather than spinning.
 *
 * Authentication (src/live/auth.h): a connection begins with the handshake
 * and becomes authenticated (authenticate()) only when the process proved
 * it knows the secret; before that no frame reaches the store, so the
 * process is never listed.  After it, every frame's sequence number and MAC
 * are checked (tscope__live_open) and every COMMAND is sealed for its
 * connection.  A peer that fails either is dropped with one line naming it.
 *
 * Cost: the processes' snapshots arrive spread out (64 processes at 10/s
 * are 640 frames a second at random times), so waking for each would pay
 * a poll() over every socket per frame.  Rounds are paced instead: a round
 * begins at most every ROUND_MS (20 ms: a fifth of the default snapshot period,
 * and what the kernel's socket buffers hold meanwhile is small), so one
 * poll() serves all that arrived in between.  A command or a stop waits at
 * most that long.  Measured on a 2-core VM, 64 fake processes
 * (tests/live/fakeproc.c) at 10 snapshots/s of 4.6 KB: the dashboard used
 * 3.2% of a core (3.7% with 20 ms rounds), 3.6% with a browser's SSE
 * stream open, and each /metrics scrape costs ~25 ms more (jansson parses
 * the 64 latest snapshots); with 0.8 KB snapshots, an SSE stream and a
 * scrape every second 2.6% (9.4% when every frame woke the thread and
 * jansson parsed every snapshot).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dashboard.h"
#include "offline/wire.h"

#define UNAUTH_MAX 64
#define MAX_CONNS (TSCOPE__DASH_MAX_PROCESSES + UNAUTH_MAX)
#define MAX_PENDING 1024
#define OUT_MAX (4u << 20)
#define IN_CHUNK (64u << 10)      /* read at a time beyond the frame begun */
#define UNAUTH_IN_MAX (64u << 10) /* an unauthenticated connection's buffer */
#define READ_BUDGET (1u << 20)
#define ROUND_MS 20 /* at most one round of poll() per ROUND_MS */
#define SAY_EVERY_MS 10000

struct conn {
    int fd;
    long proc;         /* the store's process id once HELLO came, else 0 */
    int authenticated; /* the process proved it knows the secret: authenticate() */
    int challenged;    /* its CHALLENGE came and ours went */
    struct tscope__live_session sess;
    int closing; /* made room for another's frame: closed at the next round */
    int polled;  /* was in a round's poll(): had its chance to be read */
    long long opened_ms, last_ms, frame_ms; /* accepted, last byte, unfinished frame's first
                                             * byte (0: none); CLOCK_MONOTONIC */
    char peer[72];
    unsigned char *in;
    size_t in_len, in_cap;
    unsigned char *out;
    size_t out_off, out_len, out_cap;
    int said_early, said_bad_json, said_full;
};

/* The kinds of lines said at most once per SAY_EVERY_MS. */
enum say_kind {
    SAY_EVICTED,
    SAY_AUTH_LATE,
    SAY_FRAME_LATE,
    SAY_IDLE,
    SAY_MEMORY,
    SAY_UNAUTH_BIG,
    SAY_KINDS
};

struct pending {
    struct pending *next;
    size_t nids, len;
    long *ids;
    unsigned char *frame;
};

struct tscope__dash_ingest {
    struct tscope__dash_store *store;
    unsigned char secret[TSCOPE__LIVE_SECRET];
    int listen_fd, wake_r, wake_w;
    pthread_t thread;
    pthread_mutex_t lock; /* guards pending, npending and stop */
    struct pending *pending, **pending_tail;
    size_t npending;
    int stop;
    int running; /* the thread was started */
    /* the thread's own */
    struct conn *conns;
    size_t nconns;
    struct pollfd *pfds;
    struct timespec accept_paused_until, last_round;
    int said_too_many;
    struct tscope__dash_limits limits;
    size_t nunauth; /* connections not authenticated */
    size_t in_held; /* the input buffers' bytes (in_cap), within limits.frame_memory */
    struct {
        long long last_ms;
        unsigned quiet; /* not said since */
    } said[SAY_KINDS];
};

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* One line "taskscope dashboard: PEER: TEXT", unless one of its kind was
 * said less than SAY_EVERY_MS ago (then counted, and said with the next). */
static void say(struct tscope__dash_ingest *g, enum say_kind kind, const char *peer,
                const char *fmt, ...)
{
    long long now = now_ms();
    if (g->said[kind].last_ms && now - g->said[kind].last_ms < SAY_EVERY_MS) {
        g->said[kind].quiet++;
        return;
    }
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (g->said[kind].quiet)
        fprintf(stderr, "taskscope dashboard: %s: %s (and %u more like it since the last)\n", peer,
                text, g->said[kind].quiet);
    else
        fprintf(stderr, "taskscope dashboard: %s: %s\n", peer, text);
    g->said[kind].last_ms = now;
    g->said[kind].quiet = 0;
}

/* Frees c's input buffer (it holds no unfinished frame, or c is closing). */
static void conn_drop_input(struct tscope__dash_ingest *g, struct conn *c)
{
    g->in_held -= c->in_cap;
    free(c->in);
    c->in = NULL;
    c->in_len = c->in_cap = 0;
    c->frame_ms = 0;
}

static void conn_close(struct tscope__dash_ingest *g, size_t i)
{
    struct conn *c = &g->conns[i];
    close(c->fd);
    if (c->proc)
        tscope__dash_store_gone(g->store, c->proc);
    if (!c->authenticated)
        g->nunauth--;
    conn_drop_input(g, c);
    free(c->out);
    tscope__live_session_clear(&c->sess);
    g->conns[i] = g->conns[--g->nconns];
}

static void peer_name(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN], port[8];
    if (getnameinfo((const struct sockaddr *)sa, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(out, cap, "a process");
    else if (sa->ss_family == AF_INET6)
        snprintf(out, cap, "[%s]:%s", host, port);
    else
        snprintf(out, cap, "%s:%s", host, port);
}

/* The oldest unauthenticated connection that has had a round to
 * authenticate (its index), or g->nconns when there is none. */
static size_t oldest_unauth(struct tscope__dash_ingest *g)
{
    size_t oldest = g->nconns;
    for (size_t i = 0; i < g->nconns; i++)
        if (!g->conns[i].authenticated && g->conns[i].polled &&
            (oldest == g->nconns || g->conns[i].opened_ms < g->conns[oldest].opened_ms))
            oldest = i;
    return oldest;
}

static void accept_all(struct tscope__dash_ingest *g)
{
    for (;;) {
        /* no room for one more unauthenticated connection, and none that
         * has had its round to give way: the rest wait in the backlog */
        if (g->nunauth == UNAUTH_MAX && oldest_unauth(g) == g->nconns)
            return;
        struct sockaddr_storage sa;
        socklen_t len = sizeof sa;
        int fd = accept4(g->listen_fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                fprintf(stderr,
                        "taskscope dashboard: cannot accept a process: %s; "
                        "pausing for a second\n",
                        strerror(errno));
                clock_gettime(CLOCK_MONOTONIC, &g->accept_paused_until);
                g->accept_paused_until.tv_sec += 1;
            }
            return; /* EAGAIN, or the connection went away before we took it */
        }
        if (g->nconns == MAX_CONNS) {
            if (!g->said_too_many)
                fprintf(stderr,
                        "taskscope dashboard: %d process connections already: refusing "
                        "more\n",
                        MAX_CONNS);
            g->said_too_many = 1;
            close(fd);
            continue;
        }
        g->said_too_many = 0;
        if (g->nunauth == UNAUTH_MAX) {
            size_t oldest = oldest_unauth(g);
            say(g, SAY_EVICTED, g->conns[oldest].peer,
                "%d connections are not authenticated: closed the oldest of them", UNAUTH_MAX);
            conn_close(g, oldest);
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = &g->conns[g->nconns++];
        long long now = now_ms();
        *c = (struct conn){.fd = fd, .opened_ms = now, .last_ms = now};
        g->nunauth++;
        tscope__live_session_begin(&c->sess, TSCOPE__LIVE_SIDE_DASHBOARD, g->secret, NULL);
        peer_name(&sa, len, c->peer, sizeof c->peer);
    }
}

/* Appends bytes[0, n) to what c has to send: where they are in c->out, or
 * NULL (out of memory, or OUT_MAX reached: *full). */
static unsigned char *conn_put(struct conn *c, const unsigned char *bytes, size_t n, int *full)
{
    *full = 0;
    if (c->out_off) {
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    if (c->out_len + n > OUT_MAX) {
        *full = 1;
        return NULL;
    }
    if (c->out_cap < c->out_len + n) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + n)
            cap *= 2;
        unsigned char *out = realloc(c->out, cap);
        if (!out)
            return NULL;
        c->out = out;
        c->out_cap = cap;
    }
    unsigned char *at = c->out + c->out_len;
    memcpy(at, bytes, n);
    c->out_len += n;
    return at;
}

/* The one place a connection becomes authenticated: its process proved it
 * knows the secret (the handshake of src/live/auth.h).  From here on its
 * frames reach the store. */
static void authenticate(struct tscope__dash_ingest *g, struct conn *c)
{
    if (!c->authenticated) {
        c->authenticated = 1;
        g->nunauth--;
    }
}

/* A handshake frame of c, not yet authenticated: 0, or -1 after one line
 * (the connection is to be closed). */
static int handshake(struct tscope__dash_ingest *g, struct conn *c,
                     const struct tscope__live_frame *f)
{
    if (!c->challenged) {
        unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES];
        int full;
        if (tscope__live_session_challenged(&c->sess, f, mine) != 0) {
            fprintf(stderr,
                    "taskscope dashboard: %s: did not prove it knows the secret (it began "
                    "without the challenge: an older taskscope, or not a taskscope process); "
                    "connection closed\n",
                    c->peer);
            return -1;
        }
        if (!conn_put(c, mine, sizeof mine, &full)) {
            fprintf(stderr, "taskscope dashboard: %s: out of memory; connection closed\n", c->peer);
            return -1;
        }
        c->challenged = 1;
        return 0;
    }
    if (tscope__live_session_proven(&c->sess, f) != 0) {
        fprintf(stderr,
                "taskscope dashboard: %s: did not prove it knows the secret (%s); connection "
                "closed\n",
                c->peer,
                f->kind == TSCOPE__LIVE_PROOF
                    ? "a wrong proof: its TASKSCOPE_LIVE has another secret, or it replays "
                      "another connection"
                    : "no proof after the challenge");
        return -1;
    }
    authenticate(g, c);
    return 0;
}

/* One whole frame of c: 0, or -1 to close the connection. */
static int handle_frame(struct tscope__dash_ingest *g, struct conn *c,
                        const struct tscope__live_frame *f)
{
    if (f->kind == TSCOPE__LIVE_HELLO) {
        long id = tscope__dash_store_hello(g->store, c->proc, c->peer, f->payload, f->len);
        if (id > 0) {
            c->proc = id;
            return 0;
        }
        if (id == 0)
            fprintf(stderr,
                    "taskscope dashboard: %s: refused: %d processes are connected "
                    "already\n",
                    c->peer, TSCOPE__DASH_MAX_PROCESSES);
        else if (id == -1)
            fprintf(stderr,
                    "taskscope dashboard: %s: a HELLO that is not a JSON object; "
                    "connection closed\n",
                    c->peer);
        else
            fprintf(stderr, "taskscope dashboard: %s: out of memory; connection closed\n", c->peer);
        return -1;
    }
    if (f->kind != TSCOPE__LIVE_SNAPSHOT && f->kind != TSCOPE__LIVE_ACK)
        return 0; /* a COMMAND from a process: not its to send */
    if (!c->proc) {
        if (!c->said_early)
            fprintf(stderr, "taskscope dashboard: %s: frames before its HELLO; ignored\n", c->peer);
        c->said_early = 1;
        return 0;
    }
    int rc = f->kind == TSCOPE__LIVE_SNAPSHOT
                 ? tscope__dash_store_snapshot(g->store, c->proc, f->payload, f->len)
                 : tscope__dash_store_ack(g->store, c->proc, f->payload, f->len);
    if (rc == -1 && !c->said_bad_json) {
        fprintf(stderr, "taskscope dashboard: %s: a %s that is not a JSON object; ignored\n",
                c->peer, f->kind == TSCOPE__LIVE_SNAPSHOT ? "snapshot" : "ACK");
        c->said_bad_json = 1;
    }
    return 0;
}

/* The connection whose unfinished frame goes first when the frames'
 * memory is short: the oldest frame, among those holding one and c (whose
 * frame may be only beginning: then it is the newest).  A sender's frame
 * is whole in milliseconds, so the oldest is one being held. */
static struct conn *frame_victim(struct tscope__dash_ingest *g, struct conn *c, long long now)
{
    struct conn *v = c;
    long long v_ms = c->frame_ms ? c->frame_ms : now;
    for (size_t i = 0; i < g->nconns; i++) {
        struct conn *o = &g->conns[i];
        if (o != c && !o->closing && o->in_cap && o->frame_ms < v_ms) {
            v = o;
            v_ms = o->frame_ms;
        }
    }
    return v;
}

/* Grows c's buffer to hold need bytes (frame_end: where the frame begun
 * ends, 0 when its header is not in yet), within the limits (see the
 * file's top; an unauthenticated c's frame and need at most
 * UNAUTH_IN_MAX): 0, or -1 when c is to be closed (said). */
static int conn_room(struct tscope__dash_ingest *g, struct conn *c, size_t need, size_t frame_end)
{
    if (!c->authenticated && (frame_end > UNAUTH_IN_MAX || need > UNAUTH_IN_MAX)) {
        say(g, SAY_UNAUTH_BIG, c->peer,
            "a frame of more than %u KiB before it was authenticated; connection closed",
            UNAUTH_IN_MAX >> 10);
        return -1;
    }
    if (need <= c->in_cap)
        return 0;
    /* doubling, but never past the frame begun: a header's claim alone
     * takes no memory */
    size_t cap = c->in_cap * 2, limit = frame_end > need ? frame_end : need;
    if (cap > limit)
        cap = limit;
    if (cap < need)
        cap = need;
    long long now = now_ms();
    while (g->in_held - c->in_cap + cap > g->limits.frame_memory) {
        struct conn *v = frame_victim(g, c, now);
        say(g, SAY_MEMORY, v->peer,
            "the frames being received would pass their %zu KiB (a quarter of --memory); "
            "closed the connection with the oldest unfinished frame",
            g->limits.frame_memory >> 10);
        if (v == c)
            return -1;
        conn_drop_input(g, v);
        v->closing = 1;
    }
    unsigned char *in = realloc(c->in, cap);
    if (!in) {
        fprintf(stderr, "taskscope dashboard: %s: out of memory; connection closed\n", c->peer);
        return -1;
    }
    g->in_held += cap - c->in_cap;
    c->in = in;
    c->in_cap = cap;
    return 0;
}

/* After c's whole frames were taken (some: any taken now): when its
 * unfinished frame began; an empty buffer is freed. */
static void conn_frame_mark(struct tscope__dash_ingest *g, struct conn *c, int some)
{
    if (!c->in_len)
        conn_drop_input(g, c);
    else if (some || !c->frame_ms)
        c->frame_ms = now_ms();
}

/* Reads what c has (within READ_BUDGET) and handles its whole frames: 0,
 * or -1 when the connection is to be closed. */
static int conn_read(struct tscope__dash_ingest *g, struct conn *c)
{
    size_t budget = READ_BUDGET;
    for (;;) {
        struct tscope__live_frame f;
        size_t used = 0;
        enum tscope__live_parse r = TSCOPE__LIVE_MORE;
        /* whole frames first */
        size_t off = 0;
        while (off < c->in_len) {
            r = tscope__live_parse(c->in + off, c->in_len - off, &f, &used);
            if (r == TSCOPE__LIVE_MORE)
                break;
            if (r < 0) {
                fprintf(stderr, "taskscope dashboard: %s: %s%s%s; connection closed\n", c->peer,
                        c->authenticated ? "" : "did not prove it knows the secret (",
                        tscope__live_parse_text(r), c->authenticated ? "" : ")");
                return -1;
            }
            const char *why;
            if (!c->authenticated) {
                if (handshake(g, c, &f) != 0)
                    return -1;
            } else if (tscope__live_open(&c->sess, c->in + off, used, &f, &why) != 0) {
                fprintf(stderr, "taskscope dashboard: %s: %s; connection closed\n", c->peer, why);
                return -1;
            } else if (r == TSCOPE__LIVE_OK && handle_frame(g, c, &f) != 0) {
                return -1;
            }
            off += used;
        }
        if (off) {
            memmove(c->in, c->in + off, c->in_len - off);
            c->in_len -= off;
        }
        size_t frame_end = 0;
        if (c->in_len >= TSCOPE__LIVE_HEADER && r == TSCOPE__LIVE_MORE)
            frame_end = TSCOPE__LIVE_FRAME_BYTES(f.len); /* the frame begun */
        conn_frame_mark(g, c, off != 0);
        if (budget == 0)
            return 0;
        /* room for what has arrived (at least a byte, to see an end):
         * the rest of the frame begun, else IN_CHUNK at a time */
        int avail = 0;
        if (ioctl(c->fd, FIONREAD, &avail) != 0 || avail < 1)
            avail = 1;
        size_t want = (size_t)avail < budget ? (size_t)avail : budget;
        size_t step = frame_end > c->in_len + IN_CHUNK ? frame_end - c->in_len : IN_CHUNK;
        if (want > step)
            want = step;
        if (!c->authenticated && c->in_len < UNAUTH_IN_MAX && want > UNAUTH_IN_MAX - c->in_len)
            want = UNAUTH_IN_MAX - c->in_len;
        if (conn_room(g, c, c->in_len + want, frame_end) != 0)
            return -1;
        ssize_t n = recv(c->fd, c->in + c->in_len, want, 0);
        if (n == 0) { /* the process closed its end */
            if (!c->authenticated)
                fprintf(stderr,
                        "taskscope dashboard: %s: closed the connection without proving it "
                        "knows the secret%s\n",
                        c->peer,
                        c->challenged ? " (our proof did not convince it: its TASKSCOPE_LIVE "
                                        "has another secret)"
                                      : "");
            return -1;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return -1;
            conn_frame_mark(g, c, 0);
            return 0;
        }
        c->in_len += (size_t)n;
        c->last_ms = now_ms();
        budget -= (size_t)n;
    }
}

/* Sends what c has queued: 0, or -1 when the connection broke. */
static int conn_write(struct conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        c->out_off += (size_t)n;
    }
    c->out_off = c->out_len = 0;
    return 0;
}

/* Queues command p for c (authenticated: it has a process), sealed with
 * its connection's next sequence number. */
static void conn_queue(struct conn *c, const struct pending *p)
{
    int full;
    unsigned char *at = conn_put(c, p->frame, p->len, &full);
    if (!at) {
        if (full && !c->said_full)
            fprintf(stderr,
                    "taskscope dashboard: %s does not read its commands: new ones "
                    "are dropped\n",
                    c->peer);
        c->said_full |= full;
        return;
    }
    tscope__live_seal(&c->sess, ++c->sess.send_seq, at, p->len);
    c->said_full = 0;
}

static void pending_free(struct pending *p)
{
    free(p->ids);
    free(p->frame);
    free(p);
}

/* Takes the queued commands into the connections' output buffers; returns
 * whether to stop. */
static int take_commands(struct tscope__dash_ingest *g)
{
    char drain[64];
    while (read(g->wake_r, drain, sizeof drain) > 0)
        ;
    pthread_mutex_lock(&g->lock);
    struct pending *list = g->pending;
    int stop = g->stop;
    g->pending = NULL;
    g->pending_tail = &g->pending;
    g->npending = 0;
    pthread_mutex_unlock(&g->lock);
    while (list) {
        struct pending *p = list;
        list = p->next;
        for (size_t k = 0; k < p->nids; k++)
            for (size_t i = 0; i < g->nconns; i++)
                if (g->conns[i].proc == p->ids[k])
                    conn_queue(&g->conns[i], p);
        pending_free(p);
    }
    return stop;
}

static int accept_paused(struct tscope__dash_ingest *g, int *timeout_ms)
{
    if (!g->accept_paused_until.tv_sec)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ms = (g->accept_paused_until.tv_sec - now.tv_sec) * 1000LL +
                   (g->accept_paused_until.tv_nsec - now.tv_nsec) / 1000000;
    if (ms <= 0) {
        g->accept_paused_until.tv_sec = 0;
        return 0;
    }
    *timeout_ms = (int)ms + 1;
    return 1;
}

/* Sleeps until ROUND_MS after the last round began: see the file's top. */
static void pace(struct tscope__dash_ingest *g)
{
    struct timespec next = g->last_round;
    next.tv_nsec += ROUND_MS * 1000000L;
    if (next.tv_nsec >= 1000000000L) {
        next.tv_sec++;
        next.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
        ;
}

/* Closes the connections made room for (closing) and those past a
 * deadline (see the file's top), each said; the earliest deadline left
 * (CLOCK_MONOTONIC ms), or -1 when there is none. */
static long long close_late(struct tscope__dash_ingest *g)
{
    const struct tscope__dash_limits *l = &g->limits;
    long long now = now_ms(), next = -1;
    for (size_t i = g->nconns; i-- > 0;) {
        struct conn *c = &g->conns[i];
        long long auth = c->opened_ms + l->ingest_auth_ms, frame = c->frame_ms + l->ingest_frame_ms,
                  idle = c->last_ms + l->ingest_idle_ms;
        int late = 1;
        if (c->closing)
            ;
        else if (!c->authenticated && now >= auth)
            say(g, SAY_AUTH_LATE, c->peer, "not authenticated within %u ms; connection closed",
                l->ingest_auth_ms);
        else if (c->frame_ms && now >= frame)
            say(g, SAY_FRAME_LATE, c->peer,
                "a frame not whole within %u ms of its first byte; connection closed",
                l->ingest_frame_ms);
        else if (c->authenticated && now >= idle)
            say(g, SAY_IDLE, c->peer, "nothing received for %u ms; connection closed",
                l->ingest_idle_ms);
        else
            late = 0;
        if (late) {
            conn_close(g, i);
            continue;
        }
        long long due = c->authenticated ? idle : auth;
        if (c->frame_ms && frame < due)
            due = frame;
        if (next < 0 || due < next)
            next = due;
    }
    return next;
}

static void *ingest_main(void *arg)
{
    struct tscope__dash_ingest *g = arg;
    for (;;) {
        pace(g);
        long long next_deadline = close_late(g);
        int timeout = -1;
        int paused = accept_paused(g, &timeout);
        if (next_deadline >= 0) {
            long long ms = next_deadline - now_ms();
            ms = ms < 0 ? 0 : ms + 1;
            if (timeout < 0 || ms < timeout)
                timeout = (int)ms;
        }
        /* pfds[0]: the wake-up pipe, [1]: the listening socket, then one per connection */
        g->pfds[0] = (struct pollfd){.fd = g->wake_r, .events = POLLIN};
        g->pfds[1] = (struct pollfd){.fd = paused ? -1 : g->listen_fd, .events = POLLIN};
        for (size_t i = 0; i < g->nconns; i++)
            g->pfds[2 + i] =
                (struct pollfd){.fd = g->conns[i].fd,
                                .events = (short)(POLLIN | (g->conns[i].out_len ? POLLOUT : 0))};
        size_t polled = g->nconns;
        if (poll(g->pfds, 2 + polled, timeout) < 0 && errno != EINTR) {
            fprintf(stderr, "taskscope dashboard: poll: %s\n", strerror(errno));
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &g->last_round);
        /* connections first, backwards: closing one moves the last into its place */
        for (size_t i = polled; i-- > 0;) {
            short ev = g->pfds[2 + i].revents;
            struct conn *c = &g->conns[i];
            int bad = 0;
            c->polled = 1;
            if (c->closing)
                continue;
            if (ev & (POLLIN | POLLHUP | POLLERR))
                bad = conn_read(g, c) != 0;
            if (!bad && (ev & POLLOUT))
                bad = conn_write(c) != 0;
            if (bad)
                conn_close(g, i);
        }
        if (g->pfds[1].revents & POLLIN)
            accept_all(g);
        if (take_commands(g))
            break;
        for (size_t i = g->nconns; i-- > 0;)
            if (g->conns[i].out_len && conn_write(&g->conns[i]) != 0)
                conn_close(g, i);
    }
    while (g->nconns)
        conn_close(g, g->nconns - 1);
    return NULL;
}

struct tscope__dash_ingest *tscope__dash_ingest_new(int listen_fd, struct tscope__dash_store *s,
                                                    const unsigned char *secret)
{
    struct tscope__dash_ingest *g = calloc(1, sizeof *g);
    int pipefd[2] = {-1, -1};
    if (!g || !(g->conns = calloc(MAX_CONNS, sizeof *g->conns)) ||
        !(g->pfds = calloc(MAX_CONNS + 2, sizeof *g->pfds)) ||
        pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) != 0 || pthread_mutex_init(&g->lock, NULL) != 0) {
        fprintf(stderr, "taskscope dashboard: cannot start the ingest thread: %s\n",
                strerror(errno ? errno : ENOMEM));
        if (pipefd[0] >= 0) {
            close(pipefd[0]);
            close(pipefd[1]);
        }
        close(listen_fd);
        if (g) {
            free(g->conns);
            free(g->pfds);
            free(g);
        }
        return NULL;
    }
    g->store = s;
    memcpy(g->secret, secret, TSCOPE__LIVE_SECRET);
    g->listen_fd = listen_fd;
    g->wake_r = pipefd[0];
    g->wake_w = pipefd[1];
    g->pending_tail = &g->pending;
    return g;
}

void tscope__dash_ingest_limit(struct tscope__dash_ingest *g, const struct tscope__dash_limits *l)
{
    g->limits = *l;
}

int tscope__dash_ingest_run(struct tscope__dash_ingest *g)
{
    int rc = pthread_create(&g->thread, NULL, ingest_main, g);
    if (rc != 0) {
        fprintf(stderr, "taskscope dashboard: cannot start the ingest thread: %s\n", strerror(rc));
        return -1;
    }
    g->running = 1;
    return 0;
}

static void wake(struct tscope__dash_ingest *g)
{
    char one = 1;
    /* a full pipe already wakes the thread: nothing lost */
    ssize_t n = write(g->wake_w, &one, 1);
    (void)n;
}

int tscope__dash_ingest_send(struct tscope__dash_ingest *g, const long *ids, size_t n,
                             const unsigned char *frame, size_t len)
{
    struct pending *p = calloc(1, sizeof *p);
    if (!p || !(p->ids = malloc((n ? n : 1) * sizeof *ids)) || !(p->frame = malloc(len))) {
        if (p)
            pending_free(p);
        return -1;
    }
    memcpy(p->ids, ids, n * sizeof *ids);
    memcpy(p->frame, frame, len);
    p->nids = n;
    p->len = len;
    pthread_mutex_lock(&g->lock);
    int full = g->npending >= MAX_PENDING || g->stop;
    if (!full) {
        *g->pending_tail = p;
        g->pending_tail = &p->next;
        g->npending++;
    }
    pthread_mutex_unlock(&g->lock);
    if (full) {
        pending_free(p);
        return -1;
    }
    wake(g);
    return 0;
}

void tscope__dash_ingest_stop(struct tscope__dash_ingest *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_mutex_unlock(&g->lock);
    wake(g);
    if (g->running)
        pthread_join(g->thread, NULL);
    while (g->pending) {
        struct pending *p = g->pending;
        g->pending = p->next;
        pending_free(p);
    }
    close(g->listen_fd);
    close(g->wake_r);
    close(g->wake_w);
    pthread_mutex_destroy(&g->lock);
    memset(g->secret, 0, sizeof g->secret);
    free(g->conns);
    free(g->pfds);
    free(g);
}
