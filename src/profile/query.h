/* query.h - helpers shared by the introspection API and the snapshot. */
#ifndef TSCOPE_PROFILE_QUERY_H
#define TSCOPE_PROFILE_QUERY_H

#include "store.h"
#include "taskscope/taskscope.h"

/* Lock held: statistics of one type (zeros for a type without data). */
void tscope__fill_type_stats(struct tscope__store *s, uint32_t type, tscope_type_stats_t *out);
/* Lock held: the run's totals. */
void tscope__fill_totals(struct tscope__store *s, tscope_totals_t *out);
/* Drops the cached children index (the store it indexed is going away). */
void tscope__query_reset(void);

#endif
