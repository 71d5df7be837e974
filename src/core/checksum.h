/* checksum.h - checksums of what outlives the process (the crash journal's
 * states, the mapping's header and names): FNV-1a, over bytes for the
 * small parts and over 64-bit words for a whole state, which is read back
 * at memory speed (about 1 ns per word).  They catch damage (a flipped
 * byte, a torn write, garbage), not malice.
 */
#ifndef TSCOPE_CORE_CHECKSUM_H
#define TSCOPE_CORE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TSCOPE__SUM32_START 2166136261u
#define TSCOPE__SUM64_START 14695981039346656037ull

/* 32-bit FNV-1a of n bytes, continued from h. */
static inline uint32_t tscope__sum32(uint32_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* FNV-1a over 64-bit words (the tail bytes one by one), continued from h:
 * the sum of a long stream fed in pieces whose sizes are multiples of 8. */
static inline uint64_t tscope__sum64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
