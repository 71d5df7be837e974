/* put.h - text into a buffer the caller made room in, for the trace
 * writers that format records by hand (chrome.c, paraver.c): each returns
 * the position after what it wrote, no terminating NUL. */
#ifndef TSCOPE_TRACE_PUT_H
#define TSCOPE_TRACE_PUT_H

#include <stdint.h>
#include <string.h>

static inline char *tscope__put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* v in decimal (at most 20 bytes). */
static inline char *tscope__put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

#endif
