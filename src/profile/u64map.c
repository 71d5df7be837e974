/* u64map.c - see u64map.h. */
#include "u64map.h"

#include <stdlib.h>

#include "taskscope/taskscope.h"

int tscope__u64map_init(struct tscope__u64map *m, uint64_t cap)
{
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->mask = cap - 1;
    m->count = 0;
    if (!m->keys || !m->vals) {
        tscope__u64map_free(m);
        return TSCOPE_ENOMEM;
    }
    return 0;
}

void tscope__u64map_free(struct tscope__u64map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->count = 0;
}

int tscope__u64map_get(const struct tscope__u64map *m, uint64_t key, uint32_t *val)
{
    for (uint64_t i = tscope__mix64(key) & m->mask;; i = (i + 1) & m->mask) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return 1;
        }
        if (m->keys[i] == 0)
            return 0;
    }
}

static int grow(struct tscope__u64map *m)
{
    struct tscope__u64map n;
    if (tscope__u64map_init(&n, (m->mask + 1) * 2))
        return TSCOPE_ENOMEM;
    for (uint64_t i = 0; i <= m->mask; i++)
        if (m->keys[i])
            tscope__u64map_put(&n, m->keys[i], m->vals[i]);
    tscope__u64map_free(m);
    *m = n;
    return 0;
}

int tscope__u64map_put(struct tscope__u64map *m, uint64_t key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->mask + 1 && grow(m))
        return TSCOPE_ENOMEM;
    uint64_t i = tscope__mix64(key) & m->mask;
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & m->mask;
    if (!m->keys[i])
        m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

int tscope__u64map_del(struct tscope__u64map *m, uint64_t key)
{
    uint64_t i = tscope__mix64(key) & m->mask;
    while (m->keys[i] != key) {
        if (m->keys[i] == 0)
            return 0;
        i = (i + 1) & m->mask;
    }
    /* Backward-shift deletion: move later members of the probe run into the
     * hole when their home slot is not in (hole, j]. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
        uint64_t home = tscope__mix64(m->keys[j]) & m->mask;
        int home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_in_range) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = 0;
    m->count--;
    return 1;
}
