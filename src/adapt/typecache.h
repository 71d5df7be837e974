/* typecache.h - a 64-bit key (a code address, maybe tagged) -> task type id,
 * looked up on the hot path without a lock.
 *
 * The adapters name task types by where they are in the source; resolving
 * a name costs microseconds (srcloc.h), so each distinct key is resolved
 * once, under a lock, and every later lookup is a few loads. */
#ifndef TSCOPE_ADAPT_TYPECACHE_H
#define TSCOPE_ADAPT_TYPECACHE_H

#include <stdint.h>

/* Makes the type for a key that is not cached yet (called under the cache's
 * lock, once per key); returns the type id, 0 for none. */
typedef uint32_t (*tscope__type_maker)(uint64_t key, void *arg);

/* The type cached for key (not 0), making it with make(key, arg) on the first
 * lookup.  When the cache is full, the type is made again on every miss. */
uint32_t tscope__typecache_get(uint64_t key, tscope__type_maker make, void *arg);

/* Forgets every entry (type ids are per tscope_init). */
void tscope__typecache_reset(void);

#endif
