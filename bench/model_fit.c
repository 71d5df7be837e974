/* model_fit.c - throughput of the default modeler (Extra-P's), one core.
 *
 * usage: bench_model_fit [SERIES] [REPS] [MAX_POINTS]
 * SERIES (default 10,000) call path/metric series of 6 points x 5
 * repetitions, each drawn from a random one of the 42 hypotheses with
 * random coefficients and 2% noise (a fixed seed: the same data every run),
 * are fitted with cross-validation; REPS (default 3) timed repetitions,
 * median reported.  Also checks how many series got their generating term
 * back (a fit that is fast but wrong would show here).
 *
 * Then one series of many points (variant points_N, N = 1,000, 10,000,
 * 100,000 up to MAX_POINTS, default 100,000): y = 3 + 2 * x^(3/2) at x =
 * 1 .. N with 5 repetitions each and 1% noise, added one measurement at a
 * time, repetition after repetition (as a JSON Lines file of five runs
 * gives them: no two measurements of a point in a row), then fitted with
 * cross-validation.  aggregate_s: the adds and tscope_mexp_finish, which
 * merges the repetitions into one point each; fit_s: tscope_model_fit on
 * the N points; term_recovered: 1 when the model is x^(3/2).
 *
 * Then variant terms2_points_300000: the series of 300,000 points as
 * above, fitted with up to one term (one_term_fit_s) and up to two
 * (two_terms_fit_s: the 42 hypotheses, then the 861 pairs of them, each
 * cross-validated), and their ratio (two_over_one); same_model: 1 when
 * the two-term search keeps the one-term model, as it must on this data
 * (the second term does not lower the SMAPE by 10%).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <taskscope/model.h>

#include "bench.h"
#include "model/fit.h"

static uint64_t rng = 0x853c49e6748fea9bull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

enum { POINT_REPS = 5 };

/* N points x POINT_REPS repetitions into e (a fresh experiment). */
static int add_point_series(tscope_mexp_t *e, size_t npoints, const double *values)
{
    tscope_mexp_param(e, "x");
    for (size_t r = 0; r < POINT_REPS; r++)
        for (size_t i = 0; i < npoints; i++) {
            double x = (double)(i + 1);
            if (tscope_mexp_add(e, "main", "time", &x, &values[r * npoints + i], 1))
                return 1;
        }
    tscope_mexp_finish(e);
    return e->nseries == 1 && e->series[0].npoints == npoints ? 0 : 1;
}

/* POINT_REPS repetitions of npoints measurements of 3 + 2 x^1.5 with 1%
 * noise (malloc'd), or NULL. */
static double *point_values(size_t npoints)
{
    double *values = malloc(POINT_REPS * npoints * sizeof *values);
    for (size_t r = 0; values && r < POINT_REPS; r++)
        for (size_t i = 0; i < npoints; i++) {
            double x = (double)(i + 1);
            values[r * npoints + i] = (3 + 2 * pow(x, 1.5)) * (1 + 0.01 * (uniform() - 0.5));
        }
    return values;
}

/* The points_N variants (see the top of the file). */
static int bench_points(size_t npoints, int reps)
{
    double *values = point_values(npoints);
    if (!values)
        return 1;
    double ta[64], tf[64];
    tscope_model_t m;
    for (int r = 0; r < reps; r++) {
        tscope_mexp_t e = {0};
        double t0 = bench_now_s();
        if (add_point_series(&e, npoints, values))
            return 1;
        double t1 = bench_now_s();
        if (tscope_model_fit(&e.series[0], 1, NULL, &m))
            return 1;
        tf[r] = bench_now_s() - t1;
        ta[r] = t1 - t0;
        tscope_mexp_free(&e);
    }
    char variant[32];
    snprintf(variant, sizeof variant, "points_%zu", npoints);
    const tscope_mfactor_t *f = &m.terms[0].f[0];
    bench_result("model_fit", variant, "aggregate_s", bench_median(ta, reps), "s");
    bench_result("model_fit", variant, "fit_s", bench_median(tf, reps), "s");
    bench_result("model_fit", variant, "term_recovered",
                 m.nterms == 1 && f->num == 3 && f->den == 2 && !f->log, "bool");
    free(values);
    return 0;
}

/* The terms2_points_N variant (see the top of the file). */
static int bench_terms2(size_t npoints, int reps)
{
    double *values = point_values(npoints);
    if (!values)
        return 1;
    tscope_mexp_t e = {0};
    if (add_point_series(&e, npoints, values))
        return 1;
    double t1[64], t2[64];
    tscope_model_t one, two;
    tscope_mfit_opts_t o1 = {sizeof o1, 1, 1}, o2 = {sizeof o2, 1, 2};
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now_s();
        if (tscope_model_fit(&e.series[0], 1, &o1, &one))
            return 1;
        double tm = bench_now_s();
        if (tscope_model_fit(&e.series[0], 1, &o2, &two))
            return 1;
        t2[r] = bench_now_s() - tm;
        t1[r] = tm - t0;
    }
    char variant[40];
    snprintf(variant, sizeof variant, "terms2_points_%zu", npoints);
    double s1 = bench_median(t1, reps), s2 = bench_median(t2, reps);
    bench_result("model_fit", variant, "one_term_fit_s", s1, "s");
    bench_result("model_fit", variant, "two_terms_fit_s", s2, "s");
    bench_result("model_fit", variant, "two_over_one", s2 / s1, "ratio");
    bench_result("model_fit", variant, "same_model",
                 two.nterms == one.nterms && two.c0 == one.c0 &&
                     memcmp(two.terms, one.terms, one.nterms * sizeof *one.terms) == 0,
                 "bool");
    tscope_mexp_free(&e);
    free(values);
    return 0;
}

int main(int argc, char **argv)
{
    size_t nseries = argc > 1 ? (size_t)atol(argv[1]) : 10000;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    size_t max_points = argc > 3 ? (size_t)atol(argv[3]) : 100000;
    if (nseries < 1 || reps < 1 || reps > 64)
        return 2;
    tscope_mexp_t e = {0};
    tscope_mexp_param(&e, "p");
    int *truth = malloc(nseries * sizeof *truth);
    const double pts[6] = {4, 8, 16, 32, 64, 128};
    for (size_t s = 0; s < nseries; s++) {
        char name[32];
        snprintf(name, sizeof name, "callpath%zu", s);
        int h = (int)(uniform() * TSCOPE__NHYP);
        truth[s] = h;
        tscope_mfactor_t f = {tscope__hyp[h][0], tscope__hyp[h][1], tscope__hyp[h][2]};
        double c0 = 10 + 1000 * uniform(), c1 = 1 + 100 * uniform();
        for (int k = 0; k < 6; k++) {
            double v[5], exact = c0 + c1 * tscope__factor_eval(&f, pts[k]);
            for (int r = 0; r < 5; r++)
                v[r] = exact * (1 + 0.02 * (uniform() - 0.5));
            if (tscope_mexp_add(&e, name, "time", &pts[k], v, 5))
                return 1;
        }
    }
    tscope_mexp_finish(&e);
    tscope_model_t *models = malloc(nseries * sizeof *models);
    double t[64];
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now_s();
        for (size_t s = 0; s < nseries; s++)
            if (tscope_model_fit(&e.series[s], 1, NULL, &models[s]))
                return 1;
        t[r] = bench_now_s() - t0;
    }
    size_t same = 0;
    for (size_t s = 0; s < nseries; s++) {
        const tscope_mfactor_t *f = &models[s].terms[0].f[0];
        int h = truth[s];
        same += models[s].nterms == 1 && f->num * tscope__hyp[h][1] == tscope__hyp[h][0] * f->den &&
                f->log == tscope__hyp[h][2];
    }
    double secs = bench_median(t, reps);
    bench_result("model_fit", "default", "seconds", secs, "s");
    bench_result("model_fit", "default", "fits_per_s", (double)nseries / secs, "fits/s");
    bench_result("model_fit", "default", "generating_term_recovered",
                 (double)same / (double)nseries, "fraction");
    free(models);
    free(truth);
    tscope_mexp_free(&e);
    for (size_t npoints = 1000; npoints <= max_points; npoints *= 10)
        if (bench_points(npoints, reps))
            return 1;
    if (bench_terms2(300000, reps))
        return 1;
    return 0;
}
