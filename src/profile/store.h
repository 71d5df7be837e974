/* store.h - the profile store: everything the consumer learns from events.
 *
 * Concurrency: one mutex (tscope__store.lock) protects the whole store.  The
 * consumer holds it while applying a bounded batch of records; queries hold
 * it while copying results out.  Nothing here is touched by the hot path.
 *
 * Event order: records of one thread arrive in order, but the consumer reads
 * the threads' rings one after another, so an event can be applied before an
 * event of another thread that happened earlier (a begin before its create,
 * a resume before the yield).  The store is built to be insensitive to that:
 * time is accumulated per running segment (sums commute), and every decision
 * that depends on another thread's events waits one full round - a round
 * being one snapshot of all ring heads, processed completely.  Anything
 * published before an event of round r was published before the next
 * snapshot, so it has been applied by the end of round r+1.
 */
#ifndef TSCOPE_PROFILE_STORE_H
#define TSCOPE_PROFILE_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "acc.h"
#include "core/config.h"
#include "core/record.h"
#include "timeline.h"
#include "u64map.h"

struct tscope__ring;

#define TSCOPE__NONE UINT32_MAX
#define TSCOPE__ROOT_TYPE 0xFFFFu /* parent type of tasks without a parent */
#define TSCOPE__RUNNING_MAX 4096  /* busy threads whose type the sampler sees */
#define TSCOPE__ID_FRONT 16384    /* entries of the task id front (a power of 2) */
/* A task id's entry in the front: its low bits.  Ids come in blocks of 4096
 * per thread (core/threads.c), handed out in turn, so the 4 blocks in use
 * at once by threads creating tasks at the same pace fall in different
 * quarters of the front. */
static inline uint32_t tscope__id_front_at(uint64_t id)
{
    return (uint32_t)(id & (TSCOPE__ID_FRONT - 1));
}

/* task slot bits */
enum {
    TSCOPE__T_CREATED = 1 << 0,    /* create event applied */
    TSCOPE__T_BEGUN = 1 << 1,      /* first begin applied */
    TSCOPE__T_ENDED = 1 << 2,      /* end applied */
    TSCOPE__T_CANCELLED = 1 << 3,  /* cancel applied */
    TSCOPE__T_RESOLVED = 1 << 4,   /* parent and tree node known */
    TSCOPE__T_TERMINAL = 1 << 5,   /* ended/cancelled with all segments closed */
    TSCOPE__T_FINALIZED = 1 << 6,  /* added to the statistics */
    TSCOPE__T_UNFINISHED = 1 << 7, /* still running at finalize */
    TSCOPE__T_IMPLICIT = 1 << 8,   /* no create came: the begin created it */
    TSCOPE__T_WAITING = 1 << 9,    /* in the parent's waiter list */
    TSCOPE__T_FREE = 1 << 10,      /* slot is on the free list */
    TSCOPE__T_MAPPED = 1 << 11,    /* task_map maps the id to this slot */
    TSCOPE__T_SAW = 1 << 12,       /* the type's thread set has the first thread */
    TSCOPE__T_START = 1 << 13,     /* created and begun by one START event */
    TSCOPE__T_MOVED = 1 << 14,     /* resumed on a thread other than its first */
    TSCOPE__T_NESTED = 1 << 15     /* a task of its type is an ancestor */
};

/* What a step in the tree (parent node -> type) is, for the recursion
 * rule of the running and elapsed totals (settle.c). */
enum {
    TSCOPE__STEP_FOLDED = 2 /* landed on an ancestor's node (recursion folding) */
};

struct tscope__task {
    uint64_t id;
    uint64_t parent_id; /* from create; else the task it was begun inside */
    uint64_t create_ts, queued_ts, begin_ts, end_ts;
    uint64_t self, running; /* ticks accumulated over closed segments */
    uint64_t running_top;   /* running without segments nested in one of the same type */
    uint64_t seen_round;    /* round of the first begin */
    uint64_t terminal_round;
    uint32_t parent_slot; /* slot of the parent (holds a ref until this slot is freed) */
    uint32_t node;        /* tree node once resolved */
    uint32_t refs;        /* children whose slots point here */
    uint32_t waiters;     /* first child waiting for this task's resolution */
    uint32_t next_wait;   /* next sibling in the parent's waiter list; free list */
    uint32_t thread;      /* thread of the first begin */
    uint32_t yields, resumes, open;
    uint32_t inst;           /* its instance once finalized and kept, else NONE */
    uint64_t below_n, below; /* tasks below it the instance graph left out, their self ticks */
    uint64_t anc;            /* tscope__type_bit of every ancestor's type, once resolved */
    uint16_t type;
    int16_t prio;
    uint16_t depth;
    uint8_t flags;
    uint8_t step; /* TSCOPE__STEP_* of its tree step, once resolved */
    uint16_t bits;
    uint16_t tdepth; /* depth in the task tree (0: no parent), once resolved */
    uint8_t held;    /* finalized, kept for children that point here (store.held) */
};

/* A task running on a thread: one entry of the thread's replay stack. */
struct tscope__segment {
    uint32_t slot;
    uint16_t type;       /* its task's type when pushed */
    uint16_t nested;     /* a segment of the same type is below it */
    uint64_t start;      /* begin/resume time */
    uint64_t self_since; /* when this entry last became the top */
    uint64_t self_acc;   /* self ticks of this segment so far */
};

/* A thread slot's share of a type (the per-thread tables, profile.h's
 * struct tscope__pthread_type), in ticks: the tasks it completed, their
 * self time, running and elapsed as the type's totals count them. */
struct tscope__thread_type {
    uint64_t calls, self, running, elapsed;
};

struct tscope__tstack {
    struct tscope__segment *seg;
    uint32_t n, cap;
    uint64_t events;
    uint32_t *open;                    /* open segments per type (the recursion rule) */
    uint32_t nopen;                    /* allocated entries of open */
    uint64_t busy_since;               /* when the stack last became non-empty (timeline.h) */
    struct tscope__thread_type *types; /* by type id: what the slot's threads completed */
    uint32_t ntypes;
};

/* Per type: self, running and elapsed (begin to end) of each ended task;
 * the totals count recursion once - running_total leaves out segments
 * nested in a segment of the same type on the thread, and elapsed_total
 * tasks with an ancestor of the same type.  The totals also hold what the
 * tasks still running at the end (unfinished) ran until then, which the
 * statistics of single tasks leave out: self_unfinished is their self time
 * (the self total is self.sum + self_unfinished). */
struct tscope__type_acc {
    uint64_t created, calls, yields, cancelled, unfinished;
    struct tscope__acc self, running, elapsed;
    uint64_t self_unfinished;
    struct tscope__acc cpu; /* self CPU time in ns (TASKSCOPE_CPU_TIME, the shards') */
    uint64_t running_total, elapsed_total;
    uint8_t *seen; /* bitmap of thread indexes */
    uint32_t seen_bytes;
    uint32_t threads;
    int8_t filter; /* instance filter verdict: 0 unknown, 1 keep, -1 skip */
};

struct tscope__node {
    uint32_t parent; /* node index; TSCOPE__NONE for the root */
    uint16_t type;
    uint16_t depth;                         /* the root is 0 */
    uint32_t edge;                          /* the type-level edge of (parent's type -> type) */
    uint64_t calls, self, running, elapsed; /* folded steps add no running/elapsed twice */
};

/* Direct-mapped cache in front of node_map: (parent node, type) -> node,
 * and the type-level edge a task taking that step counts in (not the
 * node's own edge when the step folded into an ancestor). */
#define TSCOPE__NODE_CACHE 256
struct tscope__node_cache {
    uint64_t key;
    uint32_t node;
    uint32_t edge : 30; /* TSCOPE__NONE stored as all ones */
    uint32_t step : 2;  /* TSCOPE__STEP_* */
};

struct tscope__edge {
    uint16_t from, to; /* type ids; from may be TSCOPE__ROOT_TYPE */
    uint64_t count;
};

/* 88 bytes: the consumer writes one per kept task (up to the cap), the
 * largest part of its memory traffic for fine-grained tasks. */
struct tscope__instance {
    uint64_t id, parent;
    uint64_t create_ts, begin_ts, end_ts; /* ticks since origin */
    uint64_t self, running;
    /* the tasks below it that the instance graph left out (cap, filters),
     * down to the next kept task (saturating), and their self ticks */
    uint64_t below;
    uint32_t below_n;
    uint32_t thread, yields;
    uint16_t type;
    int16_t prio;
    uint16_t depth;
    uint8_t flags;
    uint8_t state;   /* enum tscope_task_state */
    uint16_t tdepth; /* depth in the task tree: the cap keeps the shallowest */
};

/* n added to a saturating 32-bit count. */
static inline uint32_t tscope__add_sat32(uint32_t a, uint64_t n)
{
    return n >= (uint64_t)UINT32_MAX - a ? UINT32_MAX : (uint32_t)(a + n);
}

struct tscope__dep {
    uint64_t from, to, addr;
    uint16_t from_rank, to_rank;
    uint16_t naddrs; /* local: the addresses causing it (at most 65535) */
    uint8_t kind;    /* local: TSCOPE_HAZARD_* bits; remote: the direction */
    uint8_t remote;
};

/* Type-level dependency edge: dependencies from tasks of type `from` to
 * tasks of type `to` (0: the type was not known when the edge was applied,
 * or the task is on another rank). */
struct tscope__deptype {
    uint16_t from, to;
    uint64_t count, raw, war, waw, mutex, remote; /* edges; those with each hazard */
};

/* An instance the cap dropped after it was kept: counted, with what was
 * counted below it, in its nearest kept ancestor by the queries. */
struct tscope__dropped {
    uint64_t id, parent;
    uint64_t n, self; /* tasks (itself included) and their self ticks */
};

struct tscope__custom {
    uint64_t count, last_payload;
};

/* Leaf tasks of one type below one tree node, applied since the last flush
 * (leaf.c): their statistics are added in one step. */
struct tscope__leaf_batch {
    uint32_t thread;
    uint32_t pnode; /* parent's tree node */
    uint32_t node;  /* the leaves' tree node */
    uint32_t edge;  /* the type-level edge they count in */
    uint16_t type;
    uint8_t step;           /* TSCOPE__STEP_* of their tree step */
    uint8_t inside;         /* they ran inside a segment of their own type */
    uint8_t nested;         /* they have an ancestor of their type */
    uint32_t pslot;         /* their parent's slot */
    struct tscope__acc acc; /* durations; acc.n == 0: empty */
    /* the timeline (timeline.h): when every leaf and the parent's time
     * between them lie in one bin, their sums go to it at the flush */
    uint32_t tl_bin;   /* UINT32_MAX: none (added as they came) */
    uint16_t tl_ptype; /* the parent's segment type */
    uint8_t tl_top;    /* no parent: the thread's busy time instead */
    uint64_t tl_gap;   /* the parent's self time between the leaves */
};

struct tscope__store {
    pthread_mutex_t lock;
    struct tscope__config cfg;
    uint64_t origin; /* ticks at time zero */

    /* tasks */
    struct tscope__task *tasks;
    uint32_t ntasks_cap, free_head, live;
    uint32_t held; /* slots of finalized tasks kept for their children (not live) */
    /* id -> slot of the mapped task: a direct-mapped front by the id's low
     * bits (task ids count up, so the live ones rarely collide), the hash
     * map for the rest (replay.c) */
    uint32_t *id_front; /* TSCOPE__ID_FRONT entries, made at the first id mapped */
    struct tscope__u64map task_map;
    uint32_t *implicit_list, n_implicit, cap_implicit; /* begun, not created, unresolved */
    uint32_t *terminal_list, n_terminal, cap_terminal; /* terminal, not finalized */
    uint64_t round;

    struct tscope__timeline tl; /* the run over time, for the pictures */

    /* per thread */
    struct tscope__tstack *stacks;
    uint32_t nstacks; /* allocated entries */
    /* What the threads run, as of the last round: the innermost task's type
     * of each busy thread (the first TSCOPE__RUNNING_MAX of them), written
     * by tscope__store_end_round under a sequence lock so that the sampler
     * reads it without the store lock (tscope__query_running). */
    struct {
        _Atomic uint32_t seq; /* odd while being written */
        _Atomic uint32_t busy;
        _Atomic uint16_t type[TSCOPE__RUNNING_MAX];
    } running;

    /* per type / counter / event, indexed by id */
    struct tscope__type_acc *types;
    uint32_t ntypes;
    struct tscope__welford *counters;
    uint32_t ncounters;
    struct tscope__custom *customs;
    uint32_t ncustoms;
    tscope_peer_stats_t *peers; /* indexed by peer rank */
    uint32_t npeers;
    /* the same, of what the threads aggregated themselves (shard_events.c):
     * made again from every shard at each fold; readers merge the two
     * through tscope__store_counter, _custom and _peer */
    struct tscope__welford *th_counters;
    uint32_t nth_counters;
    struct tscope__custom *th_customs;
    uint32_t nth_customs;
    tscope_peer_stats_t *th_peers;
    uint32_t nth_peers;
    struct tscope__deptype *th_deptypes; /* by type pair, each pair once */
    uint32_t nth_deptypes, cap_th_deptypes;
    uint64_t th_dependencies, th_deps_cut_off;
    /* what the filter file left out (core/filter.h): tasks, dependencies */
    uint64_t th_tasks_filtered, th_deps_filtered;

    /* graphs */
    struct tscope__node *nodes;
    uint32_t nnodes, cap_nodes;
    struct tscope__u64map node_map; /* (parent node, type) -> node */
    struct tscope__node_cache node_cache[TSCOPE__NODE_CACHE];
    struct tscope__edge *edges;
    uint32_t nedges, cap_edges;
    struct tscope__u64map edge_map; /* (from type, to type) -> edge */

    /* instance graph */
    struct tscope__instance *inst;
    uint32_t ninst, cap_inst;
    struct tscope__u64map inst_map; /* id -> instance index, for inst[0 .. inst_indexed) */
    uint32_t inst_indexed;          /* maintained by the queries, not by the consumer */
    /* The cap keeps the tasks closest to the root: when the graph is full
     * the deepest level is dropped (settle.c). */
    uint16_t inst_limit;     /* deepest tree depth still kept */
    uint16_t inst_deepest;   /* deepest tree depth with kept instances */
    uint32_t *inst_at_depth; /* kept instances per tree depth (rebuilt on load) */
    uint32_t n_at_depth;
    uint32_t inst_gen;               /* changes when instances are dropped (queries re-index) */
    uint64_t below_lost;             /* left-out tasks with no ancestor to count them in */
    struct tscope__dropped *dropped; /* instances the cap dropped */
    struct tscope__u64map below_map; /* ancestor -> its entry of tasks counted below it (id 0) */
    uint32_t ndropped, cap_dropped;
    struct tscope__dep *deps;
    uint32_t ndeps, cap_deps;
    struct tscope__deptype *deptypes; /* every dependency, by type pair */
    uint32_t ndeptypes, cap_deptypes;
    struct tscope__u64map deptype_map; /* (from type, to type) -> deptypes index */

    /* totals */
    uint64_t events, created, completed, cancelled, unfinished, cut_off, dependencies, deps_cut_off,
        anomalies, never_ran;
    int completed_run;                /* tscope__store_complete ran */
    uint64_t completed_at;            /* its end: where unfinished tasks stop */
    struct tscope__leaf_batch leaves; /* leaf.c: leaves not yet in the statistics */
};

/* The consumer hooks (drain.c; core/hooks.h says what each does), on
 * tscope__g.store. */
uint64_t tscope__store_apply_ring(uint32_t thread, struct tscope__ring *r, uint64_t tail,
                                  uint64_t stop, uint64_t head);
void tscope__store_round_done(void);
void tscope__store_thread_gone(uint32_t thread);

/* Creates a store; cfg is copied.  NULL on memory exhaustion. */
struct tscope__store *tscope__store_new(const struct tscope__config *cfg, uint64_t origin);
void tscope__store_free(struct tscope__store *s);
/* A counter's, a custom event's and a peer's figures: what the consumer
 * applied and what the shards hold, merged (lock held; past the end: 0). */
struct tscope__welford tscope__store_counter(const struct tscope__store *s, uint32_t id);
struct tscope__custom tscope__store_custom(const struct tscope__store *s, uint32_t id);
tscope_peer_stats_t tscope__store_peer(const struct tscope__store *s, uint32_t peer);
/* Appends a dependency to the instance graph's list, or counts it cut
 * off (its cap); the shards count it themselves (lock held). */
void tscope__store_dep_list(struct tscope__store *s, const struct tscope__rec *r,
                            const struct tscope__rec *ext);
/* 1 + the highest peer rank either has. */
uint32_t tscope__store_npeers(const struct tscope__store *s);

/* Applies one record (and its EXT record, if the kind has one) produced by
 * thread `thread` at r->ts.  Lock held.  Never a shadow (record.h): the
 * ring drain, where they arrive, skips them (drain.c). */
void tscope__store_apply(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r,
                         const struct tscope__rec *ext);
/* Tells the threads that aggregate their own tasks (shard.c) which tree
 * depths the instance graph can still take: up to s's limit, or above its
 * deepest kept level once it is full.  Lock held. */
void tscope__shards_set_limit(const struct tscope__store *s);
/* A finished task of a thread that aggregates its own (shard.c) into the
 * instance graph, as settle.c's finalize does: kept if the filters, the
 * sampling and the cap allow, else counted in its nearest ancestor that
 * may be kept, keep_anc (a record the queries resolve).  Lock held. */
void tscope__store_instance(struct tscope__store *s, const struct tscope__task *t, int state,
                            uint64_t keep_anc, int anc_of_others);
/* Counts n tasks with `self` ticks in the nearest kept ancestor of `anc`
 * (a record the queries resolve through the instances and the links up).
 * Lock held. */
void tscope__store_below(struct tscope__store *s, uint64_t anc, uint64_t n, uint64_t self);
/* The same for tasks a shard left out of the instance graph; cut: the
 * instance filters want them, so they count as cut off by the cap (the
 * totals' instances_cut_off, as settle.c counts it). */
void tscope__store_below_cut(struct tscope__store *s, uint64_t anc, uint64_t n, uint64_t self,
                             int cut);
/* Prefetches what applying r will touch first (its task's map entry). */
static inline void tscope__store_prefetch(const struct tscope__store *s,
                                          const struct tscope__rec *r)
{
    if (r->kind <= TSCOPE__REC_RESUME && s->id_front) /* task events */
        __builtin_prefetch(&s->id_front[tscope__id_front_at(r->id)]);
}
/* Applies a START record immediately followed (in the same ring) by the END
 * of the same task - a leaf task, the commonest pattern - without a task
 * slot.  Returns 0, or -1 when the pair does not qualify (the caller then
 * applies both records normally).  Lock held. */
int tscope__store_apply_leaf(struct tscope__store *s, uint32_t thread,
                             const struct tscope__rec *start, const struct tscope__rec *end);
static inline int tscope__rec_is_leaf_pair(const struct tscope__rec *a, const struct tscope__rec *b)
{
    return a->kind == TSCOPE__REC_START && b->kind == TSCOPE__REC_END && a->id == b->id;
}
/* Adds the pending leaf batch to the statistics.  Called before any other
 * record is applied and before the store lock is released, so nobody ever
 * sees a batch half applied.  Lock held. */
void tscope__store_flush_leaves(struct tscope__store *s);
/* Ends the current round: settles what waited one full round.  Lock held. */
void tscope__store_end_round(struct tscope__store *s);
/* Completes the profile at finalize: resolves everything still pending,
 * reports tasks still running at `end` as unfinished.  Lock held. */
void tscope__store_complete(struct tscope__store *s, uint64_t end);

/* replay.c: the task state machine (lock held). */
void tscope__replay_apply(struct tscope__store *s, uint32_t thread, const struct tscope__rec *r);
/* The replay stack of a thread (grown on demand); NULL without memory. */
struct tscope__tstack *tscope__stack_of(struct tscope__store *s, uint32_t thread);
/* Counts completed tasks of `type` in thread slot `thread`'s share (ticks;
 * running and elapsed as the type's totals count them).  The slot's stack
 * is made when grow is set, else a slot without one counts nothing (the
 * replay's callers hold pointers into the stacks; a task that ran through
 * the rings had its stack made at its begin).  Dropped without memory. */
void tscope__stack_count(struct tscope__store *s, uint32_t thread, int grow, uint16_t type,
                         uint64_t calls, uint64_t self, uint64_t running, uint64_t elapsed);
uint32_t tscope__task_find(struct tscope__store *s, uint64_t id);
void tscope__task_free(struct tscope__store *s, uint32_t slot);
/* Removes the id -> slot mapping if this slot holds it. */
void tscope__task_unmap(struct tscope__store *s, uint32_t slot);
int tscope__store_grow_types(struct tscope__store *s, uint32_t type);
void tscope__type_saw_thread(struct tscope__store *s, uint32_t type, uint32_t thread);
void tscope__stack_close_all(struct tscope__store *s, uint64_t end);
/* Closes what is still running on one thread at `end`, as unfinished. */
void tscope__stack_close_thread(struct tscope__store *s, uint32_t thread, uint64_t end);

/* Puts the task on the terminal list once it ended or was cancelled and all
 * its segments are closed (replay.c). */
void tscope__settle_check_terminal(struct tscope__store *s, uint32_t slot);

/* settle.c: resolution and finalization (lock held). */
void tscope__settle_try_resolve(struct tscope__store *s, uint32_t slot);
void tscope__settle_release_parent(struct tscope__store *s, uint32_t slot);
/* The tree node a task of `type` whose parent is at node pnode (of type
 * ptype) counts in: created on first use, or an ancestor (recursion folding,
 * TASKSCOPE_TREE_FOLD) or a shallower node (TASKSCOPE_TREE_DEPTH).  *edge
 * receives the type-level edge (ptype -> type) the task counts in. */
uint32_t tscope__settle_node(struct tscope__store *s, uint32_t pnode, uint16_t ptype, uint16_t type,
                             uint32_t *edge, uint8_t *step);
/* The same, counting one task on the type-level edge. */
uint32_t tscope__settle_path_step(struct tscope__store *s, uint32_t pnode, uint16_t ptype,
                                  uint16_t type, uint8_t *step);
/* Adds one completed task to its type's and its tree node's statistics
 * (types[type] must exist). */
void tscope__settle_count_done(struct tscope__store *s, const struct tscope__task *t);
/* Counts a task still running at the end (unfinished) in its type: its
 * self time, running time outside its own type and, without an ancestor of
 * its type, elapsed time until then go into the type's totals and the
 * share of the thread that began it (TSCOPE__NONE: not known, its begin
 * lost), not into the statistics of single tasks or the tree (types[type]
 * must exist). */
void tscope__settle_count_unfinished(struct tscope__store *s, uint32_t thread, uint16_t type,
                                     uint64_t self, uint64_t running_top, uint64_t elapsed,
                                     int nested);
/* Adds a task to the instance graph if the filters, sampling and cap allow;
 * its index, or TSCOPE__NONE when left out. */
uint32_t tscope__settle_record_instance(struct tscope__store *s, const struct tscope__task *t,
                                        int state);
/* 1 if a task at tree depth tdepth is certainly not kept because of the
 * cap (a cheap test before the filters and the instance record). */
static inline int tscope__inst_capped(const struct tscope__store *s, uint16_t tdepth)
{
    return tdepth > s->inst_limit || (s->ninst >= s->cfg.instance_cap && tdepth >= s->inst_deepest);
}

/* The instance filters' verdict on a task type by its name (the type list;
 * callers keep the answer per type). */
int tscope__inst_type_wanted(const struct tscope__config *c, uint16_t type);
/* ... and on the rest of a task: its flags, depth and id (the sample). */
static inline int tscope__inst_rest_wanted(const struct tscope__config *c, uint64_t id,
                                           uint8_t flags, uint16_t depth)
{
    if (c->filter_flags && !(flags & c->filter_flags))
        return 0;
    if (depth < c->filter_depth_min || depth > c->filter_depth_max)
        return 0;
    if (c->instance_sample < 1.0) {
        double u = (double)(tscope__mix64(id) >> 11) * (1.0 / 9007199254740992.0);
        if (u >= c->instance_sample)
            return 0;
    }
    return 1;
}

/* 1 if any instance filter is set (TASKSCOPE_INSTANCE_TYPES, ...). */
static inline int tscope__inst_filtered(const struct tscope__store *s)
{
    const struct tscope__config *c = &s->cfg;
    return c->filter_ntypes || c->filter_flags || c->filter_depth_min ||
           c->filter_depth_max != 0xFFFF || c->instance_sample < 1.0;
}

/* A type's bit in a task's set of ancestor types (exact up to 64 types). */
static inline uint64_t tscope__type_bit(uint16_t type)
{
    return 1ull << (type & 63);
}
/* 1 if a task of `type` whose parent is in pslot has an ancestor of its
 * type (the recursion rule of the running and elapsed totals). */
int tscope__settle_nested(const struct tscope__store *s, uint32_t pslot, uint16_t type);

/* Counts n left-out tasks with `self` ticks in the nearest ancestor of
 * slot p (p included) that is kept or not finalized yet. */
void tscope__settle_below(struct tscope__store *s, uint32_t p, uint64_t n, uint64_t self);
/* The instance record of a task (times relative to the store's origin). */
struct tscope__instance tscope__instance_of(const struct tscope__store *s,
                                            const struct tscope__task *t, int state);
/* Adds a settled task to the statistics; frees its slot unless referenced. */
void tscope__settle_finalize(struct tscope__store *s, uint32_t slot);

#endif
