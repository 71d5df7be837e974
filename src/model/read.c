/* read.c - tscope_mexp_read: loads a file, recognises its format and hands
 * it to the reader for it.
 *
 * Recognition (TSCOPE_MFORMAT_AUTO): a file whose first non-blank character
 * is '{' is JSON if it parses as one document, otherwise one object per
 * line: Talpas when the first line has a ';' between fields, JSON Lines
 * otherwise.  Anything else is Extra-P's text format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

static char *load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) {
                free(buf);
                buf = NULL;
            }
            buf = b;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        snprintf(err, errlen, "%s: binary data (a NUL byte): not a model input", path);
        free(buf);
        return NULL;
    }
    return buf;
}

static int first_line_is_talpas(const char *s)
{
    int in_str = 0;
    for (; *s && *s != '\n'; s++) {
        if (*s == '"' && s[-1] != '\\')
            in_str = !in_str;
        else if (*s == ';' && !in_str)
            return 1;
    }
    return 0;
}

int tscope_mexp_read(tscope_mexp_t *e, const char *path, tscope_mformat_t format, char *err,
                     size_t errlen)
{
    char *text = load(path, err, errlen);
    if (!text)
        return TSCOPE_EIO;
    unsigned nparams_before = e->nparams;
    size_t nseries_before = e->nseries;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    int rc;
    if (format == TSCOPE_MFORMAT_AUTO) {
        if (*p == '{' && first_line_is_talpas(p))
            format = TSCOPE_MFORMAT_TALPAS;
        else if (*p == '{' || *p == '[')
            format = TSCOPE_MFORMAT_JSON; /* falls back to JSON Lines below */
        else
            format = TSCOPE_MFORMAT_TEXT;
    }
    switch (format) {
    case TSCOPE_MFORMAT_TEXT:
        rc = tscope__read_text(e, path, text, err, errlen);
        break;
    case TSCOPE_MFORMAT_JSON:
        rc = tscope__read_json(e, path, text, err, errlen);
        if (rc == TSCOPE_EFORMAT && strchr(p, '\n') && strstr(err, "not one JSON document")) {
            rc = tscope__read_lines(e, path, text, 0, err, errlen); /* several documents */
        }
        break;
    case TSCOPE_MFORMAT_JSONL:
        rc = tscope__read_lines(e, path, text, 0, err, errlen);
        break;
    case TSCOPE_MFORMAT_TALPAS:
        rc = tscope__read_lines(e, path, text, 1, err, errlen);
        break;
    default:
        snprintf(err, errlen, "%s: unknown input format", path);
        rc = TSCOPE_EINVAL;
    }
    free(text);
    if (!rc && nparams_before && e->nparams != nparams_before) {
        snprintf(err, errlen, "%s: its parameters differ from those of the files before it", path);
        rc = TSCOPE_EFORMAT;
    }
    if (!rc && e->nseries == nseries_before && e->nseries == 0) {
        snprintf(err, errlen, "%s: no measurements found", path);
        rc = TSCOPE_EFORMAT;
    }
    tscope_mexp_finish(e);
    return rc;
}
