/* stream.c - TASKSCOPE_LIVE: a thread of its own that every
 * TASKSCOPE_LIVE_MS takes a snapshot of what taskscope knows (the sampler's
 * latest series, the task types, counters and parameters), queues it and
 * sends it to `taskscope dashboard` over one TCP connection, and carries
 * out the commands the dashboard sends back (docs/dashboard.md).
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
 */
#include "live.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/text.h"
#include "debug.h"
#include "policy/params.h"
#include "profile/query.h"
#include "proto.h"
#include "sampler/sampler.h"
#include "taskscope/policy.h"
#include "taskscope/taskscope.h"

#define TOP_TYPES 32
#define RECV_BYTES (64u << 10) /* commands are small: a larger frame ends the connection */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

/* ---- text (core/text.h) ---- */

/* Like tscope__text_printf, for the constant pieces too ("" included). */
static void put(struct tscope__text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tscope__text_vprintf(t, fmt, ap);
    va_end(ap);
}

static void put_str(struct tscope__text *t, const char *s)
{
    tscope__text_json_str(t, s);
}

/* A JSON number; null for what JSON cannot hold. */
static void put_num(struct tscope__text *t, double v)
{
    if (isfinite(v))
        put(t, "%.9g", v);
    else
        put(t, "null");
}

/* ---- the state ---- */

struct frame {
    char *buf; /* header + payload */
    size_t len;
};

static struct {
    pthread_t thread;
    int running;
    _Atomic int stop;
    int wake[2]; /* a byte in wake[1] ends the thread's wait */
    char host[256], port[16];
    uint32_t period_ms, cap;
    struct frame *q; /* snapshots: a ring of cap */
    uint32_t qhead, qcount;
    struct frame urgent[16]; /* HELLO, acknowledgements: in order, before snapshots */
    uint32_t nurgent;
    size_t sent;       /* bytes of the frame being sent */
    int sending_queue; /* that frame: 1 the queue's head, 0 urgent[0] */
    uint64_t seq, drops;
    uint64_t ended; /* tasks ended at the last snapshot (tasks.ended_per_s) */
    double ended_t; /* its time, s; 0 before the first */
    int fd, connected;
    uint64_t next_try_ns;
    uint32_t backoff_ms;
    int said_down; /* the dashboard's absence was said */
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

int tscope__live_address(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1] || strlen(colon + 1) >= portlen)
        return -1;
    const char *h = s;
    size_t n = (size_t)(colon - s);
    if (h[0] == '[') { /* [v6]:port */
        if (n < 3 || h[n - 1] != ']')
            return -1;
        h++;
        n -= 2;
    }
    if (n >= hostlen)
        return -1;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    memcpy(host, h, n);
    host[n] = 0;
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

/* A frame of kind with payload t (taken over: t is emptied); NULL when
 * out of memory or too large. */
static struct frame make_frame(unsigned kind, struct tscope__text *t)
{
    struct frame f = {NULL, 0};
    if (!t->failed && t->len <= TSCOPE__LIVE_FRAME_MAX &&
        (f.buf = malloc(TSCOPE__LIVE_HEADER + t->len)) != NULL) {
        tscope__live_header((unsigned char *)f.buf, kind, t->len);
        memcpy(f.buf + TSCOPE__LIVE_HEADER, t->p, t->len);
        f.len = TSCOPE__LIVE_HEADER + t->len;
    }
    free(t->p);
    *t = (struct tscope__text){0};
    return f;
}

static void push_urgent(struct frame f)
{
    if (!f.buf)
        return;
    if (L.nurgent == sizeof L.urgent / sizeof L.urgent[0]) { /* commands flood: drop it */
        free(f.buf);
        return;
    }
    L.urgent[L.nurgent++] = f;
}

static void push_snapshot(struct frame f)
{
    if (!f.buf) {
        L.drops++;
        return;
    }
    if (L.qcount == L.cap) { /* full: the oldest goes, unless it is being sent */
        uint32_t victim = L.qhead;
        if (L.sending_queue && L.sent > 0) /* keep the head whole: drop the next */
            victim = (L.qhead + 1) % L.cap;
        if (L.qcount == 1 && victim != L.qhead) { /* only the one being sent: drop the new */
            free(f.buf);
            L.drops++;
            return;
        }
        free(L.q[victim].buf);
        if (victim == L.qhead) {
            L.qhead = (L.qhead + 1) % L.cap;
        } else { /* close the gap after the head */
            for (uint32_t k = 1; k + 1 < L.qcount; k++)
                L.q[(L.qhead + k) % L.cap] = L.q[(L.qhead + k + 1) % L.cap];
        }
        L.qcount--;
        L.drops++;
    }
    L.q[(L.qhead + L.qcount) % L.cap] = f;
    L.qcount++;
}

/* ---- the snapshot ---- */

static void hello(void)
{
    struct tscope__text t = {0};
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char prog[256] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(prog, sizeof prog, f))
            prog[strcspn(prog, "\n")] = 0;
        fclose(f);
    }
    put(&t, "{\"pid\":%ld,\"rank\":%d,\"nranks\":%d,\"host\":", (long)getpid(), tscope__g.rank,
        tscope__g.nranks);
    put_str(&t, host);
    put(&t, ",\"program\":");
    put_str(&t, prog);
    put(&t, ",\"started\":%lld,\"period_ms\":%u}", (long long)L.started, L.period_ms);
    push_urgent(make_frame(TSCOPE__LIVE_HELLO, &t));
}

struct series_ctx {
    struct tscope__text *t;
    int n;
};

static void one_series(void *ctx, const char *name, double value)
{
    struct series_ctx *c = ctx;
    put(c->t, c->n++ ? "," : "");
    put_str(c->t, name);
    put(c->t, ":");
    put_num(c->t, value);
}

static int by_self(const void *a, const void *b)
{
    const tscope_type_stats_t *x = a, *y = b;
    return (x->self_ns.sum < y->self_ns.sum) - (x->self_ns.sum > y->self_ns.sum);
}

static void put_types(struct tscope__text *t)
{
    size_t n = 0;
    put(t, ",\"types\":[");
    if (tscope_query_types(NULL, 0, &n) == 0 && n > 0) {
        tscope_type_stats_t *st = calloc(n, sizeof *st);
        size_t got = 0;
        if (st && tscope_query_types(st, n, &got) == 0) {
            got = got < n ? got : n;
            qsort(st, got, sizeof *st, by_self);
            /* types registered and never used (an adapter registers every
             * MPI call's type up front) are left out, unless running now */
            uint16_t run[64];
            uint32_t nrun = tscope__query_running(run, 64);
            nrun = nrun < 64 ? nrun : 64;
            for (size_t i = 0, k = 0; i < got && k < TOP_TYPES; i++) {
                int used = st[i].created || st[i].calls || st[i].cancelled;
                for (uint32_t r = 0; r < nrun && !used; r++)
                    used = run[r] == st[i].type;
                if (!used)
                    continue;
                char name[256];
                if (tscope_type_name(st[i].type, name, sizeof name))
                    snprintf(name, sizeof name, "type %u", st[i].type);
                put(t, k++ ? ",{\"name\":" : "{\"name\":");
                put_str(t, name);
                put(t,
                    ",\"calls\":%llu,\"created\":%llu,\"self_s\":", (unsigned long long)st[i].calls,
                    (unsigned long long)st[i].created);
                put_num(t, st[i].self_ns.sum * 1e-9);
                put(t, ",\"total_s\":");
                put_num(t, st[i].running_ns.sum * 1e-9);
                put(t, "}");
            }
        }
        free(st);
    }
    put(t, "]");
}

/* The type-level task graph: [parent, child, tasks] by name ("<root>" for
 * tasks without a parent), at most MAX_EDGES; self times are in "types". */
#define MAX_EDGES 256
static void put_graph(struct tscope__text *t)
{
    static uint32_t from[MAX_EDGES], to[MAX_EDGES];
    static uint64_t count[MAX_EDGES];
    uint32_t n = tscope__query_type_edges(from, to, count, MAX_EDGES);
    n = n < MAX_EDGES ? n : MAX_EDGES;
    put(t, ",\"graph\":[");
    for (uint32_t i = 0; i < n; i++) {
        char a[256] = "<root>", b[256];
        if (from[i] != UINT32_MAX && tscope_type_name(from[i], a, sizeof a))
            snprintf(a, sizeof a, "%s", from[i] ? "type ?" : "(untyped)");
        if (tscope_type_name(to[i], b, sizeof b))
            snprintf(b, sizeof b, "%s", to[i] ? "type ?" : "(untyped)");
        put(t, i ? ",[" : "[");
        put_str(t, a);
        put(t, ",");
        put_str(t, b);
        put(t, ",%llu]", (unsigned long long)count[i]);
    }
    put(t, "]");
}

static void put_counters(struct tscope__text *t)
{
    put(t, ",\"counters\":{");
    int n = 0;
    for (tscope_counter_t c = 1; c < 65535; c++) {
        char name[256];
        if (tscope_counter_name(c, name, sizeof name))
            break;
        tscope_counter_stats_t st;
        if (tscope_query_counter(c, &st) || st.count == 0)
            continue;
        put(t, n++ ? "," : "");
        put_str(t, name);
        put(t, ":");
        put_num(t, st.last);
    }
    put(t, "}");
}

struct params_ctx {
    struct tscope__text *t;
    int n;
};

static void one_param(void *ctx, const tscope_param_desc_t *d, double v)
{
    struct params_ctx *c = ctx;
    struct tscope__text *t = c->t;
    put(t, c->n++ ? ",{\"name\":" : "{\"name\":");
    put_str(t, d->name);
    put(t, ",\"kind\":\"%s\",\"value\":",
        d->kind == TSCOPE_PARAM_INT    ? "int"
        : d->kind == TSCOPE_PARAM_REAL ? "real"
                                       : "choice");
    put_num(t, v);
    if (d->kind == TSCOPE_PARAM_CHOICE) {
        put(t, ",\"choices\":[");
        for (unsigned k = 0; k < d->nchoices; k++) {
            put(t, k ? "," : "");
            put_str(t, d->choices[k]);
        }
        put(t, "]");
    } else {
        put(t, ",\"min\":");
        put_num(t, d->min);
        put(t, ",\"max\":");
        put_num(t, d->max);
    }
    put(t, "}");
}

/* Every parameter, through the registry's tscope__param_each: the program
 * may unregister one meanwhile (tscope_rt_finalize does), which then waits
 * until this is done with it. */
static void put_params(struct tscope__text *t)
{
    put(t, ",\"params\":[");
    struct params_ctx c = {t, 0};
    tscope__param_each(one_param, &c);
    put(t, "]");
}

static void snapshot(void)
{
    struct tscope__text t = {0};
    double secs = tscope__clock_ns(tscope__clock_now() - tscope__g.origin) * 1e-9;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    put(&t, "{\"seq\":%llu,\"t\":", (unsigned long long)++L.seq);
    put_num(&t, secs);
    put(&t, ",\"wall\":%lld.%03ld", (long long)wall.tv_sec, wall.tv_nsec / 1000000);
    struct timespec cpu; /* what streaming costs the process: this thread's CPU */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    put(&t, ",\"live_cpu_s\":");
    put_num(&t, (double)cpu.tv_sec + (double)cpu.tv_nsec * 1e-9);
    put(&t, ",\"pid\":%ld,\"rank\":%d,\"nranks\":%d,\"drops\":%llu,\"series\":{", (long)getpid(),
        tscope__g.rank, tscope__g.nranks, (unsigned long long)L.drops);
    struct series_ctx sc = {&t, 0};
    tscope__sampler_each_latest(one_series, &sc);
    /* tasks ended per second since the last snapshot, whatever the runtime
     * (the bundled one also has rt.throughput_tasks_per_s; OpenMP has not) */
    tscope_totals_t tot;
    if (tscope_query_totals(&tot) == 0) {
        if (L.ended_t > 0 && secs > L.ended_t && tot.tasks_completed >= L.ended)
            one_series(&sc, "tasks.ended_per_s",
                       (double)(tot.tasks_completed - L.ended) / (secs - L.ended_t));
        L.ended = tot.tasks_completed;
        L.ended_t = secs;
    }
    put(&t, "}");
    put_types(&t);
    put_graph(&t);
    put_counters(&t);
    put_params(&t);
    struct tscope__live_debug_state d;
    tscope__live_debug_state(&d);
    put(&t, ",\"debug\":{\"paused\":%s,\"held\":%u,\"break\":", d.paused ? "true" : "false",
        d.held);
    if (d.break_name[0])
        put_str(&t, d.break_name);
    else
        put(&t, "null");
    put(&t, ",\"hit\":");
    if (d.hit[0])
        put_str(&t, d.hit);
    else
        put(&t, "null");
    put(&t, "}}");
    push_snapshot(make_frame(TSCOPE__LIVE_SNAPSHOT, &t));
}

/* ---- commands ---- */

struct command {
    double id, value;
    int has_id, has_value;
    char op[32], name[256], choice[256];
};

static void command_field(void *ctx, const char *key, size_t klen, int kind, const char *str,
                          size_t slen, double num)
{
    struct command *c = ctx;
#define KEY(k) (klen == sizeof k - 1 && memcmp(key, k, klen) == 0)
    if (KEY("id") && kind == 'n') {
        c->id = num;
        c->has_id = 1;
    } else if (KEY("value") && kind == 'n') {
        c->value = num;
        c->has_value = 1;
    } else if (kind == 's') {
        /* "type" (break) is kept in name */
        char *into = KEY("op")                    ? c->op
                     : KEY("name") || KEY("type") ? c->name
                     : KEY("choice")              ? c->choice
                                                  : NULL;
        size_t cap = KEY("op") ? sizeof c->op : sizeof c->name;
        if (into && tscope__live_unescape(str, slen, into, cap) < 0)
            into[0] = 0;
    }
#undef KEY
}

static void ack(double id, int ok, const char *text)
{
    struct tscope__text t = {0};
    put(&t, "{\"id\":");
    put_num(&t, id);
    put(&t, ",\"ok\":%s,\"text\":", ok ? "true" : "false");
    put_str(&t, text);
    put(&t, "}");
    push_urgent(make_frame(TSCOPE__LIVE_ACK, &t));
}

static void run_command(const char *payload, size_t len)
{
    struct command c = {0};
    char text[512];
    if (tscope__live_json_fields(payload, len, command_field, &c)) {
        ack(-1, 0, "a command that is not a JSON object");
        return;
    }
    double id = c.has_id ? c.id : -1;
    if (strcmp(c.op, "set") == 0 || strcmp(c.op, "set_choice") == 0) {
        int choice = c.op[3] == '_';
        if (!c.name[0] || (choice ? !c.choice[0] : !c.has_value)) {
            ack(id, 0,
                choice ? "set_choice needs \"name\" and \"choice\""
                       : "set needs \"name\" and a number \"value\"");
            return;
        }
        int rc =
            choice ? tscope_param_set_choice(c.name, c.choice) : tscope_param_set(c.name, c.value);
        double now = NAN;
        tscope_param_get(c.name, &now);
        if (rc)
            snprintf(text, sizeof text, "%s", tscope_param_last_error());
        else
            snprintf(text, sizeof text, "%s = %.9g", c.name, now);
        ack(id, rc == 0, text);
        return;
    }
    if (strcmp(c.op, "pause") == 0 || strcmp(c.op, "resume") == 0 || strcmp(c.op, "break") == 0 ||
        strcmp(c.op, "clear_break") == 0 || strcmp(c.op, "step") == 0) {
        int ok = tscope__live_debug(c.op, c.name, text, sizeof text);
        ack(id, ok, text);
        return;
    }
    snprintf(text, sizeof text, "unknown op \"%s\"", c.op);
    ack(id, 0, text);
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
    if (L.sent && !L.sending_queue && L.nurgent) { /* a half-sent HELLO or ack: gone */
        free(L.urgent[0].buf);
        memmove(L.urgent, L.urgent + 1, --L.nurgent * sizeof L.urgent[0]);
    }
    L.sent = 0;
    for (uint32_t i = 0; i < L.nurgent; i++) /* acks are for this connection's commands */
        free(L.urgent[i].buf);
    L.nurgent = 0;
    L.next_try_ns = mono_ns() + (uint64_t)L.backoff_ms * 1000000u;
    L.backoff_ms = L.backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : L.backoff_ms * 2;
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
    L.sent = 0;
    for (uint32_t i = 0; i < L.nurgent; i++)
        free(L.urgent[i].buf);
    L.nurgent = 0;
    hello();
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
    if (L.said_down)
        fprintf(stderr, "taskscope: live: connected to the dashboard at %s:%s\n", L.host, L.port);
    L.said_down = 0;
    L.connected = 1;
    L.backoff_ms = BACKOFF_MIN_MS;
    return 0;
}

static int pending(void)
{
    return L.nurgent > 0 || L.qcount > 0;
}

/* Sends what it can without waiting. */
static void send_some(void)
{
    while (L.connected && pending()) {
        if (L.sent == 0) /* a new frame: urgent ones first */
            L.sending_queue = L.nurgent == 0;
        struct frame *f = L.sending_queue ? &L.q[L.qhead] : &L.urgent[0];
        ssize_t n = send(L.fd, f->buf + L.sent, f->len - L.sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                disconnect(strerror(errno));
            return;
        }
        L.sent += (size_t)n;
        if (L.sent < f->len)
            return;
        free(f->buf);
        L.sent = 0;
        if (L.sending_queue) {
            L.qhead = (L.qhead + 1) % L.cap;
            L.qcount--;
        } else {
            memmove(L.urgent, L.urgent + 1, --L.nurgent * sizeof L.urgent[0]);
        }
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
                disconnect(tscope__live_parse_text(r));
                return;
            }
            if (r == TSCOPE__LIVE_OK && f.kind == TSCOPE__LIVE_COMMAND)
                run_command(f.payload, f.len);
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
        struct pollfd p[2] = {{L.wake[0], POLLIN, 0}, {L.fd, 0, 0}};
        nfds_t np = 1;
        if (L.fd >= 0) {
            p[1].events = (short)(POLLIN | (!L.connected || pending() ? POLLOUT : 0));
            np = 2;
        }
        uint64_t until = next;
        if (L.fd < 0 && L.next_try_ns < until)
            until = L.next_try_ns;
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
    while (L.fd >= 0 && pending() && mono_ns() < deadline) {
        struct pollfd p = {L.fd, POLLOUT, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        if (!L.connected && connect_done())
            break;
        send_some();
    }
    return NULL;
}

int tscope__live_start(const struct tscope__config *cfg)
{
    if (!cfg->live[0] || L.running)
        return 0;
    if (tscope__live_address(cfg->live, L.host, sizeof L.host, L.port, sizeof L.port)) {
        fprintf(stderr, "taskscope: live: TASKSCOPE_LIVE=%s is not HOST:PORT; not streaming\n",
                cfg->live);
        return -1;
    }
    L.period_ms = cfg->live_ms;
    L.cap = cfg->live_queue;
    L.q = calloc(L.cap, sizeof *L.q);
    if (!L.q || pipe2(L.wake, O_NONBLOCK | O_CLOEXEC)) {
        free(L.q);
        L.q = NULL;
        fprintf(stderr, "taskscope: live: %s; not streaming\n", strerror(errno));
        return -1;
    }
    L.qhead = L.qcount = L.nurgent = 0;
    L.seq = L.drops = 0;
    L.sent = 0;
    L.fd = -1;
    L.connected = L.said_down = 0;
    L.next_try_ns = 0;
    L.backoff_ms = BACKOFF_MIN_MS;
    L.rlen = 0;
    L.started = time(NULL);
    atomic_store(&L.stop, 0);
    if (pthread_create(&L.thread, NULL, live_main, NULL)) {
        fprintf(stderr, "taskscope: live: cannot start its thread; not streaming\n");
        close(L.wake[0]);
        close(L.wake[1]);
        free(L.q);
        L.q = NULL;
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
}

static void release(void)
{
    for (uint32_t i = 0; i < L.qcount; i++)
        free(L.q[(L.qhead + i) % L.cap].buf);
    for (uint32_t i = 0; i < L.nurgent; i++)
        free(L.urgent[i].buf);
    L.qcount = L.nurgent = 0;
    free(L.q);
    L.q = NULL;
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
    release();
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
