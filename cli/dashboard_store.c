/* dashboard_store.c - the processes the dashboard has heard of and their
 * bounded history of snapshots.
 *
 * A process is created by its connection's HELLO (ids count from 1, never
 * reused) and kept after it disconnects, with its history, until room is
 * needed: at TSCOPE__DASH_MAX_PROCESSES the oldest disconnected process
 * makes way for a new one; when all of them are connected a new one is
 * refused.  The processes are an array in id order (ids only grow, so
 * appending keeps it sorted and a lookup is a binary search).
 *
 * The histories together hold at most `memory` bytes (--memory), shared
 * equally: a process keeps its snapshots while they fit in memory /
 * processes (and always its latest), so one that sends large snapshots
 * keeps a shorter past, and a new process's arrival trims the others to
 * the smaller share.
 *
 * A snapshot is checked (tscope__dash_json_object: why not jansson there,
 * see dashboard_json.c), which also reads its top-level "t" and "drops",
 * outside the lock; the process keeps, in a ring of
 * `history` entries, each snapshot's text as received, inside the SSE event
 * that announced it (struct tscope__dash_event: one allocation, one copy,
 * serves the stream and the history).  Line breaks, which only whitespace
 * can hold in checked JSON and an SSE data line cannot, become spaces.
 * jansson parses a process's latest snapshot when /metrics needs it
 * (tscope__dash_store_each), at most once per snapshot, outside the lock;
 * only that parsed object is kept.
 *
 * Every process is put on the dashboard's own clock (the page's global
 * view, docs/dashboard.md): its origin, the dashboard's time of the
 * process's t = 0, is the smallest (received - t) over its snapshots - the
 * time a snapshot was received on the dashboard's monotonic clock, less the
 * t it carries (seconds since the process's tscope_init).  So no process's
 * own wall clock is read (hosts may disagree by seconds), a snapshot that
 * waited in the process's queue or the network does not move it, and the
 * origin is late by the smallest delivery delay only.  It is said as Unix
 * time: the monotonic clock plus the wall clock's offset to it when the
 * store was made (a wall clock set later does not move the processes
 * apart).
 *
 * Concurrency: one mutex guards everything; the ingest thread writes, the
 * HTTP threads read.  Work under the lock is O(1) per snapshot; the
 * history's answer takes references under the lock and copies the text
 * after it.  Events are published after the lock is released.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dashboard.h"

/* 15 digits: times read as 4.99717618, not 4.9971761800000003 */
#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

struct proc {
    long id, pid, rank, nranks;
    double started;
    char *host, *program, *peer;
    int connected;
    unsigned long long snapshots;     /* received */
    double drops, last_t;             /* of the latest snapshot */
    double origin;                    /* the dashboard's time of t = 0, monotonic s */
    int has_origin;                   /* a snapshot with a "t" was received */
    json_t *parsed;                   /* a recent snapshot, parsed for /metrics */
    unsigned long long parsed_n;      /* which: its number in snapshots */
    struct tscope__dash_event **ring; /* grows to the history */
    size_t ring_cap, head, count;
    size_t bytes; /* held by the ring's events */
};

struct tscope__dash_store {
    pthread_mutex_t lock;
    struct tscope__dash_hub *hub;
    size_t history;
    size_t memory, bytes; /* the budget of all histories; what they hold */
    double wall_offset;   /* Unix time less the monotonic clock, at the start */
    struct proc **procs;  /* by id */
    size_t nprocs;
    long next_id;
};

struct tscope__dash_store *tscope__dash_store_new(size_t history, size_t memory,
                                                  struct tscope__dash_hub *hub)
{
    struct tscope__dash_store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->procs = calloc(TSCOPE__DASH_MAX_PROCESSES, sizeof *s->procs);
    if (!s->procs || pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s->procs);
        free(s);
        return NULL;
    }
    s->hub = hub;
    s->history = history;
    s->memory = memory;
    s->next_id = 1;
    struct timespec wall, mono;
    clock_gettime(CLOCK_REALTIME, &wall);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    s->wall_offset = (double)(wall.tv_sec - mono.tv_sec) + (wall.tv_nsec - mono.tv_nsec) * 1e-9;
    return s;
}

/* The dashboard's monotonic clock, seconds. */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What an event costs a history. */
static size_t event_bytes(const struct tscope__dash_event *e)
{
    return sizeof *e + e->len + sizeof e;
}

/* Drops p's oldest snapshot; store locked. */
static void drop_oldest(struct tscope__dash_store *s, struct proc *p)
{
    struct tscope__dash_event *e = p->ring[p->head];
    p->bytes -= event_bytes(e);
    s->bytes -= event_bytes(e);
    tscope__dash_event_unref(e);
    p->head = (p->head + 1) % p->ring_cap;
    p->count--;
}

/* Trims p to its share of the memory (its latest snapshot stays). */
static void trim(struct tscope__dash_store *s, struct proc *p)
{
    size_t share = s->memory / (s->nprocs ? s->nprocs : 1);
    while (p->count > 1 && p->bytes > share)
        drop_oldest(s, p);
}

static void proc_free(struct tscope__dash_store *s, struct proc *p)
{
    s->bytes -= p->bytes;
    for (size_t i = 0; i < p->count; i++)
        tscope__dash_event_unref(p->ring[(p->head + i) % p->ring_cap]);
    free(p->ring);
    json_decref(p->parsed);
    free(p->host);
    free(p->program);
    free(p->peer);
    free(p);
}

void tscope__dash_store_free(struct tscope__dash_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nprocs; i++)
        proc_free(s, s->procs[i]);
    free(s->procs);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The process with id, or NULL; store locked. */
static struct proc *find(struct tscope__dash_store *s, long id)
{
    size_t lo = 0, hi = s->nprocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->procs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->nprocs && s->procs[lo]->id == id ? s->procs[lo] : NULL;
}

/* The /api/processes entry of p; store locked. */
static json_t *proc_json(const struct tscope__dash_store *s, const struct proc *p)
{
    return json_pack("{sI sI sI sI ss ss ss sf sb sI sI sI sI sf so}", "id", (json_int_t)p->id,
                     "pid", (json_int_t)p->pid, "rank", (json_int_t)p->rank, "nranks",
                     (json_int_t)p->nranks, "host", p->host ? p->host : "", "program",
                     p->program ? p->program : "", "peer", p->peer ? p->peer : "", "started",
                     p->started, "connected", p->connected, "snapshots", (json_int_t)p->snapshots,
                     "kept", (json_int_t)p->count, "kept_bytes", (json_int_t)p->bytes, "drops",
                     (json_int_t)p->drops, "last_t", p->last_t, "origin",
                     p->has_origin ? json_real(p->origin + s->wall_offset) : json_null());
}

/* An SSE event for a JSON value (NULL: none, e.g. out of memory); frees v. */
static struct tscope__dash_event *event_of(const char *name, json_t *v)
{
    char *text = v ? json_dumps(v, DUMP_FLAGS) : NULL;
    json_decref(v);
    if (!text)
        return NULL;
    struct tscope__dash_event *e = tscope__dash_event_new(name, "", text, strlen(text), "");
    free(text);
    return e;
}

static void publish(struct tscope__dash_store *s, struct tscope__dash_event *e)
{
    if (e) {
        tscope__dash_hub_publish(s->hub, e);
        tscope__dash_event_unref(e);
    }
}

static long int_field(const json_t *o, const char *key, long otherwise)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? (long)json_number_value(v) : otherwise;
}

static double number_field(const json_t *o, const char *key, double otherwise)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : otherwise;
}

/* A copy of o's string field key, at most TSCOPE__DASH_TEXT_MAX bytes (cut
 * at a character boundary), or NULL. */
static char *text_field(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v)
        return NULL;
    size_t n = strlen(v);
    if (n > TSCOPE__DASH_TEXT_MAX) {
        n = TSCOPE__DASH_TEXT_MAX;
        while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
            n--;
    }
    return strndup(v, n);
}

/* Makes room for one more process: 0, or -1 when all are connected. */
static int make_room(struct tscope__dash_store *s)
{
    if (s->nprocs < TSCOPE__DASH_MAX_PROCESSES)
        return 0;
    for (size_t i = 0; i < s->nprocs; i++) {
        if (!s->procs[i]->connected) {
            proc_free(s, s->procs[i]);
            memmove(s->procs + i, s->procs + i + 1, (s->nprocs - i - 1) * sizeof *s->procs);
            s->nprocs--;
            return 0;
        }
    }
    return -1;
}

long tscope__dash_store_hello(struct tscope__dash_store *s, long id, const char *peer,
                              const char *json, size_t n)
{
    json_t *hello = json_loadb(json, n, 0, NULL);
    if (!json_is_object(hello)) {
        json_decref(hello);
        return -1;
    }
    char *host = text_field(hello, "host"), *program = text_field(hello, "program");
    char *peer_copy = strdup(peer);
    long answer = -2;
    json_t *changed = NULL;
    pthread_mutex_lock(&s->lock);
    struct proc *p = id ? find(s, id) : NULL;
    if (!p && make_room(s) != 0) {
        answer = 0;
    } else if (!p && (p = calloc(1, sizeof *p)) != NULL) {
        p->id = s->next_id++;
        s->procs[s->nprocs++] = p;
        for (size_t i = 0; i < s->nprocs; i++) /* a smaller share for each */
            trim(s, s->procs[i]);
    }
    if (p && answer != 0) {
        p->pid = int_field(hello, "pid", 0);
        p->rank = int_field(hello, "rank", 0);
        p->nranks = int_field(hello, "nranks", 1);
        p->started = number_field(hello, "started", 0);
        free(p->host);
        free(p->program);
        free(p->peer);
        p->host = host;
        p->program = program;
        p->peer = peer_copy;
        host = program = peer_copy = NULL;
        p->connected = 1;
        answer = p->id;
        changed = proc_json(s, p);
    }
    pthread_mutex_unlock(&s->lock);
    free(host);
    free(program);
    free(peer_copy);
    json_decref(hello);
    publish(s, event_of("process", changed));
    return answer;
}

/* Appends e to p's ring, which takes a reference, dropping the oldest
 * beyond the history: 0, or -1 out of memory (nothing changed).  Store
 * locked. */
static int ring_push(struct tscope__dash_store *s, struct proc *p, struct tscope__dash_event *e)
{
    if (p->count == p->ring_cap && p->ring_cap < s->history) {
        size_t cap = p->ring_cap ? p->ring_cap * 2 : 16;
        if (cap > s->history)
            cap = s->history;
        struct tscope__dash_event **ring = malloc(cap * sizeof *ring);
        if (!ring)
            return -1;
        for (size_t i = 0; i < p->count; i++)
            ring[i] = p->ring[(p->head + i) % p->ring_cap];
        free(p->ring);
        p->ring = ring;
        p->ring_cap = cap;
        p->head = 0;
    }
    if (p->count == p->ring_cap) /* full: the oldest goes */
        drop_oldest(s, p);
    tscope__dash_event_ref(e);
    p->ring[(p->head + p->count++) % p->ring_cap] = e;
    p->bytes += event_bytes(e);
    s->bytes += event_bytes(e);
    trim(s, p);
    return 0;
}

struct top {
    double t, drops;
    int has_t, has_drops;
};

static void top_number(void *ctx, const char *key, size_t klen, double v)
{
    struct top *top = ctx;
    if (klen == 1 && key[0] == 't') {
        top->t = v;
        top->has_t = 1;
    } else if (klen == 5 && memcmp(key, "drops", 5) == 0) {
        top->drops = v;
        top->has_drops = 1;
    }
}

/* Process id's origin after a snapshot with t received at now (monotonic):
 * 1 and *origin (Unix time), 0 when it has none (no t yet), -1 unknown id.
 * A t that is not 0 to 1e9 s (31 years) says nothing. */
static int move_origin(struct tscope__dash_store *s, long id, const struct top *top, double now,
                       double *origin)
{
    pthread_mutex_lock(&s->lock);
    struct proc *p = find(s, id);
    int rc = p ? 0 : -1;
    int valid = top->has_t && top->t >= 0 && top->t < 1e9;
    if (p && valid && (!p->has_origin || now - top->t < p->origin)) {
        p->origin = now - top->t;
        p->has_origin = 1;
    }
    if (p && p->has_origin) {
        *origin = p->origin + s->wall_offset;
        rc = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int tscope__dash_store_snapshot(struct tscope__dash_store *s, long id, const char *json, size_t n)
{
    double now = mono_now(), origin = 0;
    struct top top = {0};
    if (tscope__dash_json_object(json, n, top_number, &top) != 0)
        return -1;
    char head[96];
    if (move_origin(s, id, &top, now, &origin) == 1)
        snprintf(head, sizeof head, "{\"id\":%ld,\"origin\":%.4f,\"snapshot\":", id, origin);
    else
        snprintf(head, sizeof head, "{\"id\":%ld,\"snapshot\":", id);
    struct tscope__dash_event *e = tscope__dash_event_new("snapshot", head, json, n, "}");
    if (!e)
        return -2;
    /* line breaks: whitespace only, json was checked */
    for (char *c = e->text + e->body_off, *end = c + e->body_len;
         (c = memchr(c, '\n', (size_t)(end - c))) != NULL;)
        *c++ = ' ';
    for (char *c = e->text + e->body_off, *end = c + e->body_len;
         (c = memchr(c, '\r', (size_t)(end - c))) != NULL;)
        *c++ = ' ';
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    struct proc *p = find(s, id);
    if (p && ring_push(s, p, e) == 0) {
        p->snapshots++;
        if (top.has_drops)
            p->drops = top.drops;
        if (top.has_t)
            p->last_t = top.t;
    } else if (p) {
        rc = -2;
    }
    pthread_mutex_unlock(&s->lock);
    if (p && rc == 0)
        tscope__dash_hub_publish(s->hub, e);
    tscope__dash_event_unref(e);
    return rc;
}

int tscope__dash_store_ack(struct tscope__dash_store *s, long id, const char *json, size_t n)
{
    json_t *ack = json_loadb(json, n, 0, NULL);
    if (!json_is_object(ack)) {
        json_decref(ack);
        return -1;
    }
    publish(s, event_of("ack", json_pack("{sI so}", "id", (json_int_t)id, "ack", ack)));
    return 0;
}

void tscope__dash_store_gone(struct tscope__dash_store *s, long id)
{
    json_t *changed = NULL;
    pthread_mutex_lock(&s->lock);
    struct proc *p = find(s, id);
    if (p) {
        p->connected = 0;
        changed = proc_json(s, p);
    }
    pthread_mutex_unlock(&s->lock);
    publish(s, event_of("process", changed));
}

char *tscope__dash_store_processes(struct tscope__dash_store *s, size_t *len)
{
    json_t *all = json_array();
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; all && i < s->nprocs; i++)
        if (json_array_append_new(all, proc_json(s, s->procs[i])) != 0) {
            json_decref(all);
            all = NULL;
        }
    pthread_mutex_unlock(&s->lock);
    char *text = all ? json_dumps(all, DUMP_FLAGS) : NULL;
    json_decref(all);
    if (text)
        *len = strlen(text);
    return text;
}

int tscope__dash_store_history(struct tscope__dash_store *s, long id, char **body, size_t *len)
{
    struct tscope__dash_event **kept = NULL;
    size_t n = 0;
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    struct proc *p = find(s, id);
    if (!p) {
        rc = -1;
    } else if (p->count && !(kept = malloc(p->count * sizeof *kept))) {
        rc = -2;
    } else {
        for (n = 0; n < p->count; n++) {
            kept[n] = p->ring[(p->head + n) % p->ring_cap];
            tscope__dash_event_ref(kept[n]);
        }
    }
    pthread_mutex_unlock(&s->lock);
    struct tscope__text b = {0};
    tscope__text_add(&b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i)
            tscope__text_add(&b, ",", 1);
        tscope__text_add(&b, kept[i]->text + kept[i]->body_off, kept[i]->body_len);
        tscope__dash_event_unref(kept[i]);
    }
    tscope__text_add(&b, "]", 1);
    free(kept);
    if (rc != 0 || b.failed) {
        tscope__text_free(&b);
        return rc ? rc : -2;
    }
    *body = b.p;
    *len = b.len;
    return 0;
}

long tscope__dash_store_targets(struct tscope__dash_store *s, long id, long *ids, size_t cap)
{
    long n = 0;
    pthread_mutex_lock(&s->lock);
    if (id) {
        struct proc *p = find(s, id);
        if (!p)
            n = -1;
        else if (p->connected && cap > 0)
            ids[n++] = p->id;
    } else {
        for (size_t i = 0; i < s->nprocs && (size_t)n < cap; i++)
            if (s->procs[i]->connected)
                ids[n++] = s->procs[i]->id;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Parses, outside the lock, the latest snapshot of each process whose
 * parsed one is older. */
static void parse_latest(struct tscope__dash_store *s)
{
    struct stale {
        long id;
        unsigned long long n;
        struct tscope__dash_event *e;
        json_t *parsed;
    } * v;
    size_t k = 0;
    pthread_mutex_lock(&s->lock);
    v = s->nprocs ? malloc(s->nprocs * sizeof *v) : NULL;
    for (size_t i = 0; v && i < s->nprocs; i++) {
        struct proc *p = s->procs[i];
        if (p->count && p->parsed_n != p->snapshots) {
            struct tscope__dash_event *e = p->ring[(p->head + p->count - 1) % p->ring_cap];
            tscope__dash_event_ref(e);
            v[k++] = (struct stale){p->id, p->snapshots, e, NULL};
        }
    }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < k; i++) {
        v[i].parsed = json_loadb(v[i].e->text + v[i].e->body_off, v[i].e->body_len,
                                 JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
        if (!json_is_object(v[i].parsed)) {
            json_decref(v[i].parsed);
            v[i].parsed = NULL;
        }
    }
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < k; i++) {
        struct proc *p = find(s, v[i].id);
        if (p && v[i].n > p->parsed_n) {
            json_decref(p->parsed);
            p->parsed = v[i].parsed;
            p->parsed_n = v[i].n;
            v[i].parsed = NULL;
        }
    }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < k; i++) {
        json_decref(v[i].parsed);
        tscope__dash_event_unref(v[i].e);
    }
    free(v);
}

void tscope__dash_store_each(struct tscope__dash_store *s,
                             void (*fn)(void *ctx, const struct tscope__dash_proc_view *v),
                             void *ctx)
{
    parse_latest(s);
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->nprocs; i++) {
        const struct proc *p = s->procs[i];
        struct tscope__dash_proc_view v = {
            p->id,        p->pid,   p->rank,  p->program ? p->program : "", p->host ? p->host : "",
            p->connected, p->drops, p->parsed};
        fn(ctx, &v);
    }
    pthread_mutex_unlock(&s->lock);
}

void tscope__dash_store_bytes(struct tscope__dash_store *s, size_t *held, size_t *budget)
{
    pthread_mutex_lock(&s->lock);
    *held = s->bytes;
    *budget = s->memory;
    pthread_mutex_unlock(&s->lock);
}
