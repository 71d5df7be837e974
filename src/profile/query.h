/* query.h - helpers shared by the introspection API and the snapshot. */
#ifndef TSCOPE_PROFILE_QUERY_H
#define TSCOPE_PROFILE_QUERY_H

#include "store.h"
#include "taskscope/taskscope.h"

/* Lock held: statistics of one type (zeros for a type without data). */
void tscope__fill_type_stats(struct tscope__store *s, uint32_t type, tscope_type_stats_t *out);
/* Lock held: the run's totals. */
void tscope__fill_totals(struct tscope__store *s, tscope_totals_t *out);
/* Counts, per task type, the threads whose innermost running task is of
 * that type, as of the consumer's last round: counts[0 .. ntypes) (type 0:
 * tasks without a type).  Returns the number of threads running a task.
 * Takes no lock: it reads what the last round published (store.h, running;
 * only the first TSCOPE__RUNNING_MAX busy threads are counted by type). */
uint32_t tscope__query_running(uint32_t *counts, uint32_t ntypes);
/* Drops the cached children index (the store it indexed is going away). */
void tscope__query_reset(void);

#endif
