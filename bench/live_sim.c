/* live_sim.c - N simulated measured processes for `scripts/bench live`
 * (bench/live.sh): one program holds N connections to `taskscope
 * dashboard`, each speaking the live protocol (src/live/proto.h, auth.h) as a
 * real process does - the handshake, HELLO, then a snapshot every period,
 * each frame sealed with its MAC - with snapshots the
 * size and shape of src/live/stream.c's (40 series, 16 task types, 3
 * parameters, the debugger's state, the wall-clock time it was taken), so
 * the dashboard parses, keeps and forwards what it would for N programs.
 * The sends are spread over the period (connection i at i/N of it).
 * Commands the dashboard sends are read and dropped.
 *
 *   usage: live_sim HOST:PORT/SECRET N RATE_HZ SECONDS
 * Prints the snapshots sent; exit 1 when it cannot connect.
 */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../tests/live/client.h"
#include "live/proto.h"

static double now_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int dial(const char *host, const char *port)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res))
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static int send_frame(int fd, struct tscope__live_session *s, unsigned kind, const char *payload,
                      size_t len)
{
    size_t n;
    unsigned char *b = live_client_frame(s, kind, payload, len, &n);
    int rc = b ? live_client_send(fd, b, n) : -1;
    free(b);
    return rc;
}

static size_t snapshot(char *buf, size_t cap, int proc, unsigned long seq, double t)
{
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
    PUT("{\"seq\":%lu,\"t\":%.6f,\"wall\":%.3f,\"pid\":%d,\"rank\":%d,\"nranks\":64,\"drops\":0,"
        "\"series\":{",
        seq, t, now_s(CLOCK_REALTIME), 100000 + proc, proc);
    static const char *const fixed[] = {
        "node.speed",        "node.efficiency",     "node.score",     "node.power_estimate",
        "tasks.ended_per_s", "proc.cpu_cores_used", "proc.rss_bytes", "sys.cpu_utilization",
        "rt.active_threads", "rt.tasks_in_flight"};
    for (int i = 0; i < 40; i++) {
        double v = 0.5 + 0.4 * sin(t + proc + i);
        if (i < 10)
            PUT("%s\"%s\":%.6g", i ? "," : "", fixed[i], v);
        else
            PUT(",\"concurrency.type_%02d\":%.6g", i, v * 4);
    }
    PUT("},\"types\":[");
    for (int i = 0; i < 16; i++)
        PUT("%s{\"name\":\"type_%02d\",\"calls\":%lu,\"created\":%lu,\"self_s\":%.6f,"
            "\"total_s\":%.6f}",
            i ? "," : "", i, seq * 100 + (unsigned long)i, seq * 100 + (unsigned long)i, t * 0.1,
            t * 0.2);
    PUT("],\"counters\":{\"queue\":%lu},\"params\":["
        "{\"name\":\"rt.thread_cap\",\"kind\":\"int\",\"value\":4,\"min\":1,\"max\":16},"
        "{\"name\":\"rt.schedule\",\"kind\":\"choice\",\"value\":0,\"choices\":[\"lifo\","
        "\"fifo\"]},"
        "{\"name\":\"policy.w_time\",\"kind\":\"real\",\"value\":1,\"min\":0,\"max\":1}],"
        "\"debug\":{\"paused\":false,\"held\":0,\"break\":null,\"hit\":null}}",
        seq % 17);
#undef PUT
    return n < cap ? n : cap;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: live_sim HOST:PORT/SECRET N RATE_HZ SECONDS\n");
        return 2;
    }
    char host[256], port[16], why[600];
    unsigned char secret[TSCOPE__LIVE_SECRET];
    int nproc = atoi(argv[2]);
    double rate = atof(argv[3]), secs = atof(argv[4]);
    if (tscope__live_value(argv[1], host, sizeof host, port, sizeof port, secret) || nproc < 1 ||
        nproc > 4096 || rate <= 0 || secs <= 0) {
        fprintf(stderr, "live_sim: bad arguments\n");
        return 2;
    }
    if (tscope__live_crypto(why, sizeof why)) {
        fprintf(stderr, "live_sim: %s\n", why);
        return 1;
    }
    int *fd = calloc((size_t)nproc, sizeof *fd);
    struct tscope__live_session *sess = calloc((size_t)nproc, sizeof *sess);
    char *buf = malloc(1 << 16);
    if (!fd || !buf || !sess)
        return 1;
    double start = now_s(CLOCK_MONOTONIC);
    for (int i = 0; i < nproc; i++) {
        const char *failed;
        if ((fd[i] = dial(host, port)) < 0) {
            fprintf(stderr, "live_sim: cannot connect to %s:%s\n", host, port);
            return 1;
        }
        if (live_client_handshake(fd[i], secret, &sess[i], &failed)) {
            fprintf(stderr, "live_sim: %s\n", failed);
            return 1;
        }
        int n = snprintf(buf, 1 << 16,
                         "{\"pid\":%d,\"rank\":%d,\"nranks\":%d,\"host\":\"sim\",\"program\":"
                         "\"live_sim\",\"started\":%.0f,\"period_ms\":%.0f}",
                         100000 + i, i, nproc, now_s(CLOCK_REALTIME), 1000 / rate);
        if (send_frame(fd[i], &sess[i], TSCOPE__LIVE_HELLO, buf, (size_t)n))
            return 1;
    }
    unsigned long sent = 0, *seq = calloc((size_t)nproc, sizeof *seq);
    if (!seq)
        return 1;
    double period = 1 / rate, t0 = now_s(CLOCK_MONOTONIC);
    for (unsigned long tick = 0;; tick++) {
        for (int i = 0; i < nproc; i++) {
            double due = t0 + (double)tick * period + period * i / nproc;
            double wait = due - now_s(CLOCK_MONOTONIC);
            if (wait > 0) {
                struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
                nanosleep(&ts, NULL);
            }
            if (due - t0 >= secs)
                goto done;
            size_t n = snapshot(buf, 1 << 16, i, ++seq[i], now_s(CLOCK_MONOTONIC) - start);
            if (send_frame(fd[i], &sess[i], TSCOPE__LIVE_SNAPSHOT, buf, n) == 0)
                sent++;
            char junk[4096]; /* commands: read and dropped */
            while (recv(fd[i], junk, sizeof junk, MSG_DONTWAIT) > 0)
                ;
        }
    }
done:
    printf("%lu\n", sent);
    for (int i = 0; i < nproc; i++)
        close(fd[i]);
    free(fd);
    free(sess);
    free(seq);
    free(buf);
    return 0;
}
