/* test_live.c - the live protocol (src/live/proto.c) and the process's
 * streamer and task debugger (src/live/stream.c, debug.c), with this test
 * as the dashboard on a local socket:
 * - frames: a header round trip; every truncation of a frame asks for
 *   more; a wrong magic (from its first byte), a wrong version, an
 *   oversized length are errors; an unknown kind is skipped whole;
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
 *   the process connects again (a second HELLO);
 * - no dashboard listening: the program runs, one line says so.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

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
    size_t whole = TSCOPE__LIVE_HEADER + strlen(json), used = 99;
    struct tscope__live_frame f;
    ASSERT_EQ(tscope__live_parse(buf, whole, &f, &used), TSCOPE__LIVE_OK);
    ASSERT_EQ(used, whole);
    ASSERT_EQ(f.kind, TSCOPE__LIVE_SNAPSHOT);
    ASSERT_EQ(f.version, TSCOPE__LIVE_VERSION);
    ASSERT_EQ(f.len, strlen(json));
    ASSERT(memcmp(f.payload, json, f.len) == 0);
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
    bad[4] = 2; /* version 2 */
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

/* The next frame from the process within ms; its kind, payload in *text
 * (NUL-terminated, static). */
static unsigned next_frame(int fd, int ms, const char **text)
{
    static char payload[TSCOPE__LIVE_FRAME_MAX + 1];
    for (;;) {
        struct tscope__live_frame f;
        size_t used;
        enum tscope__live_parse r = tscope__live_parse(rbuf, rlen, &f, &used);
        if (r == TSCOPE__LIVE_OK) {
            memcpy(payload, f.payload, f.len);
            payload[f.len] = 0;
            memmove(rbuf, rbuf + used, rlen - used);
            rlen -= used;
            *text = payload;
            return f.kind;
        }
        ASSERT_EQ(r, TSCOPE__LIVE_MORE);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, ms) != 1)
            TEST_FAIL("no frame within %d ms", ms);
        ssize_t n = recv(fd, rbuf + rlen, sizeof rbuf - rlen, 0);
        ASSERT(n > 0);
        rlen += (size_t)n;
    }
}

static void send_frame(int fd, unsigned kind, const char *json)
{
    unsigned char hdr[TSCOPE__LIVE_HEADER];
    ASSERT_OK(tscope__live_header(hdr, kind, strlen(json)));
    ASSERT_EQ(send(fd, hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
    ASSERT_EQ(send(fd, json, strlen(json), 0), (ssize_t)strlen(json));
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
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    setenv("TASKSCOPE_LIVE", addr, 1);
    setenv("TASKSCOPE_LIVE_MS", "20", 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "20", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("work", &t_work));
    ASSERT_OK(tscope_type_register("special", &t_special));
    tscope_param_desc_t d = {.struct_size = sizeof d,
                             .name = "test.knob",
                             .kind = TSCOPE_PARAM_INT,
                             .min = 1,
                             .max = 8,
                             .set = set_knob,
                             .get = get_knob};
    ASSERT_OK(tscope_param_register(&d));
    int fd = accept_within(lfd, 5000);
    const char *t;
    ASSERT_EQ(next_frame(fd, 3000, &t), TSCOPE__LIVE_HELLO);
    json_t *h = parse(t);
    ASSERT_EQ(json_integer_value(json_object_get(h, "pid")), getpid());
    json_decref(h);

    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, worker, NULL));
    /* snapshots: seq grows, types counted, the parameter described */
    long long seq0 = -1, seq = -1;
    int with_calls = 0, with_param = 0, with_rate = 0;
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
    fd = accept_within(lfd, 8000);
    rlen = 0;
    ASSERT_EQ(next_frame(fd, 3000, &t), TSCOPE__LIVE_HELLO);
    ASSERT_EQ(send(fd, "XXXXXXXXXXXXXXXX", 16, 0), 16);
    int fd2 = accept_within(lfd, 8000);
    close(fd);
    rlen = 0;
    ASSERT_EQ(next_frame(fd2, 3000, &t), TSCOPE__LIVE_HELLO);

    atomic_store(&worker_stop, 1);
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(tscope_finalize());
    close(fd2);
    close(lfd);
    unsetenv("TASKSCOPE_LIVE");
}
#endif

/* No dashboard: tasks run, taskscope says so once and goes on. */
static void absent(void)
{
    int port, lfd = listener(&port);
    close(lfd); /* nobody listens there now */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    setenv("TASKSCOPE_LIVE", addr, 1);
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
#ifdef TSCOPE_HAVE_JANSSON
    RUN(streamer);
#else
    printf("skipped: streamer (built without jansson, which this test reads snapshots with)\n");
#endif
    RUN(absent);
    return 0;
}
