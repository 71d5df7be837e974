/* shard.h - per-thread shards of the profile: each thread aggregates the
 * tasks it runs where they happen, with no lock, no global map and no write
 * to another thread's memory on the common path (issue 26; DESIGN.md).
 *
 * What a task carries between threads (created on one, begun on another,
 * yielded on one and resumed elsewhere) is its record, struct tscope__trec,
 * which the runtime holds a pointer to (tscope_task_t in taskscope.h: the
 * OpenMP adapter keeps it in ompt_data_t, the bundled runtime in its task).
 * Records come from per-thread pools and go back to the pool of the thread
 * that ends them; pools trade batches through one list under a mutex when
 * one thread creates what others end.
 *
 * A shard holds, per type and per tree node, what the store keeps
 * (created, calls, yields, cancelled, self / running / elapsed statistics,
 * the recursion-counted-once totals, threads seen) and per type-level edge
 * its count; tree nodes and edges are numbered by the store (the one
 * registry of paths, reached under the store lock only when a thread's
 * cache misses, i.e. once per new path per thread).
 *
 * Readers: tscope__shards_fold adds what every shard gained since the last
 * fold into the store (under the store lock), so everything that reads the
 * store - queries, snapshots, the live stream, policies, the finalize -
 * sees the shards' tasks.  A shard's entries are written by
 * their owner only; each type and node entry carries a version the owner
 * makes odd while it writes, so a fold never takes a torn entry (it retries
 * that entry), and every field is read and written with relaxed atomics.
 * Entries live in chunks that never move, published with release stores.
 */
#ifndef TSCOPE_PROFILE_SHARD_H
#define TSCOPE_PROFILE_SHARD_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/checksum.h"
#include "core/names.h"
#include "store.h"

struct tscope__shard;

/* One task's state while it lives (taskscope.h's tscope_task_t). */
struct tscope_task {
    uint64_t id, parent_id;
    uint64_t keep_anc; /* its nearest ancestor that may enter the instance graph, or 0 */
    uint64_t create_ts, begin_ts;
    uint64_t self, running, running_top; /* ticks over closed segments (replay.c's meaning) */
    uint64_t cpu;        /* ns of the thread CPU clock while on top (TASKSCOPE_CPU_TIME; else 0) */
    uint32_t node, edge; /* tree node, and the type-level edge it counts in */
    uint32_t anc;        /* the set of its ancestors' types (shard.c's registry) */
    uint32_t thread;     /* thread of its first begin */
    uint32_t yields, resumes;
    uint16_t type, depth, tdepth;
    int16_t prio;
    uint8_t flags, step, open;
    uint16_t state;           /* TSCOPE__TR_* */
    uint32_t gen;             /* the tscope_init it belongs to (tscope__shards_gen) */
    struct tscope_task *next; /* free list */
};

/* Task record states (struct tscope_task.state). */
enum {
    TSCOPE__TR_FREE = 0,
    TSCOPE__TR_CREATED = 1,
    TSCOPE__TR_BEGUN = 2,
    TSCOPE__TR_NESTED = 8,      /* an ancestor has its type */
    TSCOPE__TR_RING = 16,       /* only carries its id: its events go through the rings */
    TSCOPE__TR_KEEP = 32,       /* shallow enough for the instance graph when created */
    TSCOPE__TR_RAN_TO_END = 64, /* still running at finalize */
    TSCOPE__TR_ANC = 128,       /* a KEEP task some task counts below (keep_anc) */
    TSCOPE__TR_ENDED = 256,     /* ended while a segment of it was open elsewhere (released
                                   when that one closes) */
    TSCOPE__TR_MAPPED = 512     /* its id is in the id map (ids.c) */
};

/* Counts tscope_init's: a handle of an earlier one is refused (its record
 * stays allocated, never reused, so checking it is safe). */
extern uint32_t tscope__shards_gen;

/* 1 if t is a live handle of this tscope_init. */
static inline int tscope__shard_live(const struct tscope_task *t)
{
    return t &&
           __atomic_load_n(&t->gen, __ATOMIC_RELAXED) ==
               __atomic_load_n(&tscope__shards_gen, __ATOMIC_RELAXED) &&
           __atomic_load_n(&t->state, __ATOMIC_RELAXED) != TSCOPE__TR_FREE &&
           !(__atomic_load_n(&t->state, __ATOMIC_RELAXED) & TSCOPE__TR_ENDED);
}

/* A record that only carries id for the ring path (the profiler off: the
 * tools alone), from the pool of thread `thread`; NULL without memory. */
struct tscope_task *tscope__shard_ring_record(uint32_t thread, uint64_t id, uint16_t type);
/* Gives a record back to the pool of thread `thread`. */
void tscope__shard_release(uint32_t thread, struct tscope_task *t);

/* Starts (or restarts, at tscope_init) the shards for store s: every shard
 * is emptied.  No event may be in flight. */
void tscope__shards_reset(struct tscope__store *s);
/* Adds what every shard gained since the last fold into s (lock held). */
void tscope__shards_fold(struct tscope__store *s);
/* Applies what the shards' logs gained (the instance graph's records) to
 * s, as every consumer round does so that the cap's depth limit follows
 * (lock held). */
void tscope__shards_fold_logs(struct tscope__store *s);
/* Folds a retired thread's shard and empties it for the slot's next thread
 * (lock held; the thread made its last event). */
void tscope__shards_retire(struct tscope__store *s, uint32_t thread, uint64_t end);
/* At finalize, after the last fold and with no thread producing: what is
 * still alive goes to the statistics as the store does it - tasks running
 * (closed at `end`) are unfinished, tasks created and never begun never
 * ran (lock held). */
void tscope__shards_complete(struct tscope__store *s, uint64_t end);
/* Tasks created through handles that have not ended or been cancelled, as
 * of the last fold (lock held). */
uint64_t tscope__shards_live(const struct tscope__store *s);
/* Appends the type running on top of each busy shard's thread to
 * types[have ..max) and returns have + the busy shards (any thread; what
 * the sampler's concurrency view and the live stream see). */
uint32_t tscope__shards_running(uint16_t *types, uint32_t max, uint32_t have);
/* A task of the id-based API still alive (in the id map: ids.c) as the
 * store's task (its times so far): 1, or 0 when there is none. */
int tscope__shards_live_task(uint64_t id, struct tscope__task *out);
/* Frees every shard and record pool (after finalize). */
void tscope__shards_free(void);

/* The event functions on records, for the thread with index `thread` at
 * time ts (taskscope.h's tscope_task_*_h take the calling thread and the
 * clock; the tests drive several shards from one thread with these).  They
 * return 0 or a negative TSCOPE_E* code; create and start return the
 * record (NULL: out of memory, counted). */
struct tscope_task *tscope__shard_create(uint32_t thread, uint64_t ts, uint64_t id,
                                         struct tscope_task *parent, uint16_t type, uint8_t flags,
                                         uint16_t depth, int16_t prio);
struct tscope_task *tscope__shard_start(uint32_t thread, uint64_t ts, uint64_t id, uint16_t type);
int tscope__shard_begin(uint32_t thread, uint64_t ts, struct tscope_task *t);
int tscope__shard_end(uint32_t thread, uint64_t ts, struct tscope_task *t);
int tscope__shard_yield(uint32_t thread, uint64_t ts, struct tscope_task *t);
int tscope__shard_resume(uint32_t thread, uint64_t ts, struct tscope_task *t);
int tscope__shard_cancel(uint32_t thread, uint64_t ts, struct tscope_task *t);
/* t, running on the calling thread, was switched out for a task that runs
 * nested above it (tscope_task_switched_h): a yield and its resume at
 * once, counted in the record (its type's yields at its end) and nothing
 * else: no segment closes, no event is counted.  The owner alone writes
 * the record, as for every event of a running task. */
static inline void tscope__shard_switched(struct tscope_task *t)
{
    t->yields++;
    t->resumes++;
}
/* An event of the id-based API (taskscope.h) on the calling thread's
 * shard: a task event by id, a counter sample, custom event or message
 * (shard_events.c; the core's `take` hook, hooks.h). */
int tscope__shard_take(const struct tscope__rec *r, uint64_t ext);
/* A task event by id (r's kind, at ts) on shard `thread`'s: the id names
 * the task's record in the id map (ids.c).  0, or 1 when it was not taken. */
int tscope__ids_event(uint32_t thread, uint64_t ts, const struct tscope__rec *r);
/* The type of task id as thread `thread` sees it: running there, or alive
 * in the id map; 0 when unknown (ids.c). */
uint16_t tscope__ids_type(uint32_t thread, uint64_t id);
/* A queued event: counted, nothing else (the profile has no queue time). */
void tscope__shard_queued(uint32_t thread);
/* A task of a type the filter file excludes (core/filter.h), counted in
 * thread's shard; nothing else is recorded of it (shard_events.c). */
void tscope__shard_filtered(uint32_t thread);

/* ---- the mapping (the crash journal's, lifecycle/journal.h) ----------- */

/* 11: a name's attributes (TSCOPE__SHB_ATTRS blocks); 10: CPU time
 * (TASKSCOPE_CPU_TIME) in a type entry, a task record and a shard; 9: the
 * filter file's counts in a shard's totals */
#define TSCOPE__SHFILE_MAGIC "taskscope-sh-11"
#define TSCOPE__SHFILE_VERSION 11
#define TSCOPE__SHBLOCK_MAGIC 0x31485354u /* "TSH1" */

/* The mapping's first page.  Pointers inside the shards are the
 * process's own: a reader rebases them from `base`.  Everything before
 * `ns_per_tick` is written once, at the start, and covered by `sum`
 * (computed with sum = 0); what follows changes while the process runs. */
struct tscope__shfile {
    char magic[16];
    uint32_t version; /* TSCOPE__SHFILE_VERSION */
    uint32_t sum;
    uint64_t base;   /* the address the process mapped the file at */
    uint64_t window; /* the bytes of address space it reserved there */
    int64_t pid;
    int32_t rank, nranks;
    int32_t clock_kind; /* TSCOPE__CLOCK_* */
    uint32_t reserved;
    uint64_t origin;  /* the clock's ticks at the profile's time zero */
    uint64_t mono_ns; /* CLOCK_MONOTONIC at tscope_init */
    char program[256];
    char dir[1024]; /* the output folder */
    /* live: the clock's latest factor (the consumer refines it), the end
     * of the blocks appended so far (release store after each block) */
    double ns_per_tick;
    uint64_t used;
};
/* The checksum of a header (its `sum` taken as 0). */
static inline uint32_t tscope__shfile_sum(const struct tscope__shfile *h)
{
    struct tscope__shfile c;
    memcpy(&c, h, sizeof c);
    c.sum = 0;
    return tscope__sum32(TSCOPE__SUM32_START, &c, offsetof(struct tscope__shfile, ns_per_tick));
}
/* The process's clock, in its ticks, at CLOCK_MONOTONIC mono_ns (its death,
 * or now while it runs), from the header's CLOCK_MONOTONIC at its init and
 * the clock's factor; 0 when not after its init or not known (the factor
 * is outside the checksum: bounded here). */
static inline uint64_t tscope__shfile_ticks_at(const struct tscope__shfile *h, uint64_t mono_ns)
{
    if (!(h->ns_per_tick > 0 && h->ns_per_tick < 1e6) || mono_ns <= h->mono_ns ||
        h->origin >= (1ull << 62))
        return 0;
    double ticks = (double)(mono_ns - h->mono_ns) / h->ns_per_tick;
    return ticks < 9e18 ? h->origin + (uint64_t)ticks : 0;
}
#define TSCOPE__SHFILE_HEAD 4096 /* the first block starts here */
_Static_assert(sizeof(struct tscope__shfile) <= TSCOPE__SHFILE_HEAD, "header past its page");

/* One block of shard memory: this header, then `bytes` (64-byte aligned).
 * The header is written before the block is used; a zero magic ends the
 * blocks.  kind and index are shard.c's. */
struct tscope__shblock {
    uint32_t magic;
    uint16_t kind;
    uint16_t reserved;
    uint32_t owner; /* the thread slot */
    uint32_t index;
    uint64_t bytes;
    uint64_t pad[5];
};

/* What a block holds (struct tscope__shblock.kind). */
enum {
    TSCOPE__SHB_SHARD = 1, /* a struct tscope__shard (owner: its thread slot) */
    TSCOPE__SHB_TYPES,     /* a chunk of its type entries (index: the chunk) */
    TSCOPE__SHB_NODES,     /* ... of its tree node entries */
    TSCOPE__SHB_EDGES,     /* ... of its edge counts */
    TSCOPE__SHB_TL,        /* a type's timeline bins (index: the type) */
    TSCOPE__SHB_BUSY,      /* the thread's busy bins */
    TSCOPE__SHB_TL_ARRAY,  /* the array of a shard's timeline bins */
    TSCOPE__SHB_TL_COUNT,  /* ... and of their add counts */
    TSCOPE__SHB_SEG,       /* its stack of running segments */
    TSCOPE__SHB_OPEN,      /* its open segments per type */
    TSCOPE__SHB_RECORDS,   /* a chunk of task records */
    TSCOPE__SHB_PATHS,     /* a block of the log of tree paths */
    TSCOPE__SHB_SLOT,      /* a thread slot: its struct tscope__thread, then its ring
                              (owner: the slot; the ring at the state's ring_offset) */
    TSCOPE__SHB_CONFIG,    /* the process's configuration (struct tscope__shconfig) */
    TSCOPE__SHB_NAME,      /* a name (struct tscope__shname; owner: the table - 0 task
                              types, 1 counters, 2 custom events; index: its id) */
    TSCOPE__SHB_COUNTERS,  /* a chunk of its counter entries (index: the chunk) */
    TSCOPE__SHB_CUSTOMS,   /* ... of its custom event entries */
    TSCOPE__SHB_PEERS,     /* ... of its message entries, by peer rank */
    TSCOPE__SHB_LOG,       /* ... of its log of instance graph records */
    TSCOPE__SHB_DEPTYPES,  /* ... of its dependency entries by type pair */
    TSCOPE__SHB_HEAD,      /* a copy of the header (struct tscope__shfile), for a reader
                              whose first page is damaged; its clock factor kept up too */
    TSCOPE__SHB_DIR,       /* the far part of a shard's directory of chunks (index: their
                              kind): pointers to its chunks DIR_NEAR.. */
    TSCOPE__SHB_ATTRS,     /* a name's attributes (struct tscope__shattrs; owner and
                              index as a name's): a wait type, a sampled counter */
    TSCOPE__SHB_LAST = TSCOPE__SHB_ATTRS
};

/* The configuration block's payload, under its checksum. */
struct tscope__shconfig {
    uint64_t sum; /* tscope__sum64 of cfg */
    struct tscope__config cfg;
};

/* A name block's payload: its checksum covers table, id and the bytes. */
struct tscope__shname {
    uint32_t len;
    uint32_t sum;
    char name[];
};
static inline uint32_t tscope__shname_sum(uint32_t table, uint32_t id, const char *name,
                                          uint32_t len)
{
    uint32_t h = tscope__sum32(TSCOPE__SUM32_START, &table, sizeof table);
    h = tscope__sum32(h, &id, sizeof id);
    return tscope__sum32(h, name, len);
}

/* An attributes block's payload (the latest of a name's wins: they only
 * grow); its checksum covers table, id and attrs. */
struct tscope__shattrs {
    uint32_t attrs;
    uint32_t sum;
};
static inline uint32_t tscope__shattrs_sum(uint32_t table, uint32_t id, uint32_t attrs)
{
    uint32_t h = tscope__sum32(TSCOPE__SUM32_START, &table, sizeof table);
    h = tscope__sum32(h, &id, sizeof id);
    return tscope__sum32(h, &attrs, sizeof attrs);
}

/* 1 when name block b is whole: its name fits the block, its id is one a
 * table can have, its checksum matches (the readers: recovery, top). */
static inline int tscope__shname_whole(const struct tscope__shblock *b)
{
    const struct tscope__shname *n = (const struct tscope__shname *)(b + 1);
    return b->bytes >= sizeof *n && n->len <= TSCOPE__NAME_MAX && sizeof *n + n->len <= b->bytes &&
           b->index >= 1 && b->index <= TSCOPE__MAX_IDS &&
           n->sum == tscope__shname_sum(b->owner, b->index, n->name, n->len);
}

/* Called by the store's registry of tree paths when a registration made a
 * node or an edge (store lock held): logged in the mapping, in order. */
void tscope__shards_log_path(uint32_t parent, uint16_t ptype, uint16_t type);
/* Recovery from a dead process's mapping: open it (1; 0: there is
 * none; -1 with *bad: unreadable; 3 with *bad: its header is damaged and
 * its copy (TSCOPE__SHB_HEAD) is read instead, everything stays readable;
 * 2 with *bad: the copy is damaged too, so only its self-describing
 * blocks - slots, names, configuration - can be read, not the shards,
 * whose pointers need the header), make its tree paths again (before the
 * journal is replayed: the numbering is the process's), then, after the
 * journal and the rings, add what each shard holds beyond the saved fold's
 * copy and count the tasks still alive as finalize does, closing the
 * running ones at *end (moved to the latest begin of one when that is
 * later).  Returns the shards found. */
int tscope__shards_open(const char *path, const char **bad);
void tscope__shards_recover_paths(struct tscope__store *st);
uint32_t tscope__shards_recover(struct tscope__store *st, uint64_t *end);
/* For a recovery from the mapping (lifecycle/recover.c): its header (NULL: none open), the
 * configuration it holds (0; -1: none whole), and its names interned into the process's tables
 * in id order (returns how many name blocks were damaged; a missing name gets a placeholder). */
const struct tscope__shfile *tscope__shards_header(void);
int tscope__shards_recover_config(struct tscope__config *cfg);
uint32_t tscope__shards_recover_names(void);
/* Bytes of the file that the last walk over it found no whole block in
 * (garbage, a torn block header): what they held is lost. */
uint64_t tscope__shards_damaged(void);
/* What the damaged stretches held, as far as the blocks around them tell:
 * "thread 1 (NAME): its shard (...); thread 2: task types, timeline" in
 * buf (len bytes, cut to fit), for every thread slot whose shard, or part
 * of it, or slot lay there.  Returns how many threads it names (0: none
 * that a shard or slot points to, or nothing damaged).  After
 * tscope__shards_recover. */
size_t tscope__shards_damage_parts(char *buf, size_t len);
/* The bytes the process had written into the mapping when the file read
 * is shorter (cut short: what lay past its end is lost), else 0. */
uint64_t tscope__shards_written(void);
/* 1 + the highest thread slot with a shard in the file. */
uint32_t tscope__shards_slots(void);
/* Calls fn for every whole block of `kind` in the open file, in order;
 * tscope__shards_owns: p points into the open file (recovery). */
void tscope__shards_each(uint16_t kind,
                         void (*fn)(const struct tscope__shblock *b, void *payload, void *arg),
                         void *arg);
int tscope__shards_owns(const void *p);
/* Frees what the recovery made and unmaps the file. */
void tscope__shards_recover_release(void);

#endif
