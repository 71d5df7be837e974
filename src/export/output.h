/* output.h - the output folder written at tscope_finalize. */
#ifndef TSCOPE_EXPORT_OUTPUT_H
#define TSCOPE_EXPORT_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "core/formats.h"
#include "profile/profile.h"

typedef int (*tscope__writer_fn)(const struct tscope__profile *p, FILE *f);

/* A file of an output format: its name in the output folder (RANK in it:
 * the process's rank; a folder in it is made when needed) and its writer. */
struct tscope__output_file {
    const char *name;
    tscope__writer_fn write;
    int sampled;       /* only when the sampler kept rows */
    const char *needs; /* NULL, or the file of the same format whose data it
                        * draws: not written when that one failed */
};

/* `taskscope convert` writes the format from a saved profile.json, not
 * only finalize from the measured one. */
#define TSCOPE__OUTPUT_FROM_PROFILE 1u
/* Some of its files are gnuplot scripts (NAME.gp) that taskscope draws
 * (NAME.png) after the run: `taskscope run` starts gnuplot early. */
#define TSCOPE__OUTPUT_DRAWN 2u

/* An output format's descriptor: one per format, in the format's own file
 * of src/export; the list of formats (core/formats.h) names it
 * tscope__output_NAME and gives its words and bit. */
struct tscope__output_format {
    const char *help;                     /* what it is, for whom: a short line */
    unsigned flags;                       /* TSCOPE__OUTPUT_* */
    struct tscope__output_file files[12]; /* in the order written, up to a NULL name */
};

/* The list as the descriptors (export/list.c), in the list's order. */
struct tscope__output_entry {
    const struct tscope__format_id *id;
    const struct tscope__output_format *format;
};
extern const struct tscope__output_entry tscope__outputs[];
extern const unsigned tscope__noutputs;

/* The output format a word names (any case), or NULL. */
const struct tscope__output_entry *tscope__output_find(const char *word);

/* A file's name (struct tscope__output_file) for rank: RANK replaced. */
void tscope__output_file_name(const char *name, int rank, char *out, size_t len);

/* Writes into dir the files of every format selected by the TSCOPE__OUT_*
 * bits of outputs, in the list's order (the sampler's files only when
 * `sampled`), each whole or absent
 * (tscope__output_write_file); the names written go to `written` (comma
 * separated, may be NULL).  Returns 0 or the first error. */
int tscope__output_write_files(const char *dir, int outputs, int sampled,
                               const struct tscope__profile *p, char *written, size_t len);

/* Writes fn's output to DIR/NAME.tmp and renames it to DIR/NAME when it is
 * complete.  On any error (a full disk included) prints one line naming the
 * file and the reason, removes the temporary file and returns TSCOPE_EIO;
 * DIR/NAME is then left as it was. */
int tscope__output_write_file(const char *dir, const char *name, tscope__writer_fn fn,
                              const struct tscope__profile *p);

/* The folder `taskscope run` prepared for this process, NULL when none.
 * The launcher names its folder (TASKSCOPE_OUTPUT_DIR_PREPARED) and itself
 * (TASKSCOPE_LAUNCHER_PID); the folder is the program's it started (whose
 * parent it is: an exec keeps that), never a descendant's (a child it
 * forks or execs, a script's child).  A descendant measured while its
 * TASKSCOPE_OUTPUT_DIR is still the run's gets a folder of its own beside
 * the run's, RUN.PROG.PID, made when `make` is set (tscope_init) and named
 * for the launcher in RUN/.taskscope-PID.descendant (its path, then PROG,
 * one line each).  Without TASKSCOPE_LAUNCHER_PID the folder is the
 * process's that reads it (set by hand, as tests and benchmarks do).
 * Decided once per process (a forked child decides again); not thread-safe
 * (init and finalize call it, serialised). */
const char *tscope__output_prepared(int make);

/* Creates a fresh folder named `want`, or want.1, want.2, ... if it exists
 * (never reuses an existing folder); parents are created as needed.  The
 * name used goes to out.  Returns 0 or TSCOPE_EIO (errno kept). */
int tscope__output_make_dir(const char *want, char *out, size_t len);

/* The output folder of rank `rank` of `nranks`.  One rank: a fresh folder
 * (tscope__output_make_dir), run set to "".  More: `want` is the run folder
 * the ranks of one job share (want, or want.1, ... when an earlier job or
 * another program has it; claimed for the job by a marker file, without
 * races between ranks), run its name, and the rank writes to
 * RUN/rank-N.  Under `taskscope run` the launcher made both already
 * (TASKSCOPE_OUTPUT_DIR_PREPARED, TASKSCOPE_RUN_DIR; a descendant's own
 * folder: tscope__output_prepared).  0 or TSCOPE_EIO. */
int tscope__output_make_rank_dir(const char *want, int rank, int nranks, char *out, size_t len,
                                 char *run, size_t runlen);

#endif
