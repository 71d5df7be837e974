/* profile.h - a self-contained, immutable copy of a profile: what exporters
 * render and what `taskscope report` reads back from profile.json.
 *
 * Built from the live store (tscope__profile_snapshot, under the store lock)
 * or parsed from JSON (src/offline/profile_read.c), so every renderer works the same
 * on a running program, at finalize, and after the fact.  Times are ns.
 */
#ifndef TSCOPE_PROFILE_PROFILE_H
#define TSCOPE_PROFILE_PROFILE_H

#include <stdint.h>

#include "taskscope/taskscope.h"

#define TSCOPE__PROFILE_SCHEMA "taskscope-profile"
/* 3: edges per task pair ("hazards", "addresses" in task_deps; "mutex"),
 * waits marked ("wait" in types), "critical_path"; 2: self/running/elapsed;
 * 1 and 2 are still read */
#define TSCOPE__PROFILE_VERSION 3
#define TSCOPE__PROFILE_ROOT 0xFFFFu /* edge source of tasks without a parent */

/* A type over the ranks of a job (the global view, src/global): each
 * rank's total self time and calls; the rank with the most self time. */
struct tscope__pranks {
    int64_t self_min, self_max, self_sum;
    int self_max_rank;
    uint64_t calls_min, calls_max;
};

struct tscope__ptype {
    char *name;
    uint32_t id;
    uint64_t created, calls, yields, cancelled, unfinished;
    tscope_stats_t self, running, elapsed; /* taskscope.h's three times */
    tscope_stats_t cpu;                    /* self CPU time (the profile's cpu_time) */
    double running_total, elapsed_total;   /* recursion counted once */
    double self_total; /* self.sum and what unfinished tasks ran until the end (as the totals) */
    uint32_t threads;
    unsigned attrs;              /* TSCOPE_TYPE_* (TSCOPE_TYPE_WAIT: its tasks wait) */
    struct tscope__pranks ranks; /* global profiles only */
};

struct tscope__pcounter {
    char *name;
    uint32_t id;
    tscope_counter_stats_t stats;
    int sampled; /* from the sampler (TSCOPE__COUNTER_SAMPLED) */
};

struct tscope__pevent {
    char *name;
    uint32_t id;
    uint64_t count, last_payload;
};

struct tscope__pedge {
    uint32_t from, to; /* type ids; from may be TSCOPE__PROFILE_ROOT */
    uint64_t count;
};

struct tscope__pnode {
    uint32_t parent; /* node index; UINT32_MAX for the root (node 0) */
    uint32_t type;
    uint64_t calls;
    double self, running, elapsed;
};

/* Type-level dependency graph: dependency edges between tasks of type
 * `from` and tasks of type `to`, by hazard (local) or as remote.  A task
 * whose type the store no longer knew (or one on another rank) is type 0. */
struct tscope__pdeptype {
    uint32_t from, to;
    uint64_t count, raw, war, waw, mutex, remote; /* edges; those with each hazard */
};

/* One task of the instance graph (within TASKSCOPE_INSTANCE_CAP); times in
 * ns since init, 0 where unknown (end while live). */
struct tscope__ptask {
    uint64_t id, parent; /* parent 0: none */
    uint32_t type, thread;
    int state; /* enum tscope_task_state */
    double create, begin, end, self, running;
};

/* One dependency edge between two tasks (within the cap): `to` waited for
 * `from`.  kind: the TSCOPE_HAZARD_* bits of a local edge (core/hazard.h;
 * only TSCOPE_HAZARD_MUTEX: exclusion, no order), the tscope_dep_dir_t of a
 * remote one; naddrs and addr: how many addresses cause it, the first. */
struct tscope__pdep {
    uint64_t from, to;
    int kind, remote, from_rank, to_rank;
    uint32_t naddrs;
    uint64_t addr;
};

/* A thread's share of a type: the tasks of the type it completed (a task
 * counts on the thread slot whose shard ended it, or, through the rings, of
 * its first begin), their self time, and running and elapsed as the type's
 * totals count them (recursion once).  Over the threads they add up to the
 * type's calls, self sum, running_total and elapsed_total. */
struct tscope__pthread_type {
    uint32_t type;
    uint64_t calls;
    double self, running, elapsed;
};

struct tscope__pthread {
    char *name;
    uint64_t events, dropped, waits;
    int own; /* taskscope's own thread (the sampler's), not the program's */
    struct tscope__pthread_type *types; /* by type id, the types it completed tasks of */
    uint32_t ntypes;
};

struct tscope__punfinished {
    uint64_t id;
    uint32_t type, thread;
    double begin;
};

/* The run over time (profile/timeline.h), in ns: bins of bin_ns from the
 * run's start; per type id (rows, NULL when it never ran) the self time in
 * each bin, per thread slot the busy time and the part of it a waiting
 * type (TSCOPE_TYPE_WAIT) had the thread's top; a sample of task durations. */
struct tscope__ppoint {
    double end;      /* ns since the start */
    double duration; /* elapsed ns */
    uint32_t type;
};

struct tscope__ptimeline {
    double bin_ns;
    uint32_t nbins;
    double **type; /* [ntype][nbins] */
    uint32_t ntype;
    double **thread; /* [nthread][nbins] */
    uint32_t nthread;
    double **wait; /* [nwait][nbins]: the part of a thread's busy time it waited */
    uint32_t nwait;
    struct tscope__ppoint *points; /* by end time */
    uint32_t npoints;
    double sampled; /* the fraction of tasks the points are */
};

/* One rank of a job in the global view: its totals, messages, presence. */
struct tscope__prank {
    int rank, present;
    uint64_t tasks, events, anomalies, unfinished, threads;
    int64_t self_ns, elapsed_ns;
    tscope_peer_stats_t msgs; /* summed over its peers (peer: -1) */
};

/* Remote dependencies between types of two ranks in the global view: tasks
 * of type `to` on rank to_rank depending on tasks of type `from` on rank
 * from_rank (tscope_dep_remote), by direction; "?" for a task whose rank
 * did not keep it (instance cap) or is missing. */
struct tscope__prdep {
    int from_rank, to_rank;
    char *from, *to;
    uint64_t in, out, copyin;
};

/* One cell of a job's message matrix: what rank `from` sent to rank `to`
 * (point to point and collective shares), in bytes and messages. */
struct tscope__pmsgpair {
    int from, to;
    uint64_t bytes, msgs;
};

/* The message matrix of a job of up to this many ranks is written whole
 * (the global messages.csv and profile.json's "bytes"/"messages" rows,
 * zeros and all); a larger job's as its pairs that exchanged messages. */
#define TSCOPE__GLOBAL_DENSE_MAX 256

/* What only a global profile has: the ranks, the message matrix (sparse:
 * the pairs of ranks that exchanged messages) and the busy time of every
 * rank in common time bins. */
struct tscope__pglobal {
    int nranks, present;
    struct tscope__prank *ranks;     /* nranks */
    struct tscope__pmsgpair *matrix; /* by (from, to); a pair absent: nothing sent */
    size_t nmatrix;
    double bin_ns;
    uint32_t nbins;
    int64_t *busy;               /* nranks * nbins: thread-ns busy */
    int64_t *wait;               /* nranks * nbins: the part of busy waiting */
    struct tscope__prdep *rdeps; /* ordered by ranks, then names */
    uint32_t nrdeps;
};

struct tscope__profile {
    char *program;
    char *clock;
    char *mode;
    char *full_policy;
    int rank, nranks;
    int ended_by; /* the signal that ended the run, 0 if it ended normally */
    tscope_totals_t totals;
    uint64_t deps_cut_off;
    /* the filter file (core/filter.h): in force (then profile.json's totals
     * say what it left out), tasks and dependencies it left out */
    int filter;
    uint64_t tasks_filtered, deps_filtered;
    /* each task's CPU time was measured (TASKSCOPE_CPU_TIME): the types'
     * cpu, and the outputs say it (without it they are as before) */
    int cpu_time;
    struct tscope__ptype *types;
    uint32_t ntypes;
    struct tscope__pcounter *counters;
    uint32_t ncounters;
    struct tscope__pevent *events;
    uint32_t nevents;
    tscope_peer_stats_t *peers; /* the peers with messages, by rank */
    uint32_t npeers;
    struct tscope__pedge *edges;
    uint32_t nedges;
    struct tscope__pnode *nodes;
    uint32_t nnodes;
    struct tscope__pthread *threads;
    uint32_t nthreads;
    char (*notes)[512]; /* what the machine lacks (tscope__machine_note), said or not */
    uint32_t nnotes;
    struct tscope__punfinished *unfinished; /* up to TSCOPE__UNFINISHED_LIST */
    uint32_t nunfinished;
    struct tscope__pdeptype *deptypes; /* ordered by (from, to) */
    uint32_t ndeptypes;
    struct tscope__ptask *tasks; /* in the order they finished */
    uint32_t ntasks;
    int tasks_unwritten;           /* the snapshot holds tasks for the critical path only:
                                      profile.json leaves them out (not asked for, no
                                      dependencies) */
    struct tscope__critpath *path; /* profile.json's critical_path, read back
                                      when it has no tasks (critpath.h); NULL */
    struct tscope__pdep *deps;     /* in the order they were recorded */
    uint32_t ndeps;
    struct tscope__ptimeline tl;    /* one row of busy time when read from profile.json */
    struct tscope__pglobal *global; /* NULL but for a job's global profile */
};

#define TSCOPE__UNFINISHED_LIST 20

/* Copies the current state of the global store (lock taken inside).
 * Returns NULL on memory exhaustion.  Free with tscope__profile_free. */
struct tscope__profile *tscope__profile_snapshot(void);
void tscope__profile_free(struct tscope__profile *p);

/* Name of a type id in p ("<root>" for TSCOPE__PROFILE_ROOT, "(untyped)" for
 * 0, "type-N" if unknown). */
const char *tscope__profile_type_name(const struct tscope__profile *p, uint32_t id, char *buf,
                                      unsigned len);

#endif
