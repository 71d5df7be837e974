/* names.h - interned names -> small ids (task types, counters, custom events).
 *
 * Registration takes the table's mutex (once per name, never per event);
 * ids are dense, start at 1 and are never reused, so the hot path and the
 * store use them as array indexes.  One mechanism serves all three kinds.
 */
#ifndef TSCOPE_CORE_NAMES_H
#define TSCOPE_CORE_NAMES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TSCOPE__NAME_MAX 255

/* A counter's attribute: its values come from the sampler, one per period
 * (a short run has too few of them to say much: the summary leaves such
 * counters out, saying so). */
#define TSCOPE__COUNTER_SAMPLED 1u

struct tscope__names {
    pthread_mutex_t lock;
    char **names;   /* names[id], id 1..count; names[0] unused */
    uint8_t *attrs; /* attrs[id]: TSCOPE_TYPE_* bits (task types), TSCOPE__COUNTER_* (counters) */
    uint32_t count; /* highest id handed out */
    uint32_t cap;   /* allocated entries of names */
    uint32_t *hash; /* open addressing: id, 0 = empty */
    uint32_t hash_cap;
};

/* Interns name; returns 0 and the id in *id, TSCOPE_EINVAL for an empty or
 * too long name, TSCOPE_ELIMIT past 65534 names, TSCOPE_ENOMEM. */
int tscope__names_intern(struct tscope__names *t, const char *name, uint32_t *id);
/* Looks a name up without adding it: returns the id or 0. */
uint32_t tscope__names_find(struct tscope__names *t, const char *name);
/* Copies name `id` into buf; TSCOPE_ENOENT for an unknown id. */
int tscope__names_get(struct tscope__names *t, uint32_t id, char *buf, size_t len);
/* Adds attribute bits to name `id` (kept for the life of the process);
 * TSCOPE_ENOENT for an unknown id. */
int tscope__names_add_attrs(struct tscope__names *t, uint32_t id, unsigned attrs);
/* The attribute bits of name `id` (0 for an unknown id). */
unsigned tscope__names_attrs(struct tscope__names *t, uint32_t id);
/* Number of names (= highest id). */
uint32_t tscope__names_count(struct tscope__names *t);
/* Forgets every name (ids start at 1 again): for a process that reads
 * another's tables (crash recovery), never while events flow. */
void tscope__names_clear(struct tscope__names *t);

/* Bumped whenever an attribute is added or the names are forgotten: a
 * cache of attributes (profile/timeline.h's waiting types) asks again. */
extern _Atomic uint32_t tscope__names_attrs_gen;

/* The process-wide tables. */
extern struct tscope__names tscope__types, tscope__counters, tscope__events;

#endif
