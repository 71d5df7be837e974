/* extsort.c - the external merge sort of extsort.h: runs in a temporary
 * file, merged on a heap. */
#include "extsort.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define SOURCE_RECORDS 1024u /* read buffer per run while merging */

static void fail(struct tscope__extsort *s, const char *path, int err_no)
{
    if (s->failed)
        return;
    s->failed = 1;
    s->err_path = path;
    s->err_no = err_no;
}

int tscope__extsort_init(struct tscope__extsort *s, size_t size,
                         int (*cmp)(const void *a, const void *b), uint32_t run_records,
                         uint32_t ways, const char *runpath, const char *mergepath)
{
    memset(s, 0, sizeof *s);
    s->size = size;
    s->cmp = cmp;
    s->cap = run_records ? run_records : 1;
    s->ways = ways >= 2 && ways <= TSCOPE__EXTSORT_WAYS_MAX ? ways : TSCOPE__EXTSORT_WAYS_MAX;
    s->buf = malloc((size_t)s->cap * size);
    s->runpath = strdup(runpath);
    s->mergepath = strdup(mergepath);
    return s->buf && s->runpath && s->mergepath ? 0 : -1;
}

/* Opens (creating or emptying) a temporary file for runs. */
static FILE *open_temp(struct tscope__extsort *s, const char *path)
{
    FILE *f = fopen(path, "w+b");
    if (!f)
        fail(s, path, errno);
    return f;
}

/* The full buffer, sorted, becomes a run in the run file. */
static int spill(struct tscope__extsort *s)
{
    if (!s->runfile && !(s->runfile = open_temp(s, s->runpath)))
        return -1;
    if (s->nruns == s->capruns) {
        uint32_t cap = s->capruns ? s->capruns * 2 : 16;
        struct tscope__extsort_run *g = realloc(s->runs, cap * sizeof *g);
        if (!g) {
            fail(s, NULL, ENOMEM);
            return -1;
        }
        s->runs = g;
        s->capruns = cap;
    }
    qsort(s->buf, s->n, s->size, s->cmp); /* full: never empty */
    uint64_t off = s->nruns ? s->runs[s->nruns - 1].off + s->runs[s->nruns - 1].n : 0;
    if (fwrite(s->buf, s->size, s->n, s->runfile) != s->n) {
        fail(s, s->runpath, errno);
        return -1;
    }
    s->runs[s->nruns++] = (struct tscope__extsort_run){off, s->n};
    s->n = 0;
    return 0;
}

int tscope__extsort_add(struct tscope__extsort *s, const void *rec)
{
    if (s->failed)
        return -1;
    if (s->n == s->cap && spill(s))
        return -1;
    memcpy(s->buf + (size_t)s->n++ * s->size, rec, s->size);
    return 0;
}

/* A sorted sequence being merged: a run in a file, read SOURCE_RECORDS at
 * a time, or the buffer in memory (fd -1). */
struct source {
    char *buf;
    uint32_t n, at;
    int fd;
    uint64_t off, left; /* in records, still in the file */
};

static const void *head(const struct tscope__extsort *s, const struct source *x)
{
    return x->buf + (size_t)x->at * s->size;
}

/* 1 a record is at the source's head, 0 it is done, -1 a read error (errno). */
static int source_ready(const struct tscope__extsort *s, struct source *x)
{
    if (x->at < x->n)
        return 1;
    if (!x->left)
        return 0;
    uint32_t k = x->left < SOURCE_RECORDS ? (uint32_t)x->left : SOURCE_RECORDS;
    size_t want = (size_t)k * s->size, got = 0;
    while (got < want) {
        ssize_t r = pread(x->fd, x->buf + got, want - got, (off_t)(x->off * s->size + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO; /* the file is shorter than its runs */
            return -1;
        }
        got += (size_t)r;
    }
    x->off += k;
    x->left -= k;
    x->n = k;
    x->at = 0;
    return 1;
}

static void heap_down(const struct tscope__extsort *s, struct source **h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < n && s->cmp(head(s, h[l]), head(s, h[m])) < 0)
            m = l;
        if (l + 1 < n && s->cmp(head(s, h[l + 1]), head(s, h[m])) < 0)
            m = l + 1;
        if (m == i)
            return;
        struct source *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Merges the sources into put; 0, 1 (put stopped) or -1 (a read error:
 * errno set). */
static int merge(const struct tscope__extsort *s, struct source *src, uint32_t nsrc,
                 int (*put)(void *ctx, const void *rec), void *ctx)
{
    struct source *heap[TSCOPE__EXTSORT_WAYS_MAX + 1];
    uint32_t n = 0;
    for (uint32_t i = 0; i < nsrc; i++) {
        int rc = source_ready(s, &src[i]);
        if (rc < 0)
            return -1;
        if (rc)
            heap[n++] = &src[i];
    }
    for (uint32_t i = n / 2; i-- > 0;)
        heap_down(s, heap, n, i);
    while (n) {
        struct source *x = heap[0];
        const void *r = head(s, x);
        x->at++;
        if (put(ctx, r))
            return 1;
        int rc = source_ready(s, x);
        if (rc < 0)
            return -1;
        if (!rc)
            heap[0] = heap[--n];
        heap_down(s, heap, n, 0);
    }
    return 0;
}

struct binary_sink {
    const struct tscope__extsort *s;
    FILE *f;
    int err_no;
};

static int put_binary(void *ctx, const void *rec)
{
    struct binary_sink *o = ctx;
    if (fwrite(rec, o->s->size, 1, o->f) == 1)
        return 0;
    o->err_no = errno;
    return -1;
}

/* Points the first k sources at runs first.. of the run file. */
static uint64_t point_at_runs(struct tscope__extsort *s, struct source *src, uint32_t first,
                              uint32_t k)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < k; i++) {
        src[i].fd = fileno(s->runfile);
        src[i].n = src[i].at = 0;
        src[i].off = s->runs[first + i].off;
        src[i].left = s->runs[first + i].n;
        total += src[i].left;
    }
    return total;
}

/* Merges groups of runs of the run file into single runs until one pass
 * (with the buffer as one more source) can take them all; 0 or -1. */
static int reduce_runs(struct tscope__extsort *s, struct source *src)
{
    while (s->nruns + 1 > s->ways) {
        if (!s->mergefile && !(s->mergefile = open_temp(s, s->mergepath)))
            return -1;
        if (fflush(s->runfile)) {
            fail(s, s->runpath, errno);
            return -1;
        }
        if (ftruncate(fileno(s->mergefile), 0) || fseeko(s->mergefile, 0, SEEK_SET)) {
            fail(s, s->mergepath, errno);
            return -1;
        }
        struct binary_sink o = {s, s->mergefile, 0};
        uint32_t out = 0;
        uint64_t off = 0;
        for (uint32_t first = 0; first < s->nruns; first += s->ways) {
            uint32_t k = s->nruns - first < s->ways ? s->nruns - first : s->ways;
            uint64_t total = point_at_runs(s, src, first, k);
            int rc = merge(s, src, k, put_binary, &o);
            if (rc) {
                fail(s, rc > 0 ? s->mergepath : s->runpath, rc > 0 ? o.err_no : errno);
                return -1;
            }
            s->runs[out++] = (struct tscope__extsort_run){off, total};
            off += total;
        }
        s->nruns = out;
        FILE *f = s->runfile; /* the merged runs are the runs now */
        char *path = s->runpath;
        s->runfile = s->mergefile;
        s->runpath = s->mergepath;
        s->mergefile = f;
        s->mergepath = path;
    }
    if (fflush(s->runfile)) {
        fail(s, s->runpath, errno);
        return -1;
    }
    return 0;
}

int tscope__extsort_each(struct tscope__extsort *s, int (*put)(void *ctx, const void *rec),
                         void *ctx)
{
    if (s->failed)
        return -1;
    if (s->n) /* no records: no qsort of nothing */
        qsort(s->buf, s->n, s->size, s->cmp);
    struct source *src = calloc(s->ways, sizeof *src);
    char *rbuf = s->nruns ? malloc((size_t)s->ways * SOURCE_RECORDS * s->size) : NULL;
    if (!src || (s->nruns && !rbuf)) {
        free(src);
        free(rbuf);
        fail(s, NULL, ENOMEM);
        return -1;
    }
    for (uint32_t i = 0; i < s->ways; i++)
        src[i].buf = rbuf ? rbuf + (size_t)i * SOURCE_RECORDS * s->size : NULL;
    int rc = s->nruns && reduce_runs(s, src) ? -1 : 0;
    if (rc == 0) {
        uint32_t n = s->nruns;
        point_at_runs(s, src, 0, n);
        src[n] = (struct source){s->buf, s->n, 0, -1, 0, 0}; /* the buffer */
        int m = merge(s, src, n + 1, put, ctx);
        if (m < 0)
            fail(s, s->runpath, errno);
        rc = m ? -1 : 0;
    }
    free(src);
    free(rbuf);
    return rc;
}

void tscope__extsort_free(struct tscope__extsort *s)
{
    if (s->runfile) { /* the temporary files: only those made here */
        fclose(s->runfile);
        remove(s->runpath);
    }
    if (s->mergefile) {
        fclose(s->mergefile);
        remove(s->mergepath);
    }
    free(s->buf);
    free(s->runs);
    free(s->runpath);
    free(s->mergepath);
    memset(s, 0, sizeof *s);
}
