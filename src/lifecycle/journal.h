/* journal.h - the crash journal: what `taskscope run` needs to rebuild the
 * whole profile of a program that died without finalizing (SIGKILL, the OOM
 * killer, an _exit nobody intercepted).  journal.c writes it, recover.c
 * reads it; the format below is shared by the two (same build).
 *
 * In the output folder, per process, one file:
 *   .taskscope-PID.map   the mapping: mapped shared, a link to
 *                        /dev/shm/taskscope-PID-XXXXXX when /dev/shm is a
 *                        tmpfs (journal.c says why).  A header (struct
 *                        tscope__shfile: pid, rank, program, folder, clock)
 *                        and blocks (struct tscope__shblock) that say what
 *                        they hold: the header's copy, the thread slots
 *                        (struct tscope__thread and its ring at
 *                        TSCOPE__SLOT_RING_OFFSET), the configuration,
 *                        every name, and the shards (src/profile/shard.c)
 *                        themselves - each thread's entries, counters,
 *                        custom events, messages, dependencies, timeline
 *                        bins, running stack, task records and its log -
 *                        so that what a thread aggregated is in the page
 *                        cache at once (shard.h has the format;
 *                        docs/architecture.md describes it).
 * Checksums (core/checksum.h): the header and its copy, the configuration
 * and each name; the entries are versioned (shard.h), never read torn.  A
 * damaged part is said (file, where, what is lost) and the rest recovered.
 * Recovery (recover.c) = the shards read back into a store, as the
 * finalize's fold would have, then the outputs.
 */
#ifndef TSCOPE_LIFECYCLE_JOURNAL_H
#define TSCOPE_LIFECYCLE_JOURNAL_H

#include <stdint.h>
#include <string.h>

#include "core/core.h"     /* struct tscope__thread: the slots */
#include "profile/shard.h" /* the shards file's format */

/* What the folder's marker .taskscope-PID.running holds when the program
 * measures without the profiler, so keeps no mapping (lifecycle.c writes
 * it, src/offline/recover.c says why there is no journal); empty otherwise. */
#define TSCOPE__MARKER_NO_JOURNAL "profiler 0\n"

/* Where a thread slot's ring starts in its SLOT block of the mapping: after
 * its struct tscope__thread, 64-byte aligned (the same build reads it). */
#define TSCOPE__SLOT_RING_OFFSET ((sizeof(struct tscope__thread) + 63) / 64 * 64)

/* Library side (journal.c). */
/* Starts the journal in dir for this process: the mapping, with rings of
 * ring_records, and its functions in the hooks (after tscope__wire, before
 * the consumer starts).  On failure says why in one line and leaves the
 * hooks as they were: measurement goes on, a SIGKILL would lose it. */
int tscope__journal_start(const char *dir, uint64_t ring_records);
/* Finalize: stops journaling and removes the file (the outputs follow). */
void tscope__journal_stop(void);
/* A forked child: the file is the parent's. */
void tscope__journal_forget(void);

#endif
