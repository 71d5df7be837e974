/* global.h - the global view of a job's ranks: each rank's profile
 * reduced into one (per type calls and times summed, each rank's share,
 * min/mean/max over the ranks and the imbalance, per-rank totals, the
 * message matrix, the ranks' busy time over time).
 *
 * Two ways in, one result: at MPI_Finalize over the transport's
 * collectives (tscope_finalize_global, global.c), or after the run from the
 * ranks' profile.json files (`taskscope merge`, tscope__global_merge).  Both
 * cut every rank's profile into the same vectors (names agreed in rank
 * order, integer ns) and combine them with sum/min/max, so the two give the
 * same numbers. */
#ifndef TSCOPE_GLOBAL_GLOBAL_H
#define TSCOPE_GLOBAL_GLOBAL_H

#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

/* The common time bins of the ranks' heat map. */
#define TSCOPE__GLOBAL_BINS 100

/* Reduces the profiles of the ranks present (ps[i] NULL: rank i missing)
 * of a job of nranks ranks into a global profile (p->global set), or NULL
 * on memory exhaustion.  Memory: per rank about a kilobyte, per rank
 * present its record, per pair of ranks that exchanged messages one cell;
 * the caller bounds nranks by the ranks it found (cli/merge.c). */
struct tscope__profile *tscope__global_merge(struct tscope__profile *const *ps, int nranks);

/* The global summary of g: its types by total self time with each rank's
 * share (min / mean / max, the imbalance, the rank with the most), at most
 * rows of them (0: all), then the ranks.  What the run prints at its end,
 * summary.txt holds (all types) and `taskscope report` prints of a global
 * profile.json read back (g->global from its "global" and "ranks", each
 * type's ranks from its "ranks").  0, TSCOPE_ENOMEM or TSCOPE_EIO. */
int tscope__global_summary(const struct tscope__profile *g, FILE *f, unsigned rows);

/* Writes a global profile into dir (created if needed): profile.json,
 * summary.txt, ranks.csv, messages.csv and messages.gp (the message
 * matrix: whole up to TSCOPE__GLOBAL_DENSE_MAX ranks, else its pairs),
 * ranks.gp with ranks_busy.csv (ranks x time), and prints the summary to
 * `summary` (NULL: not).  0, or TSCOPE_EIO after a line on stderr for each
 * file that could not be written. */
int tscope__global_write(const struct tscope__profile *g, const char *dir, FILE *summary,
                         unsigned rows);

#endif
