/* u64map.h - open-addressing hash map from non-zero 64-bit keys to 32-bit
 * values, used by the store for task ids, tree paths, graph edges and the
 * instance index.
 *
 * Key and value share one 16-byte entry, so a probe touches one cache line.
 * Linear probing at load <= 1/2, deletion by backward shift (no tombstones,
 * so a long run keeps short probe sequences).  Not thread-safe: the store's
 * lock protects it.
 */
#ifndef TSCOPE_PROFILE_U64MAP_H
#define TSCOPE_PROFILE_U64MAP_H

#include <stdint.h>

struct tscope__u64entry {
    uint64_t key; /* 0 = empty */
    uint32_t val;
    uint32_t unused;
};

struct tscope__u64map {
    struct tscope__u64entry *e;
    uint64_t mask;
    uint64_t count;
};

int tscope__u64map_init(struct tscope__u64map *m, uint64_t cap_pow2);
void tscope__u64map_free(struct tscope__u64map *m);
/* Returns 1 and sets *val if key is present, else 0. */
int tscope__u64map_get(const struct tscope__u64map *m, uint64_t key, uint32_t *val);
/* Inserts or replaces; returns 0 or TSCOPE_ENOMEM. */
int tscope__u64map_put(struct tscope__u64map *m, uint64_t key, uint32_t val);
/* Finds key, inserting it (value `fresh`) if absent, in one probe sequence.
 * Returns a pointer to the value (valid until the next insertion) and sets
 * *found; NULL on memory exhaustion. */
uint32_t *tscope__u64map_upsert(struct tscope__u64map *m, uint64_t key, uint32_t fresh, int *found);
/* Removes key if present; returns 1 if it was. */
int tscope__u64map_del(struct tscope__u64map *m, uint64_t key);

static inline uint64_t tscope__mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Hints the cache to fetch key's home entry (the consumer calls this a few
 * records ahead, hiding the memory latency of large tables). */
static inline void tscope__u64map_prefetch(const struct tscope__u64map *m, uint64_t key)
{
    __builtin_prefetch(&m->e[tscope__mix64(key) & m->mask]);
}

#endif
