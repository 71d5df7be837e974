/* text.c - the growable text buffer of text.h. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_escape.h"

static int reserve(struct tscope__text *t, size_t more)
{
    if (t->failed)
        return -1;
    if (t->len + more + 1 <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
        t->failed = 1;
        return -1;
    }
    t->p = p;
    t->cap = cap;
    return 0;
}

void tscope__text_add(struct tscope__text *t, const char *s, size_t n)
{
    if (reserve(t, n))
        return;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = 0;
}

void tscope__text_str(struct tscope__text *t, const char *s)
{
    tscope__text_add(t, s, strlen(s));
}

void tscope__text_vprintf(struct tscope__text *t, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0)
        t->failed = 1;
    else if ((size_t)n < sizeof small)
        tscope__text_add(t, small, (size_t)n);
    else if (!reserve(t, (size_t)n)) {
        vsnprintf(t->p + t->len, (size_t)n + 1, fmt, again);
        t->len += (size_t)n;
    }
    va_end(again);
}

void tscope__text_printf(struct tscope__text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tscope__text_vprintf(t, fmt, ap);
    va_end(ap);
}

void tscope__text_json_str(struct tscope__text *t, const char *s)
{
    if (reserve(t, strlen(s) * 6 + 2))
        return;
    char *p = t->p + t->len, buf[8];
    *p++ = '"';
    size_t n;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += n) {
        const char *e = tscope__json_escape(c, buf, &n);
        if (!e) {
            memcpy(p, c, n);
            p += n;
            continue;
        }
        size_t m = strlen(e);
        memcpy(p, e, m);
        p += m;
    }
    *p++ = '"';
    *p = 0;
    t->len = (size_t)(p - t->p);
}

void tscope__text_free(struct tscope__text *t)
{
    free(t->p);
    *t = (struct tscope__text){0};
}
