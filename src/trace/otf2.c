/* otf2.c - the trace as an OTF2 archive (Open Trace Format 2, Score-P's
 * format: Vampir, Scalasca and otf2-print read it), written with libotf2
 * (FORMATS.md "OTF2" has the writer sequence this follows).
 *
 * One writer for one trace and for a job's traces (job.h; the one trace is
 * a job of one).  What the archive (folder out, anchor out/traces.otf2)
 * holds:
 *  - a region per task type used, named as in the traces ("(untyped)" for
 *    type 0); the ranks' types are one region per name, whatever id each
 *    rank gave it.  Role OTF2_REGION_ROLE_TASK, paradigm USER.  TASK, not
 *    FUNCTION: OTF2 defines TASK as the body of a "task" construct, which
 *    is what a type's stays are, and a task is not a call: it may yield and
 *    resume later, even on another thread (two Enter/Leave pairs), which no
 *    function call does.  Score-P gives its OpenMP task bodies this role;
 *    TASK_UNTIED would claim more than the trace knows.  The MPI adapter's
 *    types (named MPI_*) are MPI functions: paradigm MPI, role
 *    POINT2POINT, BARRIER, COLL_ONE2ALL/ALL2ONE/ALL2ALL/OTHER, FUNCTION;
 *  - one system tree node, a location group (the process, "rank R") per
 *    trace in rank order, and a location (CPU thread, named as in the
 *    trace) per thread slot of each;
 *  - Enter/Leave per stay, as the replay gives them (nested and in time
 *    order per thread);
 *  - counters as metrics: per counter name a metric member (user metric,
 *    absolute point, double) and a metric class (asynchronous, recorded by
 *    CPU threads); a Metric event on the thread that sampled the value;
 *  - custom events as parameters: per event name a Parameter (uint64) and
 *    a ParameterUnsignedInt event carrying the payload on the thread that
 *    recorded it ("in the current region, parameter P has value V", the
 *    closest event record; markers live in a file of their own that
 *    analysis tools add, and otf2-print does not show them);
 *  - the messages between ranks (tscope_message), when the archive holds
 *    every rank of the job once (tscope__job_complete; else they are left
 *    out and the caller says so): the MPI paradigm, MPI_COMM_WORLD (a
 *    COMM_LOCATIONS group of each rank's first location, rank k at index
 *    k, and a COMM_GROUP of all), an MpiSend/MpiRecv per point-to-point
 *    message (in the MPI call's region; a receive at its completion), and
 *    per collective call (its region's name) an MpiCollectiveBegin after
 *    its Enter and an MpiCollectiveEnd before its Leave, with the bytes of
 *    the shares this rank sent and received and the root where the
 *    operation has one (the rank that sent or received the shares).  The
 *    trace keeps world ranks, not communicators: everything is on
 *    MPI_COMM_WORLD, also a call on another communicator; reductions
 *    (MPI_Allreduce, ...) have no shares (the adapter counts their bytes
 *    as a counter), so their sizes are 0;
 *  - no flows: OTF2 has no record for an arrow between two threads (its
 *    messages need MPI communicators, its task records
 *    ThreadTaskCreate/Switch/Complete a thread team), so creations and
 *    dependencies are only in the Chrome and Paraver outputs.
 *
 * Time: timer resolution 1e9 (1 tick = 1 ns), global offset 0, so event
 * timestamps are ns since tscope_init as in every other format (a job's:
 * since the earliest rank's, each rank moved by its origin's wall-clock
 * distance); the wall clock of that origin (CLOCK_REALTIME) is the clock
 * properties' realtime timestamp (OTF2 3.0), and the trace length the
 * last timestamp.
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
 * (events the counts would not include).  With MPI records, the job's
 * message ends are kept too (40 bytes each), to count those without a
 * partner as the Chrome writer does.
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
#include "job.h"

#ifdef TSCOPE_HAVE_OTF2

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "common/lazylib.h"
#include "taskscope/taskscope.h"

/* libotf2 is opened with dlopen when an archive is written, by the SONAME
 * found at build time, not linked: every other command of the CLI
 * (`taskscope run` first) starts without mapping and relocating it.  The
 * functions used, called through pointers that dlsym fills. */
#define OTF2_FUNCS(X)                                                                              \
    X(OTF2_Archive_Close)                                                                          \
    X(OTF2_Archive_CloseDefFiles)                                                                  \
    X(OTF2_Archive_CloseDefWriter)                                                                 \
    X(OTF2_Archive_CloseEvtFiles)                                                                  \
    X(OTF2_Archive_CloseEvtWriter)                                                                 \
    X(OTF2_Archive_CloseGlobalDefWriter)                                                           \
    X(OTF2_Archive_GetDefWriter)                                                                   \
    X(OTF2_Archive_GetEvtWriter)                                                                   \
    X(OTF2_Archive_GetGlobalDefWriter)                                                             \
    X(OTF2_Archive_Open)                                                                           \
    X(OTF2_Archive_OpenDefFiles)                                                                   \
    X(OTF2_Archive_OpenEvtFiles)                                                                   \
    X(OTF2_Archive_SetCreator)                                                                     \
    X(OTF2_Archive_SetDescription)                                                                 \
    X(OTF2_Archive_SetFlushCallbacks)                                                              \
    X(OTF2_Archive_SetMemoryCallbacks)                                                             \
    X(OTF2_Archive_SetSerialCollectiveCallbacks)                                                   \
    X(OTF2_Error_GetDescription)                                                                   \
    X(OTF2_Error_GetName)                                                                          \
    X(OTF2_Error_RegisterCallback)                                                                 \
    X(OTF2_EvtWriter_Enter)                                                                        \
    X(OTF2_EvtWriter_Leave)                                                                        \
    X(OTF2_EvtWriter_Metric)                                                                       \
    X(OTF2_EvtWriter_MpiCollectiveBegin)                                                           \
    X(OTF2_EvtWriter_MpiCollectiveEnd)                                                             \
    X(OTF2_EvtWriter_MpiRecv)                                                                      \
    X(OTF2_EvtWriter_MpiSend)                                                                      \
    X(OTF2_EvtWriter_ParameterUnsignedInt)                                                         \
    X(OTF2_GlobalDefWriter_WriteClockProperties)                                                   \
    X(OTF2_GlobalDefWriter_WriteComm)                                                              \
    X(OTF2_GlobalDefWriter_WriteGroup)                                                             \
    X(OTF2_GlobalDefWriter_WriteLocation)                                                          \
    X(OTF2_GlobalDefWriter_WriteLocationGroup)                                                     \
    X(OTF2_GlobalDefWriter_WriteMetricClass)                                                       \
    X(OTF2_GlobalDefWriter_WriteMetricMember)                                                      \
    X(OTF2_GlobalDefWriter_WriteParadigm)                                                          \
    X(OTF2_GlobalDefWriter_WriteParameter)                                                         \
    X(OTF2_GlobalDefWriter_WriteRegion)                                                            \
    X(OTF2_GlobalDefWriter_WriteString)                                                            \
    X(OTF2_GlobalDefWriter_WriteSystemTreeNode)                                                    \
    X(OTF2_Reader_Close)                                                                           \
    X(OTF2_Reader_Open)

OTF2_FUNCS(TSCOPE__LAZY_DECLARE)
static const struct tscope__lazy_sym otf2_syms[] = {OTF2_FUNCS(TSCOPE__LAZY_SYM)};

/* Opens libotf2 once; 0, or -1 with why in err. */
static int otf2_load(char *err, size_t errlen)
{
    static int state;
    static char why[512];
    if (tscope__lazy_load(&state, TSCOPE_OTF2_SONAME, otf2_syms,
                          sizeof otf2_syms / sizeof *otf2_syms, why, sizeof why)) {
        snprintf(err, errlen, "%s; no OTF2 archive written", why);
        return -1;
    }
    return 0;
}

#define OTF2_Archive_Close p_OTF2_Archive_Close
#define OTF2_Archive_CloseDefFiles p_OTF2_Archive_CloseDefFiles
#define OTF2_Archive_CloseDefWriter p_OTF2_Archive_CloseDefWriter
#define OTF2_Archive_CloseEvtFiles p_OTF2_Archive_CloseEvtFiles
#define OTF2_Archive_CloseEvtWriter p_OTF2_Archive_CloseEvtWriter
#define OTF2_Archive_CloseGlobalDefWriter p_OTF2_Archive_CloseGlobalDefWriter
#define OTF2_Archive_GetDefWriter p_OTF2_Archive_GetDefWriter
#define OTF2_Archive_GetEvtWriter p_OTF2_Archive_GetEvtWriter
#define OTF2_Archive_GetGlobalDefWriter p_OTF2_Archive_GetGlobalDefWriter
#define OTF2_Archive_Open p_OTF2_Archive_Open
#define OTF2_Archive_OpenDefFiles p_OTF2_Archive_OpenDefFiles
#define OTF2_Archive_OpenEvtFiles p_OTF2_Archive_OpenEvtFiles
#define OTF2_Archive_SetCreator p_OTF2_Archive_SetCreator
#define OTF2_Archive_SetDescription p_OTF2_Archive_SetDescription
#define OTF2_Archive_SetFlushCallbacks p_OTF2_Archive_SetFlushCallbacks
#define OTF2_Archive_SetMemoryCallbacks p_OTF2_Archive_SetMemoryCallbacks
#define OTF2_Archive_SetSerialCollectiveCallbacks p_OTF2_Archive_SetSerialCollectiveCallbacks
#define OTF2_Error_GetDescription p_OTF2_Error_GetDescription
#define OTF2_Error_GetName p_OTF2_Error_GetName
#define OTF2_Error_RegisterCallback p_OTF2_Error_RegisterCallback
#define OTF2_EvtWriter_Enter p_OTF2_EvtWriter_Enter
#define OTF2_EvtWriter_Leave p_OTF2_EvtWriter_Leave
#define OTF2_EvtWriter_Metric p_OTF2_EvtWriter_Metric
#define OTF2_EvtWriter_MpiCollectiveBegin p_OTF2_EvtWriter_MpiCollectiveBegin
#define OTF2_EvtWriter_MpiCollectiveEnd p_OTF2_EvtWriter_MpiCollectiveEnd
#define OTF2_EvtWriter_MpiRecv p_OTF2_EvtWriter_MpiRecv
#define OTF2_EvtWriter_MpiSend p_OTF2_EvtWriter_MpiSend
#define OTF2_EvtWriter_ParameterUnsignedInt p_OTF2_EvtWriter_ParameterUnsignedInt
#define OTF2_GlobalDefWriter_WriteClockProperties p_OTF2_GlobalDefWriter_WriteClockProperties
#define OTF2_GlobalDefWriter_WriteComm p_OTF2_GlobalDefWriter_WriteComm
#define OTF2_GlobalDefWriter_WriteGroup p_OTF2_GlobalDefWriter_WriteGroup
#define OTF2_GlobalDefWriter_WriteLocation p_OTF2_GlobalDefWriter_WriteLocation
#define OTF2_GlobalDefWriter_WriteLocationGroup p_OTF2_GlobalDefWriter_WriteLocationGroup
#define OTF2_GlobalDefWriter_WriteMetricClass p_OTF2_GlobalDefWriter_WriteMetricClass
#define OTF2_GlobalDefWriter_WriteMetricMember p_OTF2_GlobalDefWriter_WriteMetricMember
#define OTF2_GlobalDefWriter_WriteParadigm p_OTF2_GlobalDefWriter_WriteParadigm
#define OTF2_GlobalDefWriter_WriteParameter p_OTF2_GlobalDefWriter_WriteParameter
#define OTF2_GlobalDefWriter_WriteRegion p_OTF2_GlobalDefWriter_WriteRegion
#define OTF2_GlobalDefWriter_WriteString p_OTF2_GlobalDefWriter_WriteString
#define OTF2_GlobalDefWriter_WriteSystemTreeNode p_OTF2_GlobalDefWriter_WriteSystemTreeNode
#define OTF2_Reader_Close p_OTF2_Reader_Close
#define OTF2_Reader_Open p_OTF2_Reader_Open

#define ARCHIVE "traces"
#define NONE UINT32_MAX
#define MAX_CHUNKS 4 /* chunks a buffer holds before OTF2 flushes it */

/* One rank's table ids (type, counter, event) -> the archive's refs. */
struct refs {
    uint32_t *of_id; /* by table id; NONE: not seen yet on this rank */
    uint32_t cap;
};

/* The archive's regions, metrics or parameters: unique names, in order of
 * first use over the ranks (a job's ranks number their types each their
 * own way; one name is one region). */
struct names {
    char **s;
    uint32_t n, cap;
};

struct location {
    OTF2_EvtWriter *w;
    uint64_t events;
    uint32_t rank, thread; /* the trace's rank and thread slot */
    uint32_t trace, group; /* the trace (in the job), the location group */
    /* the MPI collective call on this thread, from its Enter to its Leave */
    uint32_t coll_region; /* NONE: none */
    uint64_t coll_sent, coll_received;
    uint32_t coll_sent_to, coll_received_from; /* NONE: no share */
};

struct out {
    const struct tscope__job *job;
    uint32_t *order;    /* the job's traces by rank */
    uint32_t *loc_base; /* by trace: its thread 0's location (locations go by rank) */
    uint32_t cur;       /* the trace being replayed */
    const char *path;
    OTF2_Archive *archive;
    struct location *loc; /* all ranks' threads */
    uint32_t nloc;
    struct refs regions, metrics, params; /* of the trace being replayed */
    struct names region_names, metric_names, param_names;
    int mpi;                  /* messages written as MPI records (a complete job) */
    uint64_t mpi_records;     /* MpiSend, MpiRecv, collective Begin/End written */
    struct tscope__msgs msgs; /* with mpi: to count the ends without a partner */
    OTF2_ErrorCode code;      /* the first failure */
    const char *what;         /* the call that failed */
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

/* ---- MPI calls ---- */

/* What an MPI call's region is to OTF2: its role, and for a collective its
 * operation and where its root is seen (the root sends its share, or
 * receives the others'). */
enum { ROOT_NONE, ROOT_SENDS, ROOT_RECEIVES };
static const struct mpi_call {
    const char *name;
    OTF2_RegionRole role;
    int op; /* OTF2_COLLECTIVE_OP_*, -1: not a collective */
    int root;
} mpi_calls[] = {
    {"MPI_Barrier", OTF2_REGION_ROLE_BARRIER, OTF2_COLLECTIVE_OP_BARRIER, ROOT_NONE},
    {"MPI_Bcast", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_COLLECTIVE_OP_BCAST, ROOT_SENDS},
    {"MPI_Scatter", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_COLLECTIVE_OP_SCATTER, ROOT_SENDS},
    {"MPI_Scatterv", OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_COLLECTIVE_OP_SCATTERV, ROOT_SENDS},
    {"MPI_Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_COLLECTIVE_OP_REDUCE, ROOT_RECEIVES},
    {"MPI_Gather", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_COLLECTIVE_OP_GATHER, ROOT_RECEIVES},
    {"MPI_Gatherv", OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_COLLECTIVE_OP_GATHERV, ROOT_RECEIVES},
    {"MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLREDUCE, ROOT_NONE},
    {"MPI_Allgather", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLGATHER, ROOT_NONE},
    {"MPI_Allgatherv", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLGATHERV, ROOT_NONE},
    {"MPI_Alltoall", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLTOALL, ROOT_NONE},
    {"MPI_Alltoallv", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_ALLTOALLV, ROOT_NONE},
    {"MPI_Reduce_scatter", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_COLLECTIVE_OP_REDUCE_SCATTER,
     ROOT_NONE},
    {"MPI_Reduce_scatter_block", OTF2_REGION_ROLE_COLL_ALL2ALL,
     OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, ROOT_NONE},
    {"MPI_Scan", OTF2_REGION_ROLE_COLL_OTHER, OTF2_COLLECTIVE_OP_SCAN, ROOT_NONE},
    {"MPI_Exscan", OTF2_REGION_ROLE_COLL_OTHER, OTF2_COLLECTIVE_OP_EXSCAN, ROOT_NONE},
};

/* The collective named name, NULL for any other. */
static const struct mpi_call *collective(const char *name)
{
    for (size_t i = 0; i < sizeof mpi_calls / sizeof mpi_calls[0]; i++)
        if (strcmp(mpi_calls[i].name, name) == 0)
            return &mpi_calls[i];
    return NULL;
}

static int is_mpi(const char *name)
{
    return strncmp(name, "MPI_", 4) == 0;
}

/* Point to point: the sends, receives, probes, waits and tests. */
static int is_point_to_point(const char *name)
{
    static const char *const stems[] = {"Send",     "Ssend",  "Bsend",  "Rsend", "Isend",
                                        "Issend",   "Ibsend", "Irsend", "Recv",  "Irecv",
                                        "Sendrecv", "Probe",  "Iprobe", "Wait",  "Test"};
    if (!is_mpi(name))
        return 0;
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
        size_t n = strlen(stems[i]);
        if (strncmp(name + 4, stems[i], n) == 0 &&
            (name[4 + n] == 0 || name[4 + n] == '_' || strcmp(name + 4 + n, "all") == 0 ||
             strcmp(name + 4 + n, "any") == 0 || strcmp(name + 4 + n, "some") == 0))
            return 1;
    }
    return 0;
}

/* ---- the events ---- */

/* The name of a table entry of trace t, or "WORD ID" when it has none. */
static const char *name_of(const struct tscope__trace *t, int table, uint32_t id, const char *word,
                           char *buf, size_t len)
{
    if (table == TSCOPE__TABLE_TYPES && id == 0)
        return "(untyped)";
    const char *name = tscope__trace_name(t, table, id);
    if (name)
        return name;
    snprintf(buf, len, "%s %u", word, id);
    return buf;
}

/* The archive's ref of name (added when new); NONE when out of memory. */
static uint32_t name_ref(struct out *o, struct names *l, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->s[i], name) == 0)
            return i;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 64;
        char **g = realloc(l->s, cap * sizeof *g);
        if (!g) {
            o->oom = 1;
            return NONE;
        }
        l->s = g;
        l->cap = cap;
    }
    if (!(l->s[l->n] = strdup(name))) {
        o->oom = 1;
        return NONE;
    }
    return l->n++;
}

/* The archive's ref of the current trace's table entry id; NONE when out
 * of memory. */
static uint32_t ref_of(struct out *o, struct refs *r, struct names *l, int table, const char *word,
                       uint32_t id)
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
        for (uint32_t i = r->cap; i < cap; i++)
            r->of_id[i] = NONE;
        r->cap = cap;
    }
    if (r->of_id[id] == NONE) {
        char buf[64];
        r->of_id[id] = name_ref(o, l, name_of(o->job->t[o->cur], table, id, word, buf, sizeof buf));
    }
    return r->of_id[id];
}

static uint32_t region_of(struct out *o, uint32_t type)
{
    return ref_of(o, &o->regions, &o->region_names, TSCOPE__TABLE_TYPES, "type", type);
}

/* Forgets the current trace's ids (the next trace has its own). */
static void forget_ids(struct refs *r)
{
    for (uint32_t i = 0; i < r->cap; i++)
        r->of_id[i] = NONE;
}

static struct location *location_of(struct out *o, uint32_t thread)
{
    uint32_t first = o->loc_base[o->cur], threads = tscope__trace_info(o->job->t[o->cur])->threads;
    if (thread >= (threads ? threads : 1)) { /* the reader counted the slots: not expected */
        check(o, OTF2_ERROR_INVALID_ARGUMENT, "a thread slot past the trace's count");
        return NULL;
    }
    struct location *l = &o->loc[first + thread];
    if (!l->w) {
        l->w = OTF2_Archive_GetEvtWriter(o->archive, first + thread);
        if (check_ptr(o, l->w, "OTF2_Archive_GetEvtWriter"))
            return NULL;
    }
    return l;
}

static uint64_t at(const struct out *o, uint64_t ns)
{
    return ns + o->job->offset[o->cur];
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    struct out *o = ctx;
    uint32_t region = region_of(o, type);
    struct location *l = location_of(o, thread);
    if (region == NONE || !l ||
        check(o, OTF2_EvtWriter_Enter(l->w, NULL, at(o, ns), region), "OTF2_EvtWriter_Enter"))
        return -1;
    l->events++;
    if (o->mpi && l->coll_region == NONE && collective(o->region_names.s[region])) {
        if (check(o, OTF2_EvtWriter_MpiCollectiveBegin(l->w, NULL, at(o, ns)),
                  "OTF2_EvtWriter_MpiCollectiveBegin"))
            return -1;
        l->events++;
        o->mpi_records++;
        l->coll_region = region;
        l->coll_sent = l->coll_received = 0;
        l->coll_sent_to = l->coll_received_from = NONE;
    }
    return 0;
}

/* The root of the collective call c on l: the rank that sent (or
 * received) the shares, as seen from this rank. */
static uint32_t root_of(const struct mpi_call *c, const struct location *l)
{
    if (c->root == ROOT_SENDS)
        return l->coll_sent_to != NONE ? l->rank : l->coll_received_from;
    if (c->root == ROOT_RECEIVES)
        return l->coll_received_from != NONE ? l->rank : l->coll_sent_to;
    return OTF2_UNDEFINED_UINT32;
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    struct out *o = ctx;
    uint32_t region = region_of(o, type);
    struct location *l = location_of(o, thread);
    if (region == NONE || !l)
        return -1;
    if (l->coll_region == region) {
        const struct mpi_call *c = collective(o->region_names.s[region]);
        uint32_t root = root_of(c, l);
        if (check(o,
                  OTF2_EvtWriter_MpiCollectiveEnd(l->w, NULL, at(o, ns), (OTF2_CollectiveOp)c->op,
                                                  0, root == NONE ? OTF2_UNDEFINED_UINT32 : root,
                                                  l->coll_sent, l->coll_received),
                  "OTF2_EvtWriter_MpiCollectiveEnd"))
            return -1;
        l->events++;
        o->mpi_records++;
        l->coll_region = NONE;
    }
    if (check(o, OTF2_EvtWriter_Leave(l->w, NULL, at(o, ns), region), "OTF2_EvtWriter_Leave"))
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
    uint32_t metric =
        ref_of(o, &o->metrics, &o->metric_names, TSCOPE__TABLE_COUNTERS, "counter", id);
    struct location *l = location_of(o, thread);
    if (metric == NONE || !l)
        return -1;
    OTF2_Type type = OTF2_TYPE_DOUBLE;
    OTF2_MetricValue v;
    v.floating_point = value;
    if (check(o, OTF2_EvtWriter_Metric(l->w, NULL, at(o, ns), metric, 1, &type, &v),
              "OTF2_EvtWriter_Metric"))
        return -1;
    l->events++;
    return 0;
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload)
{
    struct out *o = ctx;
    uint32_t param = ref_of(o, &o->params, &o->param_names, TSCOPE__TABLE_EVENTS, "event", event);
    struct location *l = location_of(o, thread);
    if (param == NONE || !l ||
        check(o, OTF2_EvtWriter_ParameterUnsignedInt(l->w, NULL, at(o, ns), param, payload),
              "OTF2_EvtWriter_ParameterUnsignedInt"))
        return -1;
    l->events++;
    return 0;
}

/* A message: point to point, an MpiSend or MpiRecv on MPI_COMM_WORLD (the
 * trace keeps world ranks, not communicators); a collective's share adds
 * to the call's sizes. */
static int message(void *ctx, uint32_t thread, uint64_t ns, uint32_t peer, uint64_t bytes,
                   uint32_t tag, unsigned flags)
{
    struct out *o = ctx;
    if (!o->mpi)
        return 0;
    struct location *l = location_of(o, thread);
    if (!l)
        return -1;
    struct tscope__msg m = {at(o, ns), bytes, l->rank, peer, tag, thread, (uint8_t)flags};
    if (tscope__msgs_add(&o->msgs, &m)) {
        o->oom = 1;
        return -1;
    }
    int send = (flags & TSCOPE_MSG_SEND) != 0;
    if (flags & TSCOPE_MSG_COLLECTIVE) {
        if (l->coll_region != NONE) {
            if (send) {
                l->coll_sent += bytes;
                l->coll_sent_to = peer;
            } else {
                l->coll_received += bytes;
                l->coll_received_from = peer;
            }
        }
        return 0;
    }
    OTF2_ErrorCode c = send ? OTF2_EvtWriter_MpiSend(l->w, NULL, at(o, ns), peer, 0, tag, bytes)
                            : OTF2_EvtWriter_MpiRecv(l->w, NULL, at(o, ns), peer, 0, tag, bytes);
    if (check(o, c, send ? "OTF2_EvtWriter_MpiSend" : "OTF2_EvtWriter_MpiRecv"))
        return -1;
    l->events++;
    o->mpi_records++;
    return 0;
}

/* Closes every location's event writer; a location without events gets
 * its (empty) event file too, so that readers find one per location. */
static int close_events(struct out *o)
{
    int rc = 0;
    for (uint32_t g = 0; g < o->nloc; g++) {
        struct location *l = &o->loc[g];
        if (!l->w && rc == 0) {
            l->w = OTF2_Archive_GetEvtWriter(o->archive, g);
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
    for (uint32_t g = 0; g < o->nloc; g++) {
        OTF2_DefWriter *w = OTF2_Archive_GetDefWriter(o->archive, g);
        if (check_ptr(o, w, "OTF2_Archive_GetDefWriter") ||
            check(o, OTF2_Archive_CloseDefWriter(o->archive, w), "OTF2_Archive_CloseDefWriter"))
            return -1;
    }
    return check(o, OTF2_Archive_CloseDefFiles(o->archive), "OTF2_Archive_CloseDefFiles");
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if (check(o, (call), #call))                                                               \
            return -1;                                                                             \
    } while (0)

/* A region per task type: MPI calls (named MPI_*) as MPI functions, with
 * the role of their kind, the others as task bodies (top comment). */
static int write_regions(struct out *o, OTF2_GlobalDefWriter *g, uint32_t empty, uint32_t name0)
{
    for (uint32_t i = 0; i < o->region_names.n; i++) {
        const char *name = o->region_names.s[i];
        const struct mpi_call *c = collective(name);
        OTF2_RegionRole role = c                         ? c->role
                               : is_point_to_point(name) ? OTF2_REGION_ROLE_POINT2POINT
                               : is_mpi(name)            ? OTF2_REGION_ROLE_FUNCTION
                                                         : OTF2_REGION_ROLE_TASK;
        TRY(OTF2_GlobalDefWriter_WriteRegion(g, i, name0 + i, name0 + i, empty, role,
                                             is_mpi(name) ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER,
                                             OTF2_REGION_FLAG_NONE, empty, 0, 0));
    }
    return 0;
}

/* MPI_COMM_WORLD: the ranks' first locations (rank k at index k), the
 * group of all of them, the communicator. */
static int write_comm(struct out *o, OTF2_GlobalDefWriter *g, uint32_t name, uint32_t paradigm)
{
    uint32_t n = (uint32_t)o->job->n;
    uint64_t *members = malloc(((size_t)n + 1) * sizeof *members);
    if (!members) {
        o->oom = 1;
        return -1;
    }
    for (uint32_t k = 0; k < n; k++)
        members[k] = o->loc_base[o->order[k]];
    OTF2_ErrorCode c = OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, paradigm,
                                                          OTF2_PARADIGM_CLASS_PROCESS);
    if (c == OTF2_SUCCESS)
        c = OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, members);
    for (uint32_t k = 0; k < n; k++)
        members[k] = k;
    if (c == OTF2_SUCCESS)
        c = OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, n, members);
    free(members);
    TRY(c);
    TRY(OTF2_GlobalDefWriter_WriteComm(g, 0, name, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    return 0;
}

/* Strings are numbered in the order written: "", the regions', metrics',
 * parameters' and locations' names, the processes' names, the node's,
 * then with MPI records "MPI_COMM_WORLD" and "MPI". */
static int global_defs(struct out *o, OTF2_GlobalDefWriter *g,
                       const struct tscope__replay_stats *st)
{
    uint64_t realtime = o->job->origin ? o->job->origin : OTF2_UNDEFINED_TIMESTAMP;
    TRY(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, 0, st->end_ns, realtime));

    uint32_t nranks = (uint32_t)o->job->n;
    const uint32_t empty = 0, region0 = 1, metric0 = region0 + o->region_names.n,
                   param0 = metric0 + o->metric_names.n, loc0 = param0 + o->param_names.n,
                   group0 = loc0 + o->nloc, node = group0 + nranks, world = node + 1,
                   mpi = node + 2;
    char buf[300];
    TRY(OTF2_GlobalDefWriter_WriteString(g, empty, ""));
    for (uint32_t i = 0; i < o->region_names.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteString(g, region0 + i, o->region_names.s[i]));
    for (uint32_t i = 0; i < o->metric_names.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteString(g, metric0 + i, o->metric_names.s[i]));
    for (uint32_t i = 0; i < o->param_names.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteString(g, param0 + i, o->param_names.s[i]));
    for (uint32_t k = 0; k < o->nloc; k++) {
        const struct location *l = &o->loc[k];
        TRY(OTF2_GlobalDefWriter_WriteString(g, loc0 + k,
                                             name_of(o->job->t[l->trace], TSCOPE__TABLE_THREADS,
                                                     l->thread, "thread", buf, sizeof buf)));
    }
    for (uint32_t k = 0; k < nranks; k++) {
        snprintf(buf, sizeof buf, "rank %u", tscope__trace_info(o->job->t[o->order[k]])->rank);
        TRY(OTF2_GlobalDefWriter_WriteString(g, group0 + k, buf));
    }
    TRY(OTF2_GlobalDefWriter_WriteString(g, node, "node"));
    if (o->mpi) {
        TRY(OTF2_GlobalDefWriter_WriteString(g, world, "MPI_COMM_WORLD"));
        TRY(OTF2_GlobalDefWriter_WriteString(g, mpi, "MPI"));
    }

    if (write_regions(o, g, empty, region0))
        return -1;
    for (uint32_t i = 0; i < o->metric_names.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteMetricMember(g, i, metric0 + i, empty, OTF2_METRIC_TYPE_USER,
                                                   OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE,
                                                   OTF2_BASE_DECIMAL, 0, empty));
    for (uint32_t i = 0; i < o->metric_names.n; i++) {
        OTF2_MetricMemberRef member = i;
        TRY(OTF2_GlobalDefWriter_WriteMetricClass(g, i, 1, &member, OTF2_METRIC_ASYNCHRONOUS,
                                                  OTF2_RECORDER_KIND_CPU));
    }
    for (uint32_t i = 0; i < o->param_names.n; i++)
        TRY(OTF2_GlobalDefWriter_WriteParameter(g, i, param0 + i, OTF2_PARAMETER_TYPE_UINT64));
    TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, node, node,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    for (uint32_t k = 0; k < nranks; k++)
        TRY(OTF2_GlobalDefWriter_WriteLocationGroup(
            g, k, group0 + k, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP));
    for (uint32_t k = 0; k < o->nloc; k++)
        TRY(OTF2_GlobalDefWriter_WriteLocation(g, k, loc0 + k, OTF2_LOCATION_TYPE_CPU_THREAD,
                                               o->loc[k].events, o->loc[k].group));
    if (o->mpi && write_comm(o, g, world, mpi))
        return -1;
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
    char text[300];
    TRY(OTF2_Archive_SetFlushCallbacks(o->archive, &flush_callbacks, NULL));
    TRY(OTF2_Archive_SetMemoryCallbacks(o->archive, &memory_callbacks, NULL));
    TRY(OTF2_Archive_SetSerialCollectiveCallbacks(o->archive));
    snprintf(text, sizeof text, "taskscope %d.%d.%d", TSCOPE_VERSION_MAJOR, TSCOPE_VERSION_MINOR,
             TSCOPE_VERSION_PATCH);
    TRY(OTF2_Archive_SetCreator(o->archive, text));
    const struct tscope__trace_info *info = tscope__trace_info(o->job->t[0]);
    if (o->job->n == 1)
        snprintf(text, sizeof text, "taskscope trace of rank %u of %u (pid %u); the trace is %s",
                 info->rank, info->nranks, info->pid,
                 tscope__trace_status_text(info->status, info->cut));
    else
        snprintf(text, sizeof text, "taskscope traces of %d ranks of a job of %u; the messages %s",
                 o->job->n, info->nranks,
                 o->mpi ? "as MPI records on MPI_COMM_WORLD"
                        : "left out (not every rank's trace is here)");
    TRY(OTF2_Archive_SetDescription(o->archive, text));
    TRY(OTF2_Archive_OpenEvtFiles(o->archive));
    return 0;
}

/* By rank, then by position. */
static const struct tscope__job *sorting;
static int by_rank(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t rx = tscope__trace_info(sorting->t[x])->rank,
             ry = tscope__trace_info(sorting->t[y])->rank;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The locations: per trace, by rank, one per thread slot (at least one:
 * readers refuse a process without locations). */
static int layout(struct out *o)
{
    uint32_t n = (uint32_t)o->job->n;
    o->order = calloc((size_t)n + 1, sizeof *o->order);
    o->loc_base = calloc((size_t)n + 1, sizeof *o->loc_base);
    if (!o->order || !o->loc_base)
        return -1;
    for (uint32_t k = 0; k < n; k++)
        o->order[k] = k;
    sorting = o->job;
    qsort(o->order, n, sizeof *o->order, by_rank);
    uint64_t total = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t threads = tscope__trace_info(o->job->t[o->order[k]])->threads;
        o->loc_base[o->order[k]] = (uint32_t)total;
        total += threads ? threads : 1;
    }
    if (total > (1u << 24))
        return -1;
    o->nloc = (uint32_t)total;
    o->loc = calloc(o->nloc, sizeof *o->loc);
    if (!o->loc)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t t = o->order[k], threads = tscope__trace_info(o->job->t[t])->threads;
        for (uint32_t th = 0; th < (threads ? threads : 1); th++) {
            struct location *l = &o->loc[o->loc_base[t] + th];
            l->rank = tscope__trace_info(o->job->t[t])->rank;
            l->thread = th;
            l->trace = t;
            l->group = k;
            l->coll_region = NONE;
        }
    }
    return 0;
}
static int count_pair(void *ctx, const struct tscope__msg *snd, const struct tscope__msg *rcv)
{
    (void)ctx;
    (void)snd;
    (void)rcv;
    return 0;
}

/* The job (one trace or many) as one archive at out. */
static int write_job(const struct tscope__job *job, const char *out,
                     struct tscope__replay_stats *st, uint64_t *unmatched, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    *unmatched = 0;
    err[0] = 0;
    if (!out[0] || strcmp(out, "-") == 0) {
        snprintf(err, errlen, "an OTF2 archive is a folder: give its name, not '%s'", out);
        return -1;
    }
    if (otf2_load(err, errlen))
        return -1;
    struct out o = {.job = job, .path = out, .mpi = tscope__job_complete(job)};
    OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(on_error, &o);
    int rc = prepare_folder(&o, err, errlen), prepared = rc == 0;
    if (rc == 0 && layout(&o))
        o.oom = 1;
    if (rc == 0 && !o.oom && open_archive(&o) == 0) {
        struct tscope__trace_sink sink = {&o,      slice_begin, slice_end, flow,
                                          counter, instant,     NULL,      message};
        for (uint32_t k = 0; k < (uint32_t)job->n && rc == 0; k++) {
            o.cur = o.order[k];
            forget_ids(&o.regions);
            forget_ids(&o.metrics);
            forget_ids(&o.params);
            struct tscope__replay_stats one;
            rc = tscope__trace_replay(job->t[o.cur], &sink, &one, err, errlen);
            tscope__job_add_stats(st, &one, job->offset[o.cur]);
        }
        int closed = close_events(&o);
        if (rc == 0 && closed == 0 && local_defs(&o) == 0) {
            OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(o.archive);
            if (check_ptr(&o, g, "OTF2_Archive_GetGlobalDefWriter") == 0) {
                global_defs(&o, g, st);
                check(&o, OTF2_Archive_CloseGlobalDefWriter(o.archive, g),
                      "OTF2_Archive_CloseGlobalDefWriter");
            }
        }
    }
    if (o.archive)
        check(&o, OTF2_Archive_Close(o.archive), "OTF2_Archive_Close");
    if (rc == 0 && (o.code || o.oom))
        rc = -1;
    if (o.code)
        otf2_message(&o, err, errlen);
    else if (o.oom)
        snprintf(err, errlen, "cannot write the OTF2 archive %s: out of memory", out);
    if (rc == 0) {
        if (o.mpi)
            tscope__msgs_join(&o.msgs, count_pair, NULL, unmatched);
        else
            *unmatched = st->messages; /* none written */
    }
    if (rc && prepared) { /* no half archive left behind */
        char ignored[8];
        remove_archive(out, ignored, sizeof ignored);
        if (o.created)
            rmdir(out);
    }
    OTF2_Error_RegisterCallback(previous, NULL);
    free(o.loc);
    free(o.order);
    free(o.loc_base);
    free(o.regions.of_id);
    free(o.metrics.of_id);
    free(o.params.of_id);
    struct names *lists[] = {&o.region_names, &o.metric_names, &o.param_names};
    for (size_t i = 0; i < 3; i++) {
        for (uint32_t k = 0; k < lists[i]->n; k++)
            free(lists[i]->s[k]);
        free(lists[i]->s);
    }
    tscope__msgs_free(&o.msgs);
    return rc;
}

int tscope__trace_to_otf2(struct tscope__trace *t, const char *out, struct tscope__replay_stats *st,
                          char *err, size_t errlen)
{
    uint64_t offset = 0, unmatched;
    struct tscope__job job = {&t, &offset, tscope__trace_info(t)->realtime_ns, 1};
    return write_job(&job, out, st, &unmatched, err, errlen);
}

int tscope__trace_job_to_otf2(const char *const *paths, int n, const char *out,
                              struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                              size_t errlen)
{
    memset(st, 0, sizeof *st);
    *unmatched = 0;
    struct tscope__job job;
    if (tscope__job_open(&job, paths, n, err, errlen))
        return -1;
    int rc = write_job(&job, out, st, unmatched, err, errlen);
    tscope__job_close(&job);
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

int tscope__trace_job_to_otf2(const char *const *paths, int n, const char *out,
                              struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                              size_t errlen)
{
    (void)paths;
    (void)n;
    (void)out;
    memset(st, 0, sizeof *st);
    *unmatched = 0;
    snprintf(err, errlen, "this taskscope was built without OTF2 (install libotf2-trace-dev)");
    return -1;
}

#endif

/* The descriptor: OTF2 has no compressed form. */
static int write_trace(struct tscope__trace *t, const char *out, int gzip,
                       struct tscope__replay_stats *st, char *err, size_t errlen)
{
    (void)gzip;
    return tscope__trace_to_otf2(t, out, st, err, errlen);
}

static int write_trace_job(const char *const *paths, int n, const char *out, int gzip,
                           struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                           size_t errlen)
{
    (void)gzip;
    return tscope__trace_job_to_otf2(paths, n, out, st, unmatched, err, errlen);
}

const struct tscope__trace_format tscope__trace_otf2 = {
    "an OTF2 archive (a folder) for Vampir and otf2-print",
    "trace-otf2",
    NULL,
    "",
#ifdef TSCOPE_HAVE_OTF2
    NULL,
#else
    "this taskscope was built without OTF2 "
    "(install libotf2-trace-dev)",
#endif
    TSCOPE__TRACE_FORMAT_WHOLE_JOB,
    write_trace,
    write_trace_job};
