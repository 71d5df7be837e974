/* idmap.h - task id -> task record, for the id-based task events on
 * threads that aggregate their own tasks (ids.c).  Any thread; private to
 * src/profile. */
#ifndef TSCOPE_PROFILE_IDMAP_H
#define TSCOPE_PROFILE_IDMAP_H

#include <stdint.h>

struct tscope_task;

/* Maps id (non-zero) to t: 0, 1 when id is mapped already (left as it
 * is), -1 without memory. */
int tscope__idmap_put(uint64_t id, struct tscope_task *t);
/* The record of id, or NULL. */
struct tscope_task *tscope__idmap_get(uint64_t id);
/* Removes id if it maps to t; returns 1 if it did. */
int tscope__idmap_del(uint64_t id, const struct tscope_task *t);
/* Empties the map and frees its memory (no event in flight). */
void tscope__idmap_clear(void);

#endif
