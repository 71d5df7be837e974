/* fuzz_model.c - fuzz targets "model_text", "model_json", "model_jsonl" and
 * "model_talpas": tscope_mexp_read (src/model/read.c) with an explicit
 * input format, FUZZ_MODEL_FORMAT (a tscope_mformat_t, set by the build).
 *
 * The input is written to a file (fuzz_input_file) and read into an empty
 * experiment.  What it checks:
 *   - success or not, the experiment is consistent: at most
 *     TSCOPE_MODEL_MAX_PARAMS distinct non-empty parameter names, series
 *     with a call path and a metric and distinct (call path, metric), points
 *     distinct within a series, every point with at least one value, every
 *     coordinate and value finite, coordinates past nparams zero, each mean
 *     the mean of its values;
 *   - on success at least one value was read, and reading the same file
 *     again into the same experiment succeeds too (its parameters match
 *     those it declared) and adds exactly as many values, no new series or
 *     points;
 *   - on failure the return value is a negative TSCOPE_E* code and the
 *     message is non-empty and starts with "PATH:".
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "taskscope/model.h"

#ifndef FUZZ_MODEL_FORMAT
#error "FUZZ_MODEL_FORMAT must name a tscope_mformat_t"
#endif

/* All values of e (every repetition of every point). */
static size_t count_values(const tscope_mexp_t *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nseries; i++)
        for (size_t k = 0; k < e->series[i].npoints; k++)
            n += e->series[i].points[k].nvalues;
    return n;
}

static void check_point(const tscope_mexp_t *e, const tscope_mpoint_t *pt)
{
    FUZZ_ASSERT(pt->nvalues >= 1 && pt->nvalues <= pt->cap_values && pt->values);
    for (unsigned p = 0; p < TSCOPE_MODEL_MAX_PARAMS; p++)
        FUZZ_ASSERT(p < e->nparams ? isfinite(pt->coord[p]) : pt->coord[p] == 0);
    double sum = 0;
    for (size_t v = 0; v < pt->nvalues; v++) {
        FUZZ_ASSERT(isfinite(pt->values[v]));
        sum += pt->values[v];
    }
    double mean = sum / (double)pt->nvalues; /* as tscope_mexp_finish computes it */
    FUZZ_ASSERT(memcmp(&mean, &pt->mean, sizeof mean) == 0);
}

static void check_experiment(const tscope_mexp_t *e)
{
    FUZZ_ASSERT(e->nparams <= TSCOPE_MODEL_MAX_PARAMS);
    for (unsigned p = 0; p < e->nparams; p++) {
        FUZZ_ASSERT(e->params[p] && e->params[p][0]);
        for (unsigned q = 0; q < p; q++)
            FUZZ_ASSERT(strcmp(e->params[p], e->params[q]) != 0);
    }
    FUZZ_ASSERT(e->nseries <= e->cap_series);
    FUZZ_ASSERT(!e->nseries || e->nparams > 0);
    for (size_t i = 0; i < e->nseries; i++) {
        const tscope_mseries_t *s = &e->series[i];
        FUZZ_ASSERT(s->callpath && s->metric);
        for (size_t j = 0; j < i; j++)
            FUZZ_ASSERT(strcmp(s->callpath, e->series[j].callpath) != 0 ||
                        strcmp(s->metric, e->series[j].metric) != 0);
        FUZZ_ASSERT(s->npoints <= s->cap_points);
        for (size_t k = 0; k < s->npoints; k++) {
            check_point(e, &s->points[k]);
            for (size_t l = 0; l < k; l++)
                FUZZ_ASSERT(memcmp(s->points[k].coord, s->points[l].coord,
                                   e->nparams * sizeof(double)) != 0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    tscope_mexp_t e = {0};
    char err[1024];
    memset(err, 'x', sizeof err); /* a stale message must not survive */
    err[sizeof err - 1] = 0;
    int rc = tscope_mexp_read(&e, path, FUZZ_MODEL_FORMAT, err, sizeof err);
    check_experiment(&e);
    if (rc) {
        FUZZ_ASSERT(rc < 0);
        FUZZ_ASSERT(strlen(err) > strlen(path) + 1);
        FUZZ_ASSERT(fuzz_starts_with(err, path) && err[strlen(path)] == ':');
    } else {
        size_t values = count_values(&e), series = e.nseries;
        FUZZ_ASSERT(values > 0);
        size_t *points = malloc(series * sizeof *points);
        if (!points)
            FUZZ_FAIL("out of memory");
        for (size_t i = 0; i < series; i++)
            points[i] = e.series[i].npoints;
        rc = tscope_mexp_read(&e, path, FUZZ_MODEL_FORMAT, err, sizeof err);
        if (rc)
            FUZZ_FAIL("the same file read again into its experiment failed: %s", err);
        check_experiment(&e);
        FUZZ_ASSERT(count_values(&e) == 2 * values && e.nseries == series);
        for (size_t i = 0; i < series; i++)
            FUZZ_ASSERT(e.series[i].npoints == points[i]);
        free(points);
    }
    tscope_mexp_free(&e);
    return 0;
}
