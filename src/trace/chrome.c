/* chrome.c - the trace as Chrome trace-event JSON, which Perfetto and
 * chrome://tracing open (FORMATS.md has the facts this relies on).
 *
 * Stays are B/E pairs (in time order per thread, properly nested), one
 * process (pid rank + 1, named with rank and OS pid) with one track per thread slot,
 * counters as counter tracks, custom events as thread instants, and flow
 * arrows (s/f, the f bound to the enclosing slice) for creations and
 * dependencies.  Numbers are formatted by hand into one buffer: this is
 * the converter's whole cost per event.  `.gz` output goes through zlib.
 * The file is whole or absent (core/outfile.h): written under a temporary
 * name, renamed when complete, removed when anything failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert.h"
#include "core/hazard.h"
#include "core/json_escape.h"
#include "core/outfile.h"
#include "job.h"
#include "put.h"
#include "taskscope/taskscope.h"

#ifdef TSCOPE_HAVE_ZLIB
#include <zlib.h>
#endif

#define OUT_BYTES (1u << 20)

struct out {
    struct tscope__outfile file; /* whole or absent (core/outfile.h) */
#ifdef TSCOPE_HAVE_ZLIB
    gzFile gz;
#endif
    char *buf;
    size_t len;
    int failed;
    const struct tscope__trace *t;
    uint32_t pid;
    uint64_t offset; /* ns added to every time (a job's ranks on one clock) */
    uint64_t flow_id;
    struct tscope__msgs msgs; /* a job's messages, to be joined (job mode only) */
    uint64_t arrows;          /* message arrows written */
    char **type_json;         /* type names as JSON strings, by id (lazily) */
    uint32_t ntype_json;
};

static void flush_out(struct out *o)
{
    if (!o->len || o->failed)
        return;
#ifdef TSCOPE_HAVE_ZLIB
    if (o->gz) {
        if (gzwrite(o->gz, o->buf, (unsigned)o->len) != (int)o->len) {
            tscope__outfile_fail(&o->file);
            o->failed = 1;
        }
        o->len = 0;
        return;
    }
#endif
    if (fwrite(o->buf, 1, o->len, o->file.f) != o->len) {
        tscope__outfile_fail(&o->file);
        o->failed = 1;
    }
    o->len = 0;
}

static inline char *reserve(struct out *o, size_t n)
{
    if (OUT_BYTES - o->len < n)
        flush_out(o);
    return o->buf + o->len;
}

/* ns as µs with three decimals (Perfetto keeps ns). */
static inline char *put_us(char *p, uint64_t ns)
{
    p = tscope__put_u64(p, ns / 1000);
    unsigned frac = (unsigned)(ns % 1000);
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    *p++ = (char)('0' + frac / 10 % 10);
    *p++ = (char)('0' + frac % 10);
    return p;
}

/* s as a JSON string (quotes included), at most 255 bytes of input. */
static char *put_json(char *p, const char *s)
{
    char buf[8];
    *p++ = '"';
    size_t n;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += n) {
        const char *e = tscope__json_escape(c, buf, &n);
        if (e)
            p = tscope__put_str(p, e);
        else
            for (size_t k = 0; k < n; k++)
                *p++ = (char)c[k];
    }
    *p++ = '"';
    return p;
}

/* The JSON name of a table entry ("type 7" when the trace has none). */
static char *put_name(char *p, const struct out *o, int table, uint32_t id, const char *unknown)
{
    const char *name = tscope__trace_name(o->t, table, id);
    if (name)
        return put_json(p, name);
    p = tscope__put_str(p, "\"");
    p = tscope__put_str(p, unknown);
    *p++ = ' ';
    p = tscope__put_u64(p, id);
    return tscope__put_str(p, "\"");
}

static const char *type_json(struct out *o, uint32_t type)
{
    if (type >= o->ntype_json) {
        uint32_t n = o->ntype_json ? o->ntype_json : 64;
        while (n <= type)
            n *= 2;
        char **g = realloc(o->type_json, n * sizeof *g);
        if (!g)
            return NULL;
        memset(g + o->ntype_json, 0, (n - o->ntype_json) * sizeof *g);
        o->type_json = g;
        o->ntype_json = n;
    }
    if (!o->type_json[type]) {
        char tmp[6 * 256 + 16];
        char *end = type ? put_name(tmp, o, TSCOPE__TABLE_TYPES, type, "type")
                         : tscope__put_str(tmp, "\"(untyped)\"");
        *end = 0;
        o->type_json[type] = strdup(tmp);
    }
    return o->type_json[type];
}

static inline char *put_head(char *p, const struct out *o, const char *ph, uint32_t thread,
                             uint64_t ns)
{
    p = tscope__put_str(p, ",\n{\"ph\":\"");
    p = tscope__put_str(p, ph);
    p = tscope__put_str(p, "\",\"pid\":");
    p = tscope__put_u64(p, o->pid);
    p = tscope__put_str(p, ",\"tid\":");
    p = tscope__put_u64(p, (uint64_t)thread + 1);
    p = tscope__put_str(p, ",\"ts\":");
    return put_us(p, ns + o->offset);
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    struct out *o = ctx;
    const char *name = type_json(o, type);
    if (!name)
        return -1;
    char *p = reserve(o, 160 + strlen(name));
    p = put_head(p, o, "B", thread, ns);
    p = tscope__put_str(p, ",\"cat\":\"task\",\"name\":");
    p = tscope__put_str(p, name);
    p = tscope__put_str(p, ",\"args\":{\"task\":");
    p = tscope__put_u64(p, task);
    p = tscope__put_str(p, "}}");
    o->len = (size_t)(p - o->buf);
    return o->failed;
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    (void)type;
    struct out *o = ctx;
    char *p = reserve(o, 96);
    p = put_head(p, o, "E", thread, ns);
    *p++ = '}';
    o->len = (size_t)(p - o->buf);
    return o->failed;
}

static int flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)from_task;
    (void)to_task;
    char text[32];
    struct out *o = ctx;
    const char *name = kind == TSCOPE__FLOW_CREATE ? "create"
                       : hazard                    ? tscope__hazard_text(hazard, text, sizeof text)
                                                   : "dep";
    const char *cat = kind == TSCOPE__FLOW_CREATE ? "create" : "dependency";
    uint64_t id = ++o->flow_id;
    char *p = reserve(o, 320);
    for (int end = 0; end < 2; end++) {
        p = put_head(p, o, end ? "f" : "s", end ? to_thread : from_thread, end ? to_ns : from_ns);
        if (end)
            p = tscope__put_str(p, ",\"bp\":\"e\"");
        p = tscope__put_str(p, ",\"id\":");
        p = tscope__put_u64(p, id);
        p = tscope__put_str(p, ",\"cat\":\"");
        p = tscope__put_str(p, cat);
        p = tscope__put_str(p, "\",\"name\":\"");
        p = tscope__put_str(p, name);
        p = tscope__put_str(p, "\"}");
    }
    o->len = (size_t)(p - o->buf);
    return o->failed;
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    (void)thread;
    struct out *o = ctx;
    char *p = reserve(o, 6 * 256 + 128);
    p = tscope__put_str(p, ",\n{\"ph\":\"C\",\"pid\":");
    p = tscope__put_u64(p, o->pid);
    p = tscope__put_str(p, ",\"ts\":");
    p = put_us(p, ns + o->offset);
    p = tscope__put_str(p, ",\"name\":");
    p = put_name(p, o, TSCOPE__TABLE_COUNTERS, id, "counter");
    p = tscope__put_str(p, ",\"args\":{\"value\":");
    if (value != value || value - value != 0) /* NaN, infinities: not JSON */
        p = tscope__put_str(p, "null");
    else
        p += snprintf(p, 32, "%.17g", value);
    p = tscope__put_str(p, "}}");
    o->len = (size_t)(p - o->buf);
    return o->failed;
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload)
{
    struct out *o = ctx;
    char *p = reserve(o, 6 * 256 + 128);
    p = put_head(p, o, "i", thread, ns);
    p = tscope__put_str(p, ",\"s\":\"t\",\"cat\":\"event\",\"name\":");
    p = put_name(p, o, TSCOPE__TABLE_EVENTS, event, "event");
    p = tscope__put_str(p, ",\"args\":{\"payload\":");
    p = tscope__put_u64(p, payload);
    p = tscope__put_str(p, "}}");
    o->len = (size_t)(p - o->buf);
    return o->failed;
}

/* What the trace says of itself (one rank), then its process. */
static void process_meta(struct out *o, int first);

static void write_head(struct out *o)
{
    const struct tscope__trace_info *i = tscope__trace_info(o->t);
    char *p = reserve(o, 1024);
    p = tscope__put_str(p, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"taskscope\","
                           "\"trace_status\":");
    p = put_json(p, tscope__trace_status_text(i->status, i->cut));
    p = tscope__put_str(p, ",\"rank\":");
    p = tscope__put_u64(p, i->rank);
    p = tscope__put_str(p, ",\"nranks\":");
    p = tscope__put_u64(p, i->nranks);
    p = tscope__put_str(p, ",\"realtime_origin_ns\":");
    p = tscope__put_u64(p, i->realtime_ns);
    p = tscope__put_str(p, "},\n\"traceEvents\":[\n");
    o->len = (size_t)(p - o->buf);
    process_meta(o, 1);
}

/* The process of the trace o->t (a rank): its name, order and threads. */
static void process_meta(struct out *o, int first)
{
    const struct tscope__trace_info *i = tscope__trace_info(o->t);
    char *p = reserve(o, 1024);
    p = tscope__put_str(p, first ? "{\"ph\":\"M\",\"pid\":" : ",\n{\"ph\":\"M\",\"pid\":");
    p = tscope__put_u64(p, o->pid);
    p = tscope__put_str(p, ",\"name\":\"process_name\",\"args\":{\"name\":\"rank ");
    p = tscope__put_u64(p, i->rank);
    p = tscope__put_str(p, " (pid ");
    p = tscope__put_u64(p, i->pid);
    p = tscope__put_str(p, ")\"}},\n{\"ph\":\"M\",\"pid\":");
    p = tscope__put_u64(p, o->pid);
    p = tscope__put_str(p, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":");
    p = tscope__put_u64(p, i->rank);
    p = tscope__put_str(p, "}}");
    o->len = (size_t)(p - o->buf);
    for (uint32_t th = 0; th < i->threads; th++) {
        const char *name = tscope__trace_name(o->t, TSCOPE__TABLE_THREADS, th);
        p = reserve(o, 6 * 256 + 256);
        for (int k = 0; k < 2; k++) {
            p = tscope__put_str(p, ",\n{\"ph\":\"M\",\"pid\":");
            p = tscope__put_u64(p, o->pid);
            p = tscope__put_str(p, ",\"tid\":");
            p = tscope__put_u64(p, (uint64_t)th + 1);
            if (k == 0) {
                p = tscope__put_str(p, ",\"name\":\"thread_name\",\"args\":{\"name\":");
                p = name ? put_json(p, name) : tscope__put_str(p, "\"thread\"");
            } else {
                p = tscope__put_str(p, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
                p = tscope__put_u64(p, th);
            }
            p = tscope__put_str(p, "}}");
        }
        o->len = (size_t)(p - o->buf);
    }
}

/* Opens out for o (gzip: through zlib; "-": stdout) under its temporary
 * name; 0, or -1 with err. */
static int open_out(struct out *o, const char *out, int gzip, char *err, size_t errlen)
{
#ifndef TSCOPE_HAVE_ZLIB
    if (gzip) {
        snprintf(err, errlen,
                 "%s: this taskscope was built without zlib (zlib1g-dev): no .gz "
                 "output",
                 out);
        return -1;
    }
#endif
    if (tscope__outfile_open(&o->file, out, err, errlen))
        return -1;
#ifdef TSCOPE_HAVE_ZLIB
    if (gzip) {
        int fd = dup(fileno(o->file.f));
        o->gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
        if (!o->gz) {
            snprintf(err, errlen, "cannot create %s: %s", out, strerror(errno ? errno : ENOMEM));
            if (fd >= 0)
                close(fd);
            tscope__outfile_close(&o->file, 0, err, errlen);
            return -1;
        }
    }
#endif
    return 0;
}

/* Ends the document, closes out (renamed into place when whole, else
 * removed) and frees o's buffers; rc, or -1 with err when writing failed
 * (the file and the reason, instead of the replay's "the output
 * failed"). */
static int close_out(struct out *o, int rc, char *err, size_t errlen)
{
    char *p = reserve(o, 8);
    p = tscope__put_str(p, "\n]}\n");
    o->len = (size_t)(p - o->buf);
    flush_out(o);
#ifdef TSCOPE_HAVE_ZLIB
    if (o->gz && gzclose(o->gz) != Z_OK) {
        tscope__outfile_fail(&o->file);
        o->failed = 1;
    }
#endif
    if (o->failed)
        tscope__outfile_fail(&o->file);
    if (tscope__outfile_finish(&o->file, rc == 0 && !o->failed, err, errlen))
        rc = -1;
    for (uint32_t i = 0; i < o->ntype_json; i++)
        free(o->type_json[i]);
    free(o->type_json);
    free(o->buf);
    o->buf = NULL;
    return rc;
}

int tscope__trace_to_chrome(struct tscope__trace *t, const char *out, int gzip,
                            struct tscope__replay_stats *st, char *err, size_t errlen)
{
    struct out o = {.t = t, .pid = tscope__trace_info(t)->rank + 1};
    o.buf = malloc(OUT_BYTES);
    if (!o.buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (open_out(&o, out, gzip, err, errlen)) {
        free(o.buf);
        return -1;
    }
    write_head(&o);
    struct tscope__trace_sink sink = {&o,      slice_begin, slice_end, flow,
                                      counter, instant,     NULL,      NULL};
    int rc = tscope__trace_replay(t, &sink, st, err, errlen);
    return close_out(&o, rc, err, errlen);
}

/* ---- a job: the ranks' traces in one file, messages as arrows ----------- */

static int message(void *ctx, uint32_t thread, uint64_t ns, uint32_t peer, uint64_t bytes,
                   uint32_t tag, unsigned flags)
{
    struct out *o = ctx;
    struct tscope__msg m = {ns + o->offset, bytes, o->pid - 1, peer, tag, thread, (uint8_t)flags};
    return tscope__msgs_add(&o->msgs, &m);
}

/* One arrow from a send to its receive. */
static int message_arrow(void *ctx, const struct tscope__msg *snd, const struct tscope__msg *rcv)
{
    struct out *o = ctx;
    uint64_t id = ++o->flow_id;
    char *p = reserve(o, 400);
    for (int end = 0; end < 2; end++) {
        const struct tscope__msg *m = end ? rcv : snd;
        p = tscope__put_str(p, ",\n{\"ph\":\"");
        p = tscope__put_str(p, end ? "f\",\"bp\":\"e" : "s");
        p = tscope__put_str(p, "\",\"pid\":");
        p = tscope__put_u64(p, (uint64_t)m->rank + 1);
        p = tscope__put_str(p, ",\"tid\":");
        p = tscope__put_u64(p, (uint64_t)m->thread + 1);
        p = tscope__put_str(p, ",\"ts\":");
        p = put_us(p, m->ns);
        p = tscope__put_str(p, ",\"id\":");
        p = tscope__put_u64(p, id);
        p = tscope__put_str(p, (m->flags & TSCOPE_MSG_COLLECTIVE) ? ",\"cat\":\"collective\""
                                                                  : ",\"cat\":\"message\"");
        p = tscope__put_str(p, ",\"name\":\"");
        p = tscope__put_u64(p, snd->bytes);
        p = tscope__put_str(p, " B\"}");
    }
    o->len = (size_t)(p - o->buf);
    o->arrows++;
    return o->failed;
}

int tscope__trace_job_to_chrome(const char *const *paths, int n, const char *out, int gzip,
                                struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                                size_t errlen)
{
    memset(st, 0, sizeof *st);
    *unmatched = 0;
    struct tscope__job job;
    if (tscope__job_open(&job, paths, n, err, errlen))
        return -1;
    int rc = 0;
    struct out o = {0};
    if (!(o.buf = malloc(OUT_BYTES))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!rc && open_out(&o, out, gzip, err, errlen)) {
        free(o.buf); /* nothing to close */
        o.buf = NULL;
        rc = -1;
    }
    for (int r = 0; r < n && !rc; r++) {
        o.t = job.t[r];
        o.pid = tscope__trace_info(job.t[r])->rank + 1;
        o.offset = job.offset[r];
        if (r == 0)
            write_head(&o);
        else
            process_meta(&o, 0);
        struct tscope__trace_sink sink = {&o,      slice_begin, slice_end, flow,
                                          counter, instant,     NULL,      message};
        struct tscope__replay_stats one;
        rc = tscope__trace_replay(job.t[r], &sink, &one, err, errlen);
        tscope__job_add_stats(st, &one, o.offset);
        for (uint32_t k = 0; k < o.ntype_json; k++) { /* each rank names its own types */
            free(o.type_json[k]);
            o.type_json[k] = NULL;
        }
    }
    if (!rc && o.buf) {
        rc = tscope__msgs_join(&o.msgs, message_arrow, &o, unmatched) ? -1 : 0;
        st->flows += o.arrows;
    }
    if (o.buf)
        rc = close_out(&o, rc, err, errlen);
    tscope__job_close(&job);
    tscope__msgs_free(&o.msgs);
    return rc;
}

/* The job writer takes gzip as the file writer does. */
const struct tscope__trace_format tscope__trace_chrome = {
    "Chrome/Perfetto trace JSON for ui.perfetto.dev and chrome://tracing (-o NAME.gz: "
    "compressed)",
    "trace.json",
    "trace.json.gz",
    "",
    NULL,
    0,
    tscope__trace_to_chrome,
    tscope__trace_job_to_chrome};
