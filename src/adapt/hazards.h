/* hazards.h - RAW/WAR/WAW edges from OpenMP-style depend clauses.
 *
 * The OpenMP runtime tells which addresses a new task reads and writes
 * (in, out, inout, ...); taskscope works out which earlier sibling task each
 * access depends on and with which hazard, the way the runtime orders them:
 * a reader waits for the last writer (RAW); a writer waits for the readers
 * since that writer (WAR), or for the writer itself when nobody read (WAW
 * for a pure write, RAW for an inout, which also reads).  Addresses are
 * tracked per parent task: a task with another parent starts the address's
 * history afresh (OpenMP orders siblings only).  Thread-safe (one lock);
 * called once per task that has depend clauses, never for other tasks. */
#ifndef TSCOPE_ADAPT_HAZARDS_H
#define TSCOPE_ADAPT_HAZARDS_H

#include <stdint.h>

enum tscope__access {
    TSCOPE__ACCESS_IN = 1,    /* in */
    TSCOPE__ACCESS_OUT = 2,   /* out */
    TSCOPE__ACCESS_INOUT = 3, /* inout, mutexinoutset */
    TSCOPE__ACCESS_SET = 4    /* inoutset: unordered among itself, like readers */
};

/* Called for each edge found: from -> to through addr with a TSCOPE_DEP_*
 * hazard kind. */
typedef void (*tscope__edge_fn)(uint64_t from, uint64_t to, const void *addr, int hazard);

/* Records that task `task` (child of `parent`) accesses addr as `access`,
 * calling edge() for every dependency this creates.  Returns 0, or -1 when
 * memory ran out (the access is then not tracked). */
int tscope__hazards_access(uint64_t parent, uint64_t task, const void *addr, int access,
                           tscope__edge_fn edge);

/* Forgets every address (at finalize). */
void tscope__hazards_reset(void);

#endif
