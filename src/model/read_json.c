/* read_json.c - Extra-P's JSON inputs (both layouts), JSON Lines and Talpas,
 * parsed with jansson.
 *
 *   new:   {"parameters":["x"],"measurements":{"<callpath>":{"<metric>":
 *           [{"point":[4],"values":[..]}, ..]}}}
 *   old:   id-linked lists "parameters", "metrics", "callpaths",
 *          "coordinates" (parameter_value_pairs) and "measurements"
 *          (callpath_id, coordinate_id, metric_id, value)
 *   lines: {"params":{"x":1,"y":1},"metric":"m","callpath":"c","value":2}
 *          ("parameters" also accepted; value a number or a list)
 *   Talpas: the same with ';' between the fields
 *
 * Without jansson at build time every JSON reader answers with a message
 * saying so (the text format still works).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

#ifndef TSCOPE_HAVE_JANSSON

static int no_jansson(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "%s: taskscope was built without libjansson: JSON inputs cannot be read "
             "(install libjansson-dev, or run ./scripts/setup, and rebuild)",
             path);
    return TSCOPE_EINVAL;
}

int tscope__read_json(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen)
{
    (void)e;
    (void)text;
    return no_jansson(path, err, errlen);
}

int tscope__read_lines(tscope_mexp_t *e, const char *path, char *text, int talpas, char *err,
                       size_t errlen)
{
    (void)e;
    (void)text;
    (void)talpas;
    return no_jansson(path, err, errlen);
}

#else

#include <jansson.h>

static int bad(char *err, size_t errlen, const char *path, int line, const char *what)
{
    if (line > 0)
        snprintf(err, errlen, "%s:%d: %s", path, line, what);
    else
        snprintf(err, errlen, "%s: %s", path, what);
    return TSCOPE_EFORMAT;
}

/* Values of a number or a list of numbers; n = 0 when neither. */
static size_t numbers(json_t *v, double *out, size_t cap)
{
    if (json_is_number(v)) {
        out[0] = json_number_value(v);
        return 1;
    }
    if (!json_is_array(v) || json_array_size(v) > cap)
        return 0;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!json_is_number(x))
            return 0;
        out[i] = json_number_value(x);
    }
    return json_array_size(v);
}

static int read_new(tscope_mexp_t *e, const char *path, json_t *root, char *err, size_t errlen)
{
    json_t *params = json_object_get(root, "parameters");
    json_t *ms = json_object_get(root, "measurements");
    if (!json_is_array(params) || !json_is_object(ms))
        return bad(err, errlen, path, 0, "expected \"parameters\" (a list) and \"measurements\"");
    size_t i;
    json_t *p;
    json_array_foreach(params, i, p)
    {
        if (!json_is_string(p) || tscope_mexp_param(e, json_string_value(p)) < 0)
            return bad(err, errlen, path, 0, "a parameter is not a name, or more than 4");
    }
    const char *callpath, *metric;
    json_t *by_metric, *list;
    json_object_foreach(ms, callpath, by_metric)
    {
        if (!json_is_object(by_metric))
            return bad(err, errlen, path, 0, "measurements of a call path: expected an object");
        json_object_foreach(by_metric, metric, list)
        {
            size_t k;
            json_t *m;
            if (!json_is_array(list))
                return bad(err, errlen, path, 0, "measurements of a metric: expected a list");
            json_array_foreach(list, k, m)
            {
                double coord[TSCOPE_MODEL_MAX_PARAMS] = {0};
                json_t *vals = json_object_get(m, "values");
                if (!vals)
                    vals = json_object_get(m, "value");
                size_t nv = vals ? json_is_array(vals) ? json_array_size(vals) : 1 : 0;
                double *v = malloc((nv ? nv : 1) * sizeof *v);
                if (!v)
                    return TSCOPE_ENOMEM;
                int ok = numbers(json_object_get(m, "point"), coord, e->nparams) == e->nparams &&
                         nv && numbers(vals, v, nv) == nv;
                int rc = ok ? tscope_mexp_add(e, callpath, metric, coord, v, nv) : 0;
                free(v);
                if (!ok) {
                    char what[600];
                    snprintf(what, sizeof what,
                             "call path '%.200s', metric '%.100s', entry %zu: expected \"point\" "
                             "with %u numbers and \"values\" with numbers",
                             callpath, metric, k + 1, e->nparams);
                    return bad(err, errlen, path, 0, what);
                }
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

/* The "name" of the entry of `list` whose "id" is id, or NULL. */
static const char *name_of(json_t *list, json_int_t id, size_t *index)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (json_integer_value(json_object_get(x, "id")) == id) {
            if (index)
                *index = i;
            return json_string_value(json_object_get(x, "name"));
        }
    }
    return NULL;
}

static int read_old(tscope_mexp_t *e, const char *path, json_t *root, char *err, size_t errlen)
{
    json_t *params = json_object_get(root, "parameters"),
           *metrics = json_object_get(root, "metrics");
    json_t *callpaths = json_object_get(root, "callpaths");
    json_t *coords = json_object_get(root, "coordinates");
    json_t *ms = json_object_get(root, "measurements");
    if (!json_is_array(params) || !json_is_array(metrics) || !json_is_array(callpaths) ||
        !json_is_array(coords) || !json_is_array(ms))
        return bad(err, errlen, path, 0,
                   "expected the lists parameters, metrics, callpaths, coordinates, measurements");
    size_t i;
    json_t *x;
    json_array_foreach(params, i, x)
    {
        const char *n = json_string_value(json_object_get(x, "name"));
        if (!n || tscope_mexp_param(e, n) < 0)
            return bad(err, errlen, path, 0, "parameter without a name, or more than 4");
    }
    json_array_foreach(ms, i, x)
    {
        const char *cp =
            name_of(callpaths, json_integer_value(json_object_get(x, "callpath_id")), NULL);
        const char *mt =
            name_of(metrics, json_integer_value(json_object_get(x, "metric_id")), NULL);
        json_int_t cid = json_integer_value(json_object_get(x, "coordinate_id"));
        json_t *coord = NULL, *c;
        size_t k;
        json_array_foreach(coords, k, c)
        {
            if (json_integer_value(json_object_get(c, "id")) == cid)
                coord = c;
        }
        json_t *value = json_object_get(x, "value");
        double pt[TSCOPE_MODEL_MAX_PARAMS] = {0}, v[1];
        int ok = cp && mt && coord && numbers(value, v, 1) == 1;
        json_t *pairs = coord ? json_object_get(coord, "parameter_value_pairs") : NULL;
        ok = ok && json_is_array(pairs) && json_array_size(pairs) == e->nparams;
        for (size_t q = 0; ok && q < e->nparams; q++) {
            json_t *pair = json_array_get(pairs, q);
            size_t idx;
            ok = name_of(params, json_integer_value(json_object_get(pair, "parameter_id")), &idx) &&
                 json_is_number(json_object_get(pair, "parameter_value"));
            if (ok)
                pt[idx] = json_number_value(json_object_get(pair, "parameter_value"));
        }
        if (!ok) {
            char what[200];
            snprintf(what, sizeof what,
                     "measurement %zu: unknown callpath, metric or coordinate id, or no value",
                     i + 1);
            return bad(err, errlen, path, 0, what);
        }
        int rc = tscope_mexp_add(e, cp, mt, pt, v, 1);
        if (rc)
            return rc;
    }
    return 0;
}

int tscope__read_json(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    if (!root) {
        if (strstr(je.text, "end of file expected"))
            return bad(err, errlen, path, je.line, "not one JSON document");
        char what[300];
        snprintf(what, sizeof what, "column %d: %s", je.column, je.text);
        return bad(err, errlen, path, je.line, what);
    }
    int rc;
    if (json_is_object(json_object_get(root, "measurements")))
        rc = read_new(e, path, root, err, errlen);
    else if (json_is_array(json_object_get(root, "callpaths")))
        rc = read_old(e, path, root, err, errlen);
    else
        rc = bad(err, errlen, path, 0,
                 "not an Extra-P JSON experiment (no \"measurements\" object, no \"callpaths\")");
    json_decref(root);
    return rc;
}

/* Talpas: ';' between fields becomes ',' (outside strings). */
static void talpas_to_json(char *s)
{
    int in_str = 0;
    for (char *p = s; *p; p++) {
        if (*p == '"' && (p == s || p[-1] != '\\'))
            in_str = !in_str;
        else if (*p == ';' && !in_str)
            *p = ',';
    }
}

static int read_line(tscope_mexp_t *e, const char *path, int line, json_t *o, char *err,
                     size_t errlen)
{
    json_t *params = json_object_get(o, "params");
    if (!params)
        params = json_object_get(o, "parameters");
    const char *metric = json_string_value(json_object_get(o, "metric"));
    const char *callpath = json_string_value(json_object_get(o, "callpath"));
    json_t *value = json_object_get(o, "value");
    if (!json_is_object(params) || !callpath || !value)
        return bad(err, errlen, path, line,
                   "expected \"params\" (an object), \"callpath\" and \"value\"");
    double coord[TSCOPE_MODEL_MAX_PARAMS] = {0};
    const char *name;
    json_t *v;
    unsigned seen = 0;
    json_object_foreach(params, name, v)
    {
        int idx = -1;
        for (unsigned l = 0; l < e->nparams; l++)
            if (strcmp(e->params[l], name) == 0)
                idx = (int)l;
        if (idx < 0 && e->nseries > 0)
            return bad(err, errlen, path, line, "this line has a different set of parameters");
        if (idx < 0)
            idx = tscope_mexp_param(e, name);
        if (idx < 0 || !json_is_number(v))
            return bad(err, errlen, path, line,
                       "a parameter value is not a number, or more than 4 parameters");
        coord[idx] = json_number_value(v);
        seen++;
    }
    if (seen != e->nparams)
        return bad(err, errlen, path, line, "this line has a different set of parameters");
    size_t nv = json_is_array(value) ? json_array_size(value) : 1;
    double *vals = malloc((nv ? nv : 1) * sizeof *vals);
    if (!vals)
        return TSCOPE_ENOMEM;
    int rc;
    if (!nv || numbers(value, vals, nv) != nv)
        rc = bad(err, errlen, path, line, "\"value\" is not a number or a list of numbers");
    else
        rc = tscope_mexp_add(e, callpath, metric ? metric : "time", coord, vals, nv);
    free(vals);
    return rc;
}

int tscope__read_lines(tscope_mexp_t *e, const char *path, char *text, int talpas, char *err,
                       size_t errlen)
{
    int line = 0, rc = 0;
    for (char *next, *l = text; l && !rc; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = 0;
        line++;
        char *s = l;
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s)
            continue;
        if (talpas)
            talpas_to_json(s);
        json_error_t je;
        json_t *o = json_loads(s, 0, &je);
        if (!o || !json_is_object(o)) {
            char what[300];
            if (o)
                snprintf(what, sizeof what, "expected a JSON object");
            else
                snprintf(what, sizeof what, "column %d: %s", je.column, je.text);
            rc = bad(err, errlen, path, line, what);
        } else {
            rc = read_line(e, path, line, o, err, errlen);
        }
        json_decref(o);
    }
    return rc;
}

#endif
