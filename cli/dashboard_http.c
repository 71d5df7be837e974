/* dashboard_http.c - the dashboard's HTTP side (docs/dashboard.md): the
 * page and its static files, the JSON API, Server-Sent Events, the control
 * endpoint and /metrics, served with libmicrohttpd.
 *
 * Why libmicrohttpd (not civetweb or a hand-written server): it is packaged
 * in Debian (libmicrohttpd-dev, security fixes come with the distribution),
 * maintained as a GNU project, its API is plain C, and its
 * thread-per-connection mode suits SSE: a stream's content reader may block
 * on a condition variable in its own thread (tscope__dash_listener_read)
 * without holding up other requests or needing suspend/resume bookkeeping.
 * Connections are bounded (CONNECTION_LIMIT: a new one cuts the one that
 * waited longest for its request) and each request must be whole within
 * a deadline (limits.http_request_ms), both by dashboard_guard.c; one
 * being answered times out when idle (IDLE_TIMEOUT_S, above the SSE
 * keepalive period, so a live stream is never cut for idleness).  Answers
 * go out once the whole request is in, which keeps connections alive (an
 * earlier answer makes libmicrohttpd close them).
 *
 * Routes:
 *   GET /, /index.html      WEBDIR/index.html
 *   GET /static/NAME        WEBDIR/NAME (NAME: [A-Za-z0-9._/-], no "..", no
 *                           leading "/"); uPlot.iife.min.js and uPlot.min.css
 *                           from WEBDIR/node_modules/uplot/dist/ (npm), else
 *                           WEBDIR/NAME
 *   GET /api/processes      the store's list
 *   GET /api/history?id=ID  the process's kept snapshots, oldest first
 *   GET /api/events         the SSE stream (dashboard_events.c)
 *   POST /api/control       dashboard_control.c
 *   GET /metrics            dashboard_metrics.c
 * HEAD is accepted wherever GET is; another method is 405 with "Allow";
 * another path 404.  Every answer carries X-Content-Type-Options: nosniff.
 * Concurrency: the handlers run in libmicrohttpd's connection threads and
 * only call thread-safe functions (dashboard.h); h itself is read-only.
 */
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dashboard.h"
#include "dashboard_guard.h"

#define CONNECTION_LIMIT (TSCOPE__DASH_MAX_LISTENERS + 64)
#define CLOSING_ROOM 64 /* libmicrohttpd's own limit is this much higher: see the guard */
#define IDLE_TIMEOUT_S 60
#define SSE_BLOCK (32u << 10)

struct tscope__dash_http {
    struct MHD_Daemon *daemon;
    struct tscope__dash *d;
    struct tscope__dash_guard *guard;
};

/* A request's body being received (its con_cls), at most
 * TSCOPE__DASH_BODY_MAX bytes kept. */
struct upload {
    struct tscope__text body;
    int too_large;
};

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status, struct MHD_Response *r,
                               const char *type)
{
    if (!r)
        return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
    if (type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Answers text (malloc'ed, taken; NULL: out of memory). */
static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status, char *text,
                                    size_t len, const char *type)
{
    if (!text)
        return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r)
        free(text);
    return respond(conn, status, r, type);
}

static enum MHD_Result respond_json(struct MHD_Connection *conn, unsigned status, char *json)
{
    return respond_text(conn, status, json, json ? strlen(json) : 0, "application/json");
}

static enum MHD_Result respond_error(struct MHD_Connection *conn, unsigned status, const char *text)
{
    json_t *e = json_pack("{ss}", "error", text);
    char *json = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    return respond_json(conn, status, json);
}

static enum MHD_Result not_allowed(struct MHD_Connection *conn, const char *allow)
{
    json_t *e = json_pack("{ss}", "error", "method not allowed");
    char *json = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    if (!json)
        return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(json), json, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(json);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    return respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, r, "application/json");
}

static const char *content_type(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {{".html", "text/html; charset=utf-8"},
                 {".js", "text/javascript; charset=utf-8"},
                 {".css", "text/css; charset=utf-8"},
                 {".png", "image/png"},
                 {".svg", "image/svg+xml"},
                 {".json", "application/json"}};
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

/* A regular file's descriptor and size, or -1. */
static int open_file(const char *dir, const char *sub, const char *name, off_t *size)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s%s", dir, sub, name) >= (int)sizeof path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0)
        *size = st.st_size;
    return fd;
}

static int safe_name(const char *name)
{
    if (!*name || *name == '/' || strstr(name, ".."))
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-' || *p == '/'))
            return 0;
    return 1;
}

static enum MHD_Result serve_file(struct tscope__dash_http *h, struct MHD_Connection *conn,
                                  const char *name)
{
    const char *dir = h->d->webdir;
    if (!dir)
        return respond_error(conn, 404, "this dashboard has no web page (see --web)");
    if (!safe_name(name))
        return respond_error(conn, 404, "no such file");
    off_t size = 0;
    int fd = -1;
    if (strcmp(name, "uPlot.iife.min.js") == 0 || strcmp(name, "uPlot.min.css") == 0)
        fd = open_file(dir, "node_modules/uplot/dist/", name, &size);
    if (fd < 0)
        fd = open_file(dir, "", name, &size);
    if (fd < 0)
        return respond_error(conn, 404, "no such file");
    struct MHD_Response *r = MHD_create_response_from_fd((size_t)size, fd);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return respond(conn, MHD_HTTP_OK, r, content_type(name));
}

static enum MHD_Result serve_history(struct tscope__dash_http *h, struct MHD_Connection *conn)
{
    const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "id");
    char *end = NULL;
    long id = arg ? strtol(arg, &end, 10) : 0;
    if (!arg || !*arg || *end || id <= 0)
        return respond_error(conn, 400, "expected ?id=PROCESS");
    char *body = NULL;
    size_t len = 0;
    int rc = tscope__dash_store_history(h->d->store, id, &body, &len);
    if (rc == -1) {
        char text[64];
        snprintf(text, sizeof text, "no process %ld", id);
        return respond_error(conn, 404, text);
    }
    if (rc != 0)
        return respond_error(conn, 500, "out of memory");
    return respond_text(conn, MHD_HTTP_OK, body, len, "application/json");
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    return tscope__dash_listener_read(cls, buf, max);
}

static void sse_free(void *cls)
{
    tscope__dash_listener_close(cls);
}

static enum MHD_Result serve_events(struct tscope__dash_http *h, struct MHD_Connection *conn)
{
    struct tscope__dash_listener *l = tscope__dash_listen(h->d->hub);
    if (!l)
        return respond_error(conn, 503, "too many event streams");
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, l, sse_free);
    if (!r) {
        tscope__dash_listener_close(l);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    return respond(conn, MHD_HTTP_OK, r, "text/event-stream; charset=utf-8");
}

static enum MHD_Result serve_metrics(struct tscope__dash_http *h, struct MHD_Connection *conn)
{
    struct tscope__text b = {0};
    tscope__dash_metrics(h->d->store, &b);
    if (b.failed) {
        tscope__text_free(&b);
        return respond_error(conn, 500, "out of memory");
    }
    return respond_text(conn, MHD_HTTP_OK, b.p, b.len, "text/plain; version=0.0.4; charset=utf-8");
}

/* POST /api/control, once its body (u) is whole. */
static enum MHD_Result serve_control(struct tscope__dash_http *h, struct MHD_Connection *conn,
                                     const struct upload *u)
{
    if (u->too_large)
        return respond_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "the body is larger than 64 KiB");
    if (u->body.failed)
        return respond_error(conn, 500, "out of memory");
    const char *token = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Taskscope-Token");
    char *json = NULL;
    unsigned status =
        tscope__dash_control(h->d, token, u->body.p ? u->body.p : "", u->body.len, &json);
    return respond_json(conn, status, json);
}

static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    struct tscope__dash_http *h = cls;
    (void)code;
    tscope__dash_guard_answered(h->guard, conn);
    struct upload *u = *con_cls;
    if (u) {
        tscope__text_free(&u->body);
        free(u);
    }
    *con_cls = NULL;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con_cls)
{
    struct tscope__dash_http *h = cls;
    (void)version;
    /* libmicrohttpd calls once with the headers, then per piece of the
     * body, then once more: answering only then keeps the connection
     * alive (an answer before the whole request closes it) */
    struct upload *u = *con_cls;
    if (!u) {
        *con_cls = u = calloc(1, sizeof *u);
        return u ? MHD_YES : MHD_NO;
    }
    if (*size) {
        if (u->body.len + *size > TSCOPE__DASH_BODY_MAX)
            u->too_large = 1;
        else
            tscope__text_add(&u->body, data, *size);
        *size = 0;
        return MHD_YES;
    }
    tscope__dash_guard_answering(
        h->guard, conn,
        tscope__dash_same_token(
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Taskscope-Token"), h->d->token));
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (strcmp(url, "/api/control") == 0) {
        if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
            return not_allowed(conn, "POST");
        return serve_control(h, conn, u);
    }
    int known = strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0 ||
                strncmp(url, "/static/", 8) == 0 || strcmp(url, "/api/processes") == 0 ||
                strcmp(url, "/api/history") == 0 || strcmp(url, "/api/events") == 0 ||
                strcmp(url, "/metrics") == 0;
    if (!known)
        return respond_error(conn, 404, "no such page");
    if (!get)
        return not_allowed(conn, "GET, HEAD");
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return serve_file(h, conn, "index.html");
    if (strncmp(url, "/static/", 8) == 0)
        return serve_file(h, conn, url + 8);
    if (strcmp(url, "/api/processes") == 0) {
        size_t len = 0;
        char *json = tscope__dash_store_processes(h->d->store, &len);
        return respond_text(conn, MHD_HTTP_OK, json, len, "application/json");
    }
    if (strcmp(url, "/api/history") == 0)
        return serve_history(h, conn);
    if (strcmp(url, "/api/events") == 0)
        return serve_events(h, conn);
    return serve_metrics(h, conn);
}

struct tscope__dash_http *tscope__dash_http_start(int listen_fd, int ipv6, struct tscope__dash *d)
{
    struct tscope__dash_http *h = calloc(1, sizeof *h);
    if (!h) {
        close(listen_fd);
        fprintf(stderr, "taskscope dashboard: out of memory\n");
        return NULL;
    }
    h->d = d;
    unsigned slots = CONNECTION_LIMIT + CLOSING_ROOM;
    if (!(h->guard = tscope__dash_guard_new(d->limits.http_request_ms, CONNECTION_LIMIT, slots))) {
        close(listen_fd);
        free(h);
        return NULL;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | (ipv6 ? MHD_USE_IPv6 : 0);
    h->daemon = MHD_start_daemon(
        flags, 0, tscope__dash_guard_accept, h->guard, answer, h, MHD_OPTION_LISTEN_SOCKET,
        (MHD_socket)listen_fd, MHD_OPTION_CONNECTION_LIMIT, slots, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED, request_done, h,
        MHD_OPTION_NOTIFY_CONNECTION, tscope__dash_guard_notify, h->guard, MHD_OPTION_END);
    if (!h->daemon) {
        /* whether a failed start closed the socket it was given differs
         * between libmicrohttpd's versions; no other thread opens files yet */
        if (fcntl(listen_fd, F_GETFD) != -1)
            close(listen_fd);
        fprintf(stderr, "taskscope dashboard: libmicrohttpd could not start its HTTP server\n");
        tscope__dash_guard_free(h->guard);
        free(h);
        return NULL;
    }
    return h;
}

void tscope__dash_http_stop(struct tscope__dash_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->daemon); /* closes the listening socket, joins every connection */
    tscope__dash_guard_free(h->guard);
    free(h);
}
