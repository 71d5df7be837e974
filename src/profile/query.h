/* query.h - helpers shared by the introspection API and the snapshot. */
#ifndef TSCOPE_PROFILE_QUERY_H
#define TSCOPE_PROFILE_QUERY_H

#include "store.h"
#include "taskscope/taskscope.h"

/* Lock held: statistics of one type (zeros for a type without data). */
void tscope__fill_type_stats(struct tscope__store *s, uint32_t type, tscope_type_stats_t *out);
/* Lock held: the run's totals. */
void tscope__fill_totals(struct tscope__store *s, tscope_totals_t *out);
/* The type of the innermost running task of each busy thread, as of the
 * consumer's last round: types[0 .. min(busy, max)) (type 0: tasks without
 * a type).  Returns the number of threads running a task (busy).  Takes no
 * lock: it reads what the last round published (store.h, running; only the
 * first TSCOPE__RUNNING_MAX busy threads have their type there). */
uint32_t tscope__query_running(uint16_t *types, uint32_t max);
/* The type-level task graph as of now: parent type -> child type with the
 * number of tasks, edges [0, min(n, max)) in order of creation (from:
 * UINT32_MAX for the root); returns n.  Takes the store lock. */
uint32_t tscope__query_type_edges(uint32_t *from, uint32_t *to, uint64_t *count, uint32_t max);
/* The type of task id while the store keeps it (created or begun, not yet
 * settled): 0 and *type (0: an untyped task), -1 when the store does not
 * know it, -2 when there is no store (the profiler off). */
int tscope__query_task_type(uint64_t id, uint32_t *type);
/* Drops the cached children index (the store it indexed is going away). */
void tscope__query_reset(void);

#endif
