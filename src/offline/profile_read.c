/* profile_read.c - reads profile.json (written by src/export/json.c, its
 * schema's names and numbers in profile/profile.h) back into a tscope__profile, with
 * errors that name the file, then the line, column and byte offset (syntax)
 * or the field's JSON path (schema: "types[3].calls"), and what was expected.
 *
 * Every integer is range-checked before it is narrowed (ids and thread
 * counts to uint32_t, ranks to what tscope_init accepts, tree parents to an
 * earlier node, the ranks of task_deps to 0..65535), so no value wraps;
 * integers beyond int64 are the parser's syntax errors.  Names that stand
 * for numbers (a task's state, a dependency's kind) must be known ones.
 * Version 2 requires "dependencies", "tasks" and "task_deps"; version 1
 * has none of them (the profile then has no instance graph).  A type's
 * "wait" (version 3) is optional; "critical_path" is not read: the
 * report finds it again from the tasks with the writer's code.  On failure
 * the message buffer always holds one line for this call (never an empty or
 * an earlier call's message).
 * Uses Debian's libjansson; without it the reader says so. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "offline.h"

#ifndef TSCOPE_HAVE_JANSSON

struct tscope__profile *tscope__offline_profile_read(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "%s: this taskscope was built without libjansson-dev, so it cannot read JSON "
             "profiles (install libjansson-dev and rebuild, or run ./scripts/setup)",
             path);
    return NULL;
}

#else

#include <jansson.h>

#include "core/core.h"
#include "core/hazard.h"

struct reader {
    const char *file;
    char *err;
    size_t errlen;
    int failed;
    int version; /* the profile's schema version */
};

/* Records the first error (later ones follow from it and are dropped). */
__attribute__((format(printf, 2, 3))) static void fail(struct reader *r, const char *fmt, ...)
{
    if (r->failed++ || !r->errlen)
        return;
    int n = snprintf(r->err, r->errlen, "%s: ", r->file);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* one line, whatever the file holds: jansson quotes the text near a
     * syntax error, which may contain a newline or other control bytes */
    for (char *c = r->err; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

/* The JSON path of obj's member key ("types[3].calls"; "rank" at the top). */
static void path_of(char *buf, size_t len, const char *where, const char *key)
{
    int n = snprintf(buf, len, "%s%s%s", where, *where ? "." : "", key);
    if ((n < 0 || (size_t)n >= len) && len > 4)
        memcpy(buf + len - 4, "...", 4); /* a path longer than messages need */
}

/* Member key of obj, or NULL (after fail()) when obj is not an object, has
 * no such member or it fails is(); `expected` names what was wanted. */
static json_t *field(struct reader *r, json_t *obj, const char *where, const char *key,
                     int (*is)(const json_t *), const char *expected)
{
    json_t *v = json_object_get(obj, key);
    if (!v || !is(v)) {
        char path[160];
        path_of(path, sizeof path, where, key);
        fail(r, "field '%s' is missing or has the wrong type (expected %s)", path, expected);
        return NULL;
    }
    return v;
}

static int is_number(const json_t *v)
{
    return json_is_number(v);
}
static int is_string(const json_t *v)
{
    return json_is_string(v);
}
static int is_array(const json_t *v)
{
    return json_is_array(v);
}
static int is_object(const json_t *v)
{
    return json_is_object(v);
}
static int is_integer(const json_t *v)
{
    return json_is_integer(v);
}
static int is_boolean(const json_t *v)
{
    return json_is_boolean(v);
}

/* An integer member in [min, max]; 0 (after fail()) when it is missing, not
 * an integer or out of range.  JSON integers beyond int64 are syntax errors
 * of the parser (see tscope__offline_profile_read). */
static uint64_t int_in(struct reader *r, json_t *obj, const char *where, const char *key,
                       uint64_t min, uint64_t max)
{
    char expected[96];
    snprintf(expected, sizeof expected, "an integer from %llu to %llu", (unsigned long long)min,
             (unsigned long long)max);
    json_t *v = field(r, obj, where, key, is_integer, expected);
    if (!v)
        return 0;
    json_int_t x = json_integer_value(v);
    if (x < 0 || (uint64_t)x < min || (uint64_t)x > max) {
        char path[160];
        path_of(path, sizeof path, where, key);
        fail(r, "field '%s' is %lld, out of range (expected %s)", path, (long long)x, expected);
        return 0;
    }
    return (uint64_t)x;
}

static uint64_t u64(struct reader *r, json_t *obj, const char *where, const char *key)
{
    return int_in(r, obj, where, key, 0, INT64_MAX); /* json_int_t's range */
}

static uint32_t u32(struct reader *r, json_t *obj, const char *where, const char *key)
{
    return (uint32_t)int_in(r, obj, where, key, 0, UINT32_MAX);
}

static double num(struct reader *r, json_t *obj, const char *where, const char *key)
{
    json_t *v = field(r, obj, where, key, is_number, "a number");
    return v ? json_number_value(v) : 0;
}

/* A copy of a string member (free it); "" after an error, NULL only when
 * memory ran out (after fail()). */
static char *str(struct reader *r, json_t *obj, const char *where, const char *key)
{
    json_t *v = field(r, obj, where, key, is_string, "a string");
    char *s = strdup(v ? json_string_value(v) : "");
    if (!s)
        fail(r, "out of memory");
    return s;
}

/* A time's statistics; total (if asked for) receives its "total" field. */
static tscope_stats_t stats(struct reader *r, json_t *obj, const char *where, const char *key,
                            double *total)
{
    tscope_stats_t s = {0};
    char path[160];
    path_of(path, sizeof path, where, key);
    json_t *o = field(r, obj, where, key, is_object, "an object");
    if (!o)
        return s;
    s.count = u64(r, o, path, "count");
    s.sum = num(r, o, path, "sum");
    s.min = num(r, o, path, "min");
    s.max = num(r, o, path, "max");
    s.mean = num(r, o, path, "mean");
    s.stddev = num(r, o, path, "stddev");
    if (total)
        *total = num(r, o, path, "total");
    return s;
}

/* Allocates *out for the array `key` of root and returns it (NULL after
 * fail()); *n is its length, which the profile's uint32_t counts must hold. */
static json_t *array(struct reader *r, json_t *root, const char *key, void **out, size_t elem,
                     size_t *n)
{
    *n = 0;
    json_t *a = field(r, root, "", key, is_array, "an array");
    if (!a)
        return NULL;
    size_t len = json_array_size(a);
    if (len > UINT32_MAX) {
        fail(r, "field '%s' has %zu elements (at most %lu are read)", key, len,
             (unsigned long)UINT32_MAX);
        return NULL;
    }
    *out = calloc(len + 1, elem);
    if (!*out) {
        fail(r, "out of memory");
        return NULL;
    }
    *n = len;
    return a;
}

/* Element i of array a (named key) as an object, its path in w; NULL after
 * fail() when it is not an object. */
static json_t *element(struct reader *r, json_t *a, const char *key, size_t i, char *w, size_t wlen)
{
    snprintf(w, wlen, "%s[%zu]", key, i);
    json_t *o = json_array_get(a, i);
    if (!json_is_object(o)) {
        fail(r, "field '%s' is missing or has the wrong type (expected an object)", w);
        return NULL;
    }
    return o;
}

static void read_totals(struct reader *r, json_t *root, struct tscope__profile *p)
{
    json_t *t = field(r, root, "", "totals", is_object, "an object");
    if (!t)
        return;
    tscope_totals_t *o = &p->totals;
    o->elapsed_ns = num(r, t, "totals", "elapsed_ns");
    o->events = u64(r, t, "totals", "events");
    o->events_dropped = u64(r, t, "totals", "events_dropped");
    o->ring_waits = u64(r, t, "totals", "ring_waits");
    o->tasks_created = u64(r, t, "totals", "tasks_created");
    o->tasks_completed = u64(r, t, "totals", "tasks_completed");
    o->tasks_cancelled = u64(r, t, "totals", "tasks_cancelled");
    o->tasks_unfinished = u64(r, t, "totals", "tasks_unfinished");
    o->tasks_live = u64(r, t, "totals", "tasks_never_ran");
    o->instances = u64(r, t, "totals", "instances");
    o->instances_cut_off = u64(r, t, "totals", "instances_cut_off");
    o->dependencies = u64(r, t, "totals", "dependencies");
    p->deps_cut_off = u64(r, t, "totals", "dependencies_cut_off");
    o->anomalies = u64(r, t, "totals", "anomalies");
    o->threads = u32(r, t, "totals", "threads");
    o->types = u32(r, t, "totals", "types");
    if (json_object_get(t, "tasks_filtered")) { /* optional: a run with a filter file */
        p->filter = 1;
        p->tasks_filtered = u64(r, t, "totals", "tasks_filtered");
        p->deps_filtered = u64(r, t, "totals", "dependencies_filtered");
    }
}

/* "messages" (absent before taskscope had them): per peer rank. */
static void read_messages(struct reader *r, json_t *root, struct tscope__profile *p)
{
    if (!json_object_get(root, "messages"))
        return;
    size_t n;
    char w[64];
    json_t *a = array(r, root, "messages", (void **)&p->peers, sizeof *p->peers, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->npeers++) {
        json_t *o = element(r, a, "messages", i, w, sizeof w);
        if (!o)
            break;
        tscope_peer_stats_t *m = &p->peers[i];
        m->peer = (int)int_in(r, o, w, "peer", 0, 65535);
        m->sent = u64(r, o, w, "sent");
        m->sent_bytes = u64(r, o, w, "sent_bytes");
        m->recv = u64(r, o, w, "recv");
        m->recv_bytes = u64(r, o, w, "recv_bytes");
        m->coll_sent = u64(r, o, w, "coll_sent");
        m->coll_sent_bytes = u64(r, o, w, "coll_sent_bytes");
        m->coll_recv = u64(r, o, w, "coll_recv");
        m->coll_recv_bytes = u64(r, o, w, "coll_recv_bytes");
    }
}

/* "timeline" (absent in older files): the busy time per bin, kept as the
 * profile's one timeline row. */
static void read_timeline(struct reader *r, json_t *root, struct tscope__profile *p)
{
    json_t *t = json_object_get(root, "timeline");
    if (!t)
        return;
    if (!json_is_object(t)) {
        fail(r, "field 'timeline' is not an object");
        return;
    }
    double bin = num(r, t, "timeline", "bin_ns");
    json_t *a = field(r, t, "timeline", "busy_ns", is_array, "an array");
    if (!a || r->failed)
        return;
    size_t n = json_array_size(a);
    if (n > (1u << 20) || (n && !(bin > 0))) {
        fail(r, "field 'timeline' has %zu bins of %g ns (expected at most 1048576 of more than 0)",
             n, bin);
        return;
    }
    if (!n)
        return;
    p->tl.thread = calloc(1, sizeof *p->tl.thread);
    double *row = p->tl.thread ? malloc(n * sizeof *row) : NULL;
    if (!row) {
        fail(r, "out of memory");
        return;
    }
    p->tl.thread[0] = row;
    p->tl.nthread = 1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            fail(r, "field 'timeline.busy_ns[%zu]' is not an integer of at least 0", i);
            return;
        }
        row[i] = (double)json_integer_value(v);
    }
    p->tl.bin_ns = bin;
    p->tl.nbins = (uint32_t)n;
    /* "wait_ns" (absent in older files): the part of it the threads waited */
    json_t *w = json_object_get(t, "wait_ns");
    if (!w)
        return;
    if (!json_is_array(w) || json_array_size(w) != n) {
        fail(r, "field 'timeline.wait_ns' is not an array of %zu bins (as busy_ns)", n);
        return;
    }
    p->tl.wait = calloc(1, sizeof *p->tl.wait);
    double *wrow = p->tl.wait ? malloc(n * sizeof *wrow) : NULL;
    if (!wrow) {
        fail(r, "out of memory");
        return;
    }
    p->tl.wait[0] = wrow;
    p->tl.nwait = 1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(w, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            fail(r, "field 'timeline.wait_ns[%zu]' is not an integer of at least 0", i);
            return;
        }
        wrow[i] = (double)json_integer_value(v);
    }
}

/* tree[i].parent: null for the root (node 0), else an earlier node. */
static uint32_t tree_parent(struct reader *r, json_t *o, const char *w, size_t i)
{
    json_t *parent = json_object_get(o, "parent");
    if (i == 0) {
        if (!json_is_null(parent))
            fail(r, "field '%s.parent' must be null (node 0 is the root)", w);
        return UINT32_MAX;
    }
    if (!json_is_integer(parent)) {
        fail(r,
             "field '%s.parent' is missing or has the wrong type (expected the index of an "
             "earlier node, 0 to %zu)",
             w, i - 1);
        return UINT32_MAX;
    }
    json_int_t x = json_integer_value(parent);
    if (x < 0 || (uint64_t)x >= i) {
        fail(r,
             "field '%s.parent' is %lld, out of range (expected the index of an earlier node, "
             "0 to %zu)",
             w, (long long)x, i - 1);
        return UINT32_MAX;
    }
    return (uint32_t)x;
}

/* a + b, or UINT64_MAX when that does not fit. */
static uint64_t add_saturated(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A string member that must be one of names[0 .. n) (its index; -1 when it
 * is not, after fail() unless number_ok and it is a decimal number from 0
 * to INT32_MAX, which is then *number).  expected: what the message names. */
static int word(struct reader *r, json_t *o, const char *w, const char *key,
                const char *const *names, int n, int number_ok, int *number, const char *expected)
{
    json_t *v = field(r, o, w, key, is_string, "a string");
    if (!v)
        return -1;
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (strlen(s) == len) { /* no NUL inside */
        for (int i = 0; i < n; i++)
            if (strcmp(s, names[i]) == 0)
                return i;
        if (number_ok && len >= 1 && len <= 10 && strspn(s, "0123456789") == len &&
            (s[0] != '0' || len == 1) && strtoll(s, NULL, 10) <= INT32_MAX) {
            *number = (int)strtoll(s, NULL, 10);
            return -1;
        }
    }
    char path[160];
    path_of(path, sizeof path, w, key);
    fail(r, "field '%s' is \"%.40s%s\" (expected %s)", path, s, len > 40 ? "..." : "", expected);
    return -1;
}

/* A version 3 local edge's "hazards" (a list of distinct RAW, WAR, WAW,
 * mutex; empty for an edge recorded without a known hazard), "addresses" (1 to 65535) and "addr"
 * ("0x" and hex). */
static void read_hazards(struct reader *r, json_t *o, const char *w, struct tscope__pdep *d)
{
    char at[96];
    json_t *a = field(r, o, w, "hazards", is_array, "a list of RAW, WAR, WAW, mutex");
    unsigned bits = 0;
    for (size_t i = 0; a && i < json_array_size(a) && !r->failed; i++) {
        json_t *v = json_array_get(a, i);
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        int k = -1;
        for (int j = 0; j < TSCOPE__HAZARD_NAMES && json_is_string(v); j++)
            if (strlen(s) == json_string_length(v) && strcmp(s, tscope__hazard_names[j]) == 0)
                k = j;
        snprintf(at, sizeof at, "%s.hazards[%zu]", w, i);
        if (k < 0)
            fail(r, "field '%s' is not RAW, WAR, WAW or mutex", at);
        else if (bits & (1u << k))
            fail(r, "field '%s' names %s twice", at, tscope__hazard_names[k]);
        bits |= k >= 0 ? 1u << k : 0;
    }
    d->kind = (int)bits;
    d->naddrs = (uint32_t)int_in(r, o, w, "addresses", 1, 65535);
    json_t *v = field(r, o, w, "addr", is_string, "a string \"0x...\"");
    const char *s = v ? json_string_value(v) : "";
    char *end = NULL;
    if (v && (strncmp(s, "0x", 2) != 0 || strlen(s) > 18 || strlen(s) < 3 ||
              strspn(s + 2, "0123456789abcdef") != strlen(s) - 2))
        fail(r, "field '%s.addr' is \"%.20s\" (expected 0x and up to 16 hex digits)", w, s);
    else if (v)
        d->addr = strtoull(s + 2, &end, 16);
}

/* "dependencies": the type-level dependency graph, by (from_id, to_id). */
static void read_deptypes(struct reader *r, json_t *root, struct tscope__profile *p)
{
    char w[64];
    size_t n;
    json_t *a = array(r, root, "dependencies", (void **)&p->deptypes, sizeof *p->deptypes, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->ndeptypes++) {
        json_t *o = element(r, a, "dependencies", i, w, sizeof w);
        if (!o)
            break;
        struct tscope__pdeptype *d = &p->deptypes[i];
        d->from = u32(r, o, w, "from_id");
        d->to = u32(r, o, w, "to_id");
        d->count = u64(r, o, w, "count");
        d->raw = u64(r, o, w, "raw");
        d->war = u64(r, o, w, "war");
        d->waw = u64(r, o, w, "waw");
        d->mutex = r->version >= 3 ? u64(r, o, w, "mutex") : 0;
        d->remote = u64(r, o, w, "remote");
        if (r->failed)
            break;
        uint64_t sum =
            add_saturated(add_saturated(d->raw, d->war), add_saturated(d->waw, d->remote));
        uint64_t most = d->raw > d->war ? d->raw : d->war;
        most = d->waw > most ? d->waw : most;
        most = d->mutex > most ? d->mutex : most;
        if (r->version < 3 && d->count < sum) /* one hazard an edge */
            fail(r, "%s: count %llu is less than raw + war + waw + remote", w,
                 (unsigned long long)d->count);
        else if (r->version >= 3 && (d->count < d->remote || d->count - d->remote < most))
            fail(r, "%s: count %llu is less than remote + the edges of one hazard", w,
                 (unsigned long long)d->count);
        const struct tscope__pdeptype *prev = i ? &p->deptypes[i - 1] : NULL;
        if (prev && (d->from < prev->from || (d->from == prev->from && d->to <= prev->to)))
            fail(r, "%s: (from_id, to_id) pairs must ascend", w);
    }
}

/* "tasks": the instance graph. */
static void read_tasks(struct reader *r, json_t *root, struct tscope__profile *p)
{
    static const char *const states[] = {"live", "done", "cancelled", "unfinished"};
    char w[64];
    size_t n;
    json_t *a = array(r, root, "tasks", (void **)&p->tasks, sizeof *p->tasks, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->ntasks++) {
        json_t *o = element(r, a, "tasks", i, w, sizeof w);
        if (!o)
            break;
        struct tscope__ptask *t = &p->tasks[i];
        t->id = int_in(r, o, w, "id", 1, INT64_MAX); /* 0 is "no task" */
        t->parent = u64(r, o, w, "parent");
        t->type = u32(r, o, w, "type_id");
        t->thread = u32(r, o, w, "thread");
        t->state =
            word(r, o, w, "state", states, 4, 0, NULL, "live, done, cancelled or unfinished");
        t->create = num(r, o, w, "create_ns");
        t->begin = num(r, o, w, "begin_ns");
        t->end = num(r, o, w, "end_ns");
        t->self = num(r, o, w, "self_ns");
        t->running = num(r, o, w, "running_ns");
        (void)num(r, o, w, "elapsed_ns"); /* end - begin: the writer derives it */
    }
}

/* "task_deps": the instance graph's dependency edges.  A remote edge has
 * "kind", a tscope_dep_dir_t (in, out, copyin) or the number the writer
 * gives one it does not know.  A local edge of version 3 has "hazards" (a
 * list of RAW, WAR, WAW, mutex), "addresses" and "addr"; of version 2, one
 * hazard in "kind" (RAW, WAR, WAW or a number) and one address. */
static void read_task_deps(struct reader *r, json_t *root, struct tscope__profile *p)
{
    static const char *const kinds[] = {"RAW", "WAR", "WAW", "in", "out", "copyin"};
    char w[64];
    size_t n;
    json_t *a = array(r, root, "task_deps", (void **)&p->deps, sizeof *p->deps, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->ndeps++) {
        json_t *o = element(r, a, "task_deps", i, w, sizeof w);
        if (!o)
            break;
        struct tscope__pdep *d = &p->deps[i];
        d->from = u64(r, o, w, "from");
        d->to = u64(r, o, w, "to");
        json_t *remote = field(r, o, w, "remote", is_boolean, "true or false");
        d->remote = json_is_true(remote);
        d->naddrs = 1;
        if (r->version >= 3 && remote && !d->remote) {
            read_hazards(r, o, w, d);
        } else {
            int number = 0, k = word(r, o, w, "kind", kinds, 6, 1, &number,
                                     "RAW, WAR, WAW, in, out, copyin or a number");
            d->kind = k < 0 ? number : k % 3 + 1;
            if (k >= 0 && remote && (k >= 3) != d->remote)
                fail(r, "field '%s.kind' is \"%s\", a kind of %s edges, but '%s.remote' is %s", w,
                     kinds[k], k >= 3 ? "remote" : "local", w, d->remote ? "true" : "false");
            if (!d->remote) /* version 2: one hazard */
                d->kind = k >= 0 && k < 3 ? (int)tscope__hazard_bits(d->kind) : 0;
        }
        d->from_rank = (int)int_in(r, o, w, "from_rank", 0, 65535);
        d->to_rank = (int)int_in(r, o, w, "to_rank", 0, 65535);
    }
}

/* "critical_path" (optional, version 3: written for a run with an instance
 * graph) into p->path, for a profile without tasks[] to find it again from. */
static void read_critical_path(struct reader *r, json_t *root, struct tscope__profile *p)
{
    json_t *o = json_object_get(root, "critical_path");
    if (!o)
        return;
    const char *w = "critical_path";
    if (!json_is_object(o)) {
        fail(r, "field '%s' has the wrong type (expected an object)", w);
        return;
    }
    struct tscope__critpath *cp = p->path = calloc(1, sizeof *p->path);
    json_t *a = field(r, o, w, "steps", is_array, "an array");
    size_t n = a ? json_array_size(a) : 0;
    if (!cp || (a && !(cp->steps = calloc(n + 1, sizeof *cp->steps)))) {
        fail(r, "out of memory");
        return;
    }
    cp->length = num(r, o, w, "length_ns");
    cp->work = num(r, o, w, "work_ns");
    cp->tasks = u32(r, o, w, "tasks");
    cp->tasks_cut_off = u64(r, o, w, "tasks_cut_off");
    cp->steps_cut = json_object_get(o, "steps_cut_off") ? u64(r, o, w, "steps_cut_off") : 0;
    cp->waits_marked = json_is_true(field(r, o, w, "waits_marked", is_boolean, "true or false"));
    char sw[64];
    for (size_t i = 0; i < n && !r->failed && i < UINT32_MAX; i++, cp->nsteps++) {
        json_t *e = element(r, a, "critical_path.steps", i, sw, sizeof sw);
        if (!e)
            break;
        struct tscope__cpstep *st = &cp->steps[i];
        st->id = u64(r, e, sw, "task");
        st->type = u32(r, e, sw, "type_id");
        st->task = UINT32_MAX;
        st->from = num(r, e, sw, "from_ns");
        st->to = num(r, e, sw, "to_ns");
        st->work = num(r, e, sw, "work_ns");
        json_t *next = json_object_get(e, "next");
        if (!next || json_is_null(next)) {
            st->link = TSCOPE__CP_END;
        } else if (json_is_string(next)) {
            snprintf(st->why, sizeof st->why, "%s", json_string_value(next));
            st->link = strcmp(st->why, "created") == 0   ? TSCOPE__CP_CREATED
                       : strcmp(st->why, "joined") == 0  ? TSCOPE__CP_JOINED
                       : strcmp(st->why, "barrier") == 0 ? TSCOPE__CP_BARRIER
                                                         : TSCOPE__CP_DEP;
        } else {
            fail(r, "field '%s.next' has the wrong type (expected a string or null)", sw);
        }
    }
}

/* threads[i].types (optional: a thread that completed tasks has it, files
 * before it have none): the thread's share of each type, by type id. */
static void read_thread_types(struct reader *r, json_t *o, const char *w, struct tscope__pthread *t)
{
    json_t *a = json_object_get(o, "types");
    if (!a)
        return;
    char path[96], e[128];
    snprintf(path, sizeof path, "%s.types", w);
    if (!json_is_array(a)) {
        fail(r, "field '%s' has the wrong type (expected an array)", path);
        return;
    }
    size_t n = json_array_size(a);
    if (n > UINT32_MAX || !(t->types = calloc(n + 1, sizeof *t->types))) {
        fail(r, "out of memory");
        return;
    }
    for (size_t i = 0; i < n && !r->failed; i++, t->ntypes++) {
        json_t *x = element(r, a, path, i, e, sizeof e);
        if (!x)
            break;
        struct tscope__pthread_type *y = &t->types[i];
        y->type = u32(r, x, e, "type_id");
        /* types it completed tasks of, or began one unfinished at the end (0) */
        y->calls = int_in(r, x, e, "calls", 0, INT64_MAX);
        y->self = num(r, x, e, "self_ns");
        y->running = num(r, x, e, "running_ns");
        y->elapsed = num(r, x, e, "elapsed_ns");
        if (i && !r->failed && y->type <= t->types[i - 1].type)
            fail(r, "%s: type ids must ascend", e);
    }
}

/* A global profile's type over the ranks (optional: "ranks", only in a
 * job's global profile.json): each rank's self time total, min / max and
 * the rank with the most, calls min / max.  The sum over the ranks is the
 * type's self_ns total (src/global adds the ranks' whole ns), so the mean
 * the writer put beside them is not read. */
static void read_type_ranks(struct reader *r, json_t *o, const char *w, struct tscope__ptype *t)
{
    /* the mean over the ranks comes from the type's own sum, "ranks" or not */
    t->ranks.self_sum = tscope__ns_whole(t->self_total);
    json_t *x = json_object_get(o, "ranks");
    if (!x)
        return;
    char path[96], self[112], calls[112];
    snprintf(path, sizeof path, "%s.ranks", w);
    snprintf(self, sizeof self, "%s.self_ns", path);
    snprintf(calls, sizeof calls, "%s.calls", path);
    json_t *s = field(r, o, w, "ranks", is_object, "an object");
    json_t *so = s ? field(r, s, path, "self_ns", is_object, "an object") : NULL;
    json_t *co = s ? field(r, s, path, "calls", is_object, "an object") : NULL;
    if (!so || !co)
        return;
    t->ranks.self_min = (int64_t)u64(r, so, self, "min");
    t->ranks.self_max = (int64_t)u64(r, so, self, "max");
    t->ranks.self_max_rank = (int)int_in(r, so, self, "max_rank", 0, 65535);
    t->ranks.calls_min = u64(r, co, calls, "min");
    t->ranks.calls_max = u64(r, co, calls, "max");
}

/* A job's global profile (optional: "global" and "ranks", written by
 * src/global): the ranks present and each rank's totals and messages,
 * what the global summary shows (tscope__global_summary).  The message
 * matrix, the ranks' timeline and the remote dependencies are not read:
 * messages.csv, ranks_busy.csv and taskgraph.dot beside it hold them. */
static void read_global(struct reader *r, json_t *root, struct tscope__profile *p)
{
    json_t *o = json_object_get(root, "global");
    if (!o || r->failed)
        return;
    if (!json_is_object(o)) {
        fail(r, "field 'global' has the wrong type (expected an object)");
        return;
    }
    struct tscope__pglobal *g = p->global = calloc(1, sizeof *p->global);
    if (!g) {
        fail(r, "out of memory");
        return;
    }
    g->nranks = (int)int_in(r, o, "global", "nranks", 1, 65536);
    g->present = (int)int_in(r, o, "global", "ranks_present", 0, (uint64_t)g->nranks);
    size_t n;
    char w[64];
    json_t *a = array(r, root, "ranks", (void **)&g->ranks, sizeof *g->ranks, &n);
    if (a && n != (size_t)g->nranks)
        fail(r, "field 'ranks' has %zu elements (expected global.nranks, %d)", n, g->nranks);
    for (size_t i = 0; i < n && !r->failed; i++) {
        json_t *e = element(r, a, "ranks", i, w, sizeof w);
        if (!e)
            break;
        struct tscope__prank *x = &g->ranks[i];
        x->rank = (int)int_in(r, e, w, "rank", i, i); /* in rank order */
        x->present = json_is_true(field(r, e, w, "present", is_boolean, "true or false"));
        x->tasks = u64(r, e, w, "tasks");
        x->events = u64(r, e, w, "events");
        x->anomalies = u64(r, e, w, "anomalies");
        x->unfinished = u64(r, e, w, "unfinished");
        x->threads = u64(r, e, w, "threads");
        x->self_ns = (int64_t)u64(r, e, w, "self_ns");
        x->elapsed_ns = (int64_t)u64(r, e, w, "elapsed_ns");
        tscope_peer_stats_t *m = &x->msgs;
        m->peer = -1; /* summed over its peers */
        m->sent = u64(r, e, w, "sent");
        m->sent_bytes = u64(r, e, w, "sent_bytes");
        m->recv = u64(r, e, w, "recv");
        m->recv_bytes = u64(r, e, w, "recv_bytes");
        m->coll_sent = u64(r, e, w, "coll_sent");
        m->coll_sent_bytes = u64(r, e, w, "coll_sent_bytes");
        m->coll_recv = u64(r, e, w, "coll_recv");
        m->coll_recv_bytes = u64(r, e, w, "coll_recv_bytes");
    }
}

/* "ended_by" (optional: only a run ended by a signal or _exit has it). */
static void read_ended_by(struct reader *r, json_t *root, struct tscope__profile *p)
{
    json_t *v = json_object_get(root, "ended_by");
    if (!v)
        return;
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    if (strcmp(s, "_exit") == 0) {
        p->ended_by = TSCOPE__ENDED_BY_EXIT;
        return;
    }
    for (int sig = 1; sig < 65 && strncmp(s, "SIG", 3) == 0; sig++)
        if (sigabbrev_np(sig) && strcmp(s + 3, sigabbrev_np(sig)) == 0) {
            p->ended_by = sig;
            return;
        }
    fail(r, "field 'ended_by' is not a signal name (SIGTERM, ...) or \"_exit\"");
}

static void read_all(struct reader *r, json_t *root, struct tscope__profile *p)
{
    char w[64];
    size_t n;
    p->program = str(r, root, "", "program");
    p->clock = str(r, root, "", "clock");
    p->mode = str(r, root, "", "mode");
    p->full_policy = str(r, root, "", "full_policy");
    read_ended_by(r, root, p);
    json_t *cpu = json_object_get(root, "cpu_time"); /* optional: a run with --cpu-time */
    if (cpu && !json_is_boolean(cpu))
        fail(r, "field 'cpu_time' has the wrong type (expected true or false)");
    p->cpu_time = json_is_true(cpu);
    /* what tscope_init accepts */
    p->nranks = (int)int_in(r, root, "", "nranks", 1, 65536);
    p->rank = (int)int_in(r, root, "", "rank", 0, p->nranks > 0 ? (uint64_t)p->nranks - 1 : 0);
    read_totals(r, root, p);

    json_t *a = array(r, root, "types", (void **)&p->types, sizeof *p->types, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->ntypes++) {
        json_t *o = element(r, a, "types", i, w, sizeof w);
        struct tscope__ptype *t = &p->types[i];
        t->id = u32(r, o, w, "id");
        t->name = str(r, o, w, "name");
        t->created = u64(r, o, w, "created");
        t->calls = u64(r, o, w, "calls");
        t->yields = u64(r, o, w, "yields");
        t->cancelled = u64(r, o, w, "cancelled");
        t->unfinished = u64(r, o, w, "unfinished");
        t->threads = u32(r, o, w, "threads");
        json_t *wait = json_object_get(o, "wait"); /* optional: only waits have it */
        if (wait && !json_is_boolean(wait))
            fail(r, "field '%s.wait' has the wrong type (expected true or false)", w);
        json_t *barrier = json_object_get(o, "barrier"); /* optional: only barriers */
        if (barrier && !json_is_boolean(barrier))
            fail(r, "field '%s.barrier' has the wrong type (expected true or false)", w);
        t->attrs = (json_is_true(wait) ? TSCOPE_TYPE_WAIT : 0) |
                   (json_is_true(barrier) ? TSCOPE_TYPE_BARRIER : 0);
        if (r->version == 1) { /* excl/incl: self and running, no elapsed */
            t->self = stats(r, o, w, "excl_ns", NULL);
            t->running = stats(r, o, w, "incl_ns", NULL);
            t->running_total = t->running.sum;
            t->self_total = t->self.sum;
        } else {
            t->self = stats(r, o, w, "self_ns", &t->self_total);
            t->running = stats(r, o, w, "running_ns", &t->running_total);
            t->elapsed = stats(r, o, w, "elapsed_ns", &t->elapsed_total);
        }
        read_type_ranks(r, o, w, t);
        if (p->cpu_time) /* then every type has it */
            t->cpu = stats(r, o, w, "cpu_ns", NULL);
        if (i && !r->failed && t->id <= p->types[i - 1].id)
            fail(r, "%s: type ids must ascend", w);
    }
    a = array(r, root, "counters", (void **)&p->counters, sizeof *p->counters, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->ncounters++) {
        json_t *o = element(r, a, "counters", i, w, sizeof w);
        struct tscope__pcounter *c = &p->counters[i];
        c->id = u32(r, o, w, "id");
        c->name = str(r, o, w, "name");
        c->stats.count = u64(r, o, w, "count");
        c->stats.min = num(r, o, w, "min");
        c->stats.max = num(r, o, w, "max");
        c->stats.mean = num(r, o, w, "mean");
        c->stats.stddev = num(r, o, w, "stddev");
        c->stats.last = num(r, o, w, "last");
        c->sampled = json_is_true(json_object_get(o, "sampled"));
    }
    a = array(r, root, "events", (void **)&p->events, sizeof *p->events, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->nevents++) {
        json_t *o = element(r, a, "events", i, w, sizeof w);
        p->events[i].id = u32(r, o, w, "id");
        p->events[i].name = str(r, o, w, "name");
        p->events[i].count = u64(r, o, w, "count");
        p->events[i].last_payload = u64(r, o, w, "last_payload");
    }
    a = array(r, root, "graph", (void **)&p->edges, sizeof *p->edges, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->nedges++) {
        json_t *o = element(r, a, "graph", i, w, sizeof w);
        p->edges[i].from = u32(r, o, w, "from_id");
        p->edges[i].to = u32(r, o, w, "to_id");
        p->edges[i].count = u64(r, o, w, "count");
    }
    a = array(r, root, "tree", (void **)&p->nodes, sizeof *p->nodes, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->nnodes++) {
        json_t *o = element(r, a, "tree", i, w, sizeof w);
        if (!o)
            break;
        p->nodes[i].parent = tree_parent(r, o, w, i);
        p->nodes[i].type = u32(r, o, w, "type_id");
        p->nodes[i].calls = u64(r, o, w, "calls");
        p->nodes[i].self = num(r, o, w, r->version == 1 ? "excl_ns" : "self_ns");
        p->nodes[i].running = num(r, o, w, r->version == 1 ? "incl_ns" : "running_ns");
        if (r->version != 1)
            p->nodes[i].elapsed = num(r, o, w, "elapsed_ns");
    }
    a = array(r, root, "threads", (void **)&p->threads, sizeof *p->threads, &n);
    for (size_t i = 0; i < n && !r->failed; i++, p->nthreads++) {
        json_t *o = element(r, a, "threads", i, w, sizeof w);
        p->threads[i].name = str(r, o, w, "name");
        p->threads[i].events = u64(r, o, w, "events");
        p->threads[i].dropped = u64(r, o, w, "dropped");
        p->threads[i].waits = u64(r, o, w, "waits");
        p->threads[i].own = json_is_true(json_object_get(o, "taskscope"));
        read_thread_types(r, o, w, &p->threads[i]);
    }
    json_t *notes = json_object_get(root, "notes"); /* optional: what the machine lacked */
    size_t nn = json_is_array(notes) ? json_array_size(notes) : 0;
    if (nn > 8)
        nn = 8;
    if (nn && (p->notes = calloc(nn, sizeof *p->notes)))
        for (size_t i = 0; i < nn; i++)
            if (json_is_string(json_array_get(notes, i)))
                snprintf(p->notes[p->nnotes++], sizeof p->notes[0], "%s",
                         json_string_value(json_array_get(notes, i)));
    /* the profile lists the first TSCOPE__UNFINISHED_LIST (as the writer
     * does); totals.tasks_unfinished counts them all */
    a = array(r, root, "unfinished", (void **)&p->unfinished, sizeof *p->unfinished, &n);
    for (size_t i = 0; i < n && i < TSCOPE__UNFINISHED_LIST && !r->failed; i++, p->nunfinished++) {
        json_t *o = element(r, a, "unfinished", i, w, sizeof w);
        p->unfinished[i].id = u64(r, o, w, "id");
        p->unfinished[i].type = u32(r, o, w, "type_id");
        p->unfinished[i].thread = u32(r, o, w, "thread");
        p->unfinished[i].begin = num(r, o, w, "begin_ns");
    }
    read_messages(r, root, p);
    read_timeline(r, root, p);
    read_global(r, root, p);
    if (r->version == 1) /* no dependencies or instance graph before version 2 */
        return;
    read_deptypes(r, root, p);
    read_tasks(r, root, p);
    read_task_deps(r, root, p);
    read_critical_path(r, root, p);
}

/* The JSON parser's error as "FILE: line L, column C: TEXT (byte offset B)". */
static void syntax_error(struct reader *r, const json_error_t *jerr)
{
    const char *text = jerr->text[0] ? jerr->text : "not valid JSON";
    /* jansson keeps integers in an int64 and rejects larger ones */
    const char *hint =
        strstr(text, "too big") ? " (integers are read up to 9223372036854775807)" : "";
    if (jerr->line > 0)
        fail(r, "line %d, column %d: %s%s (byte offset %d)", jerr->line, jerr->column, text, hint,
             jerr->position);
    else
        fail(r, "%s%s", text, hint);
}

struct tscope__profile *tscope__offline_profile_read(const char *path, char *err, size_t errlen)
{
    if (errlen)
        err[0] = 0; /* no stale message: written below on every failure */
    struct stat st;
    char *file = NULL;
    int dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if ((dir ? asprintf(&file, "%s/profile.json", path) : asprintf(&file, "%s", path)) < 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (dir && stat(file, &st) != 0) { /* an MPI job's run folder: its global view */
        char *global = NULL;
        if (asprintf(&global, "%s/global/profile.json", path) >= 0 && stat(global, &st) == 0) {
            free(file);
            file = global;
        } else
            free(global);
    }
    int running;
    long pid = dir && stat(file, &st) != 0 ? tscope__offline_left_behind(path, &running) : 0;
    if (pid) { /* what a program that died left: not a profile yet */
        if (running)
            snprintf(err, errlen,
                     "%s has no profile.json yet: its program (pid %ld) still runs; taskscope top "
                     "%ld shows it",
                     path, pid, pid);
        else
            snprintf(err, errlen,
                     "%s has no profile.json: its program (pid %ld) died without writing it and "
                     "nobody rebuilt it; taskscope recover %s does",
                     path, pid, path);
        free(file);
        return NULL;
    }
    if (dir && stat(file, &st) != 0) { /* an MPI job's run folder whose ranks died */
        char **names = NULL;
        size_t n = tscope__offline_rank_folders(path, &names), dead = 0;
        const char *first = NULL;
        for (size_t i = 0; i < n; i++) {
            char *sub = NULL;
            if (asprintf(&sub, "%s/%s", path, names[i]) >= 0 &&
                tscope__offline_left_behind(sub, &running) && !running && !dead++)
                first = names[i];
            free(sub);
        }
        if (dead)
            snprintf(err, errlen,
                     "%s has no profile.json: %zu of its %zu ranks (%s%s) died without writing "
                     "theirs and nobody rebuilt them; taskscope recover %s does",
                     path, dead, n, first, dead > 1 ? ", ..." : "", path);
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        if (dead) {
            free(file);
            return NULL;
        }
    }
    struct reader r = {file, err, errlen, 0, 0};
    struct tscope__profile *p = NULL;
    json_error_t jerr;
    memset(&jerr, 0, sizeof jerr);
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        syntax_error(&r, &jerr);
    } else if (!(p = calloc(1, sizeof *p))) {
        fail(&r, "out of memory");
    } else {
        json_t *schema = json_object_get(root, "schema");
        json_t *version = json_object_get(root, "version");
        if (!json_is_object(root) || !json_is_string(schema) ||
            strcmp(json_string_value(schema), TSCOPE__PROFILE_SCHEMA) != 0)
            fail(&r, "not a taskscope profile (no \"schema\": \"%s\")", TSCOPE__PROFILE_SCHEMA);
        else if (!json_is_integer(version))
            fail(&r, "field 'version' is missing or has the wrong type (expected the integer %d)",
                 TSCOPE__PROFILE_VERSION);
        else if (json_integer_value(version) < 1 ||
                 json_integer_value(version) > TSCOPE__PROFILE_VERSION)
            fail(&r,
                 "profile version %lld is not supported (this taskscope reads versions 1 to %d)",
                 (long long)json_integer_value(version), TSCOPE__PROFILE_VERSION);
        else {
            r.version = (int)json_integer_value(version);
            read_all(&r, root, p);
        }
    }
    json_decref(root);
    if (r.failed && errlen && !err[0]) /* fail() wrote nothing: keep the file named */
        snprintf(err, errlen, "%s: cannot be read", file);
    free(file);
    if (r.failed) {
        if (p)
            tscope__profile_free(p);
        return NULL;
    }
    return p;
}

#endif
