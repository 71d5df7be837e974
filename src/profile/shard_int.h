/* shard_int.h - what shard.c shares with the files that aggregate other
 * events in the same shards (shard_events.c): the atomics every entry is
 * written and read with, the chunked arrays, the durable allocator and the
 * shard of a thread slot.  Private to src/profile.
 */
#ifndef TSCOPE_PROFILE_SHARD_INT_H
#define TSCOPE_PROFILE_SHARD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "shard_layout.h"

/* Release stores and acquire loads, no fences (gcc's TSan has none): an
 * entry's version store is ordered before the data stores after it, the
 * fold's data loads before its second load of the version.  On x86 all of
 * these are plain moves. */
#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define LD_ACQ(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define ADD(x, v) ST(x, LD(x) + (v))
#define WORDS(x) (sizeof(x) / sizeof(uint64_t))

/* An entry is written between two increments of its version (odd while
 * the owner writes). */
static inline void w_begin(uint64_t *ver)
{
    ST(*ver, LD(*ver) + 1);
}

static inline void w_end(uint64_t *ver)
{
    __atomic_store_n(ver, LD(*ver) + 1, __ATOMIC_RELEASE);
}

/* One event of the owner's (the run's and the thread's event counts). */
static inline void count_event(struct tscope__shard *s)
{
    ST(s->totals.events, LD(s->totals.events) + 1);
}

static inline void count_total(struct tscope__shard *s, uint64_t *field)
{
    w_begin(&s->totals.ver);
    ADD(*field, 1);
    w_end(&s->totals.ver);
}

/* `bytes` of zeroed memory for a shard's block of `kind` (the mapping's
 * when there is one, else calloc'd). */
void *tscope__sh_dalloc(uint32_t kind, uint32_t owner, uint32_t index, size_t n, size_t size);
/* Copies an entry of `words` words written under its first word, the
 * version; 1 when the copy is whole (recovery takes a torn one as it is). */
int tscope__sh_read_entry(const uint64_t *src, uint64_t *dst, size_t words);
/* The shard of thread slot `thread`, made on first use; NULL without memory. */
struct tscope__shard *tscope__sh_of(uint32_t thread);

/* Entry i of elem bytes in a directory of ndir chunks, or NULL when its
 * chunk does not exist (reader). */
static inline void *dir_peek(void *const *dir, uint32_t ndir, uint32_t i, size_t elem)
{
    if ((i >> CHUNK_BITS) >= ndir)
        return NULL;
    char *p = __atomic_load_n(&dir[i >> CHUNK_BITS], __ATOMIC_ACQUIRE);
    return p ? p + (size_t)(i & (CHUNK - 1)) * elem : NULL;
}

/* Entry i, its chunk made on first use (owner); NULL without memory. */
static inline void *dir_at(void **dir, uint32_t ndir, uint32_t kind, uint32_t owner, uint32_t i,
                           size_t elem)
{
    if ((i >> CHUNK_BITS) >= ndir)
        return NULL;
    char *p = dir[i >> CHUNK_BITS]; /* the owner's own store: no ordering needed */
    if (__builtin_expect(p == NULL, 0)) {
        p = tscope__sh_dalloc(kind, owner, i >> CHUNK_BITS, CHUNK, elem);
        if (!p)
            return NULL;
        __atomic_store_n(&dir[i >> CHUNK_BITS], p, __ATOMIC_RELEASE);
    }
    return p + (size_t)(i & (CHUNK - 1)) * elem;
}

/* Chunk k of d (a reader), or NULL. */
static inline void *chunks_get(struct chunks *d, uint64_t k)
{
    if (k < DIR_NEAR)
        return __atomic_load_n(&d->near[k], __ATOMIC_ACQUIRE);
    void **far = k < DIR_MAX ? __atomic_load_n(&d->far, __ATOMIC_ACQUIRE) : NULL;
    return far ? __atomic_load_n(&far[k - DIR_NEAR], __ATOMIC_ACQUIRE) : NULL;
}

/* chunks_make's way when chunk k is not there yet or past the near part
 * (shard.c). */
void *tscope__sh_chunks_make_slow(struct chunks *d, uint64_t k, size_t n, size_t elem);

/* Chunk k of d, of n elements of elem bytes, made on first use (the owner);
 * NULL past the directory or without memory.  The event path's: a near
 * chunk that exists in two loads, the rest out of line. */
static inline void *chunks_make(struct chunks *d, uint64_t k, size_t n, size_t elem)
{
    void *p = k < DIR_NEAR ? d->near[k] : NULL; /* the owner's own store: no ordering needed */
    return __builtin_expect(p != NULL, 1) ? p : tscope__sh_chunks_make_slow(d, k, n, elem);
}

/* 1 + the highest chunk d may have. */
static inline uint32_t chunks_n(struct chunks *d)
{
    return __atomic_load_n(&d->far, __ATOMIC_ACQUIRE) ? DIR_MAX : DIR_NEAR;
}

static inline void *chunk_peek(struct chunks *c, uint32_t i, size_t elem)
{
    char *p = chunks_get(c, i >> CHUNK_BITS);
    return p ? p + (size_t)(i & (CHUNK - 1)) * elem : NULL;
}

static inline void *chunk_at(struct chunks *c, uint32_t i, size_t elem)
{
    char *p = chunks_make(c, i >> CHUNK_BITS, CHUNK, elem);
    return p ? p + (size_t)(i & (CHUNK - 1)) * elem : NULL;
}

/* Appends records to shard s's log (the owner): 0, or -1 (counted). */
int tscope__sh_log(struct tscope__shard *s, const struct tscope__rec *recs, unsigned n);
/* Frees what shard_events.c keeps beside the shards (at tscope__shards_free). */
void tscope__sh_events_free(void);

/* Folds what the shards hold of counters, custom events, messages and
 * dependencies into the store (shard_events.c; store lock held, from
 * tscope__shards_fold). */
void tscope__sh_fold_events(struct tscope__store *st, struct tscope__shard *const *shards,
                            uint32_t n);

#endif
