/* grow.h - the one way the store grows its arrays: doubling, new entries
 * zeroed, the array left as it was when memory runs out. */
#ifndef TSCOPE_PROFILE_GROW_H
#define TSCOPE_PROFILE_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The items an array of cap items grows to so that index `need` is valid:
 * doubling, at least 16; 0 past 32 bits. */
static inline uint64_t tscope__grow_count(uint32_t cap, uint64_t need)
{
    uint64_t n = (uint64_t)cap * 2;
    if (n < need + 1)
        n = need + 1;
    if (n < 16)
        n = 16;
    return n > UINT32_MAX ? 0 : n;
}

/* Makes index `need` valid in *arr (an array of *cap items of elem bytes),
 * zeroing the new entries when `zero` is set.  Returns 0, or -1 with *arr
 * and *cap unchanged. */
static inline int tscope__grow_array(void *arr, uint32_t *cap, uint64_t need, size_t elem, int zero)
{
    if (need < *cap)
        return 0;
    uint64_t n = tscope__grow_count(*cap, need);
    if (!n)
        return -1;
    void **p = (void **)arr;
    char *a = realloc(*p, (size_t)n * elem);
    if (!a)
        return -1;
    if (zero)
        memset(a + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *p = a;
    *cap = (uint32_t)n;
    return 0;
}

/* The usual growth: new entries zeroed. */
static inline int tscope__grow(void *arr, uint32_t *cap, uint64_t need, size_t elem)
{
    return tscope__grow_array(arr, cap, need, elem, 1);
}

/* For append-only arrays whose entries are written whole (the instance
 * graph): zeroing megabytes only to overwrite them costs a second pass over
 * fresh pages. */
static inline int tscope__grow_uninit(void *arr, uint32_t *cap, uint64_t need, size_t elem)
{
    return tscope__grow_array(arr, cap, need, elem, 0);
}

#endif
