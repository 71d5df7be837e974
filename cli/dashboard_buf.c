/* dashboard_buf.c - the growable text the dashboard writes its answers into
 * (/metrics, /api/history).  A failed allocation is sticky (failed), so a
 * writer appends without checking each step and looks once at the end.
 * Not thread-safe: one writer per buffer.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard.h"

static int reserve(struct tscope__dash_buf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (b->len + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void tscope__dash_buf_add(struct tscope__dash_buf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void tscope__dash_buf_str(struct tscope__dash_buf *b, const char *s)
{
    tscope__dash_buf_add(b, s, strlen(s));
}

void tscope__dash_buf_printf(struct tscope__dash_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        tscope__dash_buf_add(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tscope__dash_buf_double(struct tscope__dash_buf *b, double v)
{
    if (isnan(v)) {
        tscope__dash_buf_str(b, "NaN");
        return;
    }
    if (isinf(v)) {
        tscope__dash_buf_str(b, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char text[40];
    snprintf(text, sizeof text, "%.15g", v);
    if (strtod(text, NULL) != v)
        snprintf(text, sizeof text, "%.17g", v);
    tscope__dash_buf_str(b, text);
}

void tscope__dash_buf_free(struct tscope__dash_buf *b)
{
    free(b->p);
    *b = (struct tscope__dash_buf){0};
}
