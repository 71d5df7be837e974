/* dashboard.h - the parts of `taskscope dashboard` (docs/dashboard.md) and
 * the few calls between them.
 *
 *   ingest thread (dashboard_ingest.c) --frames--> store (dashboard_store.c)
 *   store --events--> hub (dashboard_events.c) --SSE--> HTTP threads
 *   HTTP threads (dashboard_http.c): the page, /api/... (store), /metrics
 *   (dashboard_metrics.c), POST /api/control (dashboard_control.c), which
 *   queues COMMAND frames for the ingest thread to send.
 *
 * Concurrency: the store and the hub each have one mutex of their own; the
 * ingest thread alone owns the sockets of the processes; the HTTP threads
 * (libmicrohttpd, one per connection) only call the functions below, which
 * are all thread-safe unless said otherwise.  Everything is bounded: the
 * processes (TSCOPE__DASH_MAX_PROCESSES), each one's history (--history)
 * and all histories together with the frames being received (--memory,
 * struct tscope__dash_limits), each SSE listener's queue, a frame
 * (TSCOPE__LIVE_FRAME_MAX), a request body (TSCOPE__DASH_BODY_MAX), the
 * commands waiting to be sent, the connections on both ports and how long
 * each may take (struct tscope__dash_limits).
 */
#ifndef TSCOPE_CLI_DASHBOARD_H
#define TSCOPE_CLI_DASHBOARD_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "offline/wire.h"

#define TSCOPE__DASH_MAX_PROCESSES 4096 /* kept, connected or not */
#define TSCOPE__DASH_HISTORY_MAX 1000000
#define TSCOPE__DASH_MEMORY_MAX (1L << 20)     /* MiB, --memory */
#define TSCOPE__DASH_MAX_LISTENERS 64          /* SSE streams at once */
#define TSCOPE__DASH_LISTENER_EVENTS 1024      /* queued per SSE listener */
#define TSCOPE__DASH_LISTENER_BYTES (8u << 20) /* queued per SSE listener */
#define TSCOPE__DASH_KEEPALIVE_S 15
#define TSCOPE__DASH_BODY_MAX (64u << 10) /* a POST body */
#define TSCOPE__DASH_TEXT_MAX 256         /* host, program: longer ones cut */

/* ---- the bounds on both ports (docs/dashboard.md, "Limits") ----
 * Set once by dashboard.c before anything runs; read-only afterwards. */
struct tscope__dash_limits {
    unsigned http_request_ms; /* a request whole (headers and body) within this of the
                               * connection's opening or of its previous answer's end */
    unsigned ingest_auth_ms;  /* a process connection authenticated within this */
    unsigned ingest_frame_ms; /* a frame's first byte to its last */
    unsigned ingest_idle_ms;  /* an authenticated connection silent this long is closed */
    size_t frame_memory;      /* bytes the frames being received may hold together */
};
#define TSCOPE__DASH_HTTP_REQUEST_MS 10000
#define TSCOPE__DASH_INGEST_AUTH_MS 10000
#define TSCOPE__DASH_INGEST_FRAME_MS 30000
#define TSCOPE__DASH_INGEST_IDLE_MS 300000 /* 5 periods of the slowest stream (60 s) */
#define TSCOPE__DASH_FRAME_SHARE 4         /* frames being received: 1/4 of --memory */

/* ---- growable text: struct tscope__text (core/text.h, through offline/wire.h) ---- */

/* ---- JSON (dashboard_json.c) ---- */
/* 0 when s[0, n) is exactly one JSON object (RFC 8259, strictly; nesting
 * at most 64 deep), else -1.  Builds nothing; then a line break in s can
 * only be whitespace.  number (NULL: none) is called with each top-level
 * member whose value is a number, also when s turns out bad later. */
int tscope__dash_json_object(const char *s, size_t n,
                             void (*number)(void *ctx, const char *key, size_t klen, double v),
                             void *ctx);

/* ---- events (dashboard_events.c) ----
 * An event is the immutable text of one SSE message, "event: NAME\ndata:
 * HEAD BODY TAIL\n\n", reference counted: the store keeps its snapshots as
 * such events (the history then serves text[body_off, +body_len], the
 * snapshot's JSON as received) and the hub queues the same text to every
 * listener without copying it. */
struct tscope__dash_event {
    atomic_uint refs;
    size_t len;                /* of text */
    size_t body_off, body_len; /* BODY within text */
    char text[];
};
/* NULL when out of memory.  One reference, the caller's. */
struct tscope__dash_event *tscope__dash_event_new(const char *name, const char *head,
                                                  const char *body, size_t body_len,
                                                  const char *tail);
void tscope__dash_event_ref(struct tscope__dash_event *e);
void tscope__dash_event_unref(struct tscope__dash_event *e); /* NULL: nothing */

struct tscope__dash_hub;
struct tscope__dash_listener;
struct tscope__dash_hub *tscope__dash_hub_new(void);
/* Queues e to every listener that has room (never waits): one that has not
 * takes it as a dropped event, said in its stream as a comment. */
void tscope__dash_hub_publish(struct tscope__dash_hub *h, struct tscope__dash_event *e);
/* Ends every stream: readers return end of stream from now on. */
void tscope__dash_hub_stop(struct tscope__dash_hub *h);
/* After every listener was closed. */
void tscope__dash_hub_free(struct tscope__dash_hub *h);
/* A new listener, or NULL when stopped or TSCOPE__DASH_MAX_LISTENERS listen. */
struct tscope__dash_listener *tscope__dash_listen(struct tscope__dash_hub *h);
/* libmicrohttpd's content reader: up to max bytes of what is queued into
 * buf; waits (at most until the next keepalive, then writes one) while
 * nothing is.  -1 (end of stream) once the hub stopped.  One reader at a
 * time per listener. */
ssize_t tscope__dash_listener_read(struct tscope__dash_listener *l, char *buf, size_t max);
void tscope__dash_listener_close(struct tscope__dash_listener *l);

/* ---- processes and their history (dashboard_store.c) ---- */
struct tscope__dash_store;
/* history: snapshots kept per process (1..TSCOPE__DASH_HISTORY_MAX);
 * memory: bytes all histories may hold together, shared equally by the
 * processes kept (each keeps at least its latest snapshot); hub: where
 * snapshot, process and ack events go. */
struct tscope__dash_store *tscope__dash_store_new(size_t history, size_t memory,
                                                  struct tscope__dash_hub *hub);
void tscope__dash_store_free(struct tscope__dash_store *s);
/* A HELLO (JSON json[0, n)) from peer: creates the process (id 0: a new
 * one) or updates process id.  The process's id; 0 when there are already
 * TSCOPE__DASH_MAX_PROCESSES, all connected; -1 when json is not a JSON
 * object; -2 out of memory. */
long tscope__dash_store_hello(struct tscope__dash_store *s, long id, const char *peer,
                              const char *json, size_t n);
/* A SNAPSHOT of process id, received now: checked
 * (tscope__dash_json_object), kept as text (the oldest dropped beyond the
 * history), published with the process's origin on the dashboard's clock
 * (its "t" and the time it was received: dashboard_store.c).  0; -1 when
 * json is not a JSON object; -2 out of memory. */
int tscope__dash_store_snapshot(struct tscope__dash_store *s, long id, const char *json, size_t n);
/* An ACK of process id, published as it came.  0; -1 not a JSON object. */
int tscope__dash_store_ack(struct tscope__dash_store *s, long id, const char *json, size_t n);
/* Process id's connection ended: kept, marked not connected. */
void tscope__dash_store_gone(struct tscope__dash_store *s, long id);
/* GET /api/processes: the JSON array (malloc'ed, NUL-terminated); NULL when
 * out of memory. */
char *tscope__dash_store_processes(struct tscope__dash_store *s, size_t *len);
/* GET /api/history: process id's kept snapshots as a JSON array, oldest
 * first (malloc'ed).  0; -1 unknown process; -2 out of memory. */
int tscope__dash_store_history(struct tscope__dash_store *s, long id, char **body, size_t *len);
/* The connected processes a command to `id` (0: all) goes to, at most cap
 * into ids.  Their number, or -1 when id is no process's. */
long tscope__dash_store_targets(struct tscope__dash_store *s, long id, long *ids, size_t cap);

/* What /metrics reads of a process, valid during the callback only. */
struct tscope__dash_proc_view {
    long id, pid, rank;
    const char *program, *host;
    int connected;
    double drops;
    const json_t *latest; /* the last snapshot (an object), or NULL */
};
/* Calls fn for every process, in id order, with the store locked: fn must
 * be quick and must not call the store.  Before, parses (jansson, outside
 * the lock) each process's latest snapshot that was not parsed yet. */
void tscope__dash_store_each(struct tscope__dash_store *s,
                             void (*fn)(void *ctx, const struct tscope__dash_proc_view *v),
                             void *ctx);

/* What the histories hold together, and the budget (--memory), bytes. */
void tscope__dash_store_bytes(struct tscope__dash_store *s, size_t *held, size_t *budget);

/* ---- /metrics (dashboard_metrics.c) ---- */
/* The Prometheus text exposition (format 0.0.4) of every process into b. */
void tscope__dash_metrics(struct tscope__dash_store *s, struct tscope__text *b);

/* ---- the ingest thread (dashboard_ingest.c) ---- */
struct tscope__dash_ingest;
/* The ingest side of listen_fd (listening, taken over: closed by stop,
 * also on failure), its thread not yet started: commands queue until it
 * runs.  secret: what processes must prove they know (src/live/auth.h;
 * copied; libsodium loaded already).  NULL after a line on stderr. */
struct tscope__dash_ingest *tscope__dash_ingest_new(int listen_fd, struct tscope__dash_store *s,
                                                    const unsigned char *secret);
/* Sets the limits the thread enforces (before tscope__dash_ingest_run;
 * copied). */
void tscope__dash_ingest_limit(struct tscope__dash_ingest *g, const struct tscope__dash_limits *l);
/* Starts the thread: 0, or -1 after a line on stderr. */
int tscope__dash_ingest_run(struct tscope__dash_ingest *g);
/* Queues the COMMAND frame frame[0, len) (header included; copied) for
 * processes ids[0, n) and wakes the thread: 0, or -1 when too many
 * commands wait already or out of memory (nothing queued). */
int tscope__dash_ingest_send(struct tscope__dash_ingest *g, const long *ids, size_t n,
                             const unsigned char *frame, size_t len);
/* Stops and joins the thread (if it runs), closes every socket, frees g. */
void tscope__dash_ingest_stop(struct tscope__dash_ingest *g);

/* ---- what the HTTP side works with ---- */
struct tscope__dash {
    struct tscope__dash_store *store;
    struct tscope__dash_hub *hub;
    struct tscope__dash_ingest *ingest;
    const char *token;
    const char *webdir; /* NULL: no page to serve */
    struct tscope__dash_limits limits;
    atomic_long next_command;
};

/* POST /api/control (dashboard_control.c): checks the token (header_token,
 * NULL if none, or the body's "token"), encodes a COMMAND of the body's
 * fields and queues it.  *answer: the JSON answer (malloc'ed; NULL when out
 * of memory); returns the HTTP status. */
unsigned tscope__dash_control(struct tscope__dash *d, const char *header_token, const char *body,
                              size_t n, char **answer);
/* Whether given (NULL: none) is token, in a time that does not depend on
 * where they differ. */
int tscope__dash_same_token(const char *given, const char *token);

/* ---- HTTP (dashboard_http.c) ---- */
struct tscope__dash_http;
/* Serves d on listen_fd (listening; taken over, also on failure).  NULL
 * after a line on stderr. */
struct tscope__dash_http *tscope__dash_http_start(int listen_fd, int ipv6, struct tscope__dash *d);
/* Ends every request (stop the hub first, so SSE streams end) and frees h. */
void tscope__dash_http_stop(struct tscope__dash_http *h);

#endif
