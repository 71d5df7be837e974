/* json_escape.h - how a byte is written inside a JSON string, in one place
 * for every writer that escapes (profile.json and the other exporters, DOT
 * labels, Chrome traces, the live stream, the CLI's JSON): a quote and a
 * backslash get a backslash, newline and tab their short forms, the other
 * control characters \u00XX; every other byte is written as it is. */
#ifndef TSCOPE_CORE_JSON_ESCAPE_H
#define TSCOPE_CORE_JSON_ESCAPE_H

/* The escape of byte c (buf: room for 7 bytes), or NULL when c is written
 * as it is. */
static inline const char *tscope__json_escape(unsigned char c, char *buf)
{
    static const char hex[] = "0123456789abcdef";
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
        if (c >= 0x20)
            return NULL;
        buf[0] = '\\', buf[1] = 'u', buf[2] = '0', buf[3] = '0';
        buf[4] = hex[c >> 4], buf[5] = hex[c & 15], buf[6] = 0;
        return buf;
    }
}

#endif
