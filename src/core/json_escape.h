/* json_escape.h - how a string is written inside a JSON string, in one
 * place for every writer that escapes (profile.json and the other
 * exporters, DOT labels, Chrome traces, the live stream, the CLI's JSON):
 * a quote and a backslash get a backslash, newline and tab their short
 * forms, the other control characters \u00XX; a valid UTF-8 sequence is
 * written as it is.  A byte that is not part of one (names are bytes: a
 * Latin-1 name, a name cut inside a character) is written \uefXX, XX its
 * value: U+EF80..U+EFFF, private-use code points, so that every output is
 * valid JSON and two names that differ stay different when read back
 * (docs/output-formats.md). */
#ifndef TSCOPE_CORE_JSON_ESCAPE_H
#define TSCOPE_CORE_JSON_ESCAPE_H

#include <stddef.h>
#include <stdint.h>

/* The length of the valid UTF-8 sequence of two to four bytes at s (RFC
 * 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or 0;
 * at most avail bytes are read (a NUL-terminated string may pass
 * SIZE_MAX: a NUL ends a sequence as any other bad byte).  The escape
 * below and the dashboard's JSON check (cli/dashboard_json.c) use it. */
static inline size_t tscope__utf8_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (avail < 2 || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (i >= avail || s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* The escape of the character that starts at s (s[0] != 0; buf: room for
 * 7 bytes), or NULL when it is written as it is; *len: the bytes of s it
 * stands for. */
static inline const char *tscope__json_escape(const unsigned char *s, char *buf, size_t *len)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char c = s[0];
    *len = 1;
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\n':
        return "\\n";
    case '\t':
        return "\\t";
    default:
        if (c >= 0x20 && c < 0x80)
            return NULL;
        if (c >= 0x80 && (*len = tscope__utf8_len(s, SIZE_MAX)) != 0)
            return NULL;
        *len = 1;
        buf[0] = '\\', buf[1] = 'u';
        buf[2] = c < 0x80 ? '0' : 'e', buf[3] = c < 0x80 ? '0' : 'f';
        buf[4] = hex[c >> 4], buf[5] = hex[c & 15], buf[6] = 0;
        return buf;
    }
}

#endif
