/* ending.h - the end of a run, shared by tscope_finalize (lifecycle.c) and
 * the recovery of a process that died without it (recover.c): settle the
 * store, take its snapshot, write the outputs. */
#ifndef TSCOPE_LIFECYCLE_ENDING_H
#define TSCOPE_LIFECYCLE_ENDING_H

#include <stdint.h>
#include <stdio.h>

struct tscope__store;

/* How a run ends: what closes the store, what is written where. */
struct tscope__ending {
    uint64_t end; /* ticks: the tasks still open are closed here as unfinished */
    /* the shards are a dead process's, read from its crash journal (journal.h):
     * they are recovered (tscope__shards_recover, which may move `end` later)
     * instead of completed, and damage found in them is said, naming journal */
    int from_journal;
    const char *journal; /* the journal's path without ".map", for messages */
    int write;           /* 0: settle only (nothing measured, or the profiler off) */
    FILE *summary;       /* the summary goes here when the configuration asks; NULL: nowhere */
    /* the output folder; NULL: this process's rank folder, made now unless
     * made at init (tscope__output_make_rank_dir), and said */
    const char *outdir;
    const char *program; /* NULL: this process's name */
    int sampled;         /* the sampler kept rows: its files are written */
};

/* Settles store s at e->end (the tasks still open closed, the instance
 * graph and tree made final, under the store lock), marks the process's
 * measurement as finalised, then, when e->write, takes the store's snapshot
 * and writes the summary and the outputs its configuration selects.
 * *elapsed_s (unless NULL): the run's length.  Returns 0, TSCOPE_ENOMEM (no
 * snapshot: nothing written) or TSCOPE_EIO (an output not written: one line
 * on stderr for each). */
int tscope__settle_snapshot_write(struct tscope__store *s, struct tscope__ending *e,
                                  double *elapsed_s);

#endif
