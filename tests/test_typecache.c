/* test_typecache.c - the adapters' lock-free address -> type cache
 * (src/adapt/typecache.c) under concurrent lookups: every key is made
 * exactly once, and every thread sees the type that was made for it (the
 * TSan build checks the publication order). */
#include <pthread.h>
#include <stdatomic.h>

#include "adapt/typecache.h"
#include "test.h"

enum { THREADS = 4, KEYS = 2000, ROUNDS = 20 };

static atomic_uint made[KEYS + 1];

static uint64_t key_of(unsigned i)
{
    return 0x400000u + (uint64_t)i * 16; /* code-address-like keys */
}

static uint32_t make(uint64_t key, void *arg)
{
    (void)arg;
    unsigned i = (unsigned)((key - 0x400000u) / 16);
    atomic_fetch_add(&made[i], 1);
    return 1000 + i;
}

static void *lookups(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int r = 0; r < ROUNDS; r++)
        for (unsigned j = 0; j < KEYS; j++) {
            unsigned i = (j * 7 + seed * 13 + (unsigned)r) % KEYS + 1;
            if (tscope__typecache_get(key_of(i), make, NULL) != 1000 + i)
                return (void *)1;
        }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        ASSERT_EQ(pthread_create(&t[i], NULL, lookups, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *bad;
        ASSERT_EQ(pthread_join(t[i], &bad), 0);
        ASSERT(bad == NULL);
    }
    for (unsigned i = 1; i <= KEYS; i++)
        ASSERT_EQ(atomic_load(&made[i]), 1);
    /* after a reset every key is made again */
    tscope__typecache_reset();
    ASSERT_EQ(tscope__typecache_get(key_of(5), make, NULL), 1005);
    ASSERT_EQ(atomic_load(&made[5]), 2);
    printf("test_typecache: ok\n");
    return 0;
}
