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
 * DATA lines count from the last REGION or METRIC line.  Every PARAMETER
 * line comes before the first POINTS line; there the names are matched
 * with the experiment's (tscope__read_params: by name, so the coordinates
 * of a file that lists the parameters in another order land in the right
 * place).  Coordinates and values must be finite numbers.  REGION and
 * METRIC names point into the file's text, so any length is kept whole.
 * Every problem is reported as "FILE:LINE: problem (what was expected)".
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

struct text_state {
    const char *path;
    tscope_mexp_t *e;
    char *err;
    size_t errlen;
    int line;
    const char *names[TSCOPE_MODEL_MAX_PARAMS]; /* PARAMETER names, in the file's order */
    unsigned nnames;
    int names_line;                        /* the last PARAMETER line */
    int matched;                           /* names matched with e's (at the first POINTS) */
    unsigned map[TSCOPE_MODEL_MAX_PARAMS]; /* file's position -> e's index */
    double (*points)[TSCOPE_MODEL_MAX_PARAMS];
    size_t npoints, cap;
    const char *region, *metric; /* into the text */
    size_t data_index;           /* next point for DATA */
    size_t ndata;                /* DATA lines read */
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

/* "FILE:LINE: what" for the current line; returns code. */
#define FAIL(st, code, ...)                                                                        \
    tscope__read_fail((st)->err, (st)->errlen, code, (st)->path, (st)->line, __VA_ARGS__)

/* Length of the token at s (up to white space), for messages. */
static int token_len(const char *s)
{
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && s[n] != '(' && s[n] != ')')
        n++;
    return n > 40 ? 40 : (int)n;
}

/* One number at s: 0 (v, *end set), -1 (not a number) or 1 (not finite). */
static int number(const char *s, char **end, double *v)
{
    *v = strtod(s, end);
    if (*end == s)
        return -1;
    return isfinite(*v) ? 0 : 1;
}

/* A PARAMETER line: its names join the file's list. */
static int parse_parameter(struct text_state *st, char *s)
{
    if (st->matched)
        return FAIL(st, TSCOPE_EFORMAT,
                    "PARAMETER after POINTS (expected every PARAMETER before the first POINTS)");
    if (!*s)
        return FAIL(st, TSCOPE_EFORMAT, "PARAMETER without a name (expected PARAMETER NAME..)");
    char *save = NULL;
    for (char *tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        for (unsigned k = 0; k < st->nnames; k++)
            if (strcmp(st->names[k], tok) == 0)
                return FAIL(st, TSCOPE_EFORMAT,
                            "parameter '%.100s' declared twice (expected distinct names)", tok);
        if (st->nnames == TSCOPE_MODEL_MAX_PARAMS)
            return FAIL(st, TSCOPE_EFORMAT, "too many parameters: '%.100s' (at most %d)", tok,
                        TSCOPE_MODEL_MAX_PARAMS);
        st->names[st->nnames++] = tok;
    }
    st->names_line = st->line;
    return 0;
}

static int add_point(struct text_state *st, const double *c)
{
    if (st->npoints == st->cap) {
        size_t n = st->cap ? st->cap * 2 : 16;
        void *p = realloc(st->points, n * sizeof *st->points);
        if (!p)
            return FAIL(st, TSCOPE_ENOMEM, "out of memory");
        st->points = p;
        st->cap = n;
    }
    memcpy(st->points[st->npoints++], c, sizeof *st->points);
    return 0;
}

/* At the first POINTS line: the file's parameter names against e's. */
static int match_parameters(struct text_state *st)
{
    if (!st->nnames)
        return FAIL(st, TSCOPE_EFORMAT,
                    "POINTS before any PARAMETER (expected the PARAMETER lines first)");
    int rc = tscope__read_params(st->e, st->path, st->names_line, NULL, st->names, st->nnames,
                                 st->map, st->err, st->errlen);
    st->matched = !rc;
    return rc;
}

/* The numbers of a POINTS line; coordinate k goes to e's parameter map[k]. */
static int parse_points(struct text_state *st, char *s)
{
    int rc = st->matched ? 0 : match_parameters(st);
    if (rc)
        return rc;
    unsigned np = st->nnames;
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
            if ((rc = add_point(st, c)))
                return rc;
            s++;
        } else {
            char *end;
            double v;
            int why = number(s, &end, &v);
            if (why > 0)
                return FAIL(st, TSCOPE_EFORMAT,
                            "POINTS: '%.*s' is not a finite number (expected finite coordinates)",
                            token_len(s), s);
            if (why < 0 || k >= np)
                goto bad;
            c[st->map[k++]] = v;
            s = end;
            if (!in_paren && k == np) { /* "POINTS 20 30": bare coordinates */
                if ((rc = add_point(st, c)))
                    return rc;
                k = 0;
            }
        }
    }
    if (in_paren || k != 0)
        goto bad;
    return 0;
bad:
    return FAIL(st, TSCOPE_EFORMAT, "malformed POINTS (expected %u coordinate%s per point)", np,
                np == 1 ? "" : "s");
}

/* The values of a DATA line into st->values; their number, or a negative error. */
static long parse_values(struct text_state *st, char *s)
{
    size_t n = 0;
    while (*s) {
        char *end;
        double v;
        int why = number(s, &end, &v);
        if (why < 0)
            return FAIL(st, TSCOPE_EFORMAT, "DATA: '%.*s' is not a number", token_len(s), s);
        if (why > 0)
            return FAIL(st, TSCOPE_EFORMAT,
                        "DATA: '%.*s' is not a finite number (expected finite measurements)",
                        token_len(s), s);
        if (n == st->cap_values) {
            size_t c = st->cap_values ? st->cap_values * 2 : 16;
            double *p = realloc(st->values, c * sizeof *p);
            if (!p)
                return FAIL(st, TSCOPE_ENOMEM, "out of memory");
            st->values = p;
            st->cap_values = c;
        }
        st->values[n++] = v;
        s = end;
        while (isspace((unsigned char)*s))
            s++;
    }
    return (long)n;
}

/* A DATA line: the repetitions at the next point of the current region. */
static int parse_data(struct text_state *st, char *s)
{
    if (!st->region)
        return FAIL(st, TSCOPE_EFORMAT, "DATA before any REGION (expected a REGION line first)");
    if (!st->npoints)
        return FAIL(st, TSCOPE_EFORMAT, "DATA before any POINTS (expected a POINTS line first)");
    if (st->data_index >= st->npoints)
        return FAIL(st, TSCOPE_EFORMAT,
                    "more DATA lines than POINTS (%zu; expected one DATA line per point)",
                    st->npoints);
    long n = parse_values(st, s);
    if (n < 0)
        return (int)n;
    if (!n)
        return FAIL(st, TSCOPE_EFORMAT, "DATA without values (expected one per repetition)");
    int rc = tscope_mexp_add(st->e, st->region, st->metric, st->points[st->data_index++],
                             st->values, (size_t)n);
    if (rc)
        return FAIL(st, rc, "%s", rc == TSCOPE_ENOMEM ? "out of memory" : "cannot add the values");
    st->ndata++;
    return 0;
}

/* One non-blank, non-comment line: keyword kw, the rest s. */
static int parse_line(struct text_state *st, const char *kw, char *s)
{
    if (strcmp(kw, "PARAMETER") == 0)
        return parse_parameter(st, s);
    if (strcmp(kw, "POINTS") == 0)
        return parse_points(st, s);
    if (strcmp(kw, "DATA") == 0)
        return parse_data(st, s);
    if (strcmp(kw, "REGION") == 0 || strcmp(kw, "METRIC") == 0) {
        if (!*s)
            return FAIL(st, TSCOPE_EFORMAT, "%s without a name (expected %s NAME)", kw, kw);
        *(kw[0] == 'R' ? &st->region : &st->metric) = s;
        st->data_index = 0;
        return 0;
    }
    return FAIL(st, TSCOPE_EFORMAT,
                "unknown keyword '%.40s' (expected PARAMETER, POINTS, REGION, METRIC or DATA)", kw);
}

int tscope__read_text(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen)
{
    struct text_state st = {.path = path, .e = e, .err = err, .errlen = errlen, .metric = "time"};
    int rc = 0;
    for (char *next, *l = text; l && !rc; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = 0;
        st.line++;
        char *s = trim(l);
        if (!*s || *s == '#')
            continue;
        char *kw = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = 0;
        rc = parse_line(&st, kw, trim(s));
    }
    if (!rc && !st.ndata)
        rc = FAIL(&st, TSCOPE_EFORMAT,
                  "no DATA found by the end of the file (expected PARAMETER, POINTS, REGION "
                  "and DATA lines)");
    free(st.points);
    free(st.values);
    return rc;
}
