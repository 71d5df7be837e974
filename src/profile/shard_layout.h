/* shard_layout.h - how a shard lies in memory: its entries, chunks and the
 * struct itself.  Private to src/profile: shard.c writes and folds them,
 * peek.c reads them out of another process's mapping (taskscope top),
 * which the same build wrote, so the two agree by construction.
 */
#ifndef TSCOPE_PROFILE_SHARD_LAYOUT_H
#define TSCOPE_PROFILE_SHARD_LAYOUT_H

#include <stdint.h>

#include "shard.h"
#include "timeline.h"

/* ---- entries -------------------------------------------------------------- */

/* acc.h's accumulator, with the 128-bit sum of squares in two words so
 * that each field is one relaxed atomic. */
struct sacc {
    uint64_t n, sum, min, max, sq_lo, sq_hi;
};

struct stype {
    uint64_t ver;
    uint64_t created, calls, yields, cancelled, unfinished, running_total, elapsed_total, seen;
    struct sacc self, running, elapsed;
    struct sacc cpu; /* self CPU time, ns (TASKSCOPE_CPU_TIME; else empty) */
};

struct snode {
    uint64_t ver;
    uint64_t calls, self, running, elapsed;
};

/* The run's totals that no type holds (created, completed and cancelled are
 * the types' sums, taken by the fold). */
struct stotals {
    uint64_t ver;
    uint64_t anomalies;
    uint64_t live;   /* the fold's: created - ended - cancelled of the types it took */
    uint64_t events; /* the events the shard took (the owner adds outside the version: one
                        word, only growing) */
    /* tasks of types the filter file excludes, and dependencies with an end
     * in one (core/filter.h): as events, outside the version */
    uint64_t filtered, deps_filtered;
};

/* A counter's samples on this thread: Welford's statistics, the doubles as
 * their bits (each field one relaxed atomic), the last sample's time. */
struct scounter {
    uint64_t ver;
    uint64_t n, mean, m2, min, max, last, last_ts;
};

/* A custom event's occurrences on this thread. */
struct scustom {
    uint64_t ver;
    uint64_t count, payload, ts;
};

/* Messages to and from one peer rank (tscope_peer_stats_t's counts). */
struct speer {
    uint64_t ver;
    uint64_t sent, sent_bytes, recv, recv_bytes;
    uint64_t coll_sent, coll_sent_bytes, coll_recv, coll_recv_bytes;
};

/* Dependencies between two task types made on this thread (key: from
 * type << 16 | to type, + 1). */
struct sdeptype {
    uint64_t ver;
    uint64_t key, count, raw, war, waw, mutex, remote; /* edges; with each hazard */
};

/* All dependencies made on this thread, and those the instance graph's
 * list left out (its cap). */
struct sdeps {
    uint64_t ver;
    uint64_t count, cut;
};

/* ---- chunked arrays: entries that never move ----------------------------- */

#define CHUNK_BITS 8
#define CHUNK (1u << CHUNK_BITS)
#define DIR_MAX 16384 /* 4 M entries */
/* The first DIR_NEAR chunks' pointers are in the shard, the others in a
 * block of DIR_MAX - DIR_NEAR pointers (TSCOPE__SHB_DIR, its index the
 * chunks' kind) made with the first of them: a shard is ~20 KiB, not the
 * 0.5 MiB that four whole directories took (every thread's first event
 * allocated and touched pages of it). */
#define DIR_NEAR 16
#define DIR_FAR (DIR_MAX - DIR_NEAR)

struct chunks {
    void *near[DIR_NEAR]; /* published with release, read with acquire */
    void **far;           /* chunks DIR_NEAR.., or NULL (release/acquire) */
    uint32_t kind, owner; /* of their durable blocks */
};

/* The log's chunks: 4096 records (128 KiB) each, up to 64 M records. */
#define LOG_BITS 12
#define LOG_CHUNK (1u << LOG_BITS)
#define LOG_DIR DIR_MAX

/* The same for entries by a 16-bit id (counters, events, peers). */
#define SDIR_MAX 256
struct schunks {
    void *dir[SDIR_MAX];
    uint32_t kind, owner;
};

/* ---- the shard ----------------------------------------------------------- */

struct segment {
    struct tscope_task *t;
    uint16_t type;
    uint16_t nested; /* a segment of its type is below it */
    uint64_t start, self_since, self_acc;
};

#define NODE_CACHE 256
#define SET_CACHE 128

struct node_cache {
    uint64_t key;
    uint32_t node, edge;
    uint8_t step;
};

struct set_cache {
    uint64_t key;
    uint32_t set;
    uint8_t nested;
};

#define TL_BLK 64u /* timeline bins per add counter */
#define TL_NBLK (TSCOPE__TL_BINS / TL_BLK)
/* Type t's add counter of block k in an array of cap types: block-major, so
 * that a fold of runs shorter than one block reads the types' counters
 * side by side. */
#define TLC(a, cap, t, k) ((a)[(size_t)(k) * (cap) + (t)])
_Static_assert(TSCOPE__TL_BINS % TL_BLK == 0, "timeline blocks must tile the bins");

/* A block of the log of tree paths (durable): the registrations that made
 * a node or an edge, in order, for the recovery to make them again. */
#define LOG_N 1022
struct plog {
    uint32_t n; /* entries written (release) */
    uint32_t reserved;
    struct {
        uint32_t parent;
        uint16_t ptype, type;
    } e[LOG_N];
};

struct tscope__shard {
    uint32_t index;
    /* owner only */
    struct segment *seg;
    uint32_t n, cap;
    uint32_t *open; /* open segments per type */
    uint32_t nopen;
    struct tscope_task *free;
    uint32_t nfree;
    /* the latest chunk's records never handed out, from `fresh` on: taken
     * in order, so that a chunk's pages are touched as they are needed */
    struct tscope_task *fresh;
    uint32_t nfresh;
    struct node_cache nodes_cache[NODE_CACHE];
    struct set_cache sets_cache[SET_CACHE];
    /* owner writes, the fold reads */
    struct chunks types, nodes, edges;
    uint32_t hi_type, hi_node, hi_edge; /* 1 + the highest index written (relaxed) */
    /* counter samples, custom events and messages (shard_events.c), by id */
    struct schunks counters, customs, peers;
    uint32_t hi_counter, hi_custom, hi_peer;
    /* dependencies (shard_events.c): by type pair, an entry each */
    struct schunks deptypes;
    uint32_t hi_deptype;
    struct sdeps deps;
    /* the instance graph's records (record.h: INSTANCE and its EXTs, BELOW),
     * in order: the owner appends, then publishes log_n (release); the fold
     * applies what it has not taken, a recovery all of it */
    struct chunks log;
    uint64_t log_n;
    struct stotals totals;
    uint32_t top;       /* the type running on top + 1, 0: idle (tscope__shards_running) */
    uint64_t cpu_since; /* the thread CPU clock at the last switch (shard.c's cpu_switch) */
    /* the timeline (timeline.h, this thread's part): the owner adds to the
     * bins without a lock; arrays are made, and the bins widened, by the
     * owner under the store lock, which every fold holds */
    uint32_t tl_shift;
    uint32_t tl_used;   /* 1 + the highest bin any add reached (a fold reads no further) */
    uint64_t **tl_type; /* per type, TSCOPE__TL_BINS bins of self time */
    uint64_t *tl_count; /* per type, TL_NBLK counters of adds so far, one per block of
                           TL_BLK bins (TLC; a fold reads only the blocks that changed) */
    uint32_t tl_ntype;
    uint64_t *tl_busy; /* this thread's busy time */
    uint64_t busy_count, busy_since;
    /* tasks left out of the instance graph, counted in their nearest
     * ancestor that may be kept: consecutive ones with the same ancestor
     * add up here (a versioned entry), and go into the log as one BELOW
     * record when it changes; a fold takes what it holds meanwhile and
     * the BELOW record then adds only the rest */
    struct sbelow {
        uint64_t ver;
        uint64_t anc, n, self;
        uint64_t cut; /* those tasks are wanted by the instance filters: cut off by the cap */
    } below;
    /* the create, end or cancel being applied (shard.c's journal_*): the
     * counts it changes, as they were before - of the type entry, the tree
     * node entry, the edge; the below count, the log's length, the record's
     * state - so that a recovery puts them back when the owner died in the
     * middle (ver odd): the task is then not created, or unfinished, counted
     * once, never half made or half ended (the sums of times in a type entry
     * it was writing may hold it: one event half in them) */
    struct send {
        uint64_t ver;
        struct tscope_task *rec;
        uint64_t log_n;
        uint32_t type, node, edge; /* the entries whose counts are kept (TSCOPE__NONE: none) */
        uint16_t state;
        uint16_t create;
        uint64_t type_ver, created, calls, yields, cancelled, n_self, n_running, n_elapsed;
        uint64_t n_cpu;
        uint64_t node_ver, node_calls;
        uint64_t edge_was;
        struct sbelow below_was;
    } ending;
};

#endif
