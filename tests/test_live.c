/* test_live.c - the live protocol (src/live/proto.c) and the process's
 * streamer and task debugger (src/live/stream.c, debug.c), with this test
 * as the dashboard on a local socket:
 * - frames: a header round trip; every truncation of a frame asks for
 *   more; a wrong magic (from its first byte), a wrong version (1, the
 *   unauthenticated one), an oversized length are errors; an unknown kind
 *   is skipped whole;
 * - authentication (src/live/auth.c): the handshake between both sides
 *   proves the secret both ways and gives them matching keys; a wrong
 *   secret fails either proof; sealed frames open once, in order; one
 *   flipped bit anywhere, a replay, a reorder, a frame of another
 *   connection (other nonces, same secret) fail; TASKSCOPE_LIVE's value;
 * - the old form TASKSCOPE_LIVE=HOST:PORT: one line that says what to set,
 *   no connection, the program runs;
 * - fake dashboards: one that sends an unauthenticated pause command the
 *   old way, one that answers the challenge with another secret, one that
 *   never answers (dropped after 10 s): the process sends them nothing but
 *   its challenge, is not paused, says so in one line however often it
 *   retries, and runs to its end;
 * - the flat JSON reader: fields of each kind, unknown nested fields
 *   skipped, escapes undone (\u00e9 as UTF-8), malformed text refused;
 * - the streamer: HELLO first with the pid; snapshots about every
 *   TASKSCOPE_LIVE_MS with growing seq, the task types' calls as counted,
 *   the registered parameter with its range; decoded with jansson, which
 *   also checks they are JSON;
 * - commands: "set" changes the parameter (the setter sees it) and is
 *   acknowledged with its id; an out-of-range value is refused with the
 *   registry's reason and changes nothing; an unknown op is refused;
 * - the debugger: paused, a thread that begins tasks in a loop stops
 *   before its next begin and the snapshot says 1 held; step lets exactly
 *   one more task begin; resume lets it go on; a breakpoint on a type
 *   pauses at that type's next begin (the snapshot names it), also for
 *   tasks created before it was set and begun with type 0 (OMPT's way: the
 *   type comes from the store); closing the
 *   connection while paused releases the thread;
 * - a frame with a wrong magic from the dashboard ends the connection and
 *   the process connects again (a second HELLO); so does a COMMAND with one
 *   flipped byte in its payload or its MAC, which is not carried out;
 * - no dashboard listening: the program runs, one line says so.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "live/auth.h"
#include "live/proto.h"
#include "taskscope/policy.h"
#include "taskscope/taskscope.h"
#include "test.h"

#ifdef TSCOPE_HAVE_JANSSON
#include <jansson.h>
#endif

/* ---- frames ---- */

static void frames(void)
{
    unsigned char buf[64];
    const char *json = "{\"a\":1}";
    ASSERT_OK(tscope__live_header(buf, TSCOPE__LIVE_SNAPSHOT, strlen(json)));
    memcpy(buf + TSCOPE__LIVE_HEADER, json, strlen(json));
    memset(buf + TSCOPE__LIVE_HEADER + strlen(json), 0xab, TSCOPE__LIVE_MAC);
    size_t whole = TSCOPE__LIVE_FRAME_BYTES(strlen(json)), used = 99;
    struct tscope__live_frame f;
    ASSERT_EQ(tscope__live_parse(buf, whole, &f, &used), TSCOPE__LIVE_OK);
    ASSERT_EQ(used, whole);
    ASSERT_EQ(f.kind, TSCOPE__LIVE_SNAPSHOT);
    ASSERT_EQ(f.version, TSCOPE__LIVE_VERSION);
    ASSERT_EQ(f.version, 2);
    ASSERT_EQ(f.seq, 0);
    ASSERT_EQ(f.len, strlen(json));
    ASSERT(memcmp(f.payload, json, f.len) == 0);
    ASSERT(f.mac == buf + TSCOPE__LIVE_HEADER + f.len && f.mac[0] == 0xab);
    for (size_t n = 0; n < whole; n++) { /* every truncation: more */
        ASSERT_EQ(tscope__live_parse(buf, n, &f, &used), TSCOPE__LIVE_MORE);
        ASSERT_EQ(used, 0);
    }
    /* two frames back to back: the first, then the second */
    unsigned char two[128];
    memcpy(two, buf, whole);
    memcpy(two + whole, buf, whole);
    ASSERT_EQ(tscope__live_parse(two, 2 * whole, &f, &used), TSCOPE__LIVE_OK);
    ASSERT_EQ(used, whole);
    ASSERT_EQ(tscope__live_parse(two + used, whole, &f, &used), TSCOPE__LIVE_OK);

    unsigned char bad[64];
    memcpy(bad, buf, whole);
    bad[0] = 'X';
    ASSERT_EQ(tscope__live_parse(bad, 1, &f, &used), TSCOPE__LIVE_BAD_MAGIC);
    memcpy(bad, buf, whole);
    bad[4] = 1; /* version 1: the unauthenticated one */
    ASSERT_EQ(tscope__live_parse(bad, whole, &f, &used), TSCOPE__LIVE_BAD_VERSION);
    ASSERT(strstr(tscope__live_parse_text(TSCOPE__LIVE_BAD_VERSION), "version") != NULL);
    memcpy(bad, buf, whole);
    uint32_t big = TSCOPE__LIVE_FRAME_MAX + 1;
    for (int i = 0; i < 4; i++)
        bad[8 + i] = (unsigned char)(big >> (8 * i));
    ASSERT_EQ(tscope__live_parse(bad, TSCOPE__LIVE_HEADER, &f, &used), TSCOPE__LIVE_TOO_LARGE);
    ASSERT(tscope__live_header(bad, 2, TSCOPE__LIVE_FRAME_MAX + 1) != 0);
    memcpy(bad, buf, whole);
    bad[6] = 77; /* an unknown kind: skipped whole */
    ASSERT_EQ(tscope__live_parse(bad, whole, &f, &used), TSCOPE__LIVE_SKIP);
    ASSERT_EQ(used, whole);
}

/* ---- authentication ---- */

/* A handshake between a process-side and a dashboard-side session with
 * secrets sp and sd: 0 when both proved themselves. */
static int pair(struct tscope__live_session *p, struct tscope__live_session *d,
                const unsigned char *sp, const unsigned char *sd)
{
    unsigned char c1[TSCOPE__LIVE_CHALLENGE_BYTES], c2[TSCOPE__LIVE_CHALLENGE_BYTES];
    unsigned char proof[TSCOPE__LIVE_PROOF_BYTES];
    struct tscope__live_frame f;
    size_t used;
    tscope__live_session_begin(p, TSCOPE__LIVE_SIDE_PROCESS, sp, c1);
    tscope__live_session_begin(d, TSCOPE__LIVE_SIDE_DASHBOARD, sd, NULL);
    ASSERT_EQ(tscope__live_parse(c1, sizeof c1, &f, &used), TSCOPE__LIVE_OK);
    ASSERT_EQ(f.kind, TSCOPE__LIVE_CHALLENGE);
    /* the process's proof is no answer to a dashboard that has not challenged */
    ASSERT(tscope__live_session_proven(d, &f) != 0);
    ASSERT_OK(tscope__live_session_challenged(d, &f, c2));
    ASSERT_EQ(tscope__live_parse(c2, sizeof c2, &f, &used), TSCOPE__LIVE_OK);
    if (tscope__live_session_answer(p, &f, proof) != 0) {
        ASSERT(!p->proven);
        return -1;
    }
    ASSERT(p->proven);
    ASSERT_EQ(tscope__live_parse(proof, sizeof proof, &f, &used), TSCOPE__LIVE_OK);
    ASSERT_EQ(f.kind, TSCOPE__LIVE_PROOF);
    if (tscope__live_session_proven(d, &f) != 0) {
        ASSERT(!d->proven);
        return -1;
    }
    return 0;
}

/* A sealed frame of s with payload text: its bytes in out (*n). */
static void seal(struct tscope__live_session *s, const char *text, unsigned char *out, size_t *n)
{
    size_t len = strlen(text);
    ASSERT_OK(tscope__live_header(out, TSCOPE__LIVE_COMMAND, len));
    memcpy(out + TSCOPE__LIVE_HEADER, text, len);
    *n = TSCOPE__LIVE_FRAME_BYTES(len);
    tscope__live_seal(s, ++s->send_seq, out, *n);
}

/* Whether s accepts frame[0, n). */
static int opens(struct tscope__live_session *s, const unsigned char *frame, size_t n)
{
    struct tscope__live_frame f;
    size_t used;
    const char *why = NULL;
    if (tscope__live_parse(frame, n, &f, &used) != TSCOPE__LIVE_OK || used != n)
        return 0;
    int ok = tscope__live_open(s, frame, used, &f, &why) == 0;
    ASSERT(ok || (why && *why));
    return ok;
}

static void authentication(void)
{
    unsigned char secret[TSCOPE__LIVE_SECRET], other[TSCOPE__LIVE_SECRET];
    tscope__live_random(secret, sizeof secret);
    memcpy(other, secret, sizeof other);
    other[31] ^= 0x01;
    struct tscope__live_session p, d, p2, d2;
    ASSERT_OK(pair(&p, &d, secret, secret));
    ASSERT(memcmp(p.send_key, d.recv_key, 32) == 0 && memcmp(p.recv_key, d.send_key, 32) == 0);
    ASSERT(memcmp(p.send_key, p.recv_key, 32) != 0); /* a key per direction */
    ASSERT(pair(&p2, &d2, other, secret) != 0);      /* the process checks the dashboard */
    ASSERT(pair(&p2, &d2, secret, other) != 0);      /* either way round */

    /* a replayed handshake: the process's challenge and proof of one
     * connection, sent again on another, fail there (its nonce differs) */
    {
        struct tscope__live_session pa, da, db;
        unsigned char c1[TSCOPE__LIVE_CHALLENGE_BYTES], c2[TSCOPE__LIVE_CHALLENGE_BYTES],
            c3[TSCOPE__LIVE_CHALLENGE_BYTES], proof[TSCOPE__LIVE_PROOF_BYTES];
        struct tscope__live_frame f;
        size_t used;
        tscope__live_session_begin(&pa, TSCOPE__LIVE_SIDE_PROCESS, secret, c1);
        tscope__live_session_begin(&da, TSCOPE__LIVE_SIDE_DASHBOARD, secret, NULL);
        tscope__live_session_begin(&db, TSCOPE__LIVE_SIDE_DASHBOARD, secret, NULL);
        ASSERT_EQ(tscope__live_parse(c1, sizeof c1, &f, &used), TSCOPE__LIVE_OK);
        ASSERT_OK(tscope__live_session_challenged(&da, &f, c2));
        ASSERT_OK(tscope__live_session_challenged(&db, &f, c3));
        ASSERT(memcmp(c2, c3, sizeof c2) != 0); /* fresh nonces */
        ASSERT_EQ(tscope__live_parse(c2, sizeof c2, &f, &used), TSCOPE__LIVE_OK);
        ASSERT_OK(tscope__live_session_answer(&pa, &f, proof));
        ASSERT_EQ(tscope__live_parse(proof, sizeof proof, &f, &used), TSCOPE__LIVE_OK);
        ASSERT(tscope__live_session_proven(&db, &f) != 0);
        ASSERT(!db.proven);
        ASSERT_OK(tscope__live_session_proven(&da, &f));
        /* a proof whose MAC is one bit off */
        tscope__live_session_begin(&db, TSCOPE__LIVE_SIDE_DASHBOARD, secret, NULL);
        ASSERT_EQ(tscope__live_parse(c1, sizeof c1, &f, &used), TSCOPE__LIVE_OK);
        ASSERT_OK(tscope__live_session_challenged(&db, &f, c3));
        ASSERT_EQ(tscope__live_parse(c3, sizeof c3, &f, &used), TSCOPE__LIVE_OK);
        tscope__live_session_begin(&pa, TSCOPE__LIVE_SIDE_PROCESS, secret, c2);
        memcpy(pa.np, db.np, sizeof pa.np); /* as if c1 had been this one's */
        ASSERT_OK(tscope__live_session_answer(&pa, &f, proof));
        proof[TSCOPE__LIVE_HEADER + 7] ^= 0x10;
        ASSERT_EQ(tscope__live_parse(proof, sizeof proof, &f, &used), TSCOPE__LIVE_OK);
        ASSERT(tscope__live_session_proven(&db, &f) != 0);
        proof[TSCOPE__LIVE_HEADER + 7] ^= 0x10;
        ASSERT_OK(tscope__live_session_proven(&db, &f));
    }

    /* frames both ways, in order */
    unsigned char a[128], b[128], c[128];
    size_t na, nb, nc;
    seal(&p, "{\"seq\":1}", a, &na);
    seal(&p, "{\"seq\":2}", b, &nb);
    seal(&d, "{\"id\":1,\"op\":\"pause\"}", c, &nc);
    ASSERT(opens(&d, a, na));
    ASSERT(!opens(&d, a, na)); /* replayed */
    ASSERT(opens(&d, b, nb));
    ASSERT(!opens(&d, c, nc)); /* its own direction's frame reflected back */
    ASSERT(opens(&p, c, nc));
    /* reordered: the third before the second */
    unsigned char e[128], g[128];
    size_t ne, ng;
    seal(&p, "{\"seq\":3}", e, &ne);
    seal(&p, "{\"seq\":4}", g, &ng);
    ASSERT(!opens(&d, g, ng));
    ASSERT(opens(&d, e, ne));
    /* one flipped bit anywhere: header, payload or MAC */
    for (size_t i = 0; i < ng; i++) {
        unsigned char t[128];
        memcpy(t, g, ng);
        t[i] ^= (unsigned char)(1u << (i % 8));
        uint64_t before = d.recv_seq;
        if (opens(&d, t, ng))
            TEST_FAIL("a frame with byte %zu flipped was accepted", i);
        ASSERT_EQ(d.recv_seq, before);
    }
    ASSERT(opens(&d, g, ng));
    /* a new connection with the same secret: frames of the old one fail */
    ASSERT_OK(pair(&p2, &d2, secret, secret));
    seal(&p, "{\"seq\":5}", a, &na);
    ASSERT(!opens(&d2, a, na)); /* seq 5 where 1 is due */
    struct tscope__live_session p3, d3;
    ASSERT_OK(pair(&p3, &d3, secret, secret));
    seal(&p2, "{\"seq\":1}", a, &na); /* number 1 of another connection */
    ASSERT(!opens(&d3, a, na));
    ASSERT(opens(&d2, a, na));

    /* TASKSCOPE_LIVE's value */
    char host[64], port[16], hex[TSCOPE__LIVE_SECRET_HEX + 1], value[200];
    unsigned char back[TSCOPE__LIVE_SECRET];
    tscope__live_secret_hex(secret, hex);
    ASSERT_EQ(strlen(hex), 64);
    snprintf(value, sizeof value, "[::1]:8741/%s", hex);
    ASSERT_OK(tscope__live_value(value, host, sizeof host, port, sizeof port, back));
    ASSERT_STR_EQ(host, "::1");
    ASSERT_STR_EQ(port, "8741");
    ASSERT(memcmp(back, secret, sizeof back) == 0);
    const char *accepted;
    ASSERT_OK(tscope__config_check("TASKSCOPE_LIVE", value, &accepted));
    static const char *const bad[] = {"127.0.0.1:8741", "127.0.0.1:8741/", "127.0.0.1:8741/abc",
                                      "127.0.0.1/%s",   ":8741/%s",        "host:port/%s",
                                      "h:8741/%s0",     "h:0/%s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char v[200];
        snprintf(v, sizeof v, bad[i], hex);
        int lib = tscope__live_value(v, host, sizeof host, port, sizeof port, back);
        int cfg = tscope__config_check("TASKSCOPE_LIVE", v, &accepted);
        if (cfg == 0 || (lib == 0 && strcmp(bad[i], "h:0/%s") != 0))
            TEST_FAIL("accepted: %s", v);
    }
    ASSERT(strstr(accepted, "HOST:PORT/SECRET") != NULL);
}

/* ---- the flat JSON reader ---- */

struct seen {
    char text[1024];
};

static void collect(void *ctx, const char *key, size_t klen, int kind, const char *str, size_t slen,
                    double num)
{
    struct seen *s = ctx;
    char value[256] = "";
    if (kind == 's')
        ASSERT(tscope__live_unescape(str, slen, value, sizeof value) >= 0);
    else if (kind == 'n' || kind == 'b')
        snprintf(value, sizeof value, "%g", num);
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%.*s:%c:%s;", (int)klen, key, kind, value);
}

static void json_reader(void)
{
    struct seen s = {""};
    const char *ok = " {\"id\": 7, \"op\":\"set\", \"x\":{\"deep\":[1,{\"}\":\"]\"}]},"
                     "\"name\":\"r\\u00e9\\\"q\", \"on\":true, \"off\":false, \"v\":-2.5e1,"
                     "\"z\":null, \"list\":[\"a\",2]} ";
    ASSERT_OK(tscope__live_json_fields(ok, strlen(ok), collect, &s));
    ASSERT_STR_EQ(s.text, "id:n:7;op:s:set;x:o:;name:s:r\xc3\xa9\"q;on:b:1;off:b:0;v:n:-25;z:z:;"
                          "list:o:;");
    static const char *const bad[] = {"",
                                      "[1]",
                                      "{\"a\":}",
                                      "{\"a\" 1}",
                                      "{\"a\":1,}",
                                      "{\"a\":1} x",
                                      "{\"a\":\"unterminated}",
                                      "{\"a\":tru}",
                                      "{\"a\":[1,2}",
                                      "{\"a\":1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct seen t = {""};
        if (tscope__live_json_fields(bad[i], strlen(bad[i]), collect, &t) != -1)
            TEST_FAIL("accepted: %s", bad[i]);
    }
    char out[8];
    ASSERT_EQ(tscope__live_unescape("abc", 3, out, sizeof out), 3);
    ASSERT_EQ(tscope__live_unescape("abcdefgh", 8, out, sizeof out), -1); /* no room */
    ASSERT_EQ(tscope__live_unescape("\\x", 2, out, sizeof out), -1);
    ASSERT_EQ(tscope__live_unescape("\\u12", 4, out, sizeof out), -1);
}

/* ---- a dashboard of our own ---- */

static int listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_OK(bind(fd, (struct sockaddr *)&a, sizeof a));
    ASSERT_OK(listen(fd, 4));
    socklen_t len = sizeof a;
    ASSERT_OK(getsockname(fd, (struct sockaddr *)&a, &len));
    *port = ntohs(a.sin_port);
    return fd;
}

static int accept_within(int lfd, int ms)
{
    struct pollfd p = {lfd, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, ms), 1);
    int fd = accept(lfd, NULL, NULL);
    ASSERT(fd >= 0);
    return fd;
}

static unsigned char rbuf[1 << 21];
static size_t rlen;
/* the test's dashboard side of the connection, and the secret both know */
static struct tscope__live_session dash;
static unsigned char the_secret[TSCOPE__LIVE_SECRET];

/* Waits until rbuf begins with a whole frame from fd (within ms): *f, and
 * its bytes (consume them with take()). */
static size_t whole_frame(int fd, int ms, struct tscope__live_frame *f)
{
    for (;;) {
        size_t used;
        enum tscope__live_parse r = tscope__live_parse(rbuf, rlen, f, &used);
        if (r == TSCOPE__LIVE_OK)
            return used;
        ASSERT_EQ(r, TSCOPE__LIVE_MORE);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, ms) != 1)
            TEST_FAIL("no frame within %d ms", ms);
        ssize_t n = recv(fd, rbuf + rlen, sizeof rbuf - rlen, 0);
        ASSERT(n > 0);
        rlen += (size_t)n;
    }
}

static void take(size_t used)
{
    memmove(rbuf, rbuf + used, rlen - used);
    rlen -= used;
}

/* The next frame from the process within ms, checked (sequence, MAC); its
 * kind, payload in *text (NUL-terminated, static). */
static unsigned next_frame(int fd, int ms, const char **text)
{
    static char payload[TSCOPE__LIVE_FRAME_MAX + 1];
    struct tscope__live_frame f;
    size_t used = whole_frame(fd, ms, &f);
    const char *why = "";
    if (tscope__live_open(&dash, rbuf, used, &f, &why) != 0)
        TEST_FAIL("a frame from the process fails its check: %s", why);
    memcpy(payload, f.payload, f.len);
    payload[f.len] = 0;
    take(used);
    *text = payload;
    return f.kind;
}

/* A frame of kind sealed for the connection; flip: a byte to change (-1
 * none, counted from the frame's start; beyond the payload: in the MAC). */
static void send_sealed(int fd, unsigned kind, const char *json, long flip)
{
    static unsigned char frame[TSCOPE__LIVE_FRAME_BYTES(4096)];
    size_t len = strlen(json), n = TSCOPE__LIVE_FRAME_BYTES(len);
    ASSERT(len <= 4096);
    ASSERT_OK(tscope__live_header(frame, kind, len));
    memcpy(frame + TSCOPE__LIVE_HEADER, json, len);
    tscope__live_seal(&dash, ++dash.send_seq, frame, n);
    if (flip >= 0)
        frame[flip] ^= 0x20;
    ASSERT_EQ(send(fd, frame, n, 0), (ssize_t)n);
}

static void send_frame(int fd, unsigned kind, const char *json)
{
    send_sealed(fd, kind, json, -1);
}

/* Accepts the process's next connection and does the dashboard's side of
 * the handshake with secret. */
static int dash_accept(int lfd, int ms, const unsigned char *secret)
{
    int fd = accept_within(lfd, ms);
    struct tscope__live_frame f;
    unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES];
    rlen = 0;
    tscope__live_session_begin(&dash, TSCOPE__LIVE_SIDE_DASHBOARD, secret, NULL);
    size_t used = whole_frame(fd, 3000, &f);
    ASSERT_EQ(f.kind, TSCOPE__LIVE_CHALLENGE);
    ASSERT_OK(tscope__live_session_challenged(&dash, &f, mine));
    take(used);
    ASSERT_EQ(send(fd, mine, sizeof mine, 0), (ssize_t)sizeof mine);
    used = whole_frame(fd, 3000, &f);
    ASSERT_EQ(f.kind, TSCOPE__LIVE_PROOF);
    ASSERT_OK(tscope__live_session_proven(&dash, &f));
    take(used);
    return fd;
}

/* TASKSCOPE_LIVE for port with the_secret (a new one). */
static void live_value(int port)
{
    char hex[TSCOPE__LIVE_SECRET_HEX + 1], value[128];
    tscope__live_random(the_secret, sizeof the_secret);
    tscope__live_secret_hex(the_secret, hex);
    snprintf(value, sizeof value, "127.0.0.1:%d/%s", port, hex);
    setenv("TASKSCOPE_LIVE", value, 1);
}

/* The next frame of kind (snapshots in between are skipped). */
static const char *next_of(int fd, unsigned kind)
{
    const char *t;
    for (int i = 0; i < 200; i++)
        if (next_frame(fd, 3000, &t) == kind)
            return t;
    TEST_FAIL("no frame of kind %u", kind);
}

/* ---- the program side ---- */

static double knob = 4;
static int set_knob(double v, void *data)
{
    (void)data;
    knob = v;
    return 0;
}
static double get_knob(void *data)
{
    (void)data;
    return knob;
}

static tscope_type_t t_work, t_special;
static _Atomic uint64_t begun;
static _Atomic int worker_stop;
static _Atomic int special_next; /* the next task the worker begins is "special" */

/* Tasks of type "deferred" created before the breakpoint, begun with type 0
 * (the type given at create: OMPT's way) by a thread of their own. */
#define DEFERRED 100
#define DEFERRED_ID (1ull << 40)
static _Atomic int deferred_begun;
static void *deferred_runner(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("deferred"));
    for (uint64_t k = 0; k < DEFERRED; k++) {
        ASSERT_OK(tscope_task_begin(DEFERRED_ID + k, 0));
        atomic_fetch_add(&deferred_begun, 1);
        ASSERT_OK(tscope_task_end(DEFERRED_ID + k));
    }
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("worker"));
    for (uint64_t id = 1000; !atomic_load(&worker_stop); id++) {
        tscope_type_t type = atomic_exchange(&special_next, 0) ? t_special : t_work;
        ASSERT_OK(tscope_task_start(id, type));
        atomic_fetch_add(&begun, 1);
        ASSERT_OK(tscope_task_end(id));
        usleep(200);
    }
    return NULL;
}

#ifdef TSCOPE_HAVE_JANSSON
static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        TEST_FAIL("not JSON (%s): %.200s", e.text, text);
    return j;
}

/* The debugger's state in the next snapshot: held threads, paused. */
static void debug_state(int fd, int *paused, long *held, char *hit, size_t hitlen)
{
    json_t *s = parse(next_of(fd, TSCOPE__LIVE_SNAPSHOT));
    json_t *d = json_object_get(s, "debug");
    *paused = json_is_true(json_object_get(d, "paused"));
    *held = (long)json_integer_value(json_object_get(d, "held"));
    const char *h = json_string_value(json_object_get(d, "hit"));
    snprintf(hit, hitlen, "%s", h ? h : "");
    json_decref(s);
}

/* Waits until the debugger reports paused with n held threads. */
static void wait_held(int fd, long n)
{
    int paused;
    long held = -1;
    char hit[64];
    for (int i = 0; i < 50; i++) {
        debug_state(fd, &paused, &held, hit, sizeof hit);
        if (paused && held == n)
            return;
    }
    TEST_FAIL("never paused with %ld held (last: %ld)", n, held);
}

/* The acknowledgement of command id: ok, and its text. */
static int acked(int fd, int id, char *text, size_t len)
{
    for (;;) {
        json_t *a = parse(next_of(fd, TSCOPE__LIVE_ACK));
        int got = (int)json_integer_value(json_object_get(a, "id"));
        int ok = json_is_true(json_object_get(a, "ok"));
        snprintf(text, len, "%s", json_string_value(json_object_get(a, "text")));
        json_decref(a);
        if (got == id)
            return ok;
    }
}

static void streamer(void)
{
    int port, lfd = listener(&port);
    live_value(port);
    setenv("TASKSCOPE_LIVE_MS", "20", 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "20", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("work", &t_work));
    ASSERT_OK(tscope_type_register("special", &t_special));
    /* a waiting type, used once: grey in the snapshots as in the pictures */
    tscope_type_t t_waiting;
    ASSERT_OK(tscope_type_register("waiting", &t_waiting));
    ASSERT_OK(tscope_type_set_attrs(t_waiting, TSCOPE_TYPE_WAIT));
    uint64_t wid = tscope_task_id_next();
    ASSERT_OK(tscope_task_start(wid, t_waiting));
    usleep(2000);
    ASSERT_OK(tscope_task_end(wid));
    tscope_param_desc_t d = {.struct_size = sizeof d,
                             .name = "test.knob",
                             .kind = TSCOPE_PARAM_INT,
                             .min = 1,
                             .max = 8,
                             .set = set_knob,
                             .get = get_knob};
    ASSERT_OK(tscope_param_register(&d));
    int fd = dash_accept(lfd, 5000, the_secret);
    const char *t;
    ASSERT_EQ(next_frame(fd, 3000, &t), TSCOPE__LIVE_HELLO);
    json_t *h = parse(t);
    ASSERT_EQ(json_integer_value(json_object_get(h, "pid")), getpid());
    json_decref(h);

    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, worker, NULL));
    /* snapshots: seq grows, types counted, the parameter described */
    long long seq0 = -1, seq = -1;
    int with_calls = 0, with_param = 0, with_rate = 0, with_colours = 0;
    for (int i = 0; i < 30; i++) {
        json_t *s = parse(next_of(fd, TSCOPE__LIVE_SNAPSHOT));
        seq = json_integer_value(json_object_get(s, "seq"));
        ASSERT(seq > seq0);
        seq0 = seq;
        size_t k;
        json_t *ty;
        json_array_foreach(json_object_get(s, "types"), k, ty)
        {
            if (strcmp(json_string_value(json_object_get(ty, "name")), "work") == 0 &&
                json_integer_value(json_object_get(ty, "calls")) > 0)
                with_calls = 1;
            /* registered, not used yet: left out */
            ASSERT(strcmp(json_string_value(json_object_get(ty, "name")), "special") != 0);
        }
        /* each type's colour by the pictures' rule (export/palette.h): the
         * waiting type a grey, the working one a colour, and they differ */
        const char *cw = NULL, *cg = NULL;
        json_array_foreach(json_object_get(s, "types"), k, ty)
        {
            const char *name = json_string_value(json_object_get(ty, "name"));
            const char *c = json_string_value(json_object_get(ty, "color"));
            ASSERT(c && strlen(c) == 7 && c[0] == '#');
            int wait = json_is_true(json_object_get(ty, "wait"));
            ASSERT_EQ(wait, strcmp(name, "waiting") == 0);
            int grey = strncmp(c + 1, c + 3, 2) == 0 && strncmp(c + 3, c + 5, 2) == 0;
            ASSERT_EQ(grey, wait);
            if (!strcmp(name, "work"))
                cw = c;
            else if (wait)
                cg = c;
        }
        if (cw && cg) {
            ASSERT(strcmp(cw, cg) != 0);
            with_colours = 1;
        }
        /* tasks ended per second: from the second snapshot on, >= 0 */
        json_t *rate = json_object_get(json_object_get(s, "series"), "tasks.ended_per_s");
        ASSERT(i == 0 || json_is_number(rate));
        if (rate) {
            ASSERT(json_number_value(rate) >= 0);
            with_rate |= json_number_value(rate) > 100; /* the worker ends ~4000 tasks/s */
        }
        json_t *p;
        json_array_foreach(json_object_get(s, "params"), k, p)
        {
            if (strcmp(json_string_value(json_object_get(p, "name")), "test.knob") == 0) {
                ASSERT_STR_EQ(json_string_value(json_object_get(p, "kind")), "int");
                ASSERT_EQ(json_integer_value(json_object_get(p, "max")), 8);
                with_param = (int)json_number_value(json_object_get(p, "value"));
            }
        }
        ASSERT(json_is_object(json_object_get(s, "series")));
        json_decref(s);
    }
    ASSERT(with_calls);
    ASSERT(with_colours);
    ASSERT(with_rate);
    ASSERT_EQ(with_param, 4);

    /* commands */
    char text[256];
    send_frame(fd, TSCOPE__LIVE_COMMAND,
               "{\"id\":11,\"op\":\"set\",\"name\":\"test.knob\",\"value\":2}");
    ASSERT(acked(fd, 11, text, sizeof text));
    ASSERT_STR_EQ(text, "test.knob = 2");
    ASSERT(knob == 2);
    send_frame(fd, TSCOPE__LIVE_COMMAND,
               "{\"id\":12,\"op\":\"set\",\"name\":\"test.knob\",\"value\":99}");
    ASSERT(!acked(fd, 12, text, sizeof text));
    ASSERT(strstr(text, "8") != NULL); /* the bound it broke */
    ASSERT(knob == 2);
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":13,\"op\":\"fly\",\"extra\":{\"x\":[1]}}");
    ASSERT(!acked(fd, 13, text, sizeof text));
    ASSERT_STR_EQ(text, "unknown op \"fly\"");

    /* the debugger: pause holds the worker before its next begin */
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":20,\"op\":\"pause\"}");
    ASSERT(acked(fd, 20, text, sizeof text));
    wait_held(fd, 1);
    uint64_t frozen = atomic_load(&begun);
    usleep(50000);
    ASSERT_EQ(atomic_load(&begun), frozen);
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":21,\"op\":\"step\"}");
    ASSERT(acked(fd, 21, text, sizeof text));
    wait_held(fd, 1); /* held again, one task later */
    ASSERT_EQ(atomic_load(&begun), frozen + 1);
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":22,\"op\":\"resume\"}");
    ASSERT(acked(fd, 22, text, sizeof text));
    usleep(50000);
    ASSERT(atomic_load(&begun) > frozen + 10);

    /* a breakpoint on a type whose tasks were created before it was set and
     * are begun with type 0: the gate finds their type in the store */
    tscope_type_t t_deferred;
    ASSERT_OK(tscope_type_register("deferred", &t_deferred));
    for (uint64_t k = 0; k < DEFERRED; k++)
        ASSERT_OK(tscope_task_create(DEFERRED_ID + k, 0, t_deferred, 0, 1, 0));
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":25,\"op\":\"break\",\"type\":\"deferred\"}");
    ASSERT(acked(fd, 25, text, sizeof text));
    pthread_t dth;
    ASSERT_OK(pthread_create(&dth, NULL, deferred_runner, NULL));
    {
        int paused = 0;
        long held = 0;
        char hit[64] = "";
        for (int i = 0; i < 100 && !(paused && held == 2 && strcmp(hit, "deferred") == 0); i++)
            debug_state(fd, &paused, &held, hit, sizeof hit); /* both threads held */
        ASSERT(paused && held == 2);
        ASSERT_STR_EQ(hit, "deferred");
        usleep(30000);
        ASSERT_EQ(atomic_load(&deferred_begun), 0); /* held before the first one */
    }
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":26,\"op\":\"clear_break\"}");
    ASSERT(acked(fd, 26, text, sizeof text));
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":27,\"op\":\"resume\"}");
    ASSERT(acked(fd, 27, text, sizeof text));
    ASSERT_OK(pthread_join(dth, NULL));
    ASSERT_EQ(atomic_load(&deferred_begun), DEFERRED);

    /* a breakpoint on "special": the worker stops before it */
    send_frame(fd, TSCOPE__LIVE_COMMAND, "{\"id\":30,\"op\":\"break\",\"type\":\"special\"}");
    ASSERT(acked(fd, 30, text, sizeof text));
    usleep(30000);
    ASSERT(atomic_load(&begun) > frozen + 10); /* "work" tasks still run */
    uint64_t before = atomic_load(&begun);
    atomic_store(&special_next, 1);
    wait_held(fd, 1);
    int paused;
    long held;
    char hit[64];
    debug_state(fd, &paused, &held, hit, sizeof hit);
    ASSERT_STR_EQ(hit, "special");
    uint64_t at_break = atomic_load(&begun);
    ASSERT(at_break >= before);
    usleep(30000);
    ASSERT_EQ(atomic_load(&begun), at_break);

    /* the dashboard goes away while paused: the worker goes on */
    close(fd);
    usleep(100000);
    ASSERT(atomic_load(&begun) > at_break + 5);

    /* it comes back (a new connection, HELLO again); a bad frame from it
     * ends that connection, and the process connects once more */
    fd = dash_accept(lfd, 8000, the_secret);
    ASSERT_EQ(next_frame(fd, 3000, &t), TSCOPE__LIVE_HELLO);
    ASSERT_EQ(send(fd, "XXXXXXXXXXXXXXXXXXXXXXXX", 24, 0), 24);
    int fd2 = dash_accept(lfd, 8000, the_secret);
    close(fd);
    ASSERT_EQ(next_frame(fd2, 3000, &t), TSCOPE__LIVE_HELLO);

    /* a command with one byte changed on the way (in its payload, in its
     * MAC) ends the connection and is not carried out; the next connection
     * carries out commands again */
    const char *set7 = "{\"id\":40,\"op\":\"set\",\"name\":\"test.knob\",\"value\":7}";
    long at[2] = {TSCOPE__LIVE_HEADER + 30, (long)TSCOPE__LIVE_FRAME_BYTES(strlen(set7)) - 5};
    for (int k = 0; k < 2; k++) {
        send_sealed(fd2, TSCOPE__LIVE_COMMAND, set7, at[k]);
        int fd3 = dash_accept(lfd, 8000, the_secret);
        /* the old connection was closed by the process: nothing more on it */
        char junk[256];
        struct pollfd pf = {fd2, POLLIN, 0};
        ASSERT_EQ(poll(&pf, 1, 3000), 1);
        ssize_t got;
        while ((got = recv(fd2, junk, sizeof junk, 0)) > 0)
            ; /* snapshots sent before it saw the command */
        ASSERT_EQ(got, 0);
        close(fd2);
        fd2 = fd3;
        ASSERT_EQ(next_frame(fd2, 3000, &t), TSCOPE__LIVE_HELLO);
        ASSERT(knob == 2);
    }
    send_frame(fd2, TSCOPE__LIVE_COMMAND, set7);
    ASSERT(acked(fd2, 40, text, sizeof text));
    ASSERT(knob == 7);

    atomic_store(&worker_stop, 1);
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(tscope_finalize());
    close(fd2);
    close(lfd);
    unsetenv("TASKSCOPE_LIVE");
}
#endif

/* ---- stderr captured ---- */

static char cap_path[64];
static int cap_saved = -1;

static void capture_begin(void)
{
    snprintf(cap_path, sizeof cap_path, "/tmp/test_live_stderr_XXXXXX");
    int fd = mkstemp(cap_path);
    cap_saved = dup(2);
    ASSERT(fd >= 0 && cap_saved >= 0);
    fflush(stderr);
    ASSERT(dup2(fd, 2) == 2);
    close(fd);
}

/* What was written to stderr since capture_begin (static), also echoed. */
static const char *capture_end(void)
{
    static char text[16384];
    fflush(stderr);
    ASSERT(dup2(cap_saved, 2) == 2);
    close(cap_saved);
    FILE *f = fopen(cap_path, "r");
    ASSERT(f != NULL);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    unlink(cap_path);
    fputs(text, stderr);
    return text;
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The old form TASKSCOPE_LIVE=HOST:PORT: one line saying what to set, no
 * connection, the program measured as without it. */
static void old_form(void)
{
    int port, lfd = listener(&port);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    setenv("TASKSCOPE_LIVE", addr, 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    capture_begin();
    ASSERT_OK(tscope_init(0, 1));
    tscope_type_t t;
    ASSERT_OK(tscope_type_register("old_form", &t));
    for (uint64_t id = 1; id <= 1000; id++) {
        ASSERT_OK(tscope_task_start(id, t));
        ASSERT_OK(tscope_task_end(id));
    }
    usleep(300000);
    struct pollfd p = {lfd, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 0), 0); /* nobody connected */
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(t, &st));
    ASSERT_EQ(st.calls, 1000);
    ASSERT_OK(tscope_finalize());
    const char *err = capture_end();
    ASSERT_EQ(count_of(err, "TASKSCOPE_LIVE"), 1);   /* one line, */
    ASSERT_EQ(count_of(err, "taskscope: live:"), 0); /* nothing else about it */
    char want[128];
    snprintf(want, sizeof want, "TASKSCOPE_LIVE=\"%s\" is invalid", addr);
    ASSERT(strstr(err, want) != NULL);
    ASSERT(strstr(err, "HOST:PORT/SECRET, the whole value `taskscope dashboard` prints") != NULL);
    close(lfd);
    unsetenv("TASKSCOPE_LIVE");
}

/* The process sent nothing on fd but, perhaps, its challenge, and closed
 * it (within 15 s). */
static void only_a_challenge(int fd)
{
    unsigned char got[256];
    size_t n = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ASSERT_EQ(poll(&p, 1, 15000), 1);
        ssize_t k = recv(fd, got + n, sizeof got - n, 0);
        ASSERT(k >= 0);
        if (k == 0)
            break;
        n += (size_t)k;
        ASSERT(n < sizeof got);
    }
    struct tscope__live_frame f;
    size_t used;
    ASSERT(n == 0 || n == TSCOPE__LIVE_CHALLENGE_BYTES);
    if (n)
        ASSERT(tscope__live_parse(got, n, &f, &used) == TSCOPE__LIVE_OK &&
               f.kind == TSCOPE__LIVE_CHALLENGE);
}

/* Fake dashboards: the old unauthenticated pause, then one that answers
 * with another secret.  The process is never paused, sends them nothing
 * about itself, says so once, and every task is counted. */
static void fake_dashboards(void)
{
    int port, lfd = listener(&port);
    live_value(port);
    setenv("TASKSCOPE_LIVE_MS", "20", 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    capture_begin();
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("work", &t_work));
    t_special = t_work;
    atomic_store(&worker_stop, 0);
    atomic_store(&begun, 0);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, worker, NULL));
    /* the old way (a version-1 COMMAND frame at once), twice */
    const char *pause = "{\"id\":1,\"op\":\"pause\"}";
    unsigned char v1[64] = "TSLV\x01\x00\x03\x00";
    v1[8] = (unsigned char)strlen(pause);
    memcpy(v1 + 12, pause, strlen(pause));
    for (int k = 0; k < 2; k++) {
        int fd = accept_within(lfd, 8000);
        ASSERT_EQ(send(fd, v1, 12 + strlen(pause), 0), (ssize_t)(12 + strlen(pause)));
        only_a_challenge(fd);
        close(fd);
    }
    /* a handshake with another secret, twice */
    unsigned char other[TSCOPE__LIVE_SECRET];
    memcpy(other, the_secret, sizeof other);
    other[5] ^= 0x40;
    for (int k = 0; k < 2; k++) {
        int fd = accept_within(lfd, 8000);
        struct tscope__live_frame f;
        unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES];
        rlen = 0;
        tscope__live_session_begin(&dash, TSCOPE__LIVE_SIDE_DASHBOARD, other, NULL);
        size_t used = whole_frame(fd, 3000, &f);
        ASSERT_EQ(f.kind, TSCOPE__LIVE_CHALLENGE);
        ASSERT_OK(tscope__live_session_challenged(&dash, &f, mine));
        take(used);
        ASSERT_EQ(rlen, 0);
        ASSERT_EQ(send(fd, mine, sizeof mine, 0), (ssize_t)sizeof mine);
        only_a_challenge(fd); /* no proof, no HELLO: closed */
        close(fd);
    }
    /* one that accepts and never answers: dropped after 10 s, then retried */
    {
        int fd = accept_within(lfd, 8000);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        only_a_challenge(fd); /* waits for the process to close it */
        clock_gettime(CLOCK_MONOTONIC, &t1);
        close(fd);
        double waited = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (waited < 9.0 || waited > 14.0)
            TEST_FAIL("a silent peer was dropped after %.1f s, not 10", waited);
        close(accept_within(lfd, 8000)); /* and the process tries again */
    }
    uint64_t b0 = atomic_load(&begun);
    usleep(100000);
    ASSERT(atomic_load(&begun) > b0 + 10); /* never paused */
    atomic_store(&worker_stop, 1);
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(t_work, &st));
    ASSERT_EQ(st.calls, atomic_load(&begun));
    ASSERT_OK(tscope_finalize());
    const char *err = capture_end();
    char want[128];
    snprintf(want, sizeof want, "taskscope: live: 127.0.0.1:%d did not prove it knows the secret",
             port);
    ASSERT_EQ(count_of(err, want), 1);               /* once, for four peers */
    ASSERT_EQ(count_of(err, "did not prove it"), 1); /* and nothing else said it */
    ASSERT_EQ(count_of(err, "connected to the dashboard"), 0);
    close(lfd);
    unsetenv("TASKSCOPE_LIVE");
}

/* No dashboard: tasks run, taskscope says so once and goes on. */
static void absent(void)
{
    int port, lfd = listener(&port);
    close(lfd); /* nobody listens there now */
    live_value(port);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    char log[] = "/tmp/test_live_stderr_XXXXXX";
    int logfd = mkstemp(log), saved = dup(2);
    ASSERT(logfd >= 0 && saved >= 0);
    fflush(stderr);
    ASSERT(dup2(logfd, 2) == 2);
    ASSERT_OK(tscope_init(0, 1));
    tscope_type_t t;
    ASSERT_OK(tscope_type_register("alone", &t));
    for (uint64_t id = 1; id <= 1000; id++) {
        ASSERT_OK(tscope_task_start(id, t));
        ASSERT_OK(tscope_task_end(id));
    }
    usleep(300000); /* several snapshots queue (and are dropped) meanwhile */
    ASSERT_OK(tscope_flush());
    tscope_type_stats_t st;
    ASSERT_OK(tscope_query_type(t, &st));
    ASSERT_EQ(st.calls, 1000);
    ASSERT_OK(tscope_finalize());
    fflush(stderr);
    ASSERT(dup2(saved, 2) == 2);
    close(saved);
    FILE *f = fopen(log, "r");
    ASSERT(f != NULL);
    char line[512];
    int said = 0;
    while (fgets(line, sizeof line, f))
        said += strstr(line, "cannot reach the dashboard at 127.0.0.1:") != NULL &&
                strstr(line, "the program goes on") != NULL;
    fclose(f);
    close(logfd);
    unlink(log);
    ASSERT_EQ(said, 1); /* said once, however many retries */
    unsetenv("TASKSCOPE_LIVE");
}

int main(void)
{
    RUN(frames);
    RUN(json_reader);
    RUN(old_form);
    char why[600];
    if (tscope__live_crypto(why, sizeof why) != 0) {
        printf("skipped: authentication, streamer, fake_dashboards, absent (%s)\n", why);
        return 0;
    }
    RUN(authentication);
#ifdef TSCOPE_HAVE_JANSSON
    RUN(streamer);
#else
    printf("skipped: streamer (built without jansson, which this test reads snapshots with)\n");
#endif
    RUN(fake_dashboards);
    RUN(absent);
    return 0;
}
