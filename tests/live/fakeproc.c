/* fakeproc.c - a fake measured process for tests/test_dashboard.sh: speaks
 * the live protocol (src/live/proto.h, auth.h) to `taskscope dashboard` the
 * way src/live/stream.c does, with fixed, known content.
 *
 * usage: fakeproc HOST:PORT/SECRET COUNT PERIOD_MS [--rank R] [--value V]
 *                 [--rate R] [--linger MS] [--pad N] [--auth none|wrong|replay]
 *                 [--bad magic|version|large|json|replay|flip-payload|flip-mac]
 *
 * Connects, proves it knows the secret (the handshake), sends HELLO {"pid", "rank", "nranks": 1,
 * "host": "fakehost", "program": "fakeproc", "started"}, then COUNT snapshots PERIOD_MS apart (seq
 * 0.., series "node.speed" = V (default 0.81) and, with --rate R, "tasks.ended_per_s" = R, two task
 * types, one with a quote, a backslash and a
 * line break in its name; the odd ones written over several lines; --pad N adds N series and N task
 * types, for realistic sizes: 30 gives ~4.6 KB), then waits LINGER ms (default 0) for more
 * commands.  Every COMMAND it receives is printed on stdout as one line "command: <its JSON>"
 * (flushed) and answered with an ACK {"id": its id, "ok": true, "text": "fake"}.
 *
 * --bad sends, after HELLO, a frame with a wrong magic, a wrong version or
 * a 2 MiB length, or a sealed snapshot with one byte of its payload or of
 * its MAC flipped (flip-payload, flip-mac); --bad replay makes a first
 * connection (handshake, a sealed HELLO not sent, closed) and sends that
 * HELLO on a second, after its handshake.  --auth none sends HELLO without
 * any handshake; --auth wrong does the handshake with another secret (the
 * dashboard's proof must fail under it: exit 5 if not) and sends a wrong
 * proof; --auth replay makes a first connection and replays its CHALLENGE
 * and PROOF on a second.  Each then waits (LINGER ms, default 5000) for the
 * dashboard to close the connection: exit 0 when it does, 3 when it does
 * not.  --bad json sends a snapshot that is not JSON first, then goes on as
 * usual.
 *
 * A dashboard that closes the connection or goes away is normal (a line on
 * stderr, exit 0); exit 1: could not connect, 2: usage, 4: a frame from the
 * dashboard that fails its checks, 77: built without libsodium (the reason
 * on stderr).  Single-threaded; blocking socket with poll() for the waits.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "live/proto.h"

static int sock = -1;
static struct tscope__live_session S;
static unsigned char inbuf[1 << 16];
static size_t inlen;

static void gone(void)
{
    fprintf(stderr, "fakeproc: the dashboard closed the connection\n");
    exit(0);
}

static void send_all(const void *p, size_t n)
{
    if (live_client_send(sock, p, n) != 0)
        gone();
}

/* A frame of kind sealed for the connection (malloc'ed, *n bytes). */
static unsigned char *sealed(unsigned kind, const char *json, size_t *n)
{
    unsigned char *b = live_client_frame(&S, kind, json, strlen(json), n);
    if (!b) {
        fprintf(stderr, "fakeproc: frame too large\n");
        exit(2);
    }
    return b;
}

static void send_frame(unsigned kind, const char *json)
{
    size_t n;
    unsigned char *b = sealed(kind, json, &n);
    send_all(b, n);
    free(b);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void id_field(void *ctx, const char *key, size_t klen, int kind, const char *str,
                     size_t slen, double num)
{
    (void)str;
    (void)slen;
    if (kind == 'n' && klen == 2 && memcmp(key, "id", 2) == 0)
        *(double *)ctx = num;
}

/* Prints and answers the whole COMMAND frames received so far. */
static void handle_input(void)
{
    size_t off = 0;
    for (;;) {
        struct tscope__live_frame f;
        size_t used;
        if (inlen - off == 0)
            break;
        enum tscope__live_parse r = tscope__live_parse(inbuf + off, inlen - off, &f, &used);
        if (r == TSCOPE__LIVE_MORE)
            break;
        const char *why;
        if (r < 0) {
            fprintf(stderr, "fakeproc: %s\n", tscope__live_parse_text(r));
            exit(4);
        }
        if (tscope__live_open(&S, inbuf + off, used, &f, &why) != 0) {
            fprintf(stderr, "fakeproc: %s\n", why);
            exit(4);
        }
        if (r == TSCOPE__LIVE_OK && f.kind == TSCOPE__LIVE_COMMAND) {
            printf("command: %.*s\n", (int)f.len, f.payload);
            fflush(stdout);
            double id = -1;
            if (tscope__live_json_fields(f.payload, f.len, id_field, &id) != 0)
                fprintf(stderr, "fakeproc: a command that is not a flat JSON object\n");
            char ack[128];
            snprintf(ack, sizeof ack, "{\"id\":%.0f,\"ok\":true,\"text\":\"fake\"}", id);
            send_frame(TSCOPE__LIVE_ACK, ack);
        }
        off += used;
    }
    memmove(inbuf, inbuf + off, inlen - off);
    inlen -= off;
}

/* Receives and answers commands for ms milliseconds; returns early (1)
 * when the dashboard closed the connection and closed_ok, else exits. */
static int serve(double ms, int closed_ok)
{
    double end = now_ms() + ms;
    for (;;) {
        double left = end - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int rc = poll(&p, 1, (int)left + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        if (inlen == sizeof inbuf) {
            fprintf(stderr, "fakeproc: a frame larger than its buffer\n");
            exit(4);
        }
        ssize_t n = recv(sock, inbuf + inlen, sizeof inbuf - inlen, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (closed_ok)
                return 1;
            gone();
        }
        inlen += (size_t)n;
        handle_input();
    }
}

static void snapshot(unsigned long seq, double t, long rank, const char *value, const char *rate,
                     int pad)
{
    /* the odd ones over several lines: the dashboard must keep SSE lines whole */
    const char *nl = seq % 2 ? "\n  " : "";
    char series[8192] = "", types[8192] = "";
    for (int k = 0, n = 0, m = 0; k < pad; k++) {
        n += snprintf(series + n, sizeof series - (size_t)n, ",\"extra.series_%d\":%.6f", k,
                      0.001 * (double)(k + 1) * (double)(seq + 1));
        m += snprintf(types + m, sizeof types - (size_t)m,
                      ",{\"name\":\"extra_type_%d\",\"calls\":%lu,\"self_s\":%.6f,"
                      "\"total_s\":%.6f,\"running\":0}",
                      k, (seq + 1) * (unsigned long)k, 0.0001 * (double)k, 0.0002 * (double)k);
    }
    char ended[64] = "";
    if (rate)
        snprintf(ended, sizeof ended, ",\"tasks.ended_per_s\":%s", rate);
    char json[20000];
    snprintf(json, sizeof json,
             "{%s\"seq\":%lu,\"t\":%.3f,\"pid\":%ld,\"rank\":%ld,\"drops\":0,%s"
             "\"series\":{\"node.speed\":%s,\"node.efficiency\":0.77,\"rt.tasks\":%lu%s%s},%s"
             "\"types\":[{\"name\":\"fib\",\"calls\":%lu,\"self_s\":%.3f,\"total_s\":%.3f,"
             "\"running\":1},"
             "{\"name\":\"odd \\\"type\\\" \\\\ x\\ny\",\"calls\":7,\"self_s\":0.5,"
             "\"total_s\":0.5,\"running\":0}%s],"
             "\"counters\":{\"queue\":12},"
             "\"params\":[{\"name\":\"rt.thread_cap\",\"kind\":\"int\",\"value\":2,\"min\":1,"
             "\"max\":2}],"
             "\"debug\":{\"paused\":false,\"break\":null,\"held\":0}}",
             nl, seq, t, (long)getpid(), rank, nl, value, seq * 10, ended, series, nl,
             100 * (seq + 1), 0.01 * (double)(seq + 1), 0.02 * (double)(seq + 1), types);
    send_frame(TSCOPE__LIVE_SNAPSHOT, json);
}

static void send_bad(const char *how)
{
    unsigned char hdr[TSCOPE__LIVE_HEADER];
    tscope__live_header(hdr, TSCOPE__LIVE_SNAPSHOT, 2);
    if (strncmp(how, "flip-", 5) == 0) {
        size_t n;
        unsigned char *b = sealed(TSCOPE__LIVE_SNAPSHOT, "{\"seq\":0,\"series\":{}}", &n);
        if (strcmp(how, "flip-payload") == 0)
            b[TSCOPE__LIVE_HEADER + 3] ^= 0x01;
        else if (strcmp(how, "flip-mac") == 0)
            b[n - 1] ^= 0x80;
        else {
            fprintf(stderr, "fakeproc: --bad %s: expected flip-payload or flip-mac\n", how);
            exit(2);
        }
        send_all(b, n);
        free(b);
        return;
    }
    if (strcmp(how, "magic") == 0) {
        memcpy(hdr, "XXXX", 4);
    } else if (strcmp(how, "version") == 0) {
        hdr[4] = 3; /* a newer one */
    } else if (strcmp(how, "large") == 0) {
        hdr[8] = 0;
        hdr[9] = 0;
        hdr[10] = 0x20; /* 2 MiB */
        hdr[11] = 0;
    } else {
        fprintf(stderr,
                "fakeproc: --bad %s: expected magic, version, large, json, replay, "
                "flip-payload or flip-mac\n",
                how);
        exit(2);
    }
    send_all(hdr, sizeof hdr);
    send_all("{}", 2);
    unsigned char mac[TSCOPE__LIVE_MAC] = {0};
    send_all(mac, sizeof mac);
}

static int dial(const char *host, const char *port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, port, &hints, &res) != 0) {
        fprintf(stderr, "fakeproc: cannot resolve %s\n", host);
        exit(1);
    }
    int fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        fprintf(stderr, "fakeproc: cannot connect to %s:%s: %s\n", host, port, strerror(errno));
        exit(1);
    }
    freeaddrinfo(res);
    return fd;
}

/* The handshake on sock, or exit 1 with the reason. */
static void handshake(const unsigned char *secret)
{
    const char *why;
    if (live_client_handshake(sock, secret, &S, &why) != 0) {
        fprintf(stderr, "fakeproc: %s\n", why);
        exit(1);
    }
}

/* --auth: a process that does not prove it knows the secret. */
static void send_unproven(const char *how, const char *host, const char *port,
                          unsigned char *secret, const char *hello)
{
    if (strcmp(how, "none") == 0) { /* HELLO straight away, no handshake */
        unsigned char b[512];
        size_t n = strlen(hello);
        tscope__live_header(b, TSCOPE__LIVE_HELLO, n);
        memcpy(b + TSCOPE__LIVE_HEADER, hello, n);
        memset(b + TSCOPE__LIVE_HEADER + n, 0, TSCOPE__LIVE_MAC);
        send_all(b, TSCOPE__LIVE_FRAME_BYTES(n));
    } else if (strcmp(how, "wrong") == 0) {
        unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES], theirs[TSCOPE__LIVE_CHALLENGE_BYTES];
        unsigned char proof[TSCOPE__LIVE_PROOF_BYTES];
        struct tscope__live_frame f;
        secret[0] ^= 1; /* another secret */
        tscope__live_session_begin(&S, TSCOPE__LIVE_SIDE_PROCESS, secret, mine);
        send_all(mine, sizeof mine);
        if (live_client_their_challenge(sock, theirs, &f) != 0)
            gone();
        if (tscope__live_session_answer(&S, &f, proof) == 0) {
            fprintf(stderr, "fakeproc: the dashboard's proof holds under another secret\n");
            exit(5);
        }
        tscope__live_header(proof, TSCOPE__LIVE_PROOF, 0);
        memset(proof + TSCOPE__LIVE_HEADER, 0x5a, TSCOPE__LIVE_MAC); /* a guess */
        send_all(proof, sizeof proof);
    } else if (strcmp(how, "replay") == 0) { /* a first connection, recorded */
        unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES], theirs[TSCOPE__LIVE_CHALLENGE_BYTES];
        unsigned char proof[TSCOPE__LIVE_PROOF_BYTES];
        struct tscope__live_frame f;
        tscope__live_session_begin(&S, TSCOPE__LIVE_SIDE_PROCESS, secret, mine);
        send_all(mine, sizeof mine);
        if (live_client_their_challenge(sock, theirs, &f) != 0 ||
            tscope__live_session_answer(&S, &f, proof) != 0) {
            fprintf(stderr, "fakeproc: the first connection's handshake failed\n");
            exit(1);
        }
        send_all(proof, sizeof proof);
        close(sock);
        sock = dial(host, port); /* the second: the same bytes again */
        send_all(mine, sizeof mine);
        if (live_client_their_challenge(sock, theirs, &f) != 0)
            gone();
        send_all(proof, sizeof proof);
    } else {
        fprintf(stderr, "fakeproc: --auth %s: expected none, wrong or replay\n", how);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fakeproc HOST:PORT/SECRET COUNT PERIOD_MS [--rank R] [--value V] "
                        "[--rate R] [--linger MS] [--pad N] [--auth none|wrong|replay] "
                        "[--bad magic|version|large|json|replay|flip-payload|flip-mac]\n");
        return 2;
    }
    char host[256], port[16], why[600];
    unsigned char secret[TSCOPE__LIVE_SECRET];
    if (tscope__live_value(argv[1], host, sizeof host, port, sizeof port, secret) != 0) {
        fprintf(stderr, "fakeproc: %s: expected HOST:PORT/SECRET\n", argv[1]);
        return 2;
    }
    if (tscope__live_crypto(why, sizeof why) != 0) {
        fprintf(stderr, "fakeproc: skipped: %s\n", why);
        return 77;
    }
    unsigned long count = strtoul(argv[2], NULL, 10);
    double period = strtod(argv[3], NULL), linger = -1;
    long rank = 0;
    int pad = 0;
    const char *value = "0.81", *rate = NULL, *bad = NULL, *auth = NULL;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rank") == 0)
            rank = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--value") == 0)
            value = argv[i + 1];
        else if (strcmp(argv[i], "--rate") == 0)
            rate = argv[i + 1];
        else if (strcmp(argv[i], "--linger") == 0)
            linger = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--bad") == 0)
            bad = argv[i + 1];
        else if (strcmp(argv[i], "--auth") == 0)
            auth = argv[i + 1];
        else if (strcmp(argv[i], "--pad") == 0)
            pad = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "fakeproc: unknown option %s\n", argv[i]);
            return 2;
        }
    }

    if (pad < 0 || pad > 60) {
        fprintf(stderr, "fakeproc: --pad %d: expected 0-60\n", pad);
        return 2;
    }
    sock = dial(host, port);
    char hello[256];
    snprintf(hello, sizeof hello,
             "{\"pid\":%ld,\"rank\":%ld,\"nranks\":1,\"host\":\"fakehost\","
             "\"program\":\"fakeproc\",\"started\":%ld}",
             (long)getpid(), rank, (long)time(NULL));
    if (auth) {
        send_unproven(auth, host, port, secret, hello);
        if (serve(linger >= 0 ? linger : 5000, 1)) {
            fprintf(stderr, "fakeproc: closed by the dashboard after --auth %s\n", auth);
            return 0;
        }
        fprintf(stderr, "fakeproc: the dashboard kept the connection after --auth %s\n", auth);
        return 3;
    }
    handshake(secret);
    if (bad &&
        strcmp(bad, "replay") == 0) { /* a HELLO sealed for this connection, sent on the next */
        size_t n;
        unsigned char *old = sealed(TSCOPE__LIVE_HELLO, hello, &n);
        close(sock);
        sock = dial(host, port);
        handshake(secret);
        send_all(old, n);
        free(old);
    } else {
        send_frame(TSCOPE__LIVE_HELLO, hello);
    }

    if (bad && strcmp(bad, "json") == 0) {
        send_frame(TSCOPE__LIVE_SNAPSHOT, "{\"seq\": 0, \"series\": {\"a\": tru}}");
        bad = NULL;
    }
    if (bad) {
        if (strcmp(bad, "replay") != 0)
            send_bad(bad);
        if (serve(linger >= 0 ? linger : 5000, 1)) {
            fprintf(stderr, "fakeproc: closed by the dashboard after --bad %s\n", bad);
            return 0;
        }
        fprintf(stderr, "fakeproc: the dashboard kept the connection after --bad %s\n", bad);
        return 3;
    }
    for (unsigned long i = 0; i < count; i++) {
        snapshot(i, (double)i * period / 1e3, rank, value, rate, pad);
        serve(period, 0);
    }
    if (linger > 0 && serve(linger, 1))
        gone();
    close(sock);
    return 0;
}
