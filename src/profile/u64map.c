/* u64map.c - see u64map.h. */
#include "u64map.h"

#include <stdlib.h>

#include "taskscope/taskscope.h"

int tscope__u64map_init(struct tscope__u64map *m, uint64_t cap)
{
    m->e = calloc(cap, sizeof *m->e);
    m->mask = cap - 1;
    m->count = 0;
    return m->e ? 0 : TSCOPE_ENOMEM;
}

void tscope__u64map_free(struct tscope__u64map *m)
{
    free(m->e);
    m->e = NULL;
    m->count = 0;
}

int tscope__u64map_get(const struct tscope__u64map *m, uint64_t key, uint32_t *val)
{
    for (uint64_t i = tscope__mix64(key) & m->mask;; i = (i + 1) & m->mask) {
        if (m->e[i].key == key) {
            *val = m->e[i].val;
            return 1;
        }
        if (m->e[i].key == 0)
            return 0;
    }
}

static int grow(struct tscope__u64map *m)
{
    struct tscope__u64map n;
    if (tscope__u64map_init(&n, (m->mask + 1) * 2))
        return TSCOPE_ENOMEM;
    for (uint64_t i = 0; i <= m->mask; i++)
        if (m->e[i].key)
            tscope__u64map_put(&n, m->e[i].key, m->e[i].val);
    tscope__u64map_free(m);
    *m = n;
    return 0;
}

uint32_t *tscope__u64map_upsert(struct tscope__u64map *m, uint64_t key, uint32_t fresh, int *found)
{
    if ((m->count + 1) * 2 > m->mask + 1 && grow(m))
        return NULL;
    uint64_t i = tscope__mix64(key) & m->mask;
    while (m->e[i].key && m->e[i].key != key)
        i = (i + 1) & m->mask;
    *found = m->e[i].key == key;
    if (!*found) {
        m->e[i].key = key;
        m->e[i].val = fresh;
        m->count++;
    }
    return &m->e[i].val;
}

int tscope__u64map_put(struct tscope__u64map *m, uint64_t key, uint32_t val)
{
    int found;
    uint32_t *v = tscope__u64map_upsert(m, key, val, &found);
    if (!v)
        return TSCOPE_ENOMEM;
    *v = val;
    return 0;
}

int tscope__u64map_del(struct tscope__u64map *m, uint64_t key)
{
    uint64_t i = tscope__mix64(key) & m->mask;
    while (m->e[i].key != key) {
        if (m->e[i].key == 0)
            return 0;
        i = (i + 1) & m->mask;
    }
    /* Backward-shift deletion: move later members of the probe run into the
     * hole when their home slot is not in the cyclic range (hole, j]. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & m->mask; m->e[j].key; j = (j + 1) & m->mask) {
        uint64_t home = tscope__mix64(m->e[j].key) & m->mask;
        int home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_in_range) {
            m->e[hole] = m->e[j];
            hole = j;
        }
    }
    m->e[hole].key = 0;
    m->count--;
    return 1;
}
