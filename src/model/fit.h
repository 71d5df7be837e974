/* fit.h - internals shared by the modelers (fit.c, multi.c), the printer
 * and the composition code of src/model/. */
#ifndef TSCOPE_MODEL_FIT_H
#define TSCOPE_MODEL_FIT_H

#include <stddef.h>

#include "taskscope/model.h"

/* Extra-P's default hypotheses: 42 (num, den, log) in its order. */
enum { TSCOPE__NHYP = 42 };
extern const int16_t tscope__hyp[TSCOPE__NHYP][3];

/* Extra-P's thresholds. */
#define TSCOPE__EPSILON 0.0005    /* minimum term contribution, constant cleaning with CV */
#define TSCOPE__CLEAN_NO_CV 0.001 /* constant cleaning without cross-validation */

/* p^(num/den) * log2(p)^log */
double tscope__factor_eval(const tscope_mfactor_t *f, double p);
/* The term without its coefficient at coord. */
double tscope__term_eval(const tscope_mterm_t *t, unsigned nparams, const double *coord);

/* Least squares: A is n x k, column-major (column j at A + j*n), y has n
 * values; A and y are overwritten.  Writes k coefficients (0 for columns
 * that are zero or dependent).  0 or TSCOPE_ENOMEM. */
int tscope__lstsq(double *A, double *y, size_t n, size_t k, double *coef);

/* Adjusted R^2 = 1 - (rss/tss) * (n-1) / (n - nterms - 1); NaN where it is
 * undefined: tss 0 (or not finite), n <= nterms + 1, or rss not finite. */
double tscope__adjusted_r2(double rss, double tss, size_t n, size_t nterms);

/* "RSS r, SMAPE s, adj. R^2 a" (%.6g each; "undefined" for a NaN adjusted
 * R^2) into buf, as taskscope model prints it; the length it needed. */
int tscope__model_quality_format(const tscope_model_t *m, char *buf, size_t len);

/* The single-parameter modeler on plain arrays (x: coordinates, y: point
 * values).  0 or a negative error. */
int tscope__fit_single(const double *x, const double *y, size_t n, const tscope_mfit_opts_t *o,
                       tscope_model_t *m);
/* Leave-one-out folds are refitted from scratch up to this many points
 * (Extra-P's arithmetic) and downdated from the fit on all points above
 * (linear in the points; equal to rounding): fit.c says how. */
#define TSCOPE__LOO_REFIT_MAX 64
/* tscope__fit_single with that bound given (for tests that compare the two
 * ways: SIZE_MAX refits every fold, 0 downdates every one it can). */
int tscope__fit_single_folds(const double *x, const double *y, size_t n,
                             const tscope_mfit_opts_t *o, size_t refit_max, tscope_model_t *m);
/* The multi-parameter modeler on a series. */
int tscope__fit_multi(const tscope_mseries_t *s, unsigned nparams, const tscope_mfit_opts_t *o,
                      tscope_model_t *m);

#endif
