/* convert.h - from a binary trace to the formats other tools read.
 *
 * One replay (convert.c) turns the records into what every timeline
 * format is made of - stays of tasks on threads (slices, properly nested
 * per thread), arrows (a task's creation to its first stay, a dependency's
 * predecessor to its successor), counter values and instants - and hands
 * them to a sink: Chrome/Perfetto JSON (chrome.c), OTF2 (otf2.c), Paraver
 * (paraver.c).  The replay's memory is the live tasks plus a bounded list
 * of recently ended ones, whatever the trace's length.
 */
#ifndef TSCOPE_TRACE_CONVERT_H
#define TSCOPE_TRACE_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "core/formats.h"
#include "read.h"

enum tscope__flow_kind { TSCOPE__FLOW_CREATE = 0, TSCOPE__FLOW_DEP = 1 };

/* Times are ns since the trace's origin.  Callbacks return 0, or nonzero to
 * stop the replay (an output error). */
struct tscope__trace_sink {
    void *ctx;
    /* a stay of a task on a thread begins / ends; per thread they nest (an
     * end out of order closes the stays above it and opens them again) */
    int (*slice_begin)(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type);
    int (*slice_end)(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type);
    /* an arrow from inside a slice on from_thread at from_ns to the start of
     * a slice on to_thread at to_ns; hazard: TSCOPE_HAZARD_* bits (dependencies);
     * called once both ends are known, not in time order */
    int (*flow)(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task);
    int (*counter)(void *ctx, uint32_t thread, uint64_t ns, uint32_t counter, double value);
    int (*instant)(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload);
    /* optional (NULL: not wanted): the stay that just ended on thread was a
     * yield (the task will resume later), called right after its
     * slice_end */
    int (*yielded)(void *ctx, uint32_t thread, uint64_t ns, uint64_t task);
    /* optional: a message sent to or received from rank peer (flags:
     * TSCOPE_MSG_*), inside the MPI call's slice */
    int (*message)(void *ctx, uint32_t thread, uint64_t ns, uint32_t peer, uint64_t bytes,
                   uint32_t tag, unsigned flags);
};

struct tscope__replay_stats {
    uint64_t records;       /* records read (EXT included) */
    uint64_t slices;        /* slices begun (each ended) */
    uint64_t tasks;         /* tasks seen beginning */
    uint64_t flows;         /* arrows handed to the sink */
    uint64_t flows_unbound; /* creations outside any slice: no arrow */
    uint64_t flows_lost;    /* an end never seen, or forgotten (too old) */
    uint64_t unmatched;     /* ends, yields of tasks not running on that thread */
    uint64_t counters, instants, remote, messages;
    uint64_t end_ns; /* the last timestamp */
};

/* Replays t (from its first record) into s; 0, or -1 with a message in err
 * (a corrupt trace, memory, or a sink error: the sink's message first). */
int tscope__trace_replay(struct tscope__trace *t, const struct tscope__trace_sink *s,
                         struct tscope__replay_stats *st, char *err, size_t errlen);

/* A trace format's descriptor: one per format, in the format's own file of
 * src/trace; the list of formats (core/formats.h) names it
 * tscope__trace_NAME and gives its words and its number, TSCOPE__FMT_ID. */
struct tscope__trace_format {
    const char *help;    /* what it is, for whom: a short line */
    const char *file;    /* its output next to the trace (a job's: in the run folder) */
    const char *file_gz; /* the same compressed, written for big traces; NULL: never */
    const char *also;    /* the other files written with it ("" if none): for help texts */
    const char *missing; /* NULL, or why this build cannot write it */
    unsigned flags;      /* TSCOPE__TRACE_FORMAT_* */
    /* replays t into out (gzip: compressed, when file_gz); 0, or -1 with a
     * one-line message in err */
    int (*write)(struct tscope__trace *t, const char *out, int gzip,
                 struct tscope__replay_stats *st, char *err, size_t errlen);
    /* a job's ranks (paths: each one's trace.tsct) as one output, the
     * messages joined (*unmatched: those left without a partner); NULL:
     * converted rank by rank */
    int (*write_job)(const char *const *paths, int n, const char *out, int gzip,
                     struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                     size_t errlen);
};
/* file is a gnuplot script: taskscope draws the picture with it */
#define TSCOPE__TRACE_FORMAT_DRAWN 1u
/* a job's messages are written only when every rank's trace is there, else
 * none of them (OTF2's MPI records) */
#define TSCOPE__TRACE_FORMAT_WHOLE_JOB 2u

/* The list as the descriptors (trace/list.c), in the list's order: entry k
 * is trace format k + 1. */
struct tscope__trace_entry {
    const struct tscope__format_id *id;
    int format; /* TSCOPE__FMT_* */
    const struct tscope__trace_format *desc;
};
extern const struct tscope__trace_entry tscope__traces[];
extern const unsigned tscope__ntraces;
/* Trace format number format's entry, or NULL. */
const struct tscope__trace_entry *tscope__trace_entry_of(int format);

/* The format named by one of its words (formats.h: "chrome", "perfetto",
 * "json", "otf2", "paraver", "prv", "timeline", any case), 0 if none. */
int tscope__trace_format(const char *word);
/* The output a format gets by default next to the trace: DIR/ and its
 * descriptor's file (file_gz with gzip): DIR/trace.json, DIR/trace-otf2/
 * (an archive), DIR/trace.prv (with .pcf and .row), DIR/timeline.gp (with
 * timeline.csv). */
void tscope__trace_default_output(const char *trace_path, int format, int gzip, char *out,
                                  size_t len);
/* Converts the trace at in to format at out (gzip: Chrome JSON compressed);
 * 0, or -1 with a one-line message in err.  *st: what the replay saw. */
int tscope__trace_convert(const char *in, int format, const char *out, int gzip,
                          struct tscope__replay_stats *st, char *err, size_t errlen);

/* The writers (one per format); each opens out, replays t into it and
 * closes it. */
int tscope__trace_to_chrome(struct tscope__trace *t, const char *out, int gzip,
                            struct tscope__replay_stats *st, char *err, size_t errlen);
int tscope__trace_to_otf2(struct tscope__trace *t, const char *out, struct tscope__replay_stats *st,
                          char *err, size_t errlen);
int tscope__trace_to_paraver(struct tscope__trace *t, const char *out,
                             struct tscope__replay_stats *st, char *err, size_t errlen);
/* The traces of a job's ranks (paths[i]: one rank's trace.tsct) as one
 * Chrome JSON file: a process per rank, each rank's times moved onto the
 * common wall clock of the earliest (CLOCK_REALTIME at each origin), and
 * arrows for the messages, every send joined to its receive (the k-th
 * message from rank a to rank b with a tag to the k-th received, as MPI
 * keeps them in order).  *st adds up every rank's replay; st->flows counts
 * the message arrows too, *unmatched the messages left without a partner
 * (a rank missing, a receive of MPI_ANY_TAG from a collective). */
int tscope__trace_job_to_chrome(const char *const *paths, int n, const char *out, int gzip,
                                struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                                size_t errlen);

/* The same job as one OTF2 archive (otf2.c): a location group per rank, a
 * location per thread, regions unified by name across ranks; when the
 * traces are all of the job's ranks (tscope__job_complete), the messages as
 * MPI records on MPI_COMM_WORLD (MpiSend/MpiRecv; a collective call's share
 * as MpiCollectiveBegin/End around it).  *unmatched: as for Chrome, or
 * every message when they could not be written (a rank missing). */
int tscope__trace_job_to_otf2(const char *const *paths, int n, const char *out,
                              struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                              size_t errlen);
/* The same job for Paraver (paraver.c): one application, a Paraver task per
 * rank (in rank order) with its threads, task types unified by name across
 * ranks, and every joined message a communication record between the
 * ranks' threads.  *unmatched: as for Chrome. */
int tscope__trace_job_to_paraver(const char *const *paths, int n, const char *out,
                                 struct tscope__replay_stats *st, uint64_t *unmatched, char *err,
                                 size_t errlen);

/* The picture (picture.c): out is the gnuplot script; timeline.csv goes
 * next to it, and the script draws timeline.svg there. */
int tscope__trace_to_timeline(struct tscope__trace *t, const char *out,
                              struct tscope__replay_stats *st, char *err, size_t errlen);

#endif
