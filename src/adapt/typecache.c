/* typecache.c - lock-free lookup of task types by key (typecache.h).
 *
 * A fixed open-addressing table.  Readers probe with acquire loads of the
 * key; a writer (under the lock) stores the type first and then publishes
 * the key with a release store, so a reader that sees the key sees its
 * type.  Entries are never removed while events flow.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "typecache.h"

#define CACHE_SLOTS 8192u /* distinct task constructs in one program */

struct entry {
    _Atomic uint64_t key; /* 0: empty (keys are code addresses, never 0) */
    _Atomic uint32_t type;
};

static struct entry cache[CACHE_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The slots in use (under the lock), so that a reset clears only those: the
 * table is 128 KiB of zero pages that a run with few task constructs never
 * touches, and clearing all of it at every finalize faulted them in (~32
 * page faults at the exit of a trivial program). */
_Static_assert(CACHE_SLOTS <= 65536, "slot indices are 16 bits");
static uint16_t used[CACHE_SLOTS];
static uint32_t nused;

static uint32_t slot_of(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (CACHE_SLOTS - 1);
}

/* The entry for key, or the empty slot where it would go (NULL: full). */
static struct entry *probe(uint64_t key)
{
    uint32_t i = slot_of(key);
    for (uint32_t n = 0; n < CACHE_SLOTS; n++, i = (i + 1) & (CACHE_SLOTS - 1)) {
        uint64_t k = atomic_load_explicit(&cache[i].key, memory_order_acquire);
        if (k == key || k == 0)
            return &cache[i];
    }
    return NULL;
}

uint32_t tscope__typecache_get(uint64_t key, tscope__type_maker make, void *arg)
{
    if (!key)
        key = 1;
    struct entry *e = probe(key);
    if (e && atomic_load_explicit(&e->key, memory_order_acquire) == key)
        return atomic_load_explicit(&e->type, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    e = probe(key); /* again: another thread may have made it meanwhile */
    uint32_t type;
    if (e && atomic_load_explicit(&e->key, memory_order_relaxed) == key) {
        type = atomic_load_explicit(&e->type, memory_order_relaxed);
    } else {
        type = make(key, arg);
        if (e) {
            used[nused++] = (uint16_t)(e - cache);
            atomic_store_explicit(&e->type, type, memory_order_relaxed);
            atomic_store_explicit(&e->key, key, memory_order_release);
        }
    }
    pthread_mutex_unlock(&lock);
    return type;
}

void tscope__typecache_reset(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < nused; i++) {
        atomic_store_explicit(&cache[used[i]].key, 0, memory_order_relaxed);
        atomic_store_explicit(&cache[used[i]].type, 0, memory_order_relaxed);
    }
    nused = 0;
    pthread_mutex_unlock(&lock);
}
