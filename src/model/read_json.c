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
 * Validation: every number read (coordinates, values) must be finite;
 * duplicate object keys are rejected; parameter names are matched with the
 * experiment's by name (tscope__read_params), so coordinates are stored in
 * the experiment's parameter order whatever the file's.  In the old layout
 * every list is indexed by its unique integer ids (sorted, binary search)
 * and each coordinate must give every parameter exactly once.  jansson
 * keeps no positions for values, so a message names the JSON path of the
 * offending value ("FILE: measurements[3].value: expected ..."); syntax
 * errors and JSON Lines give "FILE:LINE: ..." (with the column).
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
#include <math.h>
#include <stdint.h>

/* ---- values and messages ------------------------------------------------- */

/* What v is, for "expected X, got Y" messages. */
static const char *kind(const json_t *v, char *buf, size_t len)
{
    if (!v)
        return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        snprintf(buf, len, "a list of %zu", json_array_size(v));
        return buf;
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int finite_number(const json_t *x, double *out)
{
    if (!json_is_number(x) || !isfinite(json_number_value(x)))
        return 0;
    *out = json_number_value(x);
    return 1;
}

/* v (a finite number, or a list of them: exactly want, or at least one
 * when want is 0) into out, which has room for them; *n gets how many.
 * 0, or a message "PATH[:LINE]: where...: expected ..., got ..." in err. */
static int numbers(json_t *v, size_t want, double *out, size_t *n, const char *path, int line,
                   const char *where, char *err, size_t errlen)
{
    char buf[48];
    char expected[64] = "a finite number or a non-empty list of them";
    if (want > 1)
        snprintf(expected, sizeof expected, "a list of %zu finite numbers", want);
    else if (want == 1)
        snprintf(expected, sizeof expected, "a finite number (or a list of 1)");
    if (!json_is_array(v)) {
        if (want <= 1 && finite_number(v, out)) {
            *n = 1;
            return 0;
        }
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line, "%s: expected %s, got %s",
                                 where, expected, kind(v, buf, sizeof buf));
    }
    size_t size = json_array_size(v);
    if (want ? size != want : !size)
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line, "%s: expected %s, got %s",
                                 where, expected, kind(v, buf, sizeof buf));
    for (size_t i = 0; i < size; i++)
        if (!finite_number(json_array_get(v, i), &out[i]))
            return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                                     "%s[%zu]: expected a finite number, got %s", where, i,
                                     kind(json_array_get(v, i), buf, sizeof buf));
    *n = size;
    return 0;
}

/* Adds the values at coord; a message on failure. */
static int add(tscope_mexp_t *e, const char *callpath, const char *metric, const double *coord,
               const double *v, size_t n, const char *path, int line, const char *where, char *err,
               size_t errlen)
{
    int rc = tscope_mexp_add(e, callpath, metric, coord, v, n);
    if (rc)
        return tscope__read_fail(err, errlen, rc, path, line, "%s: %s", where,
                                 rc == TSCOPE_ENOMEM ? "out of memory" : "cannot add the values");
    return 0;
}

/* json_loads with duplicate keys rejected; NULL with "PATH:LINE: column C:
 * problem" in err. */
static json_t *parse(const char *text, const char *path, int line_offset, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        int line = je.line + line_offset;
        if (strstr(je.text, "end of file expected"))
            tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line, "not one JSON document");
        else
            tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                              "column %d: %s (expected JSON)", je.column, je.text);
    }
    return root;
}

/* ---- the new layout ---------------------------------------------------------- */

/* One entry {"point": [..], "values": [..]} of measurements[callpath][metric]. */
static int read_entry(tscope_mexp_t *e, const char *path, const unsigned *map, json_t *m,
                      const char *callpath, const char *metric, size_t k, char *err, size_t errlen)
{
    char where[400], field[420], buf[48];
    snprintf(where, sizeof where, "measurements[\"%.200s\"][\"%.100s\"][%zu]", callpath, metric, k);
    if (!json_is_object(m))
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                 "%s: expected an object with \"point\" and \"values\", got %s",
                                 where, kind(m, buf, sizeof buf));
    double file_coord[TSCOPE_MODEL_MAX_PARAMS], coord[TSCOPE_MODEL_MAX_PARAMS] = {0};
    size_t n;
    snprintf(field, sizeof field, "%s.point", where);
    int rc = numbers(json_object_get(m, "point"), e->nparams, file_coord, &n, path, 0, field, err,
                     errlen);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        coord[map[i]] = file_coord[i];
    const char *key =
        json_object_get(m, "values") || !json_object_get(m, "value") ? "values" : "value";
    json_t *vals = json_object_get(m, key);
    double *v = malloc((json_is_array(vals) && json_array_size(vals) ? json_array_size(vals) : 1) *
                       sizeof *v);
    if (!v)
        return tscope__read_fail(err, errlen, TSCOPE_ENOMEM, path, 0, "%s: out of memory", where);
    snprintf(field, sizeof field, "%s.%s", where, key);
    rc = numbers(vals, 0, v, &n, path, 0, field, err, errlen);
    if (!rc)
        rc = add(e, callpath, metric, coord, v, n, path, 0, where, err, errlen);
    free(v);
    return rc;
}

/* "parameters": a list of names, matched with e's. */
static int read_new_params(tscope_mexp_t *e, const char *path, json_t *params, unsigned *map,
                           char *err, size_t errlen)
{
    size_t n = json_array_size(params);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return tscope__read_fail(err, errlen, TSCOPE_ENOMEM, path, 0, "out of memory");
    int rc = 0;
    char buf[48];
    for (size_t i = 0; i < n && !rc; i++)
        if (!(names[i] = json_string_value(json_array_get(params, i))))
            rc = tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                   "parameters[%zu]: expected a name (a string), got %s", i,
                                   kind(json_array_get(params, i), buf, sizeof buf));
    if (!rc)
        rc = tscope__read_params(e, path, 0, "parameters", names, n, map, err, errlen);
    free(names);
    return rc;
}

static int read_new(tscope_mexp_t *e, const char *path, json_t *root, char *err, size_t errlen)
{
    json_t *params = json_object_get(root, "parameters");
    json_t *ms = json_object_get(root, "measurements");
    char buf[48];
    if (!json_is_array(params))
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                 "parameters: expected a list of names, got %s",
                                 kind(params, buf, sizeof buf));
    unsigned map[TSCOPE_MODEL_MAX_PARAMS];
    int rc = read_new_params(e, path, params, map, err, errlen);
    if (rc)
        return rc;
    const char *callpath, *metric;
    json_t *by_metric, *list;
    json_object_foreach(ms, callpath, by_metric)
    {
        if (!json_is_object(by_metric))
            return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                     "measurements[\"%.200s\"]: expected an object (metric -> "
                                     "list), got %s",
                                     callpath, kind(by_metric, buf, sizeof buf));
        json_object_foreach(by_metric, metric, list)
        {
            if (!json_is_array(list))
                return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                         "measurements[\"%.200s\"][\"%.100s\"]: expected a list, "
                                         "got %s",
                                         callpath, metric, kind(list, buf, sizeof buf));
            for (size_t k = 0; k < json_array_size(list); k++)
                if ((rc = read_entry(e, path, map, json_array_get(list, k), callpath, metric, k,
                                     err, errlen)))
                    return rc;
        }
    }
    return 0;
}

/* ---- the old (id-linked) layout --------------------------------------------- */

struct id_index {
    json_int_t id;
    size_t index; /* in its list */
};

/* A list's ids, sorted for lookup. */
struct ids {
    const char *name; /* the list: "callpaths", .. */
    struct id_index *v;
    size_t n;
};

/* By id alone: the lookup's order (ids are unique once indexed). */
static int id_only(const void *a, const void *b)
{
    json_int_t x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;
    return (x > y) - (x < y);
}

/* By id, then by position (so a repeated id names its entries in order). */
static int by_id(const void *a, const void *b)
{
    const struct id_index *x = a, *y = b;
    if (x->id != y->id)
        return (x->id > y->id) - (x->id < y->id);
    return (x->index > y->index) - (x->index < y->index);
}

/* Indexes list[] by "id" (an integer, unique; named: with a string "name").
 * 0, or a message; ids->v is the caller's to free either way. */
static int index_ids(json_t *list, const char *name, int named, struct ids *ids, const char *path,
                     char *err, size_t errlen)
{
    size_t n = json_array_size(list);
    char buf[48];
    ids->name = name;
    ids->n = 0;
    if (!(ids->v = malloc((n ? n : 1) * sizeof *ids->v)))
        return tscope__read_fail(err, errlen, TSCOPE_ENOMEM, path, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(list, i), *id = json_object_get(x, "id");
        if (!json_is_object(x))
            return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                     "%s[%zu]: expected an object, got %s", name, i,
                                     kind(x, buf, sizeof buf));
        if (!json_is_integer(id) || (named && !json_is_string(json_object_get(x, "name"))))
            return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                     "%s[%zu]: expected an integer \"id\"%s", name, i,
                                     named ? " and a string \"name\"" : "");
        ids->v[i] = (struct id_index){json_integer_value(id), i};
    }
    ids->n = n;
    qsort(ids->v, n, sizeof *ids->v, by_id);
    for (size_t i = 1; i < n; i++)
        if (ids->v[i].id == ids->v[i - 1].id)
            return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                     "%s: id %lld is used twice (entries %zu and %zu; expected "
                                     "unique ids)",
                                     name, (long long)ids->v[i].id, ids->v[i - 1].index,
                                     ids->v[i].index);
    return 0;
}

/* The index in its list of the entry x[field] refers to; a message when
 * x[field] is not an integer or not an id of the list. */
static int find_id(const struct ids *ids, json_t *x, const char *field, const char *where,
                   size_t *index, const char *path, char *err, size_t errlen)
{
    json_t *id = json_object_get(x, field);
    char buf[48];
    if (!json_is_integer(id))
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                 "%s.%s: expected an integer id, got %s", where, field,
                                 kind(id, buf, sizeof buf));
    struct id_index key = {json_integer_value(id), 0};
    const struct id_index *hit = bsearch(&key, ids->v, ids->n, sizeof key, id_only);
    if (!hit)
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                 "%s.%s: %lld is not the id of an entry of %s", where, field,
                                 (long long)key.id, ids->name);
    *index = hit->index;
    return 0;
}

struct old_file {
    const char *path;
    char *err;
    size_t errlen;
    json_t *params, *metrics, *callpaths, *coords, *ms;
    struct ids param_ids, metric_ids, callpath_ids, coord_ids;
    unsigned map[TSCOPE_MODEL_MAX_PARAMS];     /* position in "parameters" -> e's index */
    double (*points)[TSCOPE_MODEL_MAX_PARAMS]; /* of each entry of "coordinates" */
};

/* "parameters": the names, matched with e's. */
static int old_params(tscope_mexp_t *e, struct old_file *f)
{
    size_t n = json_array_size(f->params);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return tscope__read_fail(f->err, f->errlen, TSCOPE_ENOMEM, f->path, 0, "out of memory");
    for (size_t i = 0; i < n; i++)
        names[i] = json_string_value(json_object_get(json_array_get(f->params, i), "name"));
    int rc = tscope__read_params(e, f->path, 0, "parameters", names, n, f->map, f->err, f->errlen);
    free(names);
    return rc;
}

/* coordinates[k]: every parameter once, each a finite value. */
static int old_point(struct old_file *f, unsigned np, size_t k)
{
    json_t *pairs = json_object_get(json_array_get(f->coords, k), "parameter_value_pairs");
    char where[96], buf[48];
    snprintf(where, sizeof where, "coordinates[%zu].parameter_value_pairs", k);
    if (!json_is_array(pairs) || json_array_size(pairs) != np)
        return tscope__read_fail(f->err, f->errlen, TSCOPE_EFORMAT, f->path, 0,
                                 "%s: expected a list of %u pairs (one per parameter), got %s",
                                 where, np, kind(pairs, buf, sizeof buf));
    unsigned seen = 0;
    for (size_t j = 0; j < np; j++) {
        json_t *pair = json_array_get(pairs, j);
        char at[128];
        snprintf(at, sizeof at, "%s[%zu]", where, j);
        size_t q;
        int rc = find_id(&f->param_ids, pair, "parameter_id", at, &q, f->path, f->err, f->errlen);
        if (rc)
            return rc;
        unsigned idx = f->map[q];
        if (seen & (1u << idx))
            return tscope__read_fail(f->err, f->errlen, TSCOPE_EFORMAT, f->path, 0,
                                     "%s.parameter_id: parameter %zu again (expected each "
                                     "parameter once)",
                                     at, q + 1);
        seen |= 1u << idx;
        if (!finite_number(json_object_get(pair, "parameter_value"), &f->points[k][idx]))
            return tscope__read_fail(
                f->err, f->errlen, TSCOPE_EFORMAT, f->path, 0,
                "%s.parameter_value: expected a finite number, got %s", at,
                kind(json_object_get(pair, "parameter_value"), buf, sizeof buf));
    }
    return 0;
}

/* measurements[i]: {callpath_id, coordinate_id, metric_id, value}. */
static int old_measurement(tscope_mexp_t *e, struct old_file *f, size_t i)
{
    json_t *x = json_array_get(f->ms, i);
    char where[64], field[80], buf[48];
    snprintf(where, sizeof where, "measurements[%zu]", i);
    if (!json_is_object(x))
        return tscope__read_fail(f->err, f->errlen, TSCOPE_EFORMAT, f->path, 0,
                                 "%s: expected an object, got %s", where, kind(x, buf, sizeof buf));
    size_t cp, mt, co, n;
    int rc = find_id(&f->callpath_ids, x, "callpath_id", where, &cp, f->path, f->err, f->errlen);
    if (!rc)
        rc = find_id(&f->metric_ids, x, "metric_id", where, &mt, f->path, f->err, f->errlen);
    if (!rc)
        rc = find_id(&f->coord_ids, x, "coordinate_id", where, &co, f->path, f->err, f->errlen);
    if (rc)
        return rc;
    json_t *value = json_object_get(x, "value");
    double *v = malloc(
        (json_is_array(value) && json_array_size(value) ? json_array_size(value) : 1) * sizeof *v);
    if (!v)
        return tscope__read_fail(f->err, f->errlen, TSCOPE_ENOMEM, f->path, 0, "out of memory");
    snprintf(field, sizeof field, "%s.value", where);
    rc = numbers(value, 0, v, &n, f->path, 0, field, f->err, f->errlen);
    if (!rc)
        rc = add(e, json_string_value(json_object_get(json_array_get(f->callpaths, cp), "name")),
                 json_string_value(json_object_get(json_array_get(f->metrics, mt), "name")),
                 f->points[co], v, n, f->path, 0, where, f->err, f->errlen);
    free(v);
    return rc;
}

/* The lists indexed, the parameters matched, the coordinates resolved. */
static int old_prepare(tscope_mexp_t *e, struct old_file *f)
{
    int rc = index_ids(f->params, "parameters", 1, &f->param_ids, f->path, f->err, f->errlen);
    if (!rc)
        rc = old_params(e, f);
    if (!rc)
        rc = index_ids(f->metrics, "metrics", 1, &f->metric_ids, f->path, f->err, f->errlen);
    if (!rc)
        rc = index_ids(f->callpaths, "callpaths", 1, &f->callpath_ids, f->path, f->err, f->errlen);
    if (!rc)
        rc = index_ids(f->coords, "coordinates", 0, &f->coord_ids, f->path, f->err, f->errlen);
    size_t nc = json_array_size(f->coords);
    if (!rc && !(f->points = calloc(nc ? nc : 1, sizeof *f->points)))
        rc = tscope__read_fail(f->err, f->errlen, TSCOPE_ENOMEM, f->path, 0, "out of memory");
    for (size_t k = 0; k < nc && !rc; k++)
        rc = old_point(f, e->nparams, k);
    return rc;
}

static int read_old(tscope_mexp_t *e, const char *path, json_t *root, char *err, size_t errlen)
{
    struct old_file f = {.path = path, .err = err, .errlen = errlen};
    f.params = json_object_get(root, "parameters");
    f.metrics = json_object_get(root, "metrics");
    f.callpaths = json_object_get(root, "callpaths");
    f.coords = json_object_get(root, "coordinates");
    f.ms = json_object_get(root, "measurements");
    if (!json_is_array(f.params) || !json_is_array(f.metrics) || !json_is_array(f.callpaths) ||
        !json_is_array(f.coords) || !json_is_array(f.ms))
        return tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                                 "expected the lists parameters, metrics, callpaths, coordinates, "
                                 "measurements");
    int rc = old_prepare(e, &f);
    for (size_t i = 0; i < json_array_size(f.ms) && !rc; i++)
        rc = old_measurement(e, &f, i);
    free(f.param_ids.v);
    free(f.metric_ids.v);
    free(f.callpath_ids.v);
    free(f.coord_ids.v);
    free(f.points);
    return rc;
}

int tscope__read_json(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen)
{
    json_t *root = parse(text, path, 0, err, errlen);
    if (!root)
        return TSCOPE_EFORMAT;
    int rc;
    if (json_is_object(json_object_get(root, "measurements")))
        rc = read_new(e, path, root, err, errlen);
    else if (json_is_array(json_object_get(root, "callpaths")))
        rc = read_old(e, path, root, err, errlen);
    else if (json_object_get(root, "callpath") || json_is_object(json_object_get(root, "params")) ||
             json_is_object(json_object_get(root, "parameters"))) /* JSON Lines of one line */
        rc = tscope__read_lines(e, path, text, 0, err, errlen);
    else
        rc = tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, 0,
                               "not an Extra-P JSON experiment (expected a \"measurements\" "
                               "object or a \"callpaths\" list)");
    json_decref(root);
    return rc;
}

/* ---- JSON Lines and Talpas ------------------------------------------------ */

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

struct lines_file {
    const char *path;
    char *err;
    size_t errlen;
    int first_line; /* the first measurement's line, 0 before it */
    unsigned map[TSCOPE_MODEL_MAX_PARAMS];
};

/* A line's parameter names (the keys of its "params" object) matched: the
 * file's first line with e's (as any file), every later one with those. */
static int line_params(tscope_mexp_t *e, struct lines_file *f, int line, const char *key,
                       json_t *params)
{
    size_t n = json_object_size(params), i = 0;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return tscope__read_fail(f->err, f->errlen, TSCOPE_ENOMEM, f->path, line, "out of memory");
    const char *name;
    json_t *v;
    json_object_foreach(params, name, v)
    {
        names[i++] = name;
    }
    int rc = 0;
    if (!f->first_line) {
        rc = tscope__read_params(e, f->path, line, key, names, n, f->map, f->err, f->errlen);
    } else if (tscope__params_map(e, names, n, f->map)) {
        char here[300] = "", there[300] = "";
        for (size_t k = 0; k < n; k++)
            snprintf(here + strlen(here), sizeof here - strlen(here), "%s%.60s", k ? ", " : "",
                     names[k]);
        for (unsigned k = 0; k < e->nparams; k++)
            snprintf(there + strlen(there), sizeof there - strlen(there), "%s%.60s", k ? ", " : "",
                     e->params[k]);
        rc = tscope__read_fail(f->err, f->errlen, TSCOPE_EFORMAT, f->path, line,
                               "%s: this line has a different set of parameters (%s) than line "
                               "%d (%s)",
                               key, here, f->first_line, there);
    }
    free(names);
    return rc;
}

static int read_line(tscope_mexp_t *e, struct lines_file *f, int line, json_t *o)
{
    const char *key = json_object_get(o, "params") ? "params" : "parameters";
    json_t *params = json_object_get(o, key);
    json_t *metric = json_object_get(o, "metric"), *callpath = json_object_get(o, "callpath");
    json_t *value = json_object_get(o, "value");
    char buf[48];
    if (!json_is_object(params))
        return tscope__read_fail(f->err, f->errlen, TSCOPE_EFORMAT, f->path, line,
                                 "%s: expected an object (parameter -> value), got %s", key,
                                 kind(params, buf, sizeof buf));
    if (!json_is_string(callpath) || (metric && !json_is_string(metric)))
        return tscope__read_fail(
            f->err, f->errlen, TSCOPE_EFORMAT, f->path, line, "%s: expected a string, got %s",
            json_is_string(callpath) ? "metric" : "callpath",
            kind(json_is_string(callpath) ? metric : callpath, buf, sizeof buf));
    int rc = line_params(e, f, line, key, params);
    if (rc)
        return rc;
    double coord[TSCOPE_MODEL_MAX_PARAMS] = {0};
    size_t i = 0;
    const char *name;
    json_t *v;
    json_object_foreach(params, name, v)
    {
        if (!finite_number(v, &coord[f->map[i++]]))
            return tscope__read_fail(f->err, f->errlen, TSCOPE_EFORMAT, f->path, line,
                                     "%s.%.100s: expected a finite number, got %s", key, name,
                                     kind(v, buf, sizeof buf));
    }
    double *vals =
        malloc((json_is_array(value) && json_array_size(value) ? json_array_size(value) : 1) *
               sizeof *vals);
    if (!vals)
        return tscope__read_fail(f->err, f->errlen, TSCOPE_ENOMEM, f->path, line, "out of memory");
    size_t nv;
    rc = numbers(value, 0, vals, &nv, f->path, line, "value", f->err, f->errlen);
    if (!rc)
        rc = add(e, json_string_value(callpath), metric ? json_string_value(metric) : "time", coord,
                 vals, nv, f->path, line, "value", f->err, f->errlen);
    free(vals);
    if (!rc && !f->first_line)
        f->first_line = line;
    return rc;
}

int tscope__read_lines(tscope_mexp_t *e, const char *path, char *text, int talpas, char *err,
                       size_t errlen)
{
    struct lines_file f = {.path = path, .err = err, .errlen = errlen};
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
        json_t *o = parse(s, path, line - 1, err, errlen);
        char buf[48];
        if (!o)
            rc = TSCOPE_EFORMAT;
        else if (!json_is_object(o))
            rc = tscope__read_fail(err, errlen, TSCOPE_EFORMAT, path, line,
                                   "expected a JSON object, got %s", kind(o, buf, sizeof buf));
        else
            rc = read_line(e, &f, line, o);
        json_decref(o);
    }
    return rc;
}

#endif
