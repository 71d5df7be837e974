/* proto.c - the live protocol's frames and the flat JSON reader that the
 * process uses for commands (proto.h). */
#include "proto.h"

#include <stdlib.h>
#include <string.h>

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static unsigned get16(const unsigned char *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int tscope__live_header(unsigned char *hdr, unsigned kind, size_t len)
{
    if (len > TSCOPE__LIVE_FRAME_MAX)
        return -1;
    memcpy(hdr, TSCOPE__LIVE_MAGIC, 4);
    put16(hdr + 4, TSCOPE__LIVE_VERSION);
    put16(hdr + 6, kind);
    put32(hdr + 8, (uint32_t)len);
    memset(hdr + 12, 0, 8);
    return 0;
}

enum tscope__live_parse tscope__live_parse(const unsigned char *buf, size_t n,
                                           struct tscope__live_frame *f, size_t *used)
{
    *used = 0;
    /* a wrong magic shows in its first bytes already */
    if (memcmp(buf, TSCOPE__LIVE_MAGIC, n < 4 ? n : 4) != 0)
        return TSCOPE__LIVE_BAD_MAGIC;
    if (n < TSCOPE__LIVE_HEADER)
        return TSCOPE__LIVE_MORE;
    f->version = get16(buf + 4);
    f->kind = get16(buf + 6);
    f->len = get32(buf + 8);
    f->seq = (uint64_t)get32(buf + 12) | (uint64_t)get32(buf + 16) << 32;
    if (f->version != TSCOPE__LIVE_VERSION)
        return TSCOPE__LIVE_BAD_VERSION;
    if (f->len > TSCOPE__LIVE_FRAME_MAX)
        return TSCOPE__LIVE_TOO_LARGE;
    if (n < TSCOPE__LIVE_FRAME_BYTES(f->len))
        return TSCOPE__LIVE_MORE;
    f->payload = (const char *)buf + TSCOPE__LIVE_HEADER;
    f->mac = buf + TSCOPE__LIVE_HEADER + f->len;
    *used = TSCOPE__LIVE_FRAME_BYTES(f->len);
    return f->kind >= 1 && f->kind <= TSCOPE__LIVE_KIND_MAX ? TSCOPE__LIVE_OK : TSCOPE__LIVE_SKIP;
}

const char *tscope__live_parse_text(enum tscope__live_parse r)
{
    switch (r) {
    case TSCOPE__LIVE_BAD_MAGIC:
        return "not a taskscope live stream (no TSLV frame header)";
    case TSCOPE__LIVE_BAD_VERSION:
        return "a live protocol version this taskscope does not speak";
    case TSCOPE__LIVE_TOO_LARGE:
        return "a frame larger than 1 MiB";
    default:
        return "no error";
    }
}

/* ---- the flat JSON reader ---- */

struct cursor {
    const char *p, *end;
};

static void skip_ws(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* A string at c->p (at its quote): raw contents in [*s, *s + *n). */
static int string(struct cursor *c, const char **s, size_t *n)
{
    if (c->p >= c->end || *c->p != '"')
        return -1;
    const char *start = ++c->p;
    while (c->p < c->end && *c->p != '"') {
        if ((unsigned char)*c->p < 0x20)
            return -1;
        if (*c->p == '\\' && ++c->p >= c->end)
            return -1;
        c->p++;
    }
    if (c->p >= c->end)
        return -1;
    *s = start;
    *n = (size_t)(c->p - start);
    c->p++;
    return 0;
}

/* An object or array at c->p, skipped whole (strings inside respected). */
static int skip_nested(struct cursor *c)
{
    int depth = 0;
    do {
        if (c->p >= c->end)
            return -1;
        char ch = *c->p;
        if (ch == '"') {
            const char *s;
            size_t n;
            if (string(c, &s, &n))
                return -1;
            continue;
        }
        if (ch == '{' || ch == '[') {
            if (++depth > 64)
                return -1;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
        c->p++;
    } while (depth > 0);
    return 0;
}

static int literal(struct cursor *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return -1;
    c->p += n;
    return 0;
}

static int number(struct cursor *c, double *v)
{
    char buf[64];
    size_t n = 0;
    while (c->p + n < c->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", c->p[n]) && c->p[n])
        n++;
    if (n == 0 || n == sizeof buf - 1)
        return -1;
    memcpy(buf, c->p, n);
    buf[n] = 0;
    char *stop;
    *v = strtod(buf, &stop);
    if (stop != buf + n)
        return -1;
    c->p += n;
    return 0;
}

int tscope__live_json_fields(const char *s, size_t n,
                             void (*field)(void *ctx, const char *key, size_t klen, int kind,
                                           const char *str, size_t slen, double num),
                             void *ctx)
{
    struct cursor c = {s, s + n};
    skip_ws(&c);
    if (c.p >= c.end || *c.p != '{')
        return -1;
    c.p++;
    skip_ws(&c);
    if (c.p < c.end && *c.p == '}') {
        c.p++;
    } else {
        for (;;) {
            const char *key, *str = NULL;
            size_t klen, slen = 0;
            double num = 0;
            int kind;
            skip_ws(&c);
            if (string(&c, &key, &klen))
                return -1;
            skip_ws(&c);
            if (c.p >= c.end || *c.p++ != ':')
                return -1;
            skip_ws(&c);
            if (c.p >= c.end)
                return -1;
            if (*c.p == '"') {
                kind = 's';
                if (string(&c, &str, &slen))
                    return -1;
            } else if (*c.p == '{' || *c.p == '[') {
                kind = 'o';
                if (skip_nested(&c))
                    return -1;
            } else if (*c.p == 't' || *c.p == 'f') {
                kind = 'b';
                num = *c.p == 't';
                if (literal(&c, num ? "true" : "false"))
                    return -1;
            } else if (*c.p == 'n') {
                kind = 'z';
                if (literal(&c, "null"))
                    return -1;
            } else {
                kind = 'n';
                if (number(&c, &num))
                    return -1;
            }
            field(ctx, key, klen, kind, str, slen, num);
            skip_ws(&c);
            if (c.p < c.end && *c.p == ',') {
                c.p++;
                continue;
            }
            if (c.p < c.end && *c.p == '}') {
                c.p++;
                break;
            }
            return -1;
        }
    }
    skip_ws(&c);
    return c.p == c.end ? 0 : -1;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                     : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                     : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                              : 16u;
        if (d > 15)
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

int tscope__live_unescape(const char *raw, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    if (cap == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char ch = raw[i];
        unsigned char utf[4];
        size_t k = 1;
        utf[0] = (unsigned char)ch;
        if (ch == '\\') {
            if (++i >= n)
                return -1;
            switch (raw[i]) {
            case '"':
            case '\\':
            case '/':
                utf[0] = (unsigned char)raw[i];
                break;
            case 'b':
                utf[0] = '\b';
                break;
            case 'f':
                utf[0] = '\f';
                break;
            case 'n':
                utf[0] = '\n';
                break;
            case 'r':
                utf[0] = '\r';
                break;
            case 't':
                utf[0] = '\t';
                break;
            case 'u': {
                unsigned u;
                if (n - i < 5 || hex4(raw + i + 1, &u))
                    return -1;
                i += 4;
                if (u >= 0xD800 && u <= 0xDFFF)
                    return -1; /* surrogates: not in commands */
                if (u < 0x80) {
                    utf[0] = (unsigned char)u;
                } else if (u < 0x800) {
                    utf[0] = (unsigned char)(0xC0 | u >> 6);
                    utf[1] = (unsigned char)(0x80 | (u & 0x3F));
                    k = 2;
                } else {
                    utf[0] = (unsigned char)(0xE0 | u >> 12);
                    utf[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
                    utf[2] = (unsigned char)(0x80 | (u & 0x3F));
                    k = 3;
                }
                break;
            }
            default:
                return -1;
            }
        }
        if (o + k >= cap)
            return -1;
        memcpy(out + o, utf, k);
        o += k;
    }
    out[o] = 0;
    return (int)o;
}
