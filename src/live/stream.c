/* stream.c - TASKSCOPE_LIVE: a thread of its own that every
 * TASKSCOPE_LIVE_MS takes a snapshot of what taskscope knows, queues it and
 * sends it to `taskscope dashboard` over one TCP connection, and carries
 * out the commands the dashboard sends back (docs/dashboard.md).  This file
 * owns the thread and the connection; what a snapshot or HELLO says is
 * snapshot.c's, the commands command.c's, the frames waiting to go out
 * queue.c's (live_int.h), the debugger debug.c's, the wire format proto.c's.
 *
 * The program's threads never meet this thread: it reads the same
 * introspection API a policy reads (under the store's and the sampler's
 * locks, as they do), and everything that touches the network - connect,
 * send, receive - is non-blocking and on this thread alone.  The queue
 * holds TASKSCOPE_LIVE_QUEUE snapshots; when the dashboard is slow or
 * absent the oldest is dropped and counted ("drops" in the next
 * snapshot).  HELLO and acknowledgements go before snapshots and are never
 * dropped while connected.  A connection that fails or breaks is retried
 * after a backoff (0.1 s doubling to 5 s), said once on stderr when it
 * first fails and once when it comes back.  A frame the dashboard sends
 * that is not one (proto.h) ends the connection, which is then retried.
 *
 * Authentication (auth.h): each connection begins with the handshake; the
 * process sends nothing about itself (HELLO, snapshots) and carries out no
 * command until the peer proved it knows the secret of TASKSCOPE_LIVE.  A
 * peer that does not (a wrong proof, anything else first, no answer within
 * HANDSHAKE_MS) is said once in one line and dropped; the retries go on
 * with the backoff, which only a proven connection resets.  Every frame out
 * is sealed (sequence number, MAC) as it begins to go out; every frame in
 * is checked, and one that fails ends the connection.
 */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "debug.h"
#include "live_int.h"
#include "proto.h"

#define RECV_BYTES (64u << 10) /* commands are small: a larger frame ends the connection */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define HANDSHAKE_MS 10000 /* a peer that has not proven itself by then is dropped */

/* ---- the state ---- */

static struct {
    pthread_t thread;
    int running;
    _Atomic int stop;
    int wake[2]; /* a byte in wake[1] ends the thread's wait */
    char host[256], port[16];
    uint32_t period_ms;
    struct tscope__live_queue out;
    uint64_t seq;
    struct tscope__live_rate rate;
    int fd, connected; /* connected: the TCP connection is made */
    uint64_t next_try_ns;
    uint32_t backoff_ms;
    int said_down;     /* the dashboard's absence was said */
    int said_unproven; /* a peer that did not prove itself was said */
    unsigned char secret[TSCOPE__LIVE_SECRET];
    struct tscope__live_session sess;               /* sess.proven: the peer knows the secret */
    unsigned char hs[TSCOPE__LIVE_CHALLENGE_BYTES]; /* handshake bytes to send */
    size_t hs_len, hs_off;
    uint64_t hs_deadline_ns;
    unsigned char rbuf[RECV_BYTES];
    size_t rlen;
    time_t started;
} L = {.fd = -1, .wake = {-1, -1}};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- what goes out ---- */

static void hello(void)
{
    struct tscope__text t = {0};
    tscope__live_hello(&t, L.started, L.period_ms);
    tscope__live_queue_urgent(&L.out, tscope__live_out_make(TSCOPE__LIVE_HELLO, &t));
}

static void snapshot(void)
{
    struct tscope__text t = {0};
    tscope__live_snapshot(&t, ++L.seq, L.out.drops, &L.rate);
    tscope__live_queue_snapshot(&L.out, tscope__live_out_make(TSCOPE__LIVE_SNAPSHOT, &t));
}

static void run_command(const char *payload, size_t len)
{
    struct tscope__text t = {0};
    tscope__live_command(payload, len, &t);
    tscope__live_queue_urgent(&L.out, tscope__live_out_make(TSCOPE__LIVE_ACK, &t));
}

static int pending(void)
{
    return tscope__live_queue_pending(&L.out);
}

/* ---- the connection ---- */

static void disconnect(const char *why)
{
    if (L.fd >= 0)
        close(L.fd);
    L.fd = -1;
    if (L.connected && !L.said_down)
        fprintf(stderr, "taskscope: live: the dashboard at %s:%s went away (%s); retrying\n",
                L.host, L.port, why);
    if (L.connected)
        tscope__live_debug_release("the dashboard went away");
    L.said_down |= L.connected;
    L.connected = 0;
    L.rlen = 0;
    L.hs_len = L.hs_off = 0;
    L.sess.proven = 0;
    tscope__live_queue_broken(&L.out);
    L.next_try_ns = mono_ns() + (uint64_t)L.backoff_ms * 1000000u;
    L.backoff_ms = L.backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : L.backoff_ms * 2;
}

/* The peer did not prove it knows the secret: said once (not per retry),
 * dropped, retried with the backoff. */
static void unproven(const char *why)
{
    if (!L.said_unproven)
        fprintf(stderr,
                "taskscope: live: %s:%s did not prove it knows the secret (%s); no command of "
                "its is carried out, the program goes on and retries in the background\n",
                L.host, L.port, why);
    L.said_unproven = 1;
    L.said_down = 1; /* not "went away" as well; "connected" once a dashboard proves itself */
    disconnect("");
}

/* The dashboard proved itself: the proof back, then HELLO and the rest. */
static void proven(void)
{
    L.hs_len = TSCOPE__LIVE_PROOF_BYTES;
    L.hs_off = 0;
    if (L.said_down)
        fprintf(stderr, "taskscope: live: connected to the dashboard at %s:%s\n", L.host, L.port);
    L.said_down = L.said_unproven = 0;
    L.backoff_ms = BACKOFF_MIN_MS;
    hello();
}

/* Starts a non-blocking connect; the socket is writable once it is done. */
static void try_connect(void)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(L.host, L.port, &hints, &res);
    if (rc == 0) {
        for (struct addrinfo *a = res; a && L.fd < 0; a = a->ai_next) {
            int fd =
                socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0)
                continue;
            if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS)
                L.fd = fd;
            else
                close(fd);
        }
        freeaddrinfo(res);
    }
    if (L.fd < 0) {
        if (!L.said_down)
            fprintf(stderr,
                    "taskscope: live: cannot reach the dashboard at %s:%s (%s); the program goes "
                    "on, retrying in the background\n",
                    L.host, L.port, rc ? gai_strerror(rc) : strerror(errno));
        L.said_down = 1;
        L.connected = 1; /* for disconnect's backoff; not said twice */
        disconnect("");
        return;
    }
    L.connected = 0;
    tscope__live_queue_broken(&L.out);
}

/* The socket became writable after connect: did it connect? */
static int connect_done(void)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(L.fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
        if (!L.said_down)
            fprintf(stderr,
                    "taskscope: live: cannot reach the dashboard at %s:%s (%s); the program goes "
                    "on, retrying in the background\n",
                    L.host, L.port, strerror(err ? err : errno));
        L.said_down = 1;
        L.connected = 1;
        disconnect("");
        return -1;
    }
    L.connected = 1;
    tscope__live_session_begin(&L.sess, TSCOPE__LIVE_SIDE_PROCESS, L.secret, L.hs);
    L.hs_len = TSCOPE__LIVE_CHALLENGE_BYTES;
    L.hs_off = 0;
    L.hs_deadline_ns = mono_ns() + (uint64_t)HANDSHAKE_MS * 1000000u;
    return 0;
}

/* Sends what it can without waiting: the handshake's bytes, then (once
 * proven) the queue's frames, each sealed with the next sequence number as
 * it begins to go out (again if none of it went: the number is taken only
 * by a frame whose first bytes left). */
static void send_some(void)
{
    while (L.connected && L.hs_off < L.hs_len) {
        ssize_t n = send(L.fd, L.hs + L.hs_off, L.hs_len - L.hs_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                disconnect(strerror(errno));
            return;
        }
        L.hs_off += (size_t)n;
    }
    struct tscope__live_out *f;
    while (L.connected && L.sess.proven && (f = tscope__live_queue_next(&L.out))) {
        size_t at = L.out.sent, len = f->len;
        if (at == 0)
            tscope__live_seal(&L.sess, L.sess.send_seq + 1, (unsigned char *)f->buf, len);
        ssize_t n = send(L.fd, f->buf + at, len - at, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                disconnect(strerror(errno));
            return;
        }
        if (at == 0 && n > 0)
            L.sess.send_seq++;
        tscope__live_queue_sent(&L.out, (size_t)n);
        if (at + (size_t)n < len) /* the socket is full */
            return;
    }
}

static void receive(void)
{
    for (;;) {
        if (L.rlen == sizeof L.rbuf) {
            disconnect("a command larger than 64 KiB");
            return;
        }
        ssize_t n = recv(L.fd, L.rbuf + L.rlen, sizeof L.rbuf - L.rlen, 0);
        if (n == 0) {
            disconnect("it closed the connection");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                disconnect(strerror(errno));
            return;
        }
        L.rlen += (size_t)n;
        size_t off = 0;
        for (;;) {
            struct tscope__live_frame f;
            size_t used;
            enum tscope__live_parse r = tscope__live_parse(L.rbuf + off, L.rlen - off, &f, &used);
            if (r == TSCOPE__LIVE_MORE || (r == TSCOPE__LIVE_OK && used == 0))
                break;
            if (r < 0) {
                if (L.sess.proven)
                    disconnect(tscope__live_parse_text(r));
                else
                    unproven(tscope__live_parse_text(r));
                return;
            }
            if (!L.sess.proven) {
                if (tscope__live_session_answer(&L.sess, &f, L.hs) != 0) {
                    unproven(f.kind == TSCOPE__LIVE_CHALLENGE
                                 ? "its proof is wrong: a different secret"
                                 : "it did not answer the challenge");
                    return;
                }
                proven();
            } else {
                const char *why;
                if (tscope__live_open(&L.sess, L.rbuf + off, used, &f, &why) != 0) {
                    disconnect(why);
                    return;
                }
                if (r == TSCOPE__LIVE_OK && f.kind == TSCOPE__LIVE_COMMAND)
                    run_command(f.payload, f.len);
            }
            off += used;
        }
        memmove(L.rbuf, L.rbuf + off, L.rlen - off);
        L.rlen -= off;
    }
}

static void *live_main(void *arg)
{
    (void)arg; /* not a registered thread: it records no events */
    pthread_setname_np(pthread_self(), "tscope-live");
    uint64_t period = (uint64_t)L.period_ms * 1000000u, next = mono_ns();
    while (!atomic_load(&L.stop)) {
        uint64_t now = mono_ns();
        if (now >= next) {
            snapshot();
            next += period;
            if (next <= now) /* fell behind (a stopped process): no burst */
                next = now + period;
        }
        if (L.fd < 0 && now >= L.next_try_ns)
            try_connect();
        if (L.fd >= 0 && L.connected && !L.sess.proven && now >= L.hs_deadline_ns)
            unproven("no answer within 10 s");
        struct pollfd p[2] = {{L.wake[0], POLLIN, 0}, {L.fd, 0, 0}};
        nfds_t np = 1;
        if (L.fd >= 0) {
            /* writable matters while connecting, with handshake bytes to send,
             * or frames once proven (not before: nothing could go) */
            int out = !L.connected || L.hs_off < L.hs_len || (L.sess.proven && pending());
            p[1].events = (short)(POLLIN | (out ? POLLOUT : 0));
            np = 2;
        }
        uint64_t until = next;
        if (L.fd < 0 && L.next_try_ns < until)
            until = L.next_try_ns;
        if (L.fd >= 0 && L.connected && !L.sess.proven && L.hs_deadline_ns < until)
            until = L.hs_deadline_ns;
        now = mono_ns();
        int ms = until > now ? (int)((until - now + 999999) / 1000000) : 0;
        if (poll(p, np, ms) < 0 && errno != EINTR)
            break;
        if (p[0].revents) {
            char b[16];
            while (read(L.wake[0], b, sizeof b) > 0)
                ;
        }
        if (np == 2 && L.fd >= 0 && p[1].revents) {
            if (!L.connected && (p[1].revents & (POLLOUT | POLLERR | POLLHUP)) && connect_done())
                continue;
            if (L.connected && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
                receive();
            if (L.connected)
                send_some();
        }
    }
    /* the last snapshot, given at most 0.5 s to leave */
    snapshot();
    uint64_t deadline = mono_ns() + 500000000u;
    /* only on a proven connection: the handshake needs its answers read */
    while (L.fd >= 0 && L.connected && L.sess.proven && pending() && mono_ns() < deadline) {
        struct pollfd p = {L.fd, POLLOUT, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        send_some();
    }
    return NULL;
}

int tscope__live_start(const struct tscope__config *cfg)
{
    if (!cfg->live[0] || L.running)
        return 0;
    char why[600];
    if (tscope__live_value(cfg->live, L.host, sizeof L.host, L.port, sizeof L.port, L.secret)) {
        fprintf(stderr,
                "taskscope: live: TASKSCOPE_LIVE is not HOST:PORT/SECRET (the value `taskscope "
                "dashboard` prints); not streaming\n");
        return -1;
    }
    if (tscope__live_crypto(why, sizeof why)) {
        fprintf(stderr, "taskscope: live: %s; not streaming\n", why);
        return -1;
    }
    L.period_ms = cfg->live_ms;
    if (tscope__live_queue_init(&L.out, cfg->live_queue) || pipe2(L.wake, O_NONBLOCK | O_CLOEXEC)) {
        tscope__live_queue_free(&L.out);
        fprintf(stderr, "taskscope: live: %s; not streaming\n", strerror(errno));
        return -1;
    }
    L.seq = 0;
    L.rate = (struct tscope__live_rate){0, 0};
    L.fd = -1;
    L.connected = L.said_down = L.said_unproven = 0;
    L.hs_len = L.hs_off = 0;
    L.sess.proven = 0;
    L.next_try_ns = 0;
    L.backoff_ms = BACKOFF_MIN_MS;
    L.rlen = 0;
    L.started = time(NULL);
    atomic_store(&L.stop, 0);
    if (pthread_create(&L.thread, NULL, live_main, NULL)) {
        fprintf(stderr, "taskscope: live: cannot start its thread; not streaming\n");
        close(L.wake[0]);
        close(L.wake[1]);
        tscope__live_queue_free(&L.out);
        return -1;
    }
    L.running = 1;
    return 0;
}

/* The connection and the wake-up pipe closed; the thread gone. */
static void close_sockets(void)
{
    L.running = 0;
    if (L.fd >= 0)
        close(L.fd);
    L.fd = -1;
    close(L.wake[0]);
    close(L.wake[1]);
    L.wake[0] = L.wake[1] = -1;
    tscope__live_session_clear(&L.sess);
    memset(L.secret, 0, sizeof L.secret);
}

void tscope__live_stop(void)
{
    if (!L.running)
        return;
    tscope__live_debug_release("the program finishes");
    atomic_store(&L.stop, 1);
    char b = 1;
    if (write(L.wake[1], &b, 1) < 0) { /* the pipe is never full: poll wakes anyway */
    }
    pthread_join(L.thread, NULL);
    close_sockets();
    tscope__live_queue_free(&L.out);
}

void tscope__live_forget(void)
{
    if (!L.running)
        return;
    tscope__live_debug_forget(); /* a pause or breakpoint was the parent's */
    /* the thread is not in the child, and it may have been changing the
     * queue at the fork: the child closes its copies of the sockets and
     * leaves the buffers alone (still reachable from L), sending nothing */
    close_sockets();
}
