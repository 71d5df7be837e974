/* experiment.c - the measurement container the readers fill
 * (tscope_mexp_t in include/taskscope/model.h): parameters, series by
 * (call path, metric), points by coordinate, repetitions per point.
 *
 * Series and points keep the order in which they were first seen, which is
 * the order of the input file.  The series lookup is linear (inputs have
 * hundreds of series at most per file, and readers add series by series).
 *
 * Points are aggregated once, not searched for on every add: a
 * measurement at the coordinate of the point added to last joins it (a
 * reader adds a point's repetitions together), any other is appended as a
 * point of its own, and merge_points folds the points at one coordinate
 * into the first of them in one pass with a hash table, O(P).
 * tscope_mexp_finish merges every series; tscope_mexp_add merges a series
 * whose point array is full before it grows it, which bounds the array by
 * a small multiple of the distinct points (the merge runs again only
 * after the array has filled by half).  The values of a merged point are
 * those of the points it merged in the order they were added, so after
 * tscope_mexp_finish a series holds what a search on every add would have
 * built.  (That search, which this replaces, cost O(P) an add: one second
 * for 50,000 measurements, one a call, over 10,000 points.)
 */
#include <stdint.h>
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

/* A hash of the first nparams coordinates, byte for byte (splitmix64's
 * finalizer on each: coordinates that are small integers differ only in
 * their high bits). */
static uint64_t coord_hash(const double *coord, unsigned nparams)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (unsigned l = 0; l < nparams; l++) {
        uint64_t w;
        memcpy(&w, &coord[l], sizeof w);
        h ^= w;
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
    }
    return h;
}

/* Folds the points of s at one coordinate (byte for byte, as
 * tscope_mexp_add compares them) into the first of them: its values, then
 * those of the others in point order; the others are removed and the rest
 * keep their order.  One pass in point order with a hash table from
 * coordinate to the point kept for it.  Without memory for the table
 * nothing is merged; without memory for a kept point's values the point
 * that would join it stays on its own (either way the series is as it
 * was, with points that repeat a coordinate). */
static void merge_points(tscope_mseries_t *s, unsigned nparams)
{
    size_t n = s->npoints, size = 16;
    if (n < 2)
        return;
    while (size < 2 * n)
        size *= 2;
    size_t *slot = malloc(size * sizeof *slot); /* kept point + 1; 0: empty */
    if (!slot)
        return;
    memset(slot, 0, size * sizeof *slot);
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        tscope_mpoint_t *pt = &s->points[k];
        size_t i = (size_t)coord_hash(pt->coord, nparams) & (size - 1);
        while (slot[i] &&
               memcmp(s->points[slot[i] - 1].coord, pt->coord, nparams * sizeof *pt->coord))
            i = (i + 1) & (size - 1);
        if (slot[i]) { /* a point kept before has this coordinate: join it */
            tscope_mpoint_t *first = &s->points[slot[i] - 1];
            size_t total = first->nvalues + pt->nvalues;
            if (total > first->cap_values) {
                size_t cap = first->cap_values ? first->cap_values : 8;
                while (cap < total)
                    cap *= 2;
                double *v = realloc(first->values, cap * sizeof *v);
                if (!v) {
                    s->points[kept++] = *pt;
                    continue;
                }
                first->values = v;
                first->cap_values = cap;
            }
            if (pt->nvalues)
                memcpy(first->values + first->nvalues, pt->values,
                       pt->nvalues * sizeof *pt->values);
            first->nvalues = total;
            free(pt->values);
            continue;
        }
        slot[i] = kept + 1;
        s->points[kept++] = *pt;
    }
    /* what grow() would have left: a new point starts zeroed */
    memset(s->points + kept, 0, (n - kept) * sizeof *s->points);
    s->npoints = kept;
    free(slot);
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
    if (s->npoints &&
        memcmp(s->points[s->npoints - 1].coord, coord, e->nparams * sizeof *coord) == 0)
        pt = &s->points[s->npoints - 1];
    if (!pt) {
        size_t used = s->npoints;
        if (used && used == s->cap_points) { /* full: merge first, grow if still half full */
            merge_points(s, e->nparams);
            if (s->npoints <= used / 2)
                used = s->npoints;
        }
        if (grow((void **)&s->points, &s->cap_points, used, sizeof *s->points))
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
        merge_points(s, e->nparams);
        for (size_t k = 0; k < s->npoints; k++) {
            tscope_mpoint_t *pt = &s->points[k];
            double sum = 0;
            for (size_t v = 0; v < pt->nvalues; v++)
                sum += pt->values[v];
            pt->mean = pt->nvalues ? sum / (double)pt->nvalues : 0;
        }
    }
}
