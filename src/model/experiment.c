/* experiment.c - the measurement container the readers fill
 * (tscope_mexp_t in include/taskscope/model.h): parameters, series by
 * (call path, metric), points by coordinate, repetitions per point.
 *
 * Series and points keep the order in which they were first seen, which is
 * the order of the input file; lookups are linear (inputs have hundreds of
 * series at most per file and a handful of points per series; a reader adds
 * a whole point's repetitions in one call).
 */
#include <stdlib.h>
#include <string.h>

#include "taskscope/model.h"

int tscope_mformat_parse(const char *name)
{
    static const char *const names[] = {"auto", "text", "json", "jsonl", "talpas"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

void tscope_mexp_free(tscope_mexp_t *e)
{
    for (size_t i = 0; i < e->nseries; i++) {
        tscope_mseries_t *s = &e->series[i];
        for (size_t k = 0; k < s->npoints; k++)
            free(s->points[k].values);
        free(s->points);
        free(s->callpath);
        free(s->metric);
    }
    free(e->series);
    for (unsigned p = 0; p < e->nparams; p++)
        free(e->params[p]);
    free(e->params_file);
    memset(e, 0, sizeof *e);
}

int tscope_mexp_param(tscope_mexp_t *e, const char *name)
{
    for (unsigned p = 0; p < e->nparams; p++)
        if (strcmp(e->params[p], name) == 0)
            return (int)p;
    if (e->nparams == TSCOPE_MODEL_MAX_PARAMS || !*name)
        return TSCOPE_EINVAL;
    if (!(e->params[e->nparams] = strdup(name)))
        return TSCOPE_ENOMEM;
    return (int)e->nparams++;
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    void *a = realloc(*arr, c * elem);
    if (!a)
        return TSCOPE_ENOMEM;
    memset((char *)a + *cap * elem, 0, (c - *cap) * elem);
    *arr = a;
    *cap = c;
    return 0;
}

static tscope_mseries_t *series_get(tscope_mexp_t *e, const char *callpath, const char *metric)
{
    for (size_t i = e->nseries; i-- > 0;) /* readers add series by series: newest first */
        if (strcmp(e->series[i].callpath, callpath) == 0 &&
            strcmp(e->series[i].metric, metric) == 0)
            return &e->series[i];
    if (grow((void **)&e->series, &e->cap_series, e->nseries, sizeof *e->series))
        return NULL;
    tscope_mseries_t *s = &e->series[e->nseries];
    s->callpath = strdup(callpath);
    s->metric = strdup(metric);
    if (!s->callpath || !s->metric) {
        free(s->callpath);
        free(s->metric);
        s->callpath = s->metric = NULL;
        return NULL;
    }
    e->nseries++;
    return s;
}

int tscope_mexp_add(tscope_mexp_t *e, const char *callpath, const char *metric, const double *coord,
                    const double *values, size_t n)
{
    if (!e->nparams || !callpath || !metric)
        return TSCOPE_EINVAL;
    tscope_mseries_t *s = series_get(e, callpath, metric);
    if (!s)
        return TSCOPE_ENOMEM;
    tscope_mpoint_t *pt = NULL;
    for (size_t k = 0; k < s->npoints && !pt; k++)
        if (memcmp(s->points[k].coord, coord, e->nparams * sizeof *coord) == 0)
            pt = &s->points[k];
    if (!pt) {
        if (grow((void **)&s->points, &s->cap_points, s->npoints, sizeof *s->points))
            return TSCOPE_ENOMEM;
        pt = &s->points[s->npoints++];
        memcpy(pt->coord, coord, e->nparams * sizeof *coord);
    }
    for (size_t i = 0; i < n; i++) {
        if (grow((void **)&pt->values, &pt->cap_values, pt->nvalues, sizeof *pt->values))
            return TSCOPE_ENOMEM;
        pt->values[pt->nvalues++] = values[i];
    }
    return 0;
}

void tscope_mexp_finish(tscope_mexp_t *e)
{
    for (size_t i = 0; i < e->nseries; i++) {
        tscope_mseries_t *s = &e->series[i];
        for (size_t k = 0; k < s->npoints; k++) {
            tscope_mpoint_t *pt = &s->points[k];
            double sum = 0;
            for (size_t v = 0; v < pt->nvalues; v++)
                sum += pt->values[v];
            pt->mean = pt->nvalues ? sum / (double)pt->nvalues : 0;
        }
    }
}
