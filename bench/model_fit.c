/* model_fit.c - throughput of the default modeler (Extra-P's), one core.
 *
 * usage: bench_model_fit [SERIES] [REPS]
 * SERIES (default 10,000) call path/metric series of 6 points x 5
 * repetitions, each drawn from a random one of the 42 hypotheses with
 * random coefficients and 2% noise (a fixed seed: the same data every run),
 * are fitted with cross-validation; REPS (default 3) timed repetitions,
 * median reported.  Also checks how many series got their generating term
 * back (a fit that is fast but wrong would show here).
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

int main(int argc, char **argv)
{
    size_t nseries = argc > 1 ? (size_t)atol(argv[1]) : 10000;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
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
    return 0;
}
