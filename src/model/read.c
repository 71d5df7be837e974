/* read.c - tscope_mexp_read: loads a file, recognises its format and hands
 * it to the reader for it.
 *
 * Recognition (TSCOPE_MFORMAT_AUTO): a file whose first non-blank character
 * is '{' is JSON if it parses as one document (one with "callpath" or a
 * "params" object is a JSON Lines file of one line), otherwise one object
 * per line: Talpas when the first line has a ';' between fields, JSON
 * Lines otherwise.  Anything else is Extra-P's text format.
 *
 * Parameters are matched by name, not position, across the files read into
 * one experiment: the first file declares them, every later file must name
 * the same set (in any order) and its coordinates are stored in the first
 * file's order (tscope__read_params; the readers map through it).  Every
 * message is "FILE:LINE: problem" or "FILE: where: problem" and err is
 * cleared first, so a message is never empty or left from an earlier call.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

int tscope__read_fail(char *err, size_t errlen, int code, const char *path, int line,
                      const char *fmt, ...)
{
    if (!errlen)
        return code;
    int n = line > 0 ? snprintf(err, errlen, "%s:%d: ", path, line)
                     : snprintf(err, errlen, "%s: ", path);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    /* one line, whatever the input holds: jansson quotes the text near a
     * syntax error, which may contain a newline or other control bytes */
    for (char *c = err; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return code;
}

/* The whole file, NUL-terminated; NULL with a message on failure. */
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
            if (!b)
                free(buf);
            buf = b;
        }
    }
    int bad = ferror(f), why = errno;
    fclose(f);
    if (!buf || bad) {
        tscope__read_fail(err, errlen, 0, path, 0, "byte %zu: %s", n,
                          buf ? strerror(why) : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (strlen(buf) != n) {
        tscope__read_fail(err, errlen, 0, path, 0,
                          "byte %zu: a NUL byte: expected text (a model input, not binary data)",
                          strlen(buf));
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- parameters: matched by name across files --------------------------- */

/* Appends "a, b" (names[i] for which keep[i]) to buf; names cut at 100 bytes. */
static void append_names(char *buf, size_t len, const char *const *names, size_t n, const int *keep)
{
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (keep && !keep[i])
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%.100s", first ? "" : ", ", names[i]);
        first = 0;
    }
}

/* The index of name in e's parameters, or -1. */
static int param_index(const tscope_mexp_t *e, const char *name)
{
    for (unsigned p = 0; p < e->nparams; p++)
        if (strcmp(e->params[p], name) == 0)
            return (int)p;
    return -1;
}

/* Empty or repeated names, and too many: what no file may have. */
static int check_names(const char *path, int line, const char *at, const char *const *names,
                       size_t n, char *err, size_t errlen)
{
    size_t checked = n < TSCOPE_MODEL_MAX_PARAMS + 1 ? n : TSCOPE_MODEL_MAX_PARAMS + 1;
    for (size_t i = 0; i < checked; i++) {
        if (!names[i][0])
            return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                                     "%sparameter %zu has an empty name (expected a name)", at,
                                     i + 1);
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return tscope__read_fail(
                    err, errlen, TSCOPE_EFORMAT, path, line,
                    "%sparameter '%.100s' is named twice (parameters %zu and %zu; expected "
                    "distinct names)",
                    at, names[i], j + 1, i + 1);
    }
    if (n > TSCOPE_MODEL_MAX_PARAMS)
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                                 "%stoo many parameters: %zu (at most %d)", at, n,
                                 TSCOPE_MODEL_MAX_PARAMS);
    if (!n)
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                                 "%sno parameters (expected at least one name)", at);
    return 0;
}

/* The first file: its names become e's parameters, in its order. */
static int declare(tscope_mexp_t *e, const char *path, int line, const char *const *names, size_t n,
                   unsigned *map, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        int idx = tscope_mexp_param(e, names[i]);
        if (idx < 0)
            return tscope__read_fail(err, errlen, TSCOPE_ENOMEM, path, line, "out of memory");
        map[i] = (unsigned)idx;
    }
    free(e->params_file);
    if (!(e->params_file = strdup(path)))
        return tscope__read_fail(err, errlen, TSCOPE_ENOMEM, path, line, "out of memory");
    return 0;
}

/* A later file whose names are not e's: both lists and the difference. */
static int differ(const tscope_mexp_t *e, const char *path, int line, const char *at,
                  const char *const *names, size_t n, char *err, size_t errlen)
{
    int only_here[TSCOPE_MODEL_MAX_PARAMS], only_there[TSCOPE_MODEL_MAX_PARAMS];
    for (size_t i = 0; i < n; i++)
        only_here[i] = param_index(e, names[i]) < 0;
    for (unsigned p = 0; p < e->nparams; p++) {
        only_there[p] = 1;
        for (size_t i = 0; i < n; i++)
            if (strcmp(e->params[p], names[i]) == 0)
                only_there[p] = 0;
    }
    const char *other = e->params_file ? e->params_file : "the experiment";
    const char *const *theirs = (const char *const *)e->params;
    char here[600] = "", there[600] = "", diff_here[600] = "", diff_there[600] = "";
    append_names(here, sizeof here, names, n, NULL);
    append_names(there, sizeof there, theirs, e->nparams, NULL);
    append_names(diff_here, sizeof diff_here, names, n, only_here);
    append_names(diff_there, sizeof diff_there, theirs, e->nparams, only_there);
    return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                             "%s(%s) differ from those of %s (%s): only here: %s; only in %s: %s "
                             "(expected the same parameter names in every file)",
                             at[0] ? at : "parameters ", here, other, there,
                             diff_here[0] ? diff_here : "none", other,
                             diff_there[0] ? diff_there : "none");
}

int tscope__params_map(const tscope_mexp_t *e, const char *const *names, size_t n, unsigned *map)
{
    if (n != e->nparams)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int idx = param_index(e, names[i]);
        if (idx < 0)
            return -1;
        map[i] = (unsigned)idx;
    }
    return 0;
}

int tscope__read_params(tscope_mexp_t *e, const char *path, int line, const char *where,
                        const char *const *names, size_t n, unsigned *map, char *err, size_t errlen)
{
    char at[128] = "";
    if (where)
        snprintf(at, sizeof at, "%s: ", where);
    int rc = check_names(path, line, at, names, n, err, errlen);
    if (rc)
        return rc;
    if (!e->nparams)
        return declare(e, path, line, names, n, map, err, errlen);
    if (tscope__params_map(e, names, n, map))
        return differ(e, path, line, at, names, n, err, errlen);
    return 0;
}

/* ---- recognition and dispatch ------------------------------------------- */

/* All repetitions of all points: what a file must add to. */
static size_t count_values(const tscope_mexp_t *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nseries; i++)
        for (size_t k = 0; k < e->series[i].npoints; k++)
            n += e->series[i].points[k].nvalues;
    return n;
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
    if (errlen)
        err[0] = 0; /* never a message left from an earlier call */
    char *text = load(path, err, errlen);
    if (!text)
        return TSCOPE_EIO;
    size_t values_before = count_values(e);
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
        rc =
            tscope__read_fail(err, errlen, TSCOPE_EINVAL, path, 0,
                              "unknown input format %d (expected a tscope_mformat_t)", (int)format);
    }
    free(text);
    if (!rc && count_values(e) == values_before)
        rc = tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                               "no measurements found (expected at least one)");
    if (rc && errlen && !err[0]) /* a reader that failed without a message */
        tscope__read_fail(err, errlen, rc, path, 0, "%s",
                          rc == TSCOPE_ENOMEM ? "out of memory" : "cannot be read");
    tscope_mexp_finish(e);
    return rc;
}
