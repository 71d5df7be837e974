/* job.h - a job's rank traces read together, shared by the writers that put
 * a whole MPI job in one output (Chrome, OTF2, Paraver): opening the ranks'
 * traces on the common wall clock of the earliest, adding up their replay
 * statistics, and joining each message's send to its receive.
 */
#ifndef TSCOPE_TRACE_JOB_H
#define TSCOPE_TRACE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "convert.h"

struct tscope__job {
    struct tscope__trace **t; /* by position in paths */
    uint64_t *offset;         /* ns added to rank i's times: its origin on the common clock */
    uint64_t origin;          /* CLOCK_REALTIME ns of the earliest origin */
    int n;
};

/* Opens the n traces; 0, or -1 with a message in err (nothing left open). */
int tscope__job_open(struct tscope__job *job, const char *const *paths, int n, char *err,
                     size_t errlen);
void tscope__job_close(struct tscope__job *job);
/* 1 when the job's traces are all of its ranks, each once: ranks 0 ..
 * nranks - 1 with nranks == n (message ends can then name real places). */
int tscope__job_complete(const struct tscope__job *job);
/* Adds one rank's replay (times moved by offset) to *sum. */
void tscope__job_add_stats(struct tscope__replay_stats *sum, const struct tscope__replay_stats *one,
                           uint64_t offset);

/* A message's end on the sending or the receiving side (ns on the job's
 * clock, rank: the side's own rank). */
struct tscope__msg {
    uint64_t ns, bytes;
    uint32_t rank, peer, tag, thread;
    uint8_t flags; /* TSCOPE_MSG_* */
};

struct tscope__msgs {
    struct tscope__msg *m;
    size_t n, cap;
};

/* Keeps m; -1 when out of memory. */
int tscope__msgs_add(struct tscope__msgs *l, const struct tscope__msg *m);
/* Joins the k-th send of each channel (sender, receiver, collective or not,
 * tag unless collective: MPI keeps a channel's messages in order) to its
 * k-th receive, calling pair for each in turn (it returns nonzero to
 * stop: then so does this); *unmatched counts the ends left alone.
 * Sorts l. */
int tscope__msgs_join(struct tscope__msgs *l,
                      int (*pair)(void *ctx, const struct tscope__msg *snd,
                                  const struct tscope__msg *rcv),
                      void *ctx, uint64_t *unmatched);
void tscope__msgs_free(struct tscope__msgs *l);

#endif
