/* hazards.h - the dependence edges of OpenMP-style depend clauses.
 *
 * The OpenMP runtime tells which addresses a new task reads and writes
 * (in, out, inout, mutexinoutset, inoutset, omp_all_memory); taskscope works
 * out which earlier sibling tasks the new one depends on, as OpenMP 5.1
 * orders them, and reports ONE edge per predecessor with every hazard that
 * causes it (TSCOPE_HAZARD_* bits) and the number of addresses:
 * - in waits for the last writer group (RAW);
 * - out and inout wait for the readers since that group (WAR) or, when
 *   nobody read, for the group itself (WAW; RAW and WAW for inout, which
 *   also reads);
 * - consecutive mutexinoutset tasks form one group: each waits for what the
 *   group's first task waited for, and is mutually exclusive with the first
 *   (a TSCOPE_HAZARD_MUTEX edge from it, which orders nothing); consecutive
 *   inoutset tasks form a group the same way, without exclusion;
 * - omp_all_memory (address NULL or ~0, the way libomp 14 reports it, any
 *   dependence type) is an inout on every address: it waits for the
 *   latest accesses of every address of its siblings, and every later
 *   sibling access waits for it.
 * An address named twice in one list counts once (two different types
 * make it an inout).  A taskwait with depend clauses (libomp also waits for
 * an if(0) task's dependences in one) only waits: it gets edges and is no
 * access for later tasks.  Addresses are tracked per parent task (OpenMP
 * orders siblings only): the children of two parents that use one address
 * at the same time each wait for their own siblings, and a parent's
 * histories go at its end (tscope__hazards_forget).  Thread-safe (one
 * lock); called once per task that has depend clauses and once at the end
 * of each task whose children had them, never for other tasks.
 *
 * The one dependence tracker of both task runtimes taskscope knows: the OMPT
 * tool's depend clauses (src/adapt/ompt.c) and the bundled runtime's
 * dependencies (src/rt/deps.c, all its tasks children of one parent).  It
 * uses only the public header, so it is compiled into each user: into
 * libtaskscope for the runtime and into the OMPT tool's library (which sees
 * only the public API of libtaskscope); each copy has its own table. */
#ifndef TSCOPE_HAZARDS_HAZARDS_H
#define TSCOPE_HAZARDS_HAZARDS_H

#include <stdint.h>

enum tscope__access {
    TSCOPE__ACCESS_IN = 1,
    TSCOPE__ACCESS_OUT = 2,
    TSCOPE__ACCESS_INOUT = 3,
    TSCOPE__ACCESS_MUTEX = 4, /* mutexinoutset */
    TSCOPE__ACCESS_SET = 5    /* inoutset */
};

struct tscope__access_item {
    const void *addr; /* NULL or (void *)~0: omp_all_memory */
    int access;       /* enum tscope__access */
};

/* Called once for each predecessor `from` of `to`: the TSCOPE_HAZARD_*
 * bits, the number of addresses and the first of them (in list order). */
typedef void (*tscope__edge_fn)(uint64_t from, uint64_t to, unsigned hazards, uint32_t naddrs,
                                const void *addr);

#define TSCOPE__HAZARDS_WAIT 1u /* a taskwait's list: edges to it, no access */

/* Records the depend list of task `task` (child of `parent`), calling edge()
 * for every predecessor.  Returns 0, or -1 when memory ran out (edges may
 * then be missing). */
int tscope__hazards_task(uint64_t parent, uint64_t task, const struct tscope__access_item *list,
                         int n, unsigned flags, tscope__edge_fn edge);

/* Forgets the address histories of parent's children (at its end: no
 * sibling of theirs comes later). */
void tscope__hazards_forget(uint64_t parent);

/* Forgets every address (at finalize). */
void tscope__hazards_reset(void);

#endif
