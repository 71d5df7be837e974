/* otf2.c - the trace as an OTF2 archive (Open Trace Format 2, Score-P's
 * format: Vampir, Scalasca and otf2-print read it), written with libotf2
 * (FORMATS.md "OTF2" has the writer sequence this follows).
 *
 * What the archive (folder out, anchor out/traces.otf2) holds:
 *  - a region per task type used, named as in the trace ("(untyped)" for
 *    type 0), role OTF2_REGION_ROLE_TASK, paradigm USER.  TASK, not
 *    FUNCTION: OTF2 defines TASK as the body of a "task" construct, which
 *    is what a type's stays are, and a task is not a call: it may yield and
 *    resume later, even on another thread (two Enter/Leave pairs), which no
 *    function call does.  Score-P gives its OpenMP task bodies this role;
 *    TASK_UNTIED would claim more than the trace knows;
 *  - one system tree node, one location group (the process, "rank R"), and
 *    a location (CPU thread, named as in the trace) per thread slot;
 *  - Enter/Leave per stay, as the replay gives them (nested and in time
 *    order per thread);
 *  - counters as metrics: per counter a metric member (user metric,
 *    absolute point, double) and a metric class (asynchronous, recorded by
 *    CPU threads); a Metric event on the thread that sampled the value;
 *  - custom events as parameters: per event a Parameter (uint64) and a
 *    ParameterUnsignedInt event carrying the payload on the thread that
 *    recorded it ("in the current region, parameter P has value V", the
 *    closest event record; markers live in a file of their own that
 *    analysis tools add, and otf2-print does not show them);
 *  - no flows: OTF2 has no record for an arrow between two threads (its
 *    messages need MPI communicators, its task records
 *    ThreadTaskCreate/Switch/Complete a thread team), so creations and
 *    dependencies are only in the Chrome and Paraver outputs.
 *
 * Time: timer resolution 1e9 (1 tick = 1 ns), global offset 0, so event
 * timestamps are ns since tscope_init as in every other format; the wall
 * clock of that origin (CLOCK_REALTIME) is the clock properties' realtime
 * timestamp (OTF2 3.0), and the trace length the last timestamp.
 *
 * Order: the events first, counted per location during the replay; then
 * the (empty) local definitions and the global ones (clock, strings,
 * regions, metrics, parameters, system tree, location group, locations
 * with their event counts), because only the replay knows which types,
 * counters and events are used and how many events each thread has.
 *
 * Memory: left alone, OTF2 keeps up to 128 MiB of chunks per writer before
 * it flushes; the memory callbacks give each buffer MAX_CHUNKS chunks, so
 * the archive is written as it goes and the writer's memory is bounded by
 * the threads that have events.  The pre-flush callback always flushes;
 * there is no post-flush callback, so OTF2 writes no BufferFlush records
 * (events the counts would not include).
 *
 * The folder: created with its parents when missing; an existing one must
 * be empty or hold an archive of an earlier conversion (only names OTF2
 * writes for an archive named "traces": the anchor, global definitions and
 * markers, and traces/ with N.evt, N.def, N.snap), whose files are removed
 * first; anything else is refused.  A conversion that fails removes what
 * it wrote (and the folder if it made it).
 *
 * Errors: libotf2 reports them through one process-wide callback; while
 * the writer runs, ours keeps the first message for the one-line error
 * instead of printing it (the callback before it is put back after, with
 * no user data).  One thread: no locking callbacks; the serial collective
 * callbacks stand in for MPI.
 */
#include <stdio.h>
#include <string.h>

#include "convert.h"

#ifdef TSCOPE_HAVE_OTF2

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "taskscope/taskscope.h"

#define ARCHIVE "traces"
#define NONE UINT32_MAX
#define MAX_CHUNKS 4 /* chunks a buffer holds before OTF2 flushes it */

/* Table ids (type, counter, event) -> dense OTF2 refs, in order of use. */
struct refs {
    uint32_t *of_id; /* by table id; NONE: not used */
    uint32_t *ids;   /* by ref: the table id */
    uint32_t cap, n;
};

struct location {
    OTF2_EvtWriter *w;
    uint64_t events;
};

struct out {
    const struct tscope__trace *t;
    const char *path;
    OTF2_Archive *archive;
    struct location *loc; /* by thread slot */
    uint32_t nloc;
    struct refs regions, metrics, params; /* by type, counter, event */
    OTF2_ErrorCode code;                  /* the first failure */
    const char *what;                     /* the call that failed */
    int oom;
    int created;              /* the folder is ours */
    OTF2_ErrorCode said_code; /* libotf2's first message, from its callback */
    char said[256];
};

/* ---- callbacks given to libotf2 ---- */

static OTF2_ErrorCode on_error(void *user, const char *file, uint64_t line, const char *function,
                               OTF2_ErrorCode code, const char *format, va_list va)
{
    (void)file;
    (void)line;
    (void)function;
    struct out *o = user;
    if (code > OTF2_SUCCESS && !o->said_code) {
        o->said_code = code;
        vsnprintf(o->said, sizeof o->said, format, va);
    }
    return code;
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool last)
{
    (void)user;
    (void)type;
    (void)location;
    (void)caller;
    (void)last;
    return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_callbacks = {pre_flush, NULL};

/* The chunks of one buffer (OTF2's per-buffer data). */
struct pool {
    uint32_t n;
    void *chunk[MAX_CHUNKS];
};

/* NULL once the buffer has MAX_CHUNKS: OTF2 then flushes it, frees its
 * chunks (free_chunks) and asks again. */
static void *alloc_chunk(void *user, OTF2_FileType type, OTF2_LocationRef location,
                         void **per_buffer, uint64_t size)
{
    (void)user;
    (void)type;
    (void)location;
    struct pool *p = *per_buffer;
    if (!p && !(p = *per_buffer = calloc(1, sizeof *p)))
        return NULL;
    if (p->n == MAX_CHUNKS)
        return NULL;
    void *c = malloc(size);
    if (c)
        p->chunk[p->n++] = c;
    return c;
}

static void free_chunks(void *user, OTF2_FileType type, OTF2_LocationRef location,
                        void **per_buffer, bool last)
{
    (void)user;
    (void)type;
    (void)location;
    struct pool *p = *per_buffer;
    if (!p)
        return;
    for (uint32_t i = 0; i < p->n; i++)
        free(p->chunk[i]);
    p->n = 0;
    if (last) {
        free(p);
        *per_buffer = NULL;
    }
}

static const OTF2_MemoryCallbacks memory_callbacks = {alloc_chunk, free_chunks};

/* ---- errors ---- */

/* Records the first failure; 0 for OTF2_SUCCESS, else -1. */
static int check(struct out *o, OTF2_ErrorCode code, const char *what)
{
    if (code == OTF2_SUCCESS)
        return 0;
    if (!o->code) {
        o->code = code;
        o->what = what;
    }
    return -1;
}

/* For the calls that return NULL on failure: the code libotf2 reported. */
static int check_ptr(struct out *o, const void *p, const char *what)
{
    if (p)
        return 0;
    return check(o, o->said_code ? o->said_code : OTF2_ERROR_PROCESSED_WITH_FAULTS, what);
}

/* "NAME (description)"; libotf2 3.0 names its POSIX codes by their errno
 * number ("17"), so those read "errno 17 (File does already exist)". */
static void error_text(OTF2_ErrorCode code, char *buf, size_t len)
{
    const char *name = OTF2_Error_GetName(code);
    const char *what = OTF2_Error_GetDescription(code);
    int numeric = name && name[0] >= '0' && name[0] <= '9';
    snprintf(buf, len, "%s%s (%s)", numeric ? "errno " : "OTF2_ERROR_", name ? name : "?",
             what ? what : "?");
}

/* what: the call, or its text up to the parenthesis (TRY). */
static void otf2_message(const struct out *o, char *err, size_t errlen)
{
    char text[200];
    error_text(o->code, text, sizeof text);
    snprintf(err, errlen, "cannot write the OTF2 archive %s: %.*s: %s%s%s", o->path,
             (int)strcspn(o->what, "( "), o->what, text, o->said[0] ? ": " : "", o->said);
}

/* ---- the folder ---- */

#define PATH_BYTES 4096

/* dir/name into buf (PATH_BYTES); -1 when it does not fit. */
static int join(char *buf, const char *dir, const char *name)
{
    int n = snprintf(buf, PATH_BYTES, "%s/%s", dir, name);
    return n < 0 || n >= PATH_BYTES ? -1 : 0;
}

static int mkdir_parents(const char *path, char *err, size_t errlen)
{
    char p[PATH_BYTES];
    snprintf(p, sizeof p, "%s", path); /* prepare_folder checked the length */
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s: %s", path, p, strerror(errno));
            return -1;
        }
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Names OTF2 writes for an archive named ARCHIVE: in the folder, and in
 * its ARCHIVE/ subfolder (per location). */
static int archive_name(const char *name)
{
    return strcmp(name, ARCHIVE ".otf2") == 0 || strcmp(name, ARCHIVE ".def") == 0 ||
           strcmp(name, ARCHIVE ".marker") == 0;
}

static int location_name(const char *name)
{
    size_t digits = strspn(name, "0123456789");
    const char *ext = name + digits;
    return digits > 0 &&
           (strcmp(ext, ".evt") == 0 || strcmp(ext, ".def") == 0 || strcmp(ext, ".snap") == 0);
}

static int is_file(const char *dir, const char *name, int want_dir)
{
    char p[PATH_BYTES];
    struct stat sb;
    return join(p, dir, name) == 0 && lstat(p, &sb) == 0 &&
           (want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
}

/* Whether every entry of dir passes keep (the name, dir): 1, or 0 with the
 * first one that does not in bad; -1 when dir cannot be read. */
static int all_entries(const char *dir, int (*keep)(const char *, const char *), char *bad,
                       size_t badlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int ok = 1;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!keep(e->d_name, dir)) {
            snprintf(bad, badlen, "%s", e->d_name);
            ok = 0;
        }
    }
    closedir(d);
    return ok;
}

static int keep_location_file(const char *name, const char *dir)
{
    return location_name(name) && is_file(dir, name, 0);
}

static int keep_archive_file(const char *name, const char *dir)
{
    if (strcmp(name, ARCHIVE) == 0) {
        char sub[PATH_BYTES], bad[256];
        return join(sub, dir, name) == 0 && is_file(dir, name, 1) &&
               all_entries(sub, keep_location_file, bad, sizeof bad) == 1;
    }
    return archive_name(name) && is_file(dir, name, 0);
}

static int remove_entry(const char *dir, const char *name, char *err, size_t errlen)
{
    char p[PATH_BYTES];
    if (join(p, dir, name) != 0 || (unlink(p) != 0 && errno != ENOENT)) {
        snprintf(err, errlen, "cannot remove the earlier OTF2 archive in %s: %s: %s", dir, p,
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* Removes what an earlier conversion left (all_entries said it is only
 * that): the per-location files, their folder, the archive's own files. */
static int remove_archive(const char *out, char *err, size_t errlen)
{
    char sub[PATH_BYTES];
    DIR *d = join(sub, out, ARCHIVE) == 0 ? opendir(sub) : NULL;
    if (d) {
        int rc = 0;
        for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;)
            if (location_name(e->d_name))
                rc = remove_entry(sub, e->d_name, err, errlen);
        closedir(d);
        if (rc)
            return -1;
        if (rmdir(sub) != 0) {
            snprintf(err, errlen, "cannot remove the earlier OTF2 archive in %s: %s: %s", out, sub,
                     strerror(errno));
            return -1;
        }
    }
    static const char *const files[] = {ARCHIVE ".otf2", ARCHIVE ".def", ARCHIVE ".marker"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (remove_entry(out, files[i], err, errlen))
            return -1;
    return 0;
}

/* out ready for a fresh archive: created, empty, or an earlier archive
 * removed.  0, or -1 with the message in err. */
static int prepare_folder(struct out *o, char *err, size_t errlen)
{
    const char *out = o->path;
    struct stat sb;
    if (strlen(out) + 64 > PATH_BYTES) { /* room for the archive's own names */
        snprintf(err, errlen, "cannot write the OTF2 archive %.200s...: the name is too long", out);
        return -1;
    }
    if (stat(out, &sb) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) { /* those: mkdir says why */
            snprintf(err, errlen, "cannot write the OTF2 archive %s: %s", out, strerror(errno));
            return -1;
        }
        if (mkdir_parents(out, err, errlen))
            return -1;
        o->created = 1;
        return 0;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen,
                 "cannot write the OTF2 archive %s: it exists and is not a folder (an OTF2 "
                 "archive is a folder)",
                 out);
        return -1;
    }
    char bad[256];
    int ok = all_entries(out, keep_archive_file, bad, sizeof bad);
    if (ok < 0) {
        snprintf(err, errlen, "cannot read the folder %s: %s", out, strerror(errno));
        return -1;
    }
    if (!ok) {
        snprintf(err, errlen,
                 "will not write the OTF2 archive into %s: the folder holds other things than "
                 "an earlier archive (%s); give an empty or new folder",
                 out, bad);
        return -1;
    }
    char anchor[PATH_BYTES];
    if (join(anchor, out, ARCHIVE ".otf2") == 0 &&
        access(anchor, F_OK) == 0) { /* it must read as one */
        OTF2_Reader *r = OTF2_Reader_Open(anchor);
        if (!r) {
            snprintf(err, errlen,
                     "will not replace %s: %s is not an OTF2 anchor file (%s); give an empty or "
                     "new folder",
                     out, anchor, o->said[0] ? o->said : "unreadable");
            return -1;
        }
        OTF2_Reader_Close(r);
        o->said_code = OTF2_SUCCESS;
        o->said[0] = 0;
    }
    return remove_archive(out, err, errlen);
}

/* ---- the events ---- */

/* The ref of id, given in order of first use; NONE when out of memory. */
static uint32_t ref_of(struct out *o, struct refs *r, uint32_t id)
{
    if (id >= r->cap) {
        uint32_t cap = r->cap ? r->cap : 64;
        while (cap <= id && cap < (1u << 30))
            cap *= 2;
        uint32_t *of_id = cap > id ? realloc(r->of_id, cap * sizeof *of_id) : NULL;
        if (!of_id) {
            o->oom = 1;
            return NONE;
        }
        r->of_id = of_id;
        uint32_t *ids = realloc(r->ids, cap * sizeof *ids);
        if (!ids) {
            o->oom = 1;
            return NONE;
        }
        r->ids = ids;
        for (uint32_t i = r->cap; i < cap; i++)
            r->of_id[i] = NONE;
        r->cap = cap;
    }
    if (r->of_id[id] == NONE) {
        r->ids[r->n] = id;
        r->of_id[id] = r->n++;
    }
    return r->of_id[id];
}

static struct location *location_of(struct out *o, uint32_t thread)
{
    if (thread >= o->nloc) { /* the reader counted the slots: not expected */
        struct location *g = realloc(o->loc, ((size_t)thread + 1) * sizeof *g);
        if (!g) {
            o->oom = 1;
            return NULL;
        }
        memset(g + o->nloc, 0, (thread + 1 - o->nloc) * sizeof *g);
        o->loc = g;
        o->nloc = thread + 1;
    }
    struct location *l = &o->loc[thread];
    if (!l->w) {
        l->w = OTF2_Archive_GetEvtWriter(o->archive, thread);
        if (check_ptr(o, l->w, "OTF2_Archive_GetEvtWriter"))
            return NULL;
    }
    return l;
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    struct out *o = ctx;
    uint32_t region = ref_of(o, &o->regions, type);
    struct location *l = location_of(o, thread);
    if (region == NONE || !l ||
        check(o, OTF2_EvtWriter_Enter(l->w, NULL, ns, region), "OTF2_EvtWriter_Enter"))
        return -1;
    l->events++;
    return 0;
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    struct out *o = ctx;
    uint32_t region = ref_of(o, &o->regions, type);
    struct location *l = location_of(o, thread);
    if (region == NONE || !l ||
        check(o, OTF2_EvtWriter_Leave(l->w, NULL, ns, region), "OTF2_EvtWriter_Leave"))
        return -1;
    l->events++;
    return 0;
}

static int flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)ctx;
    (void)kind;
    (void)hazard;
    (void)from_thread;
    (void)from_ns;
    (void)to_thread;
    (void)to_ns;
    (void)from_task;
    (void)to_task;
    return 0; /* no OTF2 record for it (top comment) */
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    struct out *o = ctx;
    uint32_t metric = ref_of(o, &o->metrics, id);
    struct location *l = location_of(o, thread);
    if (metric == NONE || !l)
        return -1;
    OTF2_Type type = OTF2_TYPE_DOUBLE;
    OTF2_MetricValue v;
    v.floating_point = value;
    if (check(o, OTF2_EvtWriter_Metric(l->w, NULL, ns, metric, 1, &type, &v),
              "OTF2_EvtWriter_Metric"))
        return -1;
    l->events++;
    return 0;
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload)
{
    struct out *o = ctx;
    uint32_t param = ref_of(o, &o->params, event);
    struct location *l = location_of(o, thread);
    if (param == NONE || !l ||
        check(o, OTF2_EvtWriter_ParameterUnsignedInt(l->w, NULL, ns, param, payload),
              "OTF2_EvtWriter_ParameterUnsignedInt"))
        return -1;
    l->events++;
    return 0;
}

/* Closes every location's event writer; a location without events gets
 * its (empty) event file too, so that readers find one per location. */
static int close_events(struct out *o)
{
    int rc = 0;
    for (uint32_t th = 0; th < o->nloc; th++) {
        struct location *l = &o->loc[th];
        if (!l->w && rc == 0) {
            l->w = OTF2_Archive_GetEvtWriter(o->archive, th);
            rc = check_ptr(o, l->w, "OTF2_Archive_GetEvtWriter");
        }
        if (l->w &&
            check(o, OTF2_Archive_CloseEvtWriter(o->archive, l->w), "OTF2_Archive_CloseEvtWriter"))
            rc = -1;
        l->w = NULL;
    }
    if (check(o, OTF2_Archive_CloseEvtFiles(o->archive), "OTF2_Archive_CloseEvtFiles"))
        rc = -1;
    return rc;
}

/* ---- the definitions ---- */

static int local_defs(struct out *o)
{
    if (check(o, OTF2_Archive_OpenDefFiles(o->archive), "OTF2_Archive_OpenDefFiles"))
        return -1;
    for (uint32_t th = 0; th < o->nloc; th++) {
        OTF2_DefWriter *w = OTF2_Archive_GetDefWriter(o->archive, th);
        if (check_ptr(o, w, "OTF2_Archive_GetDefWriter") ||
            check(o, OTF2_Archive_CloseDefWriter(o->archive, w), "OTF2_Archive_CloseDefWriter"))
            return -1;
    }
    return check(o, OTF2_Archive_CloseDefFiles(o->archive), "OTF2_Archive_CloseDefFiles");
}

/* The name of a table entry, or "WORD ID" when the trace has none. */
static const char *name_of(const struct out *o, int table, uint32_t id, const char *word, char *buf,
                           size_t len)
{
    if (table == TSCOPE__TABLE_TYPES && id == 0)
        return "(untyped)";
    const char *name = tscope__trace_name(o->t, table, id);
    if (name)
        return name;
    snprintf(buf, len, "%s %u", word, id);
    return buf;
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if (check(o, (call), #call))                                                               \
            return -1;                                                                             \
    } while (0)

/* Strings are numbered in the order written: "", the regions', metrics',
 * parameters' and locations' names, then the process and node names. */
static int global_defs(struct out *o, OTF2_GlobalDefWriter *g,
                       const struct tscope__replay_stats *st)
{
    const struct tscope__trace_info *info = tscope__trace_info(o->t);
    uint64_t realtime = info->realtime_ns ? info->realtime_ns : OTF2_UNDEFINED_TIMESTAMP;
    TRY(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, 0, st->end_ns, realtime));

    const uint32_t empty = 0, region0 = 1, metric0 = region0 + o->regions.n,
                   param0 = metric0 + o->metrics.n, loc0 = param0 + o->params.n,
                   group = loc0 + o->nloc, node = group + 1, node_class = group + 2;
    char buf[64];
    TRY(OTF2_GlobalDefWriter_WriteString(g, empty, ""));
    for (uint32_t i = 0; i < o->regions.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteString(
            g, region0 + i,
            name_of(o, TSCOPE__TABLE_TYPES, o->regions.ids[i], "type", buf, sizeof buf)));
    for (uint32_t i = 0; i < o->metrics.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteString(
            g, metric0 + i,
            name_of(o, TSCOPE__TABLE_COUNTERS, o->metrics.ids[i], "counter", buf, sizeof buf)));
    for (uint32_t i = 0; i < o->params.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteString(
            g, param0 + i,
            name_of(o, TSCOPE__TABLE_EVENTS, o->params.ids[i], "event", buf, sizeof buf)));
    for (uint32_t th = 0; th < o->nloc; th++)
        TRY(OTF2_GlobalDefWriter_WriteString(
            g, loc0 + th, name_of(o, TSCOPE__TABLE_THREADS, th, "thread", buf, sizeof buf)));
    snprintf(buf, sizeof buf, "rank %u", info->rank);
    TRY(OTF2_GlobalDefWriter_WriteString(g, group, buf));
    TRY(OTF2_GlobalDefWriter_WriteString(g, node, "node"));
    TRY(OTF2_GlobalDefWriter_WriteString(g, node_class, "node"));

    for (uint32_t i = 0; i < o->regions.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteRegion(g, i, region0 + i, region0 + i, empty,
                                             OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_USER,
                                             OTF2_REGION_FLAG_NONE, empty, 0, 0));
    for (uint32_t i = 0; i < o->metrics.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteMetricMember(g, i, metric0 + i, empty, OTF2_METRIC_TYPE_USER,
                                                   OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE,
                                                   OTF2_BASE_DECIMAL, 0, empty));
    for (uint32_t i = 0; i < o->metrics.n; i++) {
        OTF2_MetricMemberRef member = i;
        TRY(OTF2_GlobalDefWriter_WriteMetricClass(g, i, 1, &member, OTF2_METRIC_ASYNCHRONOUS,
                                                  OTF2_RECORDER_KIND_CPU));
    }
    for (uint32_t i = 0; i < o->params.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteParameter(g, i, param0 + i, OTF2_PARAMETER_TYPE_UINT64));
    TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, node, node_class,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    TRY(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, group, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                OTF2_UNDEFINED_LOCATION_GROUP));
    for (uint32_t th = 0; th < o->nloc; th++)
        TRY(OTF2_GlobalDefWriter_WriteLocation(g, th, loc0 + th, OTF2_LOCATION_TYPE_CPU_THREAD,
                                               o->loc[th].events, 0));
    return 0;
}

/* Opens the archive and its event files, with the callbacks. */
static int open_archive(struct out *o)
{
    o->archive = OTF2_Archive_Open(
        o->path, ARCHIVE, OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
        OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (check_ptr(o, o->archive, "OTF2_Archive_Open"))
        return -1;
    const struct tscope__trace_info *info = tscope__trace_info(o->t);
    char text[300];
    TRY(OTF2_Archive_SetFlushCallbacks(o->archive, &flush_callbacks, NULL));
    TRY(OTF2_Archive_SetMemoryCallbacks(o->archive, &memory_callbacks, NULL));
    TRY(OTF2_Archive_SetSerialCollectiveCallbacks(o->archive));
    snprintf(text, sizeof text, "taskscope %d.%d.%d", TSCOPE_VERSION_MAJOR, TSCOPE_VERSION_MINOR,
             TSCOPE_VERSION_PATCH);
    TRY(OTF2_Archive_SetCreator(o->archive, text));
    snprintf(text, sizeof text, "taskscope trace of rank %u of %u (pid %u); the trace is %s",
             info->rank, info->nranks, info->pid,
             tscope__trace_status_text(info->status, info->cut));
    TRY(OTF2_Archive_SetDescription(o->archive, text));
    TRY(OTF2_Archive_OpenEvtFiles(o->archive));
    return 0;
}

int tscope__trace_to_otf2(struct tscope__trace *t, const char *out, struct tscope__replay_stats *st,
                          char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    err[0] = 0;
    if (!out[0] || strcmp(out, "-") == 0) {
        snprintf(err, errlen, "an OTF2 archive is a folder: give its name, not '%s'", out);
        return -1;
    }
    struct out o = {.t = t, .path = out};
    OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(on_error, &o);
    int rc = prepare_folder(&o, err, errlen), prepared = rc == 0;
    if (rc == 0) {
        o.nloc = tscope__trace_info(t)->threads;
        if (o.nloc == 0)
            o.nloc = 1; /* readers refuse an archive without locations */
        o.loc = calloc(o.nloc, sizeof *o.loc);
        if (!o.loc)
            o.oom = 1;
    }
    if (rc == 0 && !o.oom && open_archive(&o) == 0) {
        struct tscope__trace_sink sink = {&o,      slice_begin, slice_end, flow,
                                          counter, instant,     NULL,      NULL};
        int replayed = tscope__trace_replay(t, &sink, st, err, errlen);
        int closed = close_events(&o);
        if (replayed == 0 && closed == 0 && local_defs(&o) == 0) {
            OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(o.archive);
            if (check_ptr(&o, g, "OTF2_Archive_GetGlobalDefWriter") == 0) {
                global_defs(&o, g, st);
                check(&o, OTF2_Archive_CloseGlobalDefWriter(o.archive, g),
                      "OTF2_Archive_CloseGlobalDefWriter");
            }
        }
        rc = replayed;
    }
    if (o.archive)
        check(&o, OTF2_Archive_Close(o.archive), "OTF2_Archive_Close");
    if (rc == 0 && (o.code || o.oom))
        rc = -1;
    if (o.code)
        otf2_message(&o, err, errlen);
    else if (o.oom)
        snprintf(err, errlen, "cannot write the OTF2 archive %s: out of memory", out);
    if (rc && prepared) { /* no half archive left behind */
        char ignored[8];
        remove_archive(out, ignored, sizeof ignored);
        if (o.created)
            rmdir(out);
    }
    OTF2_Error_RegisterCallback(previous, NULL);
    free(o.loc);
    free(o.regions.of_id);
    free(o.regions.ids);
    free(o.metrics.of_id);
    free(o.metrics.ids);
    free(o.params.of_id);
    free(o.params.ids);
    return rc;
}

#else /* no libotf2: tscope__trace_convert says so before it gets here */

int tscope__trace_to_otf2(struct tscope__trace *t, const char *out, struct tscope__replay_stats *st,
                          char *err, size_t errlen)
{
    (void)t;
    (void)out;
    memset(st, 0, sizeof *st);
    snprintf(err, errlen, "this taskscope was built without OTF2 (install libotf2-trace-dev)");
    return -1;
}

#endif
