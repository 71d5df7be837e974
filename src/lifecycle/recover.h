/* recover.h - a dead process's run rebuilt from its crash journal
 * (journal.h) and ended as tscope_finalize would have (ending.h).  Offline
 * code reaches it through src/offline/offline.h. */
#ifndef TSCOPE_LIFECYCLE_RECOVER_H
#define TSCOPE_LIFECYCLE_RECOVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Rebuilds the run of the process whose journal is BASE.map (BASE:
 * OUTDIR/.taskscope-PID) into this process's measurement state, marked as
 * ended by sig (0: an exit) at death_mono_ns (CLOCK_MONOTONIC when it was
 * seen gone; 0: unknown, the newest record's time), and writes its outputs
 * into outdir, its summary to `summary` (NULL: none) when its configuration
 * asks; *as_of_s: the run's length.  0, or with a one-line message in why:
 * -1 (it cannot be read, or memory ran out), -2 (writing the outputs
 * failed: the journal is whole, a later try can succeed).  What it built
 * stays until tscope__recover_release; a process recovers one run at a
 * time, and never while it measures itself. */
int tscope__recover_journal(const char *outdir, const char *base, int sig, uint64_t death_mono_ns,
                            FILE *summary, double *as_of_s, char *why, size_t whylen);
/* Frees what the last recovery built (the store, the name tables, the
 * thread registry, the journal's mapping). */
void tscope__recover_release(void);
/* The configuration of the program the last recovery read (its outputs,
 * summary); NULL when none is loaded. */
struct tscope__config;
const struct tscope__config *tscope__recovered_config(void);

#endif
