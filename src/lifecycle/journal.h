/* journal.h - the crash journal: what `taskscope run` needs to rebuild the
 * whole profile of a program that died without finalizing (SIGKILL, the OOM
 * killer, an _exit nobody intercepted).  journal.c writes it, cli/recover.c
 * reads it; the formats below are shared by the two (same build).
 *
 * In the output folder, per process:
 *   .taskscope-PID.map        the mapping: one file, mapped shared, a link to
 *                             /dev/shm/taskscope-PID-XXXXXX when /dev/shm is a
 *                             tmpfs (journal.c says why).  A header (struct
 *                             tscope__shfile: pid, rank, program, folder,
 *                             clock) and blocks (struct tscope__shblock) that
 *                             say what they hold: the thread slots
 *                             (struct tscope__thread and its ring at
 *                             TSCOPE__SLOT_RING_OFFSET: records not yet
 *                             released survive the process), the
 *                             configuration, every name, and with
 *                             TASKSCOPE_AGGREGATE=thread the shards
 *                             (src/profile/shard.c) themselves - each
 *                             thread's entries, timeline bins, duration
 *                             points, running stack, the task records and
 *                             the log of tree paths registered - so that
 *                             what a thread recorded or aggregated is in the
 *                             page cache at once (shard.h has the format;
 *                             docs/architecture.md describes it)
 *   .taskscope-PID.state-0    the store as of the last checkpoint, with the
 *   .taskscope-PID.state-1    names, the clock and how far it covers each
 *                             ring (slot, read position): generation G in file
 *                             G % 2, its header written last (the newer
 *                             whole one is the state)
 *   .taskscope-PID.appendix   the instance graph and the dependency list,
 *                             which only grow: each entry appended once, at
 *                             the checkpoint whose state first counts it
 *                             (persist.h), so that a state stays small
 *   .taskscope-PID.journal-0  what the consumer released since that
 *   .taskscope-PID.journal-1  checkpoint without a new one, in order: record
 *                             batches, round ends, retired threads, new
 *                             names; generation
 *                             G in file G % 2, each entry padded to 32
 *                             bytes, its magic TSCOPE__JOURNAL_MAGIC ^ G
 * Checksums (core/checksum.h): a state's header and its body, each
 * journal entry (header and payload), the mapping's header, its
 * configuration and each name; a damaged part is said (file, where, what
 * is lost) and the rest recovered.  When the state is gone or damaged, the
 * mapping alone gives the threads' tasks (its configuration, names, clock,
 * rings and shards): cli/recover.c's from_mapping.
 * Recovery = load the state, replay the journal through the same store
 * functions, then apply what the rings still hold past the state's
 * positions and the journal; with shards, the tree paths are registered
 * again first (the log, in order), and last each shard adds what it holds
 * beyond what the state's fold had taken (saved with the state).
 */
#ifndef TSCOPE_LIFECYCLE_JOURNAL_H
#define TSCOPE_LIFECYCLE_JOURNAL_H

#include <stdint.h>
#include <string.h>

#include "core/core.h"     /* struct tscope__thread: the slots */
#include "profile/shard.h" /* the shards file's format */

#define TSCOPE__JOURNAL_MAGIC 0x324a5354u /* "TSJ2" */
#define TSCOPE__STATE_MAGIC "taskscope-st-2"

enum tscope__jkind {
    TSCOPE__J_RECORDS = 1, /* slot, n records from ring counter start */
    TSCOPE__J_ROUND,       /* the consumer ended a round */
    TSCOPE__J_GONE,        /* slot retired; its open tasks closed at ticks */
    TSCOPE__J_NAME         /* name id `slot` of table `table`, n bytes follow */
};

/* One journal entry header, followed by its payload. */
struct tscope__jchunk {
    uint32_t magic;
    uint16_t kind;
    uint16_t table; /* J_NAME: 0 task types, 1 counters, 2 custom events */
    uint32_t slot;  /* thread index; J_NAME: the id */
    uint32_t n;     /* records (J_RECORDS) or name bytes (J_NAME) */
    uint64_t start; /* J_RECORDS: ring counter of the first record */
    uint64_t ticks; /* clock when written (J_GONE: when the tasks closed) */
    uint32_t sum;   /* tscope__jchunk_sum of this header (sum taken as 0) and the payload */
    uint32_t reserved;
};

/* An entry's checksum: its header with sum = 0, then the payload in up to
 * two pieces (the first a multiple of 8 bytes long when there is a second). */
static inline uint32_t tscope__jchunk_sum(const struct tscope__jchunk *h, const void *a, size_t na,
                                          const void *b, size_t nb)
{
    struct tscope__jchunk c;
    memcpy(&c, h, sizeof c);
    c.sum = 0;
    uint64_t s = tscope__sum64(TSCOPE__SUM64_START, &c, sizeof c);
    s = tscope__sum64(s, a, na);
    s = tscope__sum64(s, b, nb);
    return (uint32_t)(s ^ (s >> 32));
}

/* The state file's header; then per name table a uint32 count and count
 * names as a uint16 length and the bytes; then a uint32 count of rings and
 * per ring {uint32 slot, uint32 0, uint64 read position}; then the store
 * (persist.h). */
struct tscope__jstate {
    char magic[16];
    uint64_t generation; /* the journal generation that continues this state */
    uint64_t ticks;      /* clock when written ... */
    uint64_t mono_ns;    /* ... and CLOCK_MONOTONIC at the same moment */
    double ns_per_tick;
    int32_t clock_kind;
    int32_t rank, nranks;
    uint32_t nthreads;
    uint64_t region_bytes; /* 0 (the slots are blocks of the mapping now) */
    uint64_t ring_offset;  /* offset of the ring in a slot (its size: the
                              thread struct's slot_records) */
    char program[256];
    uint64_t body_bytes; /* what follows the header ... */
    uint64_t body_sum;   /* ... and its tscope__sum64 */
    uint32_t head_sum;   /* tscope__sum32 of this header, head_sum taken as 0 */
    uint32_t reserved;
};

static inline uint32_t tscope__jstate_sum(const struct tscope__jstate *h)
{
    struct tscope__jstate c;
    memcpy(&c, h, sizeof c);
    c.head_sum = 0;
    return tscope__sum32(TSCOPE__SUM32_START, &c, sizeof c);
}

/* Where a thread slot's ring starts in its SLOT block of the mapping: after
 * its struct tscope__thread, 64-byte aligned (the same build reads it). */
#define TSCOPE__SLOT_RING_OFFSET ((sizeof(struct tscope__thread) + 63) / 64 * 64)

/* Library side (journal.c). */
/* Starts the journal in dir for this process: with `checkpoints` (the
 * consumer's mode) the mapping, states, journal files and appendix (rings
 * of ring_records, or larger ones for the first 64 thread slots unless the
 * size was chosen: journal.c says why); without (TASKSCOPE_AGGREGATE=
 * thread) the mapping alone, which then holds everything measured; and
 * puts its functions in the hooks (after tscope__wire, before the consumer
 * starts).  On failure says why in one line and leaves the hooks as they
 * were: measurement goes on, a SIGKILL would lose it. */
int tscope__journal_start(const char *dir, uint64_t ring_records, int size_chosen,
                          uint32_t checkpoint_ms, int checkpoints);
/* Finalize: stops journaling and removes the files (the outputs follow). */
void tscope__journal_stop(void);
/* A forked child: the files are the parent's. */
void tscope__journal_forget(void);

#endif
