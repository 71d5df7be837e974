/* dashboard_json.c - a strict check that a text is one JSON object (RFC
 * 8259: strings with valid escapes and UTF-8, no control characters,
 * numbers by the grammar), building nothing.
 *
 * Why not jansson on every snapshot: measured here, json_loadb and
 * json_decref take 72 us for a real 1.7 KB snapshot and 147 us for one
 * with 32 task types (4.6 KB); at 64 processes sending 10 a second that is
 * 5-9% of a core for parsing alone, above the dashboard's whole budget
 * (5%).  This check takes a few microseconds and no allocation, and is all
 * the ingest thread needs: a snapshot is kept and relayed as text, and
 * checking it keeps one bad sender from breaking the browser's JSON.parse
 * or the /api/history array; the same pass gives the top-level numbers
 * ("t", "drops") to the caller.  jansson parses a process's latest snapshot
 * only when /metrics asks (dashboard_store.c).  Nesting is limited to
 * DEPTH_MAX (recursion depth).  Thread-safe (no state).
 */
#include <stdlib.h>
#include <string.h>

#include "dashboard.h"

#define DEPTH_MAX 64

struct cur {
    const unsigned char *p, *end;
    /* the top-level members with number values go to number(ctx, ...) */
    void (*number)(void *ctx, const char *key, size_t klen, double v);
    void *ctx;
};

static void ws(struct cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* One UTF-8 sequence of 2-4 bytes at c->p (core/json_escape.h's check). */
static int utf8(struct cur *c)
{
    size_t n = tscope__utf8_len(c->p, (size_t)(c->end - c->p));
    c->p += n;
    return n ? 0 : -1;
}

static int hex(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int string(struct cur *c)
{
    c->p++; /* the opening quote */
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '"') {
            c->p++;
            return 0;
        }
        if (ch < 0x20)
            return -1;
        if (ch >= 0x80) {
            if (utf8(c))
                return -1;
            continue;
        }
        c->p++;
        if (ch != '\\')
            continue;
        if (c->p >= c->end)
            return -1;
        ch = *c->p++;
        if (ch == 'u') {
            if (c->end - c->p < 4 || !hex(c->p[0]) || !hex(c->p[1]) || !hex(c->p[2]) ||
                !hex(c->p[3]))
                return -1;
            c->p += 4;
        } else if (!ch || !strchr("\"\\/bfnrt", ch)) {
            return -1;
        }
    }
    return -1;
}

static int digits(struct cur *c)
{
    const unsigned char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > start ? 0 : -1;
}

static int number_text(struct cur *c)
{
    if (*c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (digits(c))
        return -1;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (digits(c))
            return -1;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (digits(c))
            return -1;
    }
    return 0;
}

static int word(struct cur *c, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return -1;
    c->p += n;
    return 0;
}

static int value(struct cur *c, int depth);

/* Gives a top-level member's number, the text [val, c->p), to c->number. */
static void top_number(struct cur *c, const unsigned char *key, const unsigned char *key_end,
                       const unsigned char *val)
{
    char text[64];
    size_t n = (size_t)(c->p - val);
    if (n >= sizeof text)
        return;
    memcpy(text, val, n);
    text[n] = 0;
    c->number(c->ctx, (const char *)key, (size_t)(key_end - key), strtod(text, NULL));
}

/* An object or an array at c->p, by its opening character. */
static int container(struct cur *c, int depth)
{
    unsigned char close = *c->p == '{' ? '}' : ']';
    if (depth > DEPTH_MAX)
        return -1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    for (;;) {
        const unsigned char *key = NULL, *key_end = NULL, *val;
        if (close == '}') {
            ws(c);
            key = c->p + 1;
            if (c->p >= c->end || *c->p != '"' || string(c))
                return -1;
            key_end = c->p - 1;
            ws(c);
            if (c->p >= c->end || *c->p++ != ':')
                return -1;
        }
        ws(c);
        val = c->p;
        if (value(c, depth))
            return -1;
        if (depth == 1 && key && c->number && (*val == '-' || (*val >= '0' && *val <= '9')))
            top_number(c, key, key_end, val);
        ws(c);
        if (c->p >= c->end)
            return -1;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p++ == close)
            return 0;
        return -1;
    }
}

static int value(struct cur *c, int depth)
{
    ws(c);
    if (c->p >= c->end)
        return -1;
    switch (*c->p) {
    case '{':
    case '[':
        return container(c, depth + 1);
    case '"':
        return string(c);
    case 't':
        return word(c, "true");
    case 'f':
        return word(c, "false");
    case 'n':
        return word(c, "null");
    default:
        return *c->p == '-' || (*c->p >= '0' && *c->p <= '9') ? number_text(c) : -1;
    }
}

int tscope__dash_json_object(const char *s, size_t n,
                             void (*number)(void *ctx, const char *key, size_t klen, double v),
                             void *ctx)
{
    struct cur c = {(const unsigned char *)s, (const unsigned char *)s + n, number, ctx};
    ws(&c);
    if (c.p >= c.end || *c.p != '{' || container(&c, 1))
        return -1;
    ws(&c);
    return c.p == c.end ? 0 : -1;
}
