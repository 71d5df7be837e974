/* holdconns.c - clients that try to hold `taskscope dashboard`'s ports, for
 * tests/test_dashboard_bounds.sh (docs/dashboard.md, "Limits").
 *
 * usage: holdconns http PORT N [--reconnect] [--post]
 *        holdconns ingest HOST:PORT/SECRET N [--hello] [--claim BYTES] [--send BYTES]
 *
 * Opens N connections to 127.0.0.1:PORT and holds them open:
 *   http: each sends the start of a request ("GET / HTTP/1.1\r\nHost: x\r\n")
 *         and then one byte of a header line every second, never finishing
 *         its headers; with --post, whole headers of a POST with a
 *         1,000-byte body instead, then a byte of the body every second;
 *         with --reconnect, a connection the server closed is opened again
 *         (and counted again when closed);
 *   ingest: each sends (with --hello the handshake that proves it knows
 *         the secret and a HELLO, as a process does, then) the header of a
 *         SNAPSHOT claiming BYTES of payload (default 1 MiB; 0: no frame at
 *         all) and the first SEND of them (default half), never the rest.
 *         The handshakes go in batches of HANDSHAKE_BATCH, fewer than the
 *         dashboard lets wait unauthenticated at once.
 * Prints "held N" once all were opened and their bytes sent (or refused by
 * a server that closed them meanwhile), then "cut K" whenever the number of
 * connections the server closed changes (flushed lines).  Runs until
 * killed.  Exit 1: cannot connect at all, 2: usage.  Single-threaded,
 * non-blocking sockets served round-robin with poll(), so that all the
 * connections fill at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "live/auth.h"
#include "live/client.h"
#include "live/proto.h"

#define HANDSHAKE_BATCH 32

static struct sockaddr_in addr;

/* One connection: what it sends first (pre, then for ingest the shared
 * payload), how much of that went out. */
struct held {
    int fd;
    size_t sent, pre_len;
    unsigned char pre[320];
};

static int connect_one(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A frame's header claiming claim payload bytes into out; its size. */
static size_t frame_header(unsigned char *out, unsigned kind, size_t claim)
{
    /* written by hand: a claim may be what a sender may not make (its
     * sequence number 0: the frame never ends, its MAC is never checked) */
    memset(out, 0, TSCOPE__LIVE_HEADER);
    memcpy(out, TSCOPE__LIVE_MAGIC, 4);
    out[4] = TSCOPE__LIVE_VERSION & 0xff;
    out[6] = (unsigned char)kind;
    for (int i = 0; i < 4; i++)
        out[8 + i] = (unsigned char)(claim >> (8 * i));
    return TSCOPE__LIVE_HEADER;
}

static const char http_start[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
static const char post_start[] = "POST /api/control HTTP/1.1\r\nHost: x\r\n"
                                 "Content-Type: application/json\r\n"
                                 "Content-Length: 1000\r\n\r\n{";
static int post;

/* h's first bytes: the start of a request, or a frame's header (after
 * the handshake and HELLO that connect_ingest sent). */
static void prepare(struct held *h, int http, size_t claim)
{
    h->sent = h->pre_len = 0;
    if (http) {
        const char *start = post ? post_start : http_start;
        h->pre_len = strlen(start);
        memcpy(h->pre, start, h->pre_len);
        return;
    }
    if (claim)
        h->pre_len += frame_header(h->pre + h->pre_len, TSCOPE__LIVE_SNAPSHOT, claim);
}

/* Opens hs[from, to) for ingest, blocking; with hello each proves it knows
 * secret (all challenges first, then each answer: the dashboard answers
 * them in one round) and sends a sealed HELLO.  Non-blocking afterwards.
 * How many opened. */
static long connect_ingest(struct held *hs, int from, int to, int hello,
                           const unsigned char *secret)
{
    static struct tscope__live_session ss[HANDSHAKE_BATCH];
    long opened = 0;
    for (int i = from; i < to; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        hs[i].fd = -1;
        if (fd < 0)
            continue;
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            close(fd);
            continue;
        }
        hs[i].fd = fd;
        if (hello) {
            unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES];
            tscope__live_session_begin(&ss[i - from], TSCOPE__LIVE_SIDE_PROCESS, secret, mine);
            if (live_client_send(fd, mine, sizeof mine) != 0)
                close(fd), hs[i].fd = -1;
        }
    }
    for (int i = from; i < to; i++) {
        int ok = hs[i].fd >= 0;
        if (ok && hello) {
            unsigned char theirs[TSCOPE__LIVE_CHALLENGE_BYTES], proof[TSCOPE__LIVE_PROOF_BYTES];
            struct tscope__live_frame f;
            struct tscope__live_session *s = &ss[i - from];
            ok = live_client_their_challenge(hs[i].fd, theirs, &f) == 0 &&
                 tscope__live_session_answer(s, &f, proof) == 0 &&
                 live_client_send(hs[i].fd, proof, sizeof proof) == 0;
            char json[256];
            int len = snprintf(json, sizeof json,
                               "{\"pid\":%d,\"rank\":%d,\"nranks\":1,\"host\":\"holdhost\","
                               "\"program\":\"holdconns\",\"started\":0,\"period_ms\":100}",
                               100000 + i, i);
            size_t n = 0;
            unsigned char *frame =
                ok ? live_client_frame(s, TSCOPE__LIVE_HELLO, json, (size_t)len, &n) : NULL;
            ok = frame && live_client_send(hs[i].fd, frame, n) == 0;
            free(frame);
            tscope__live_session_clear(s);
        }
        if (ok && fcntl(hs[i].fd, F_SETFL, O_NONBLOCK) != 0)
            ok = 0;
        if (!ok && hs[i].fd >= 0)
            close(hs[i].fd), hs[i].fd = -1;
        opened += ok;
    }
    return opened;
}

/* Sends what h still has to and the socket takes: 0, or -1 when the
 * server closed it. */
static int push(struct held *h, const char *payload, size_t total)
{
    while (h->sent < total) {
        const void *p = h->sent < h->pre_len ? (const void *)(h->pre + h->sent)
                                             : (const void *)(payload + (h->sent - h->pre_len));
        size_t n = h->sent < h->pre_len ? h->pre_len - h->sent : total - h->sent;
        ssize_t k = send(h->fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (k <= 0)
            return -1;
        h->sent += (size_t)k;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: holdconns http PORT N [--reconnect] [--post]\n"
                    "       holdconns ingest HOST:PORT/SECRET N [--hello] [--claim BYTES] "
                    "[--send BYTES]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        usage();
    int http = strcmp(argv[1], "http") == 0;
    if (!http && strcmp(argv[1], "ingest") != 0)
        usage();
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned char secret[TSCOPE__LIVE_SECRET];
    if (http) {
        addr.sin_port = htons((uint16_t)atoi(argv[2]));
    } else {
        char host[256], port[16], why[256];
        if (tscope__live_value(argv[2], host, sizeof host, port, sizeof port, secret) != 0)
            usage();
        addr.sin_port = htons((uint16_t)atoi(port));
        if (tscope__live_crypto(why, sizeof why) != 0) {
            fprintf(stderr, "holdconns: %s\n", why);
            return 1;
        }
    }
    int n = atoi(argv[3]), hello = 0, reconnect = 0;
    size_t claim = TSCOPE__LIVE_FRAME_MAX, send_n = (size_t)-1;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--hello") == 0)
            hello = 1;
        else if (strcmp(argv[i], "--reconnect") == 0)
            reconnect = 1;
        else if (strcmp(argv[i], "--post") == 0)
            post = 1;
        else if (strcmp(argv[i], "--claim") == 0 && i + 1 < argc)
            claim = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--send") == 0 && i + 1 < argc)
            send_n = strtoul(argv[++i], NULL, 10);
        else
            usage();
    }
    if (n < 1)
        usage();
    if (send_n == (size_t)-1)
        send_n = claim / 2;
    if (send_n > claim || http)
        send_n = http ? 0 : claim;
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
    char *payload = malloc(send_n ? send_n : 1);
    struct held *hs = calloc((size_t)n, sizeof *hs);
    struct pollfd *fds = calloc((size_t)n, sizeof *fds);
    if (!payload || !hs || !fds)
        return 1;
    memset(payload, ' ', send_n); /* a JSON object's whitespace, never its end */
    if (send_n)
        payload[0] = '{';

    long cut = 0, opened = 0, said = -1;
    for (int i = 0; i < n; i++) {
        prepare(&hs[i], http, claim);
        if (http && (hs[i].fd = connect_one()) >= 0)
            opened++;
    }
    for (int i = 0; !http && i < n; i += HANDSHAKE_BATCH)
        opened +=
            connect_ingest(hs, i, i + HANDSHAKE_BATCH < n ? i + HANDSHAKE_BATCH : n, hello, secret);
    if (!opened) {
        fprintf(stderr, "holdconns: cannot connect to port %s\n", argv[2]);
        return 1;
    }
    int all_sent = 0;
    time_t last_byte = time(NULL);
    for (;;) {
        int pending = 0;
        for (int i = 0; i < n; i++) {
            size_t total = hs[i].pre_len + send_n;
            fds[i] = (struct pollfd){
                .fd = hs[i].fd, .events = (short)(POLLIN | (hs[i].sent < total ? POLLOUT : 0))};
            pending += hs[i].fd >= 0 && hs[i].sent < total;
        }
        if (!all_sent && !pending) {
            all_sent = 1;
            printf("held %ld\n", opened);
            fflush(stdout);
        }
        poll(fds, (nfds_t)n, 200);
        int trickle = all_sent && http && time(NULL) != last_byte;
        if (trickle)
            last_byte = time(NULL);
        for (int i = 0; i < n; i++) {
            struct held *h = &hs[i];
            if (h->fd < 0)
                continue;
            int gone = 0;
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                char b[512];
                ssize_t k = recv(h->fd, b, sizeof b, MSG_DONTWAIT);
                gone = k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR);
            }
            if (!gone)
                gone = push(h, payload, h->pre_len + send_n) != 0;
            if (!gone && trickle)
                gone = send(h->fd, "x", 1, MSG_NOSIGNAL) < 0 && errno != EAGAIN;
            if (!gone)
                continue;
            close(h->fd);
            h->fd = -1;
            cut++;
            if (reconnect) {
                prepare(h, http, claim);
                h->fd = http ? connect_one() : -1; /* (only http reconnects) */
            }
        }
        if (cut != said) {
            printf("cut %ld\n", cut);
            fflush(stdout);
            said = cut;
        }
    }
}
