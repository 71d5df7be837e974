/* profile_read.c - reads profile.json back into a tscope__profile, with
 * errors that name the file, the line (syntax) or the field (schema).
 * Uses Debian's libjansson; without it the reader says so. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#ifndef TSCOPE_HAVE_JANSSON

struct tscope__profile *tscope_cli_profile_read(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "%s: this taskscope was built without libjansson-dev, so it cannot read JSON "
             "profiles (install libjansson-dev and rebuild, or run ./scripts/setup)",
             path);
    return NULL;
}

#else

#include <jansson.h>

struct reader {
    const char *file;
    char *err;
    size_t errlen;
    int failed;
};

static void fail(struct reader *r, const char *fmt, ...)
{
    if (r->failed++)
        return;
    int n = snprintf(r->err, r->errlen, "%s: ", r->file);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static json_t *field(struct reader *r, json_t *obj, const char *where, const char *key,
                     int (*is)(const json_t *))
{
    json_t *v = json_object_get(obj, key);
    if (!v || !is(v)) {
        fail(r, "field '%s%s%s' is missing or has the wrong type", where, *where ? "." : "", key);
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
static int is_int(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static uint64_t u64(struct reader *r, json_t *obj, const char *where, const char *key)
{
    json_t *v = field(r, obj, where, key, is_int);
    return v ? (uint64_t)json_integer_value(v) : 0;
}

static double num(struct reader *r, json_t *obj, const char *where, const char *key)
{
    json_t *v = field(r, obj, where, key, is_number);
    return v ? json_number_value(v) : 0;
}

static char *str(struct reader *r, json_t *obj, const char *where, const char *key)
{
    json_t *v = field(r, obj, where, key, is_string);
    return strdup(v ? json_string_value(v) : "");
}

static tscope_stats_t stats(struct reader *r, json_t *obj, const char *where, const char *key)
{
    tscope_stats_t s = {0};
    char path[128];
    snprintf(path, sizeof path, "%s.%s", where, key);
    json_t *o = field(r, obj, where, key, is_object);
    if (!o)
        return s;
    s.count = u64(r, o, path, "count");
    s.sum = num(r, o, path, "sum");
    s.min = num(r, o, path, "min");
    s.max = num(r, o, path, "max");
    s.mean = num(r, o, path, "mean");
    s.stddev = num(r, o, path, "stddev");
    return s;
}

/* Allocates *out for the array `key` and returns its length (0 on error). */
static size_t array(struct reader *r, json_t *root, const char *key, void **out, size_t elem)
{
    json_t *a = field(r, root, "", key, is_array);
    size_t n = a ? json_array_size(a) : 0;
    *out = calloc(n + 1, elem);
    if (!*out)
        fail(r, "out of memory");
    return *out ? n : 0;
}

static void read_totals(struct reader *r, json_t *root, struct tscope__profile *p)
{
    json_t *t = field(r, root, "", "totals", is_object);
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
    o->threads = (uint32_t)u64(r, t, "totals", "threads");
    o->types = (uint32_t)u64(r, t, "totals", "types");
}

static void read_all(struct reader *r, json_t *root, struct tscope__profile *p)
{
    char w[64];
    p->program = str(r, root, "", "program");
    p->clock = str(r, root, "", "clock");
    p->mode = str(r, root, "", "mode");
    p->full_policy = str(r, root, "", "full_policy");
    p->rank = (int)u64(r, root, "", "rank");
    p->nranks = (int)u64(r, root, "", "nranks");
    read_totals(r, root, p);

    size_t n = array(r, root, "types", (void **)&p->types, sizeof *p->types);
    for (size_t i = 0; i < n && !r->failed; i++, p->ntypes++) {
        json_t *o = json_array_get(json_object_get(root, "types"), i);
        snprintf(w, sizeof w, "types[%zu]", i);
        struct tscope__ptype *t = &p->types[i];
        t->id = (uint32_t)u64(r, o, w, "id");
        t->name = str(r, o, w, "name");
        t->created = u64(r, o, w, "created");
        t->calls = u64(r, o, w, "calls");
        t->yields = u64(r, o, w, "yields");
        t->cancelled = u64(r, o, w, "cancelled");
        t->unfinished = u64(r, o, w, "unfinished");
        t->threads = (uint32_t)u64(r, o, w, "threads");
        t->excl = stats(r, o, w, "excl_ns");
        t->incl = stats(r, o, w, "incl_ns");
        if (i && t->id <= p->types[i - 1].id)
            fail(r, "%s: type ids must ascend", w);
    }
    n = array(r, root, "counters", (void **)&p->counters, sizeof *p->counters);
    for (size_t i = 0; i < n && !r->failed; i++, p->ncounters++) {
        json_t *o = json_array_get(json_object_get(root, "counters"), i);
        snprintf(w, sizeof w, "counters[%zu]", i);
        struct tscope__pcounter *c = &p->counters[i];
        c->id = (uint32_t)u64(r, o, w, "id");
        c->name = str(r, o, w, "name");
        c->stats.count = u64(r, o, w, "count");
        c->stats.min = num(r, o, w, "min");
        c->stats.max = num(r, o, w, "max");
        c->stats.mean = num(r, o, w, "mean");
        c->stats.stddev = num(r, o, w, "stddev");
        c->stats.last = num(r, o, w, "last");
    }
    n = array(r, root, "events", (void **)&p->events, sizeof *p->events);
    for (size_t i = 0; i < n && !r->failed; i++, p->nevents++) {
        json_t *o = json_array_get(json_object_get(root, "events"), i);
        snprintf(w, sizeof w, "events[%zu]", i);
        p->events[i].id = (uint32_t)u64(r, o, w, "id");
        p->events[i].name = str(r, o, w, "name");
        p->events[i].count = u64(r, o, w, "count");
        p->events[i].last_payload = u64(r, o, w, "last_payload");
    }
    n = array(r, root, "graph", (void **)&p->edges, sizeof *p->edges);
    for (size_t i = 0; i < n && !r->failed; i++, p->nedges++) {
        json_t *o = json_array_get(json_object_get(root, "graph"), i);
        snprintf(w, sizeof w, "graph[%zu]", i);
        p->edges[i].from = (uint32_t)u64(r, o, w, "from_id");
        p->edges[i].to = (uint32_t)u64(r, o, w, "to_id");
        p->edges[i].count = u64(r, o, w, "count");
    }
    n = array(r, root, "tree", (void **)&p->nodes, sizeof *p->nodes);
    for (size_t i = 0; i < n && !r->failed; i++, p->nnodes++) {
        json_t *o = json_array_get(json_object_get(root, "tree"), i);
        snprintf(w, sizeof w, "tree[%zu]", i);
        json_t *parent = json_object_get(o, "parent");
        p->nodes[i].parent =
            json_is_integer(parent) ? (uint32_t)json_integer_value(parent) : UINT32_MAX;
        if (i && p->nodes[i].parent >= i)
            fail(r, "%s.parent must name an earlier node", w);
        p->nodes[i].type = (uint32_t)u64(r, o, w, "type_id");
        p->nodes[i].calls = u64(r, o, w, "calls");
        p->nodes[i].excl = num(r, o, w, "excl_ns");
        p->nodes[i].incl = num(r, o, w, "incl_ns");
    }
    n = array(r, root, "threads", (void **)&p->threads, sizeof *p->threads);
    for (size_t i = 0; i < n && !r->failed; i++, p->nthreads++) {
        json_t *o = json_array_get(json_object_get(root, "threads"), i);
        snprintf(w, sizeof w, "threads[%zu]", i);
        p->threads[i].name = str(r, o, w, "name");
        p->threads[i].events = u64(r, o, w, "events");
        p->threads[i].dropped = u64(r, o, w, "dropped");
        p->threads[i].waits = u64(r, o, w, "waits");
    }
    n = array(r, root, "unfinished", (void **)&p->unfinished, sizeof *p->unfinished);
    for (size_t i = 0; i < n && i < TSCOPE__UNFINISHED_LIST && !r->failed; i++, p->nunfinished++) {
        json_t *o = json_array_get(json_object_get(root, "unfinished"), i);
        snprintf(w, sizeof w, "unfinished[%zu]", i);
        p->unfinished[i].id = u64(r, o, w, "id");
        p->unfinished[i].type = (uint32_t)u64(r, o, w, "type_id");
        p->unfinished[i].thread = (uint32_t)u64(r, o, w, "thread");
        p->unfinished[i].begin = num(r, o, w, "begin_ns");
    }
}

struct tscope__profile *tscope_cli_profile_read(const char *path, char *err, size_t errlen)
{
    char file[1100];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, sizeof file, "%s/profile.json", path);
    else
        snprintf(file, sizeof file, "%s", path);
    struct reader r = {file, err, errlen, 0};
    json_error_t jerr;
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (jerr.line > 0)
            snprintf(err, errlen, "%s: line %d, column %d: %s", file, jerr.line, jerr.column,
                     jerr.text);
        else
            snprintf(err, errlen, "%s: %s", file, jerr.text);
        return NULL;
    }
    struct tscope__profile *p = calloc(1, sizeof *p);
    json_t *schema = json_object_get(root, "schema");
    json_t *version = json_object_get(root, "version");
    if (!p) {
        fail(&r, "out of memory");
    } else if (!json_is_object(root) || !json_is_string(schema) ||
               strcmp(json_string_value(schema), TSCOPE__PROFILE_SCHEMA) != 0) {
        fail(&r, "not a taskscope profile (no \"schema\": \"%s\")", TSCOPE__PROFILE_SCHEMA);
    } else if (!json_is_integer(version) ||
               json_integer_value(version) != TSCOPE__PROFILE_VERSION) {
        fail(&r, "profile version %lld is not supported (this taskscope reads version %d)",
             json_is_integer(version) ? (long long)json_integer_value(version) : -1LL,
             TSCOPE__PROFILE_VERSION);
    } else {
        read_all(&r, root, p);
    }
    json_decref(root);
    if (r.failed) {
        tscope__profile_free(p);
        return NULL;
    }
    return p;
}

#endif
