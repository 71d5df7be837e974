/* writer.c - encodes the records the consumer drained into trace.tsct
 * (format.h), on the consumer thread only.
 *
 * One buffer of whole chunks, written at each round's end (or when full):
 * a record costs a few byte stores here and nothing on the producer.  A
 * write that fails (ENOSPC, EFBIG, EIO) or the size limit ends the trace:
 * the file is cut back to its last whole chunk, its header marked FULL or
 * LIMIT, one line goes to stderr, and later records are only counted.
 */
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/core.h"
#include "core/names.h"
#include "format.h"

#define BUF_BYTES (1u << 20)
#define REC_MAX 48u /* the longest encoded record, with room to spare */

static struct {
    int fd;
    char path[1200];
    unsigned char *buf;
    size_t len;            /* bytes buffered (whole chunks, plus the open one) */
    uint64_t file_bytes;   /* bytes in the file */
    uint64_t max_bytes;    /* 0: no limit */
    int status;            /* TSCOPE__TRACE_* */
    uint64_t events, lost; /* records written; records after a stop */
    double factor;         /* ns per tick last written */
    uint32_t names[3];     /* names written per table */
    char (*thread_names)[64];
    uint32_t thread_cap;
    /* the open EVENTS chunk */
    size_t chunk;   /* its offset in buf; SIZE_MAX: none */
    uint32_t owner; /* its thread slot */
    uint64_t prev_ts, prev_id;
} w = {.fd = -1, .chunk = SIZE_MAX};

const char *tscope__trace_path(void)
{
    return w.path;
}

/* Ends the trace after a failed write of `written` bytes of the buffer:
 * keeps the whole chunks among them, marks the header, says so once. */
static void stop_truncated(int status, size_t written, int err)
{
    size_t keep = 0;
    while (keep + 8 <= written) {
        size_t next = keep + 8 + tscope__le32_get(w.buf + keep + 4);
        if (next > written)
            break;
        keep = next;
    }
    w.file_bytes += keep;
    if (ftruncate(w.fd, (off_t)w.file_bytes) != 0) {
        /* the cut failed: the reader stops at the partial chunk anyway */
    }
    unsigned char st[4];
    tscope__le32_put(st, (uint32_t)status);
    ssize_t n = pwrite(w.fd, st, sizeof st, TSCOPE__TRACE_STATUS_AT);
    (void)n;
    close(w.fd);
    w.fd = -1;
    w.status = status;
    w.len = 0;
    w.chunk = SIZE_MAX;
    if (status == TSCOPE__TRACE_LIMIT)
        fprintf(stderr,
                "taskscope: warning: trace %s: TASKSCOPE_TRACE_MAX_MB reached at %.1f MiB; the "
                "trace stops here (marked truncated), the profile is still written\n",
                w.path, (double)w.file_bytes / (1024.0 * 1024.0));
    else
        fprintf(stderr,
                "taskscope: error: trace %s: write failed after %.1f MiB (%s); the trace stops "
                "here (marked truncated), the profile is still written\n",
                w.path, (double)w.file_bytes / (1024.0 * 1024.0), strerror(err));
}

/* Writes the buffered whole chunks (the open chunk, if any, stays). */
static void flush(void)
{
    size_t upto = w.chunk == SIZE_MAX ? w.len : w.chunk;
    if (w.fd < 0 || upto == 0)
        return;
    size_t allowed = upto;
    if (w.max_bytes && w.file_bytes + upto > w.max_bytes)
        allowed = w.file_bytes >= w.max_bytes ? 0 : (size_t)(w.max_bytes - w.file_bytes);
    size_t done = 0;
    while (done < allowed) {
        ssize_t n = write(w.fd, w.buf + done, allowed - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = n == 0 ? ENOSPC : errno;
            stop_truncated(TSCOPE__TRACE_FULL, done, err);
            return;
        }
        done += (size_t)n;
    }
    if (allowed < upto) {
        stop_truncated(TSCOPE__TRACE_LIMIT, done, 0);
        return;
    }
    w.file_bytes += upto;
    memmove(w.buf, w.buf + upto, w.len - upto);
    w.len -= upto;
    if (w.chunk != SIZE_MAX)
        w.chunk -= upto;
}

/* Room for n more bytes in the buffer (flushing whole chunks); 0 or -1
 * when the trace has stopped. */
static int room(size_t n)
{
    if (w.fd < 0)
        return -1;
    if (BUF_BYTES - w.len < n)
        flush();
    return w.fd < 0 || BUF_BYTES - w.len < n ? -1 : 0;
}

static unsigned char *chunk_open(uint32_t kind)
{
    unsigned char *p = w.buf + w.len;
    tscope__le32_put(p, kind);
    tscope__le32_put(p + 4, 0);
    return p + 8;
}

static void chunk_close(unsigned char *start, unsigned char *end)
{
    tscope__le32_put(start - 4, (uint32_t)(end - start));
    w.len = (size_t)(end - w.buf);
}

static void write_clock(void)
{
    if (room(8 + 24))
        return;
    double f = tscope__clock_ns_per_tick();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t now = tscope__clock_now();
    double since = tscope__clock_ns(now - tscope__g.origin);
    uint64_t real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - (uint64_t)since;
    unsigned char *p = chunk_open(TSCOPE__CHUNK_CLOCK), *start = p;
    uint64_t bits;
    memcpy(&bits, &f, sizeof bits);
    tscope__le64_put(p, bits);
    tscope__le64_put(p + 8, tscope__g.origin);
    tscope__le64_put(p + 16, real);
    chunk_close(start, p + 24);
    w.factor = f;
}

/* Appends one NAMES entry, opening a chunk (*start) or starting a new
 * one when the buffer is short; 0, or -1 when the trace has stopped. */
static int name_entry(unsigned char **start, unsigned char **p, int table, uint32_t id,
                      const char *name)
{
    size_t n = strlen(name);
    if (*start && (size_t)(*p - w.buf) + n + 32 > BUF_BYTES) {
        chunk_close(*start, *p);
        *start = NULL;
    }
    if (!*start) {
        if (room(n + 64))
            return -1;
        *start = *p = chunk_open(TSCOPE__CHUNK_NAMES);
    }
    unsigned char *q = *p;
    *q++ = (unsigned char)table;
    q = tscope__varint_put(q, id);
    q = tscope__varint_put(q, n);
    memcpy(q, name, n);
    *p = q + n;
    return 0;
}

/* One NAMES entry per name added to the tables since the last call, and
 * one for the thread slot when its name is new (a reused slot). */
static void write_names(uint32_t thread)
{
    static struct tscope__names *const tables[3] = {&tscope__types, &tscope__counters,
                                                    &tscope__events};
    if (thread >= w.thread_cap) {
        uint32_t cap = w.thread_cap ? w.thread_cap : 64;
        while (cap <= thread)
            cap *= 2;
        char(*grown)[64] = realloc(w.thread_names, cap * sizeof *grown);
        if (!grown)
            return; /* names are a convenience: the events go on */
        memset(grown + w.thread_cap, 0, (cap - w.thread_cap) * sizeof *grown);
        w.thread_names = grown;
        w.thread_cap = cap;
    }
    const char *tname = tscope__g.threads[thread]->name;
    int thread_new = !w.thread_names[thread][0] || strncmp(w.thread_names[thread], tname, 63);
    unsigned char *start = NULL, *p = NULL;
    for (int t = 0; t < 3; t++) {
        uint32_t count = tscope__names_count(tables[t]);
        for (; w.names[t] < count; w.names[t]++) {
            char name[TSCOPE__NAME_MAX + 1];
            if (tscope__names_get(tables[t], w.names[t] + 1, name, sizeof name) == 0 &&
                name_entry(&start, &p, t, w.names[t] + 1, name))
                return;
        }
    }
    if (thread_new) {
        snprintf(w.thread_names[thread], 64, "%s", tname[0] ? tname : "?");
        if (name_entry(&start, &p, TSCOPE__TABLE_THREADS, thread, w.thread_names[thread]))
            return;
    }
    if (start)
        chunk_close(start, p);
}

static unsigned char *events_open(uint32_t thread, uint64_t ts)
{
    if (room(TSCOPE__TRACE_CHUNK_MAX / 4))
        return NULL;
    unsigned char *p = chunk_open(TSCOPE__CHUNK_EVENTS);
    w.chunk = w.len;
    p = tscope__varint_put(p, thread);
    tscope__le64_put(p, ts);
    w.owner = thread;
    w.prev_ts = ts;
    w.prev_id = 0;
    return p + 8;
}

static void events_close(unsigned char *p)
{
    if (w.chunk == SIZE_MAX)
        return;
    chunk_close(w.buf + w.chunk + 8, p);
    w.chunk = SIZE_MAX;
}

static inline unsigned char *put_id(unsigned char *p, uint64_t id)
{
    p = tscope__varint_put(p, tscope__zigzag((int64_t)(id - w.prev_id)));
    w.prev_id = id;
    return p;
}

void tscope__trace_batch(uint32_t thread, struct tscope__ring *r, uint64_t from, uint64_t to)
{
    if (w.fd < 0) {
        w.lost += to - from;
        return;
    }
    if (from == to)
        return;
    write_names(thread);
    const struct tscope__rec *buf = r->buf;
    const uint64_t mask = r->mask;
    unsigned char *p = events_open(thread, buf[from & mask].ts);
    if (!p) {
        w.lost += to - from;
        return;
    }
    /* the open chunk may grow to here */
    size_t cap = BUF_BYTES - w.chunk < TSCOPE__TRACE_CHUNK_MAX ? BUF_BYTES - w.chunk
                                                               : TSCOPE__TRACE_CHUNK_MAX;
    unsigned char *limit = w.buf + w.chunk + cap - REC_MAX;
    uint64_t n = 0;
    for (uint64_t c = from; c < to; c++) {
        const struct tscope__rec *rec = &buf[c & mask];
        if (p >= limit && rec->kind != TSCOPE__REC_EXT) { /* an EXT stays with its record */
            events_close(p);
            p = events_open(thread, rec->ts);
            if (!p) {
                w.lost += to - c;
                w.events += n;
                return;
            }
            cap = BUF_BYTES - w.chunk < TSCOPE__TRACE_CHUNK_MAX ? BUF_BYTES - w.chunk
                                                                : TSCOPE__TRACE_CHUNK_MAX;
            limit = w.buf + w.chunk + cap - REC_MAX;
        }
        if (rec->kind == TSCOPE__REC_INSTANCE || rec->kind == TSCOPE__REC_BELOW) {
            c += tscope__rec_exts(rec); /* the instance graph's, not events */
            continue;
        }
        *p++ = rec->kind;
        if (rec->kind == TSCOPE__REC_EXT) {
            p = tscope__varint_put(p, rec->id);
            continue;
        }
        n++;
        p = tscope__varint_put(p, tscope__zigzag((int64_t)(rec->ts - w.prev_ts)));
        w.prev_ts = rec->ts;
        uint8_t flags = rec->flags & (uint8_t)~TSCOPE__REC_SHADOW; /* a shadow's mark (record.h) */
        switch (rec->kind) {
        case TSCOPE__REC_CREATE:
            p = put_id(p, rec->id);
            p = tscope__varint_put(p, tscope__zigzag((int64_t)(rec->arg - rec->id)));
            p = tscope__varint_put(p, rec->type);
            p = tscope__varint_put(p, tscope__zigzag(rec->prio));
            p = tscope__varint_put(p, rec->depth);
            *p++ = flags;
            break;
        case TSCOPE__REC_BEGIN:
        case TSCOPE__REC_START:
            p = put_id(p, rec->id);
            p = tscope__varint_put(p, rec->type);
            break;
        case TSCOPE__REC_DEP_LOCAL:
            p = put_id(p, rec->id);
            p = tscope__varint_put(p, tscope__zigzag((int64_t)(rec->arg - rec->id)));
            *p++ = flags;
            p = tscope__varint_put(p, (uint16_t)rec->prio);
            break;
        case TSCOPE__REC_DEP_REMOTE:
            p = put_id(p, rec->id);
            p = tscope__varint_put(p, tscope__zigzag((int64_t)(rec->arg - rec->id)));
            p = tscope__varint_put(p, rec->type);
            p = tscope__varint_put(p, rec->depth);
            *p++ = flags;
            break;
        case TSCOPE__REC_COUNTER:
            p = tscope__varint_put(p, rec->type);
            tscope__le64_put(p, rec->arg);
            p += 8;
            break;
        case TSCOPE__REC_CUSTOM:
            p = tscope__varint_put(p, rec->type);
            p = tscope__varint_put(p, rec->arg);
            break;
        case TSCOPE__REC_MESSAGE:
            p = tscope__varint_put(p, rec->depth);
            p = tscope__varint_put(p, rec->arg);
            p = tscope__varint_put(p, rec->id);
            *p++ = flags;
            break;
        default: /* QUEUED, END, CANCEL, YIELD, RESUME */
            p = put_id(p, rec->id);
            break;
        }
    }
    events_close(p);
    w.events += n;
}

void tscope__trace_round(void)
{
    if (w.fd < 0)
        return;
    if (tscope__clock_ns_per_tick() != w.factor)
        write_clock();
    flush();
}

int tscope__trace_start(const char *dir, const struct tscope__config *cfg, int rank, int nranks)
{
    tscope__trace_stop();
    snprintf(w.path, sizeof w.path, "%s/trace.tsct", dir);
    if (!w.buf && !(w.buf = malloc(BUF_BYTES))) {
        fprintf(stderr, "taskscope: error: trace %s: out of memory; no trace\n", w.path);
        return -1;
    }
    w.fd = open(w.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w.fd < 0) {
        fprintf(stderr, "taskscope: error: cannot create trace %s: %s; no trace\n", w.path,
                strerror(errno));
        return -1;
    }
    w.len = 0;
    w.file_bytes = 0;
    w.max_bytes = cfg->trace_max_bytes;
    w.status = TSCOPE__TRACE_WRITING;
    w.events = w.lost = 0;
    memset(w.names, 0, sizeof w.names);
    if (w.thread_names)
        memset(w.thread_names, 0, w.thread_cap * sizeof *w.thread_names);
    w.chunk = SIZE_MAX;
    unsigned char *h = w.buf;
    memcpy(h, TSCOPE__TRACE_MAGIC, 8);
    tscope__le32_put(h + 8, TSCOPE__TRACE_VERSION);
    tscope__le32_put(h + 12, TSCOPE__TRACE_WRITING);
    tscope__le32_put(h + 16, (uint32_t)rank);
    tscope__le32_put(h + 20, (uint32_t)nranks);
    tscope__le32_put(h + 24, (uint32_t)getpid());
    tscope__le32_put(h + 28, 0);
    /* the header goes out alone: a failed first write is then a whole
     * (empty) trace */
    ssize_t n = write(w.fd, h, TSCOPE__TRACE_HEADER);
    if (n != TSCOPE__TRACE_HEADER) {
        fprintf(stderr, "taskscope: error: cannot write trace %s: %s; no trace\n", w.path,
                n < 0 ? strerror(errno) : "short write");
        close(w.fd);
        w.fd = -1;
        return -1;
    }
    w.file_bytes = TSCOPE__TRACE_HEADER;
    write_clock();
    return 0;
}

void tscope__trace_stop(void)
{
    if (w.fd < 0) {
        if (w.lost && w.status > TSCOPE__TRACE_COMPLETE)
            fprintf(stderr, "taskscope: warning: trace %s: %llu events after the trace stopped\n",
                    w.path, (unsigned long long)w.lost);
        w.lost = 0;
        return;
    }
    write_clock();
    if (room(8 + 16) == 0) {
        unsigned char *p = chunk_open(TSCOPE__CHUNK_END), *start = p;
        tscope__le64_put(p, w.events);
        tscope__le64_put(p + 8, w.lost);
        chunk_close(start, p + 16);
    }
    flush();
    if (w.fd < 0) { /* the last write failed: already marked and said */
        tscope__trace_stop();
        return;
    }
    unsigned char st[4];
    tscope__le32_put(st, TSCOPE__TRACE_COMPLETE);
    if (pwrite(w.fd, st, sizeof st, TSCOPE__TRACE_STATUS_AT) != sizeof st)
        fprintf(stderr, "taskscope: error: trace %s: cannot mark it complete: %s\n", w.path,
                strerror(errno));
    if (close(w.fd) != 0)
        fprintf(stderr, "taskscope: error: trace %s: %s\n", w.path, strerror(errno));
    w.fd = -1;
    w.status = TSCOPE__TRACE_COMPLETE;
}

void tscope__trace_forget(void)
{
    if (w.fd >= 0)
        close(w.fd);
    w.fd = -1;
    w.len = 0;
    w.chunk = SIZE_MAX;
}
