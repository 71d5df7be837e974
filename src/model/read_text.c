/* read_text.c - Extra-P's text input format.
 *
 *   # comment
 *   PARAMETER x            (one per line, or several names on one line)
 *   POINTS ( 20 ) ( 30 )   or POINTS 20 30, or one POINTS line per point;
 *                          a point of several parameters is "( 20 1 )"
 *   REGION name            call path (parts joined by "->")
 *   METRIC name            optional, "time" until given
 *   DATA v1 v2 ..          one line per point, in POINTS order: repetitions
 *
 * DATA lines count from the last REGION or METRIC line.  Every problem is
 * reported as "FILE:LINE: problem".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

struct text_state {
    const char *path;
    tscope_mexp_t *e;
    double (*points)[TSCOPE_MODEL_MAX_PARAMS];
    size_t npoints, cap;
    char region[1024], metric[256];
    size_t data_index; /* next point for DATA */
    double *values;
    size_t cap_values;
};

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static int add_point(struct text_state *st, const double *c)
{
    if (st->npoints == st->cap) {
        size_t n = st->cap ? st->cap * 2 : 16;
        void *p = realloc(st->points, n * sizeof *st->points);
        if (!p)
            return TSCOPE_ENOMEM;
        st->points = p;
        st->cap = n;
    }
    memcpy(st->points[st->npoints++], c, sizeof *st->points);
    return 0;
}

/* The numbers of a POINTS line. */
static int parse_points(struct text_state *st, char *s, char *err, size_t errlen, int line)
{
    unsigned np = st->e->nparams;
    if (!np) {
        snprintf(err, errlen, "%s:%d: POINTS before any PARAMETER", st->path, line);
        return TSCOPE_EFORMAT;
    }
    double c[TSCOPE_MODEL_MAX_PARAMS] = {0};
    unsigned k = 0;
    int in_paren = 0;
    while (*s) {
        if (isspace((unsigned char)*s)) {
            s++;
        } else if (*s == '(') {
            if (in_paren)
                goto bad;
            in_paren = 1;
            k = 0;
            s++;
        } else if (*s == ')') {
            if (!in_paren || k != np)
                goto bad;
            in_paren = 0;
            k = 0;
            if (add_point(st, c))
                return TSCOPE_ENOMEM;
            s++;
        } else {
            char *end;
            double v = strtod(s, &end);
            if (end == s || k >= np)
                goto bad;
            c[k++] = v;
            s = end;
            if (!in_paren && k == np) { /* "POINTS 20 30": bare coordinates */
                if (add_point(st, c))
                    return TSCOPE_ENOMEM;
                k = 0;
            }
        }
    }
    if (in_paren || k != 0)
        goto bad;
    return 0;
bad:
    snprintf(err, errlen, "%s:%d: malformed POINTS (expected %u coordinate%s per point)", st->path,
             line, np, np == 1 ? "" : "s");
    return TSCOPE_EFORMAT;
}

static int parse_data(struct text_state *st, char *s, char *err, size_t errlen, int line)
{
    if (!st->region[0]) {
        snprintf(err, errlen, "%s:%d: DATA before any REGION", st->path, line);
        return TSCOPE_EFORMAT;
    }
    if (st->data_index >= st->npoints) {
        snprintf(err, errlen, "%s:%d: more DATA lines than POINTS (%zu)", st->path, line,
                 st->npoints);
        return TSCOPE_EFORMAT;
    }
    size_t n = 0;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s) {
            snprintf(err, errlen, "%s:%d: DATA: '%.20s' is not a number", st->path, line, s);
            return TSCOPE_EFORMAT;
        }
        if (n == st->cap_values) {
            size_t c = st->cap_values ? st->cap_values * 2 : 16;
            double *p = realloc(st->values, c * sizeof *p);
            if (!p)
                return TSCOPE_ENOMEM;
            st->values = p;
            st->cap_values = c;
        }
        st->values[n++] = v;
        s = end;
        while (isspace((unsigned char)*s))
            s++;
    }
    if (!n) {
        snprintf(err, errlen, "%s:%d: DATA without values", st->path, line);
        return TSCOPE_EFORMAT;
    }
    return tscope_mexp_add(st->e, st->region, st->metric, st->points[st->data_index++], st->values,
                           n);
}

int tscope__read_text(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen)
{
    struct text_state st = {.path = path, .e = e};
    snprintf(st.metric, sizeof st.metric, "time");
    int rc = 0, line = 0;
    for (char *next, *l = text; l && !rc; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = 0;
        line++;
        char *s = trim(l);
        if (!*s || *s == '#')
            continue;
        char *kw = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = 0;
        s = trim(s);
        if (strcmp(kw, "PARAMETER") == 0) {
            char *save = NULL;
            for (char *tok = strtok_r(s, " \t", &save); tok && !rc;
                 tok = strtok_r(NULL, " \t", &save))
                if (tscope_mexp_param(e, tok) < 0) {
                    snprintf(err, errlen, "%s:%d: too many parameters (at most %d)", path, line,
                             TSCOPE_MODEL_MAX_PARAMS);
                    rc = TSCOPE_EFORMAT;
                }
            if (!rc && !*s) {
                snprintf(err, errlen, "%s:%d: PARAMETER without a name", path, line);
                rc = TSCOPE_EFORMAT;
            }
        } else if (strcmp(kw, "POINTS") == 0) {
            rc = parse_points(&st, s, err, errlen, line);
        } else if (strcmp(kw, "REGION") == 0 || strcmp(kw, "METRIC") == 0) {
            int region = kw[0] == 'R';
            if (!*s) {
                snprintf(err, errlen, "%s:%d: %s without a name", path, line, kw);
                rc = TSCOPE_EFORMAT;
            } else if (region) {
                snprintf(st.region, sizeof st.region, "%s", s);
            } else {
                snprintf(st.metric, sizeof st.metric, "%s", s);
            }
            st.data_index = 0;
        } else if (strcmp(kw, "DATA") == 0) {
            rc = parse_data(&st, s, err, errlen, line);
        } else {
            snprintf(err, errlen, "%s:%d: unknown keyword '%.40s'", path, line, kw);
            rc = TSCOPE_EFORMAT;
        }
    }
    if (!rc && e->nseries == 0) {
        snprintf(err, errlen, "%s: no DATA found", path);
        rc = TSCOPE_EFORMAT;
    }
    free(st.points);
    free(st.values);
    return rc;
}
