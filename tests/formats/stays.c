/* stays.c - a trace format added by a test build (tests/formats/,
 * TSCOPE_EXTRA_FORMATS): stays.txt, every stay of a task on a thread, one
 * line each (thread, begin and end in ns, type).  It is the whole of the
 * format: this file and its entry in the list (tests/CMakeLists.txt writes
 * the test build's extra entries); `run --trace`, `convert --to` and the
 * help find it there (tests/test_formats_extra.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/convert.h"

struct stays {
    FILE *f;
    uint64_t *begin; /* per thread, the begin of its open stays, innermost last */
    uint32_t *depth, nthreads;
};

static int grow(struct stays *s, uint32_t thread)
{
    if (thread < s->nthreads)
        return 0;
    uint64_t *b = realloc(s->begin, (size_t)(thread + 1) * 64 * sizeof *b);
    if (!b)
        return -1;
    s->begin = b;
    uint32_t *d = realloc(s->depth, (size_t)(thread + 1) * sizeof *d);
    if (!d)
        return -1;
    s->depth = d;
    memset(s->depth + s->nthreads, 0, (thread + 1 - s->nthreads) * sizeof *d);
    s->nthreads = thread + 1;
    return 0;
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    struct stays *s = ctx;
    (void)task;
    (void)type;
    if (grow(s, thread))
        return -1;
    if (s->depth[thread] < 64)
        s->begin[(size_t)thread * 64 + s->depth[thread]] = ns;
    s->depth[thread]++;
    return 0;
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    struct stays *s = ctx;
    (void)task;
    if (grow(s, thread) || s->depth[thread] == 0)
        return 0;
    uint32_t d = --s->depth[thread];
    uint64_t begin = d < 64 ? s->begin[(size_t)thread * 64 + d] : ns;
    fprintf(s->f, "%u %llu %llu %u\n", thread, (unsigned long long)begin, (unsigned long long)ns,
            type);
    return ferror(s->f) ? -1 : 0;
}

static int flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)ctx, (void)kind, (void)hazard, (void)from_thread, (void)from_ns, (void)to_thread;
    (void)to_ns, (void)from_task, (void)to_task;
    return 0;
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    (void)ctx, (void)thread, (void)ns, (void)id, (void)value;
    return 0;
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload)
{
    (void)ctx, (void)thread, (void)ns, (void)event, (void)payload;
    return 0;
}

static int write_stays(struct tscope__trace *t, const char *out, int gzip,
                       struct tscope__replay_stats *st, char *err, size_t errlen)
{
    (void)gzip;
    struct stays s = {0};
    s.f = fopen(out, "w");
    if (!s.f) {
        snprintf(err, errlen, "cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    struct tscope__trace_sink sink = {&s,      slice_begin, slice_end, flow,
                                      counter, instant,     NULL,      NULL};
    int rc = tscope__trace_replay(t, &sink, st, err, errlen);
    if (fclose(s.f) != 0 && rc == 0) {
        snprintf(err, errlen, "writing %s failed: %s", out, strerror(errno));
        rc = -1;
    }
    free(s.begin);
    free(s.depth);
    return rc;
}

const struct tscope__trace_format tscope__trace_stays = {
    "every stay of a task on a thread, a line each (a test build's format)",
    "stays.txt",
    NULL,
    "",
    NULL,
    0,
    write_stays,
    NULL};
