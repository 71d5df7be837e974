/* read.c - the binary trace reader (read.h): a scan of the chunk headers
 * for names, clock and ending, then the records one at a time from one
 * chunk buffer, so memory does not grow with the trace.
 */
#include "read.h"
#include "core/hazard.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES_MAX (64u << 20) /* a NAMES chunk larger than this is corrupt */

struct tscope__trace {
    FILE *f;
    char path[1024];
    struct tscope__trace_info info;
    char **names[TSCOPE__TABLES];
    uint32_t nnames[TSCOPE__TABLES];
    unsigned char *chunk;
    size_t chunk_cap;
    /* the EVENTS chunk being read */
    const unsigned char *p, *end;
    uint64_t offset; /* of the chunk in the file */
    uint32_t thread;
    uint64_t prev_ts, prev_id;
    char err[300];
};

static int fail(struct tscope__trace *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(t->err, sizeof t->err, "trace %s: ", t->path);
    if (n > 0 && (size_t)n < sizeof t->err)
        vsnprintf(t->err + n, sizeof t->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

const char *tscope__trace_error(const struct tscope__trace *t)
{
    return t->err;
}

const struct tscope__trace_info *tscope__trace_info(const struct tscope__trace *t)
{
    return &t->info;
}

const char *tscope__trace_name(const struct tscope__trace *t, int table, uint32_t id)
{
    if (table < 0 || table >= TSCOPE__TABLES || id >= t->nnames[table])
        return NULL;
    return t->names[table][id];
}

const char *tscope__trace_status_text(uint32_t status, int cut)
{
    switch (status) {
    case TSCOPE__TRACE_COMPLETE:
        return cut ? "complete, but cut short after it was written" : "complete";
    case TSCOPE__TRACE_FULL:
        return "truncated: a write failed (disk full)";
    case TSCOPE__TRACE_LIMIT:
        return "truncated: TASKSCOPE_TRACE_MAX_MB reached";
    case TSCOPE__TRACE_WRITING:
        return "not closed: the program was killed before finalizing";
    default:
        return "unknown status";
    }
}

/* Never leaves t->chunk NULL, even for an empty chunk: callers form t->chunk + len. */
static int chunk_buf(struct tscope__trace *t, size_t n)
{
    if (n < 64)
        n = 64;
    if (n <= t->chunk_cap)
        return 0;
    unsigned char *b = realloc(t->chunk, n);
    if (!b)
        return fail(t, "out of memory");
    t->chunk = b;
    t->chunk_cap = n;
    return 0;
}

/* Sets name id of table; threads whose slot was reused get both names. */
static int set_name(struct tscope__trace *t, int table, uint64_t id, const char *s, size_t n)
{
    if (id > 0xFFFFFFu)
        return fail(t, "a name id %llu out of range", (unsigned long long)id);
    if (id >= t->nnames[table]) {
        uint32_t cap = t->nnames[table] ? t->nnames[table] : 16;
        while (cap <= id)
            cap *= 2;
        char **g = realloc(t->names[table], cap * sizeof *g);
        if (!g)
            return fail(t, "out of memory");
        memset(g + t->nnames[table], 0, (cap - t->nnames[table]) * sizeof *g);
        t->names[table] = g;
        t->nnames[table] = cap;
    }
    char *old = t->names[table][id];
    if (old && table != TSCOPE__TABLE_THREADS)
        return 0; /* ids are never reused */
    if (old && strlen(old) == n && memcmp(old, s, n) == 0)
        return 0;
    size_t keep = old ? strlen(old) + 3 : 0;
    if (old && keep + n > 255) /* enough names for one slot */
        return 0;
    char *name = malloc(keep + n + 1);
    if (!name)
        return fail(t, "out of memory");
    if (old) {
        memcpy(name, old, keep - 3);
        memcpy(name + keep - 3, " / ", 3);
    }
    memcpy(name + keep, s, n);
    name[keep + n] = 0;
    free(old);
    t->names[table][id] = name;
    return 0;
}

static int read_names(struct tscope__trace *t, const unsigned char *p, const unsigned char *end)
{
    while (p < end) {
        int table = *p++;
        uint64_t id, n;
        if (table >= TSCOPE__TABLES || tscope__varint_get(&p, end, &id) ||
            tscope__varint_get(&p, end, &n) || n > (uint64_t)(end - p))
            return fail(t, "a corrupt NAMES chunk");
        if (set_name(t, table, id, (const char *)p, (size_t)n))
            return -1;
        p += n;
    }
    return 0;
}

/* One pass over the chunk headers: names, clock, END, where it stops. */
static int scan(struct tscope__trace *t)
{
    unsigned char h[8];
    uint64_t off = TSCOPE__TRACE_HEADER;
    for (;;) {
        size_t got = fread(h, 1, 8, t->f);
        if (got == 0)
            return 0;
        if (got < 8) {
            t->info.cut = 1;
            return 0;
        }
        uint32_t kind = tscope__le32_get(h), len = tscope__le32_get(h + 4);
        if (kind == TSCOPE__CHUNK_EVENTS) {
            if (len > TSCOPE__TRACE_CHUNK_MAX + 64 || len < 9)
                return fail(t, "an EVENTS chunk of %u bytes at offset %llu", len,
                            (unsigned long long)off);
            unsigned char head[20];
            size_t want = len < sizeof head ? len : sizeof head;
            if (fread(head, 1, want, t->f) < want) {
                t->info.cut = 1;
                return 0;
            }
            const unsigned char *p = head;
            uint64_t thread;
            if (tscope__varint_get(&p, head + want, &thread) || thread > 0xFFFFu ||
                (size_t)(head + want - p) < 8)
                return fail(t, "a corrupt EVENTS chunk at offset %llu", (unsigned long long)off);
            uint64_t base = tscope__le64_get(p);
            if (!t->info.event_chunks++)
                t->info.first_ts = base;
            t->info.last_ts = base;
            if (thread + 1 > t->info.threads)
                t->info.threads = (uint32_t)thread + 1;
            if (fseeko(t->f, (off_t)(len - want), SEEK_CUR))
                return fail(t, "%s", strerror(errno));
        } else {
            if (len > NAMES_MAX)
                return fail(t, "a chunk of %u bytes at offset %llu", len, (unsigned long long)off);
            if (chunk_buf(t, len))
                return -1;
            if (fread(t->chunk, 1, len, t->f) < len) {
                t->info.cut = 1;
                return 0;
            }
            if (kind == TSCOPE__CHUNK_CLOCK && len >= 24) {
                uint64_t bits = tscope__le64_get(t->chunk);
                memcpy(&t->info.ns_per_tick, &bits, sizeof bits);
                t->info.origin = tscope__le64_get(t->chunk + 8);
                t->info.realtime_ns = tscope__le64_get(t->chunk + 16);
                if (!(t->info.ns_per_tick > 0 && t->info.ns_per_tick < 1e6))
                    return fail(t, "a clock of %g ns per tick", t->info.ns_per_tick);
            } else if (kind == TSCOPE__CHUNK_NAMES) {
                if (read_names(t, t->chunk, t->chunk + len))
                    return -1;
            } else if (kind == TSCOPE__CHUNK_END && len >= 16) {
                t->info.has_end = 1;
                t->info.end_events = tscope__le64_get(t->chunk);
                t->info.end_lost = tscope__le64_get(t->chunk + 8);
            }
        }
        off += 8 + (uint64_t)len;
    }
}

int tscope__trace_open(const char *path, struct tscope__trace **out, char *err, size_t errlen)
{
    *out = NULL;
    struct tscope__trace *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "trace %s: out of memory", path);
        return -1;
    }
    snprintf(t->path, sizeof t->path, "%s", path);
    unsigned char h[TSCOPE__TRACE_HEADER];
    t->f = fopen(path, "rb");
    if (!t->f)
        fail(t, "%s", strerror(errno));
    else if (fread(h, 1, sizeof h, t->f) < sizeof h || memcmp(h, TSCOPE__TRACE_MAGIC, 8) != 0)
        fail(t, "not a taskscope trace (no TSCTRACE header)");
    else if ((t->info.version = tscope__le32_get(h + 8)) < 1 ||
             t->info.version > TSCOPE__TRACE_VERSION)
        fail(t, "trace format version %u (this taskscope reads 1 to %u)", t->info.version,
             TSCOPE__TRACE_VERSION);
    if (t->err[0]) {
        snprintf(err, errlen, "%s", t->err);
        tscope__trace_close(t);
        return -1;
    }
    t->info.status = tscope__le32_get(h + 12);
    t->info.rank = tscope__le32_get(h + 16);
    t->info.nranks = tscope__le32_get(h + 20);
    t->info.pid = tscope__le32_get(h + 24);
    t->info.ns_per_tick = 1.0;
    if (scan(t) || fseeko(t->f, TSCOPE__TRACE_HEADER, SEEK_SET)) {
        if (!t->err[0])
            fail(t, "%s", strerror(errno));
        snprintf(err, errlen, "%s", t->err);
        tscope__trace_close(t);
        return -1;
    }
    *out = t;
    return 0;
}

void tscope__trace_close(struct tscope__trace *t)
{
    if (!t)
        return;
    if (t->f)
        fclose(t->f);
    for (int k = 0; k < TSCOPE__TABLES; k++) {
        for (uint32_t i = 0; i < t->nnames[k]; i++)
            free(t->names[k][i]);
        free(t->names[k]);
    }
    free(t->chunk);
    free(t);
}

/* Loads the next EVENTS chunk; 1, 0 at the end, -1 corrupt. */
static int next_chunk(struct tscope__trace *t)
{
    unsigned char h[8];
    for (;;) {
        t->offset = (uint64_t)ftello(t->f);
        if (fread(h, 1, 8, t->f) < 8)
            return 0;
        uint32_t kind = tscope__le32_get(h), len = tscope__le32_get(h + 4);
        if (kind != TSCOPE__CHUNK_EVENTS) {
            if (fseeko(t->f, (off_t)len, SEEK_CUR))
                return 0;
            continue;
        }
        if (len > TSCOPE__TRACE_CHUNK_MAX + 64)
            return fail(t, "an EVENTS chunk of %u bytes at offset %llu", len,
                        (unsigned long long)t->offset);
        if (chunk_buf(t, len))
            return -1;
        if (fread(t->chunk, 1, len, t->f) < len)
            return 0; /* cut inside its last chunk: the scan said so */
        const unsigned char *p = t->chunk, *end = t->chunk + len;
        uint64_t thread;
        if (tscope__varint_get(&p, end, &thread) || thread > 0xFFFFu || end - p < 8)
            return fail(t, "a corrupt EVENTS chunk at offset %llu", (unsigned long long)t->offset);
        t->thread = (uint32_t)thread;
        t->prev_ts = tscope__le64_get(p);
        t->prev_id = 0;
        t->p = p + 8;
        t->end = end;
        return 1;
    }
}

static int get_u(struct tscope__trace *t, uint64_t *v)
{
    return tscope__varint_get(&t->p, t->end, v);
}

static int get_delta(struct tscope__trace *t, uint64_t base, uint64_t *v)
{
    uint64_t z;
    if (get_u(t, &z))
        return -1;
    *v = base + (uint64_t)tscope__unzigzag(z);
    return 0;
}

static int get_id(struct tscope__trace *t, uint64_t *id)
{
    if (get_delta(t, t->prev_id, id))
        return -1;
    t->prev_id = *id;
    return 0;
}

static int get_small(struct tscope__trace *t, uint64_t max, uint64_t *v)
{
    return get_u(t, v) || *v > max ? -1 : 0;
}

int tscope__trace_next(struct tscope__trace *t, uint32_t *thread, struct tscope__rec *rec)
{
    while (t->p >= t->end) {
        int rc = next_chunk(t);
        if (rc <= 0)
            return rc;
    }
    const unsigned char *at = t->p;
    memset(rec, 0, sizeof *rec);
    rec->kind = *t->p++;
    *thread = t->thread;
    uint64_t v = 0, w = 0;
    int bad = 0;
    if (rec->kind == TSCOPE__REC_EXT) {
        bad = get_u(t, &rec->id);
        rec->ts = t->prev_ts;
    } else if (rec->kind < TSCOPE__REC_CREATE || rec->kind > TSCOPE__REC_MESSAGE) {
        bad = 1;
    } else {
        bad = get_delta(t, t->prev_ts, &rec->ts);
        t->prev_ts = rec->ts;
    }
    switch (bad ? 0 : rec->kind) {
    case 0:
    case TSCOPE__REC_EXT:
        break;
    case TSCOPE__REC_CREATE:
        bad = get_id(t, &rec->id) || get_delta(t, rec->id, &rec->arg) || get_small(t, 0xFFFF, &v) ||
              get_u(t, &w) || (int64_t)tscope__unzigzag(w) < -32768 ||
              (int64_t)tscope__unzigzag(w) > 32767;
        rec->type = (uint16_t)v;
        rec->prio = (int16_t)tscope__unzigzag(w);
        bad = bad || get_small(t, 0xFFFF, &v) || t->p >= t->end;
        rec->depth = (uint16_t)v;
        if (!bad)
            rec->flags = *t->p++;
        break;
    case TSCOPE__REC_BEGIN:
    case TSCOPE__REC_START:
        bad = get_id(t, &rec->id) || get_small(t, 0xFFFF, &v);
        rec->type = (uint16_t)v;
        break;
    case TSCOPE__REC_DEP_LOCAL:
        bad = get_id(t, &rec->id) || get_delta(t, rec->id, &rec->arg) || t->p >= t->end;
        if (!bad)
            rec->flags = *t->p++;
        if (!bad && t->info.version == 1) { /* one hazard kind, one address */
            rec->flags = (uint8_t)tscope__hazard_bits(rec->flags);
            rec->prio = 1;
        } else if (!bad) {
            bad = get_small(t, 0xFFFF, &v);
            rec->prio = (int16_t)(uint16_t)v;
        }
        break;
    case TSCOPE__REC_DEP_REMOTE:
        bad = get_id(t, &rec->id) || get_delta(t, rec->id, &rec->arg) || get_small(t, 0xFFFF, &v) ||
              get_small(t, 0xFFFF, &w) || t->p >= t->end;
        rec->type = (uint16_t)v;
        rec->depth = (uint16_t)w;
        if (!bad)
            rec->flags = *t->p++;
        break;
    case TSCOPE__REC_COUNTER:
        bad = get_small(t, 0xFFFF, &v) || t->end - t->p < 8;
        rec->type = (uint16_t)v;
        if (!bad) {
            rec->arg = tscope__le64_get(t->p);
            t->p += 8;
        }
        break;
    case TSCOPE__REC_CUSTOM:
        bad = get_small(t, 0xFFFF, &v) || get_u(t, &rec->arg);
        rec->type = (uint16_t)v;
        break;
    case TSCOPE__REC_MESSAGE:
        bad = get_small(t, 0xFFFF, &v) || get_u(t, &rec->arg) || get_small(t, 0xFFFFFFFFu, &w) ||
              t->p >= t->end;
        rec->depth = (uint16_t)v;
        rec->id = w;
        if (!bad)
            rec->flags = *t->p++;
        break;
    default:
        bad = get_id(t, &rec->id);
        break;
    }
    if (bad)
        return fail(t, "a corrupt record (kind %u) at offset %llu", rec->kind,
                    (unsigned long long)(t->offset + 8 + (uint64_t)(at - t->chunk)));
    return 1;
}
