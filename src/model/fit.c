/* fit.c - the single-parameter modeler: Extra-P's default, and a
 * multi-term search beyond it.
 *
 * Extra-P's default, step by step (docs/modeling.md says where each rule
 * comes from):
 *   - the value of a point is the mean of its repetitions;
 *   - the constant model (the mean) comes first; its RSS is the total sum
 *     of squares; with RSS exactly 0 it is the answer;
 *   - then the 42 one-term hypotheses c0 + c1 * p^(i) * log2(p)^(j) in
 *     Extra-P's order (log terms only when every coordinate is >= 1), each
 *     scored by leave-one-out cross-validation: fit on n-1 points by least
 *     squares, set c0 to 0 when |c0 / min(training values)| < 0.0005,
 *     predict the left-out point, sum RSS and SMAPE over the folds; then
 *     refit on all points;
 *   - a hypothesis is rejected when its term coefficient is 0 or its term
 *     is below 0.0005 of the value at every point; it replaces the best
 *     only when its SMAPE is strictly lower (ties keep the earlier one);
 *   - without cross-validation: fit on all points, clean c0 with 0.001,
 *     score on all points.
 * Beyond Extra-P (max_terms 2-3): every combination of 2 (then 3) distinct
 * hypotheses is fitted and scored the same way; the best replaces the
 * model only if it lowers the (cross-validated) SMAPE by more than 10%,
 * every term passes the same rejection rules and there are at least three
 * more points than coefficients (the guards against over-fitting).
 *
 * Adjusted R^2 (tscope__adjusted_r2) is NaN where it is undefined: no
 * variance in the data (TSS 0) or no degrees of freedom (n <= terms + 1);
 * the printers show "undefined" (text) and null (JSON).
 *
 * Least squares: two columns (constant and one term) with the centred
 * closed form, the minimum-norm answer when the term is constant (what
 * numpy's lstsq gives); more columns by Householder QR on columns scaled
 * to unit norm.
 *
 * Cost: linear in the points.  The points are distinct coordinates, each
 * the mean of its repetitions (tscope_mexp_finish merges them), and each
 * hypothesis's term values are computed once.  A fold's smallest training
 * value (for the cleaning) comes from the two smallest values.  Up to
 * TSCOPE__LOO_REFIT_MAX points every fold is refitted, Extra-P's way, in
 * O(n): the results are bit for bit those of earlier versions (on exact
 * data the cross-validated RSS is rounding noise, 5e-29, that any other
 * arithmetic changes).  Above it a fold is downdated from the fit on all
 * points: one term in O(1) from the centred sums, k terms in O(k^2) from
 * the QR factors (Sherman-Morrison).  The two agree to rounding: RSS and
 * SMAPE to 1e-8 relative or closer on random series of 65 to 1,500 points
 * (a fold whose c0 sits at the cleaning threshold can flip), the models
 * and the printed output the same.  A fold whose point holds nearly all of
 * a column's leverage, where the subtraction would cancel, is refitted (at
 * most one per coefficient).
 *
 * The multi-term search scores 861 pairs (11,480 triples) of hypotheses.
 * Above TSCOPE__LOO_REFIT_MAX points it does not factor each one over all
 * points: the centred sums of every pair of term values are computed once
 * (struct centred), each combination's least squares and leverages come
 * from them (a k x k Cholesky factor), and its folds stop as soon as the
 * SMAPE summed so far reaches the best one's, which it could then only
 * exceed: most combinations stop within a few points, and --terms 2 costs
 * a small multiple of one term, not 861 / 42 of it (scripts/bench model,
 * terms2_points_300000).  Terms so nearly dependent that the sums would
 * lose digits are scored by the QR downdate above; the final coefficients
 * of a combination that may win are always the QR fit on all points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

const int16_t tscope__hyp[TSCOPE__NHYP][3] = {
    {0, 1, 1}, {0, 1, 2}, {1, 4, 0}, {1, 3, 0}, {1, 4, 1},  {1, 3, 1}, {1, 4, 2},
    {1, 3, 2}, {1, 2, 0}, {1, 2, 1}, {1, 2, 2}, {2, 3, 0},  {3, 4, 0}, {2, 3, 1},
    {3, 4, 1}, {4, 5, 0}, {2, 3, 2}, {3, 4, 2}, {1, 1, 0},  {1, 1, 1}, {1, 1, 2},
    {5, 4, 0}, {5, 4, 1}, {4, 3, 0}, {4, 3, 1}, {3, 2, 0},  {3, 2, 1}, {3, 2, 2},
    {5, 3, 0}, {7, 4, 0}, {2, 1, 0}, {2, 1, 1}, {2, 1, 2},  {9, 4, 0}, {7, 3, 0},
    {5, 2, 0}, {5, 2, 1}, {5, 2, 2}, {8, 3, 0}, {11, 4, 0}, {3, 1, 0}, {3, 1, 1}};

double tscope__factor_eval(const tscope_mfactor_t *f, double p)
{
    double v = 1;
    if (f->num)
        v *= pow(p, (double)f->num / (double)f->den);
    if (f->log)
        v *= pow(log2(p), (double)f->log);
    return v;
}

double tscope__term_eval(const tscope_mterm_t *t, unsigned nparams, const double *coord)
{
    double v = 1;
    for (unsigned l = 0; l < nparams; l++)
        if (t->f[l].num || t->f[l].log)
            v *= tscope__factor_eval(&t->f[l], coord[l]);
    return v;
}

/* What a Householder solve leaves for the leave-one-out downdate: the
 * column scales, the dependent (dead) columns, and the row of R that each
 * live column's diagonal is in (R itself stays in A: R(piv[j], jj) =
 * A[jj * n + piv[j]] for live columns j <= jj). */
struct qr_info {
    double scale[TSCOPE_MODEL_MAX_TERMS + 1];
    int dead[TSCOPE_MODEL_MAX_TERMS + 1];
    size_t piv[TSCOPE_MODEL_MAX_TERMS + 1];
};

static int householder_solve(double *A, double *y, size_t n, size_t k, double *coef,
                             struct qr_info *qi)
{
    double *scale = qi->scale;
    int *dead = qi->dead;
    size_t *piv = qi->piv;
    if (k > TSCOPE_MODEL_MAX_TERMS + 1)
        return TSCOPE_EINVAL;
    memset(dead, 0, k * sizeof *dead);
    for (size_t j = 0; j < k; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += A[j * n + i] * A[j * n + i];
        scale[j] = s > 0 ? sqrt(s) : 1;
        for (size_t i = 0; i < n; i++)
            A[j * n + i] /= scale[j];
    }
    size_t r = 0; /* rows used so far */
    for (size_t j = 0; j < k; j++) {
        double *c = A + j * n;
        double norm = 0;
        for (size_t i = r; i < n; i++)
            norm += c[i] * c[i];
        norm = sqrt(norm);
        if (r >= n || norm < 1e-13) { /* dependent on the columns before: coefficient 0 */
            dead[j] = 1;
            continue;
        }
        double alpha = c[r] > 0 ? -norm : norm;
        c[r] -= alpha; /* c[r..n) is now the Householder vector v */
        double vv = 0;
        for (size_t i = r; i < n; i++)
            vv += c[i] * c[i];
        for (size_t jj = j + 1; jj < k; jj++) {
            double *d = A + jj * n, s = 0;
            for (size_t i = r; i < n; i++)
                s += c[i] * d[i];
            s = 2 * s / vv;
            for (size_t i = r; i < n; i++)
                d[i] -= s * c[i];
        }
        double s = 0;
        for (size_t i = r; i < n; i++)
            s += c[i] * y[i];
        s = 2 * s / vv;
        for (size_t i = r; i < n; i++)
            y[i] -= s * c[i];
        c[r] = alpha; /* R's diagonal */
        piv[j] = r++;
    }
    for (size_t j = k; j-- > 0;) {
        if (dead[j]) {
            coef[j] = 0;
            continue;
        }
        double s = y[piv[j]];
        for (size_t jj = j + 1; jj < k; jj++)
            if (!dead[jj])
                s -= A[jj * n + piv[j]] * coef[jj];
        coef[j] = s / A[j * n + piv[j]];
    }
    for (size_t j = 0; j < k; j++)
        coef[j] /= scale[j];
    return 0;
}

int tscope__lstsq(double *A, double *y, size_t n, size_t k, double *coef)
{
    struct qr_info qi;
    return householder_solve(A, y, n, k, coef, &qi);
}

/* The line c0 + c1 * t from the means (tm, ym) and the centred sums of
 * squares and products of m points. */
static void line_from_sums(double tm, double ym, double stt, double sty, double m, double *c0,
                           double *c1)
{
    if (stt > 0 && stt > 1e-26 * tm * tm * m) {
        *c1 = sty / stt;
        *c0 = ym - *c1 * tm;
    } else { /* the term is constant here: minimum-norm solution of c0 + tm*c1 = ym */
        *c0 = ym / (1 + tm * tm);
        *c1 = tm * ym / (1 + tm * tm);
    }
}

/* Least squares for [1, t] over the points i != skip (skip = n: none). */
static void fit_line(const double *t, const double *y, size_t n, size_t skip, double *c0,
                     double *c1)
{
    double st = 0, sy = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip) {
            st += t[i];
            sy += y[i];
            m++;
        }
    if (!m) {
        *c0 = *c1 = 0;
        return;
    }
    double tm = st / (double)m, ym = sy / (double)m, stt = 0, sty = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip) {
            stt += (t[i] - tm) * (t[i] - tm);
            sty += (t[i] - tm) * (y[i] - ym);
        }
    line_from_sums(tm, ym, stt, sty, (double)m, c0, c1);
}

/* How the leave-one-out folds of one series are computed (see the top of
 * the file): refitted up to refit_max points, downdated above; and each
 * fold's smallest training value, which is the smallest value unless the
 * fold leaves that one out (O(1) a fold). */
struct folds {
    size_t refit_max;
    double min_first, min_second; /* the smallest value (at min_at); the smallest of the others */
    size_t min_at;
};

static struct folds folds_init(const double *y, size_t n, size_t refit_max)
{
    struct folds f = {refit_max, INFINITY, INFINITY, n};
    for (size_t i = 0; i < n; i++)
        if (y[i] < f.min_first) {
            f.min_first = y[i];
            f.min_at = i;
        }
    for (size_t i = 0; i < n; i++)
        if (i != f.min_at && y[i] < f.min_second)
            f.min_second = y[i];
    return f;
}

/* The smallest value of the points but skip (skip = n: of all). */
static double fold_min(const struct folds *f, size_t skip)
{
    return skip == f->min_at ? f->min_second : f->min_first;
}

/* Extra-P's constant cleaning. */
static double clean_constant(double c0, double phi, double minimum)
{
    if (minimum == 0)
        return fabs(c0 - minimum) < phi ? 0 : c0;
    return fabs(c0 / minimum) < phi ? 0 : c0;
}

struct cost {
    double rss, smape, re;
};

/* Adds one left-out prediction to the fold sums (Extra-P's
 * compute_cost_leave_one_out). */
static void cost_fold(struct cost *c, double pred, double actual, size_t n)
{
    double d = pred - actual;
    c->rss += d * d;
    if (actual != 0)
        c->re += fabs(d / actual) / (double)n;
    double abssum = fabs(actual) + fabs(pred);
    if (abssum != 0)
        c->smape += (fabs(d) / abssum * 2) / (double)n * 100;
}

/* A fold is downdated while what is left without its point is at least
 * LOO_MIN_SLACK of the whole: of the term's centred sum of squares (one
 * term), or 1 - h with h the point's leverage (several); below, the
 * subtraction would cancel too many digits and the fold is refitted.  The
 * leverages sum to the number of coefficients, so at most that many folds
 * of a hypothesis are refitted. */
#define LOO_MIN_SLACK 1e-3

/* Leave-one-out cost of c0 + c1 * t with every fold refitted (Extra-P's
 * way: O(n) a fold). */
static struct cost loo_line_refit(const double *t, const double *y, size_t n, const struct folds *f)
{
    struct cost cost = {0, 0, 0};
    for (size_t skip = 0; skip < n; skip++) {
        double c0, c1;
        fit_line(t, y, n, skip, &c0, &c1);
        c0 = clean_constant(c0, TSCOPE__EPSILON, fold_min(f, skip));
        cost_fold(&cost, c0 + c1 * t[skip], y[skip], n);
    }
    return cost;
}

/* The same with each fold's line downdated from the centred sums over all
 * n points: without point s (m = n - 1 points left) the means move by
 * (mean - value) / m and the centred sums of squares and products lose
 * n / m * (t_s - mean_t) * (t_s - mean_t, resp. y_s - mean_y); O(1) a
 * fold.  Needs n >= 3. */
static struct cost loo_line_downdate(const double *t, const double *y, size_t n,
                                     const struct folds *f)
{
    double st = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        st += t[i];
        sy += y[i];
    }
    double tmean = st / (double)n, ymean = sy / (double)n, ctt = 0, cty = 0;
    for (size_t i = 0; i < n; i++) {
        ctt += (t[i] - tmean) * (t[i] - tmean);
        cty += (t[i] - tmean) * (y[i] - ymean);
    }
    double m = (double)(n - 1), weight = (double)n / m;
    struct cost cost = {0, 0, 0};
    for (size_t s = 0; s < n; s++) {
        double dt = t[s] - tmean, dy = y[s] - ymean;
        double stt = ctt - weight * dt * dt, sty = cty - weight * dt * dy, c0, c1;
        if (stt >= LOO_MIN_SLACK * ctt)
            line_from_sums(tmean - dt / m, ymean - dy / m, stt, sty, m, &c0, &c1);
        else /* the point holds nearly all of the term's variation */
            fit_line(t, y, n, s, &c0, &c1);
        c0 = clean_constant(c0, TSCOPE__EPSILON, fold_min(f, s));
        cost_fold(&cost, c0 + c1 * t[s], y[s], n);
    }
    return cost;
}

/* Cost on all points (Extra-P's single-parameter compute_cost: SMAPE is the
 * mean over the points where |actual| + |pred| != 0). */
static struct cost cost_all(const double *pred, const double *y, size_t n)
{
    struct cost c = {0, 0, 0};
    size_t ns = 0;
    double smape = 0;
    for (size_t i = 0; i < n; i++) {
        double d = pred[i] - y[i];
        c.rss += d * d;
        c.re += fabs(d) / y[i] / (double)n;
        double abssum = fabs(y[i]) + fabs(pred[i]);
        if (abssum != 0) {
            smape += fabs(d) / abssum * 2;
            ns++;
        }
    }
    c.smape = ns ? smape / (double)ns * 100 : NAN;
    return c;
}

/* The largest |term / actual| over the points, NaN propagating like
 * numpy's max. */
static double contribution(double coef, const double *t, const double *y, size_t n)
{
    double mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double c = fabs(coef * t[i] / y[i]);
        if (c != c)
            return NAN;
        if (c > mx)
            mx = c;
    }
    return mx;
}

double tscope__adjusted_r2(double rss, double tss, size_t n, size_t nterms)
{
    if (!(tss > 0) || !isfinite(rss) || n <= nterms + 1)
        return NAN; /* no variance to explain, or no degrees of freedom left */
    double adj = 1.0 - (rss / tss) * ((double)n - 1.0) / ((double)n - (double)nterms - 1.0);
    return isfinite(adj) ? adj : NAN;
}

static void set_hyp(tscope_mterm_t *t, int h, double coef)
{
    memset(t, 0, sizeof *t);
    t->coef = coef;
    t->f[0].num = tscope__hyp[h][0];
    t->f[0].den = tscope__hyp[h][1];
    t->f[0].log = tscope__hyp[h][2];
}

/* Least squares of [1, cols[0 .. k)] on the points but skip (n values a
 * column) into c[0 .. k]: one fold, refitted.  scratch: (k + 2) * n. */
static void fit_fold(const double *cols, size_t k, const double *y, size_t n, size_t skip,
                     double *c, double *scratch)
{
    size_t kk = k + 1, m = 0;
    double *A = scratch, *b = scratch + kk * n;
    for (size_t i = 0; i < n; i++) {
        if (i == skip)
            continue;
        A[m] = 1;
        for (size_t j = 0; j < k; j++)
            A[(j + 1) * (n - 1) + m] = cols[j * n + i];
        b[m++] = y[i];
    }
    tscope__lstsq(A, b, n - 1, kk, c);
}

/* Leave-one-out cost of c0 + sum c_j * cols_j with each fold downdated
 * from the fit on all points (Sherman-Morrison): with X = QR (columns
 * scaled), coefficients beta and residuals r, the fit without point s is
 *     beta - (X'X)^-1 x_s * r_s / (1 - h_s),   h_s = x_s' (X'X)^-1 x_s,
 * where (X'X)^-1 x_s = R^-1 z and h_s = |z|^2 with z = R^-T x_s: O(k^2) a
 * fold.  Columns dependent on all points stay at 0 in every fold.
 * scratch: 2 * (k + 2) * n. */
static struct cost loo_downdate(const double *cols, size_t k, const double *y, size_t n,
                                const struct folds *f, double *scratch)
{
    size_t kk = k + 1, live[TSCOPE_MODEL_MAX_TERMS + 1], nlive = 0;
    double *A = scratch, *b = scratch + kk * n, *spare = scratch + (kk + 1) * n;
    for (size_t i = 0; i < n; i++) {
        A[i] = 1;
        for (size_t j = 0; j < k; j++)
            A[(j + 1) * n + i] = cols[j * n + i];
        b[i] = y[i];
    }
    double beta[TSCOPE_MODEL_MAX_TERMS + 1];
    struct qr_info qi;
    householder_solve(A, b, n, kk, beta, &qi);
    for (size_t j = 0; j < kk; j++)
        if (!qi.dead[j])
            live[nlive++] = j;
#define R(a, b) A[live[b] * n + qi.piv[live[a]]] /* R of the live columns, a <= b */
    struct cost cost = {0, 0, 0};
    for (size_t s = 0; s < n; s++) {
        double x[TSCOPE_MODEL_MAX_TERMS + 1], z[TSCOPE_MODEL_MAX_TERMS + 1],
            w[TSCOPE_MODEL_MAX_TERMS + 1], c[TSCOPE_MODEL_MAX_TERMS + 1];
        x[0] = 1;
        for (size_t j = 0; j < k; j++)
            x[j + 1] = cols[j * n + s];
        double r = y[s], h = 0;
        for (size_t j = 0; j < kk; j++)
            r -= beta[j] * x[j];
        for (size_t a = 0; a < nlive; a++) { /* R' z = x (scaled) */
            double v = x[live[a]] / qi.scale[live[a]];
            for (size_t e = 0; e < a; e++)
                v -= R(e, a) * z[e];
            z[a] = v / R(a, a);
            h += z[a] * z[a];
        }
        if (1 - h >= LOO_MIN_SLACK) {
            for (size_t a = nlive; a-- > 0;) { /* R w = z */
                double v = z[a];
                for (size_t e = a + 1; e < nlive; e++)
                    v -= R(a, e) * w[e];
                w[a] = v / R(a, a);
            }
            memset(c, 0, kk * sizeof *c);
            for (size_t a = 0; a < nlive; a++)
                c[live[a]] = beta[live[a]] - w[a] / qi.scale[live[a]] * r / (1 - h);
        } else { /* the point holds nearly all the leverage of a column */
            fit_fold(cols, k, y, n, s, c, spare);
        }
        c[0] = clean_constant(c[0], TSCOPE__EPSILON, fold_min(f, s));
        double pred = c[0];
        for (size_t j = 0; j < k; j++)
            pred += c[j + 1] * x[j + 1];
        cost_fold(&cost, pred, y[s], n);
    }
#undef R
    return cost;
}

/* The least-squares fit of c0 + sum c_j * cols_j on all points into c
 * (c[0] the constant).  scratch: (k + 2) * n. */
static void fit_all(const double *cols, size_t k, const double *y, size_t n, double *c,
                    double *scratch)
{
    size_t kk = k + 1;
    double *A = scratch, *b = scratch + kk * n;
    for (size_t i = 0; i < n; i++) {
        A[i] = 1;
        for (size_t j = 0; j < k; j++)
            A[(j + 1) * n + i] = cols[j * n + i];
        b[i] = y[i];
    }
    tscope__lstsq(A, b, n, kk, c);
}

/* Cross-validated (or in-sample) scoring of a model with the terms whose
 * values are in cols[0 .. k) (n values each); writes the final
 * coefficients (c[0] constant).  Returns the cost.  scratch: 2 * (k + 2)
 * * n. */
static struct cost score_general(const double *cols, size_t k, const double *y, size_t n, int cv,
                                 const struct folds *f, double *c, double *scratch)
{
    struct cost cost = {0, 0, 0};
    size_t kk = k + 1;
    if (cv && n > f->refit_max && n > kk) {
        cost = loo_downdate(cols, k, y, n, f, scratch);
    } else if (cv) {
        for (size_t skip = 0; skip < n; skip++) {
            fit_fold(cols, k, y, n, skip, c, scratch);
            c[0] = clean_constant(c[0], TSCOPE__EPSILON, fold_min(f, skip));
            double pred = c[0];
            for (size_t j = 0; j < k; j++)
                pred += c[j + 1] * cols[j * n + skip];
            cost_fold(&cost, pred, y[skip], n);
        }
    }
    fit_all(cols, k, y, n, c, scratch);
    if (!cv) {
        c[0] = clean_constant(c[0], TSCOPE__CLEAN_NO_CV, fold_min(f, n));
        double *pred = scratch + (k + 1) * n;
        for (size_t i = 0; i < n; i++) {
            pred[i] = c[0];
            for (size_t j = 0; j < k; j++)
                pred[i] += c[j + 1] * cols[j * n + i];
        }
        cost = cost_all(pred, y, n);
    }
    return cost;
}

/* The centred sums of the candidate terms' values over all points, for
 * the multi-term search: each term's mean, and the centred products of
 * every pair of terms and of each term with the values.  Computed once
 * (O(42^2 n), in blocks of points that stay in the cache), they give
 * every combination's least squares and leverages without a pass over
 * the points (loo_centred). */
struct centred {
    double tmean[TSCOPE__NHYP], ymean;
    double sty[TSCOPE__NHYP];
    double stt[TSCOPE__NHYP][TSCOPE__NHYP];
};

/* The sum of a[i] * b[i], four partial sums (independent additions). */
static double dot(const double *a, const double *b, size_t len)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < len; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

enum { CENTRED_BLOCK = 256 };

/* The sums of g for the hypotheses cand[0 .. ncand).  0 or TSCOPE_ENOMEM. */
static int centred_init(struct centred *g, const double *tvals, const double *y, size_t n,
                        const int *cand, int ncand)
{
    double *buf = malloc((size_t)(ncand + 1) * CENTRED_BLOCK * sizeof *buf);
    if (!buf)
        return TSCOPE_ENOMEM;
    memset(g, 0, sizeof *g);
    double sy = 0;
    for (size_t i = 0; i < n; i++)
        sy += y[i];
    g->ymean = sy / (double)n;
    for (int a = 0; a < ncand; a++) {
        const double *t = tvals + (size_t)cand[a] * n;
        double st = 0;
        for (size_t i = 0; i < n; i++)
            st += t[i];
        g->tmean[cand[a]] = st / (double)n;
    }
    double *yc = buf + (size_t)ncand * CENTRED_BLOCK;
    for (size_t start = 0; start < n; start += CENTRED_BLOCK) {
        size_t len = n - start < CENTRED_BLOCK ? n - start : CENTRED_BLOCK;
        for (int a = 0; a < ncand; a++) {
            const double *t = tvals + (size_t)cand[a] * n + start;
            double *d = buf + (size_t)a * CENTRED_BLOCK, m = g->tmean[cand[a]];
            for (size_t i = 0; i < len; i++)
                d[i] = t[i] - m;
        }
        for (size_t i = 0; i < len; i++)
            yc[i] = y[start + i] - g->ymean;
        for (int a = 0; a < ncand; a++) {
            const double *da = buf + (size_t)a * CENTRED_BLOCK;
            g->sty[cand[a]] += dot(da, yc, len);
            for (int b = a; b < ncand; b++)
                g->stt[cand[a]][cand[b]] += dot(da, buf + (size_t)b * CENTRED_BLOCK, len);
        }
    }
    for (int a = 0; a < ncand; a++)
        for (int b = a + 1; b < ncand; b++)
            g->stt[cand[b]][cand[a]] = g->stt[cand[a]][cand[b]];
    free(buf);
    return 0;
}

/* A combination is scored from the centred sums while each of its terms
 * keeps at least this fraction of its centred sum of squares apart from
 * the others (the squared pivots of the Cholesky factor): below, the
 * terms are so nearly dependent that the sums would lose the digits the
 * QR factorisation keeps, and loo_downdate scores it. */
#define CENTRED_MIN_PIVOT 1e-6

/* Leave-one-out cost of c0 + sum c_j * t_{h_j} (k <= 3 terms) from the
 * centred sums: with S the terms' centred sums of squares and products
 * (S = LL') and d_s the point's centred term values, the fit on all
 * points is beta = S^-1 sty, c0 = ymean - tmean . beta, the leverage
 * h_s = 1/n + |L^-1 d_s|^2, and the fold without point s (Sherman-
 * Morrison) moves beta by -S^-1 d_s * r_s / (1 - h_s) and c0 by
 * -(1/n - tmean . S^-1 d_s) * r_s / (1 - h_s): O(k^2) a fold, no pass
 * over the points before the first.  The folds run in point order and
 * stop as soon as the SMAPE summed so far reaches limit: it only grows
 * (every fold adds a non-negative amount, or NaN), so the combination
 * cannot score below limit.  A fold whose point holds nearly all of a
 * term's leverage is refitted (as in loo_downdate; cols: room for k
 * columns, scratch: (k + 2) * n).  Returns 1 with *out, 0 when stopped
 * at limit, -1 when the terms are too nearly dependent
 * (CENTRED_MIN_PIVOT). */
static int loo_centred(const struct centred *g, const int *h, size_t k, const double *tvals,
                       const double *y, size_t n, const struct folds *f, double limit, double *cols,
                       double *scratch, struct cost *out)
{
    double L[3][3], beta[3], tm[3], v[3], w[3], c[4];
    const double *col[3];
    if (k > 3)
        return -1;
    for (size_t j = 0; j < k; j++) {
        col[j] = tvals + (size_t)h[j] * n;
        tm[j] = g->tmean[h[j]];
        for (size_t i = 0; i <= j; i++) {
            double s = g->stt[h[j]][h[i]];
            for (size_t e = 0; e < i; e++)
                s -= L[j][e] * L[i][e];
            if (i < j) {
                L[j][i] = s / L[i][i];
            } else {
                if (!(s > CENTRED_MIN_PIVOT * g->stt[h[j]][h[j]]) || !isfinite(s))
                    return -1;
                L[j][j] = sqrt(s);
            }
        }
    }
    for (size_t j = 0; j < k; j++) { /* L v = sty, then L' beta = v */
        double s = g->sty[h[j]];
        for (size_t e = 0; e < j; e++)
            s -= L[j][e] * v[e];
        v[j] = s / L[j][j];
    }
    for (size_t j = k; j-- > 0;) {
        double s = v[j];
        for (size_t e = j + 1; e < k; e++)
            s -= L[e][j] * beta[e];
        beta[j] = s / L[j][j];
    }
    double b0 = g->ymean, inv_n = 1 / (double)n;
    for (size_t j = 0; j < k; j++)
        b0 -= tm[j] * beta[j];
    int copied = 0;
    struct cost cost = {0, 0, 0};
    for (size_t s = 0; s < n; s++) {
        double q = 0, fit = b0;
        for (size_t j = 0; j < k; j++) {
            double d = col[j][s] - tm[j];
            for (size_t e = 0; e < j; e++)
                d -= L[j][e] * v[e];
            v[j] = d / L[j][j];
            q += v[j] * v[j];
            fit += beta[j] * col[j][s];
        }
        double lev = inv_n + q;
        if (1 - lev >= LOO_MIN_SLACK) {
            double r = (y[s] - fit) / (1 - lev), shift = inv_n;
            for (size_t j = k; j-- > 0;) { /* L' w = v */
                double x = v[j];
                for (size_t e = j + 1; e < k; e++)
                    x -= L[e][j] * w[e];
                w[j] = x / L[j][j];
                shift -= tm[j] * w[j];
                c[j + 1] = beta[j] - w[j] * r;
            }
            c[0] = b0 - shift * r;
        } else { /* the point holds nearly all the leverage of a term */
            if (!copied) {
                for (size_t j = 0; j < k; j++)
                    memcpy(cols + j * n, col[j], n * sizeof *cols);
                copied = 1;
            }
            fit_fold(cols, k, y, n, s, c, scratch);
        }
        c[0] = clean_constant(c[0], TSCOPE__EPSILON, fold_min(f, s));
        double pred = c[0];
        for (size_t j = 0; j < k; j++)
            pred += c[j + 1] * col[j][s];
        cost_fold(&cost, pred, y[s], n);
        if (!(cost.smape < limit))
            return 0;
    }
    *out = cost;
    return 1;
}

/* Scores the k-term model of hypotheses h[0 .. k); 1 if it is valid (finite,
 * every term passes the rejection rules) and beats *best.  g: the centred
 * sums (NULL: every combination scored by score_general). */
static int try_combination(const int *h, size_t k, const double *tvals, const double *y, size_t n,
                           int cv, const struct folds *f, const struct centred *g, double *cols,
                           double *scratch, struct cost *best, double *best_c)
{
    struct cost cost;
    double c[TSCOPE_MODEL_MAX_TERMS + 1];
    int scored = -1;
    if (g && cv && n > f->refit_max && n > k + 1)
        scored = loo_centred(g, h, k, tvals, y, n, f, best->smape, cols, scratch, &cost);
    if (scored == 0)
        return 0;
    for (size_t j = 0; j < k; j++)
        memcpy(cols + j * n, tvals + (size_t)h[j] * n, n * sizeof *cols);
    if (scored < 0)
        cost = score_general(cols, k, y, n, cv, f, c, scratch);
    if (!isfinite(cost.rss) || !(cost.smape < best->smape))
        return 0;
    if (scored > 0)
        fit_all(cols, k, y, n, c, scratch);
    for (size_t j = 0; j < k; j++)
        if (c[j + 1] == 0 || contribution(c[j + 1], cols + j * n, y, n) < TSCOPE__EPSILON)
            return 0;
    *best = cost;
    memcpy(best_c, c, (k + 1) * sizeof *c);
    return 1;
}

/* The 42 term values at each point into tvals (hypothesis h at tvals +
 * h * n; log terms 0 unless logok), bit for bit what tscope__factor_eval
 * gives, with each power computed once a point: the 42 hypotheses share
 * 19 exponents of p and 2 of log2(p).  The exponents stay values read from
 * the table, as in tscope__factor_eval: with a constant exponent the
 * compiler turns pow(l, 2.0) into l * l, which differs from glibc's pow in
 * the last bit now and then. */
static void term_values(const double *x, size_t n, int logok, double *tvals)
{
    int same_exp[TSCOPE__NHYP], same_log[TSCOPE__NHYP]; /* the first hypothesis with h's */
    for (int h = 0; h < TSCOPE__NHYP; h++) {
        same_exp[h] = same_log[h] = h;
        for (int g = h; g-- > 0;) {
            if (tscope__hyp[g][0] * tscope__hyp[h][1] == tscope__hyp[h][0] * tscope__hyp[g][1])
                same_exp[h] = g;
            if (tscope__hyp[g][2] == tscope__hyp[h][2])
                same_log[h] = g;
        }
    }
    for (size_t i = 0; i < n; i++) {
        double p = x[i], pw[TSCOPE__NHYP], lg[TSCOPE__NHYP], *t = tvals + i;
        for (int h = 0; h < TSCOPE__NHYP; h++) {
            int num = tscope__hyp[h][0], den = tscope__hyp[h][1], lgexp = tscope__hyp[h][2];
            if (!num)
                pw[h] = 1;
            else if (same_exp[h] == h)
                pw[h] = pow(p, (double)num / (double)den);
            else
                pw[h] = pw[same_exp[h]];
            if (!lgexp) {
                t[(size_t)h * n] = pw[h];
            } else if (!logok) {
                t[(size_t)h * n] = 0;
            } else {
                lg[h] = same_log[h] == h ? pow(log2(p), (double)lgexp) : lg[same_log[h]];
                t[(size_t)h * n] = pw[h] * lg[h];
            }
        }
    }
}

/* Beyond Extra-P: the best model of k = 2 .. max_terms distinct hypotheses
 * (every combination), kept only while each added term lowers the SMAPE by
 * more than 10% (see the top of the file). */
static int add_terms(const double *y, size_t n, const tscope_mfit_opts_t *o, int logok,
                     const struct folds *f, const double *tvals, double tss, tscope_model_t *m)
{
    size_t maxk = o->max_terms < TSCOPE_MODEL_MAX_TERMS ? o->max_terms : TSCOPE_MODEL_MAX_TERMS;
    if (maxk > 3)
        maxk = 3; /* 11,480 combinations of three; four would be 111,930 */
    int cand[TSCOPE__NHYP], ncand = 0;
    for (int h = 0; h < TSCOPE__NHYP; h++)
        if (logok || !tscope__hyp[h][2])
            cand[ncand++] = h;
    double *cols = malloc((maxk * n + (maxk + 2) * n * 2) * sizeof *cols);
    if (!cols)
        return TSCOPE_ENOMEM;
    double *scratch = cols + maxk * n;
    /* the centred sums where the folds are downdated (loo_centred) */
    struct centred *g = NULL;
    if (o->crossvalidation && n > f->refit_max && n >= 2 + 1 + 3) {
        g = malloc(sizeof *g);
        if (!g || centred_init(g, tvals, y, n, cand, ncand)) {
            free(g);
            free(cols);
            return TSCOPE_ENOMEM;
        }
    }
    for (size_t k = 2; k <= maxk && n >= k + 1 + 3; k++) {
        struct cost best = {INFINITY, 0.9 * m->smape, 0};
        double best_c[TSCOPE_MODEL_MAX_TERMS + 1];
        int h[3], best_h[3], found = 0;
        for (int a = 0; a < ncand; a++)
            for (int b = a + 1; b < ncand; b++) {
                h[0] = cand[a];
                h[1] = cand[b];
                if (k == 2) {
                    if (try_combination(h, 2, tvals, y, n, o->crossvalidation, f, g, cols, scratch,
                                        &best, best_c))
                        memcpy(best_h, h, sizeof h), found = 1;
                    continue;
                }
                for (int d = b + 1; d < ncand; d++) {
                    h[2] = cand[d];
                    if (try_combination(h, 3, tvals, y, n, o->crossvalidation, f, g, cols, scratch,
                                        &best, best_c))
                        memcpy(best_h, h, sizeof h), found = 1;
                }
            }
        if (!found)
            break;
        m->c0 = best_c[0];
        m->nterms = (unsigned)k;
        for (size_t j = 0; j < k; j++)
            set_hyp(&m->terms[j], best_h[j], best_c[j + 1]);
        m->rss = best.rss;
        m->smape = best.smape;
        m->re = best.re;
        m->ar2 = tscope__adjusted_r2(m->rss, tss, n, k);
    }
    free(g);
    free(cols);
    return 0;
}

int tscope__fit_single(const double *x, const double *y, size_t n, const tscope_mfit_opts_t *o,
                       tscope_model_t *m)
{
    return tscope__fit_single_folds(x, y, n, o, TSCOPE__LOO_REFIT_MAX, m);
}

int tscope__fit_single_folds(const double *x, const double *y, size_t n,
                             const tscope_mfit_opts_t *o, size_t refit_max, tscope_model_t *m)
{
    memset(m, 0, sizeof *m);
    m->nparams = 1;
    m->npoints = n;
    if (!n)
        return TSCOPE_EINVAL;
    m->lo[0] = m->hi[0] = x[0];
    int logok = 1;
    for (size_t i = 0; i < n; i++) {
        if (x[i] < 1)
            logok = 0;
        if (x[i] < m->lo[0])
            m->lo[0] = x[i];
        if (x[i] > m->hi[0])
            m->hi[0] = x[i];
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += y[i];
    double mean = sum / (double)n; /* numpy.mean: the sum over n */
    double tss = 0, smape = 0;
    for (size_t i = 0; i < n; i++) {
        double d = mean - y[i];
        tss += d * d;
        if (y[i] != 0)
            m->re = fabs(d) / y[i]; /* Extra-P keeps the last point's (sic) */
        double abssum = fabs(y[i]) + fabs(mean);
        if (abssum != 0)
            smape += fabs(d) / abssum * 2;
    }
    m->c0 = mean;
    m->rss = tss;
    m->smape = smape / (double)n * 100;
    m->ar2 = tss > 0 ? 1 : NAN; /* Extra-P's constant model: 1; undefined without variance */
    if (tss == 0)
        return 0;

    double *tvals = malloc((TSCOPE__NHYP + 1) * n * sizeof *tvals);
    if (!tvals)
        return TSCOPE_ENOMEM;
    double *pred = tvals + TSCOPE__NHYP * n;
    struct folds f = folds_init(y, n, refit_max);
    term_values(x, n, logok, tvals);
    for (int h = 0; h < TSCOPE__NHYP; h++) {
        if (!logok && tscope__hyp[h][2])
            continue;
        const double *t = tvals + (size_t)h * n;
        struct cost cost = {0, 0, 0};
        double c0, c1;
        if (o->crossvalidation) {
            cost = n > refit_max && n > 2 ? loo_line_downdate(t, y, n, &f)
                                          : loo_line_refit(t, y, n, &f);
            fit_line(t, y, n, n, &c0, &c1);
        } else {
            fit_line(t, y, n, n, &c0, &c1);
            c0 = clean_constant(c0, TSCOPE__CLEAN_NO_CV, fold_min(&f, n));
            for (size_t i = 0; i < n; i++)
                pred[i] = c0 + c1 * t[i];
            cost = cost_all(pred, y, n);
        }
        if (cost.rss != cost.rss || isinf(cost.rss))
            continue; /* Extra-P: "numeric imprecision", ignored */
        if (c1 == 0 || contribution(c1, t, y, n) < TSCOPE__EPSILON)
            continue;
        if (cost.smape < m->smape) {
            m->c0 = c0;
            m->nterms = 1;
            set_hyp(&m->terms[0], h, c1);
            m->rss = cost.rss;
            m->smape = cost.smape;
            m->re = cost.re;
            m->ar2 = tscope__adjusted_r2(cost.rss, tss, n, 1);
        }
    }
    int rc = 0;
    if (m->nterms == 1 && o->max_terms > 1)
        rc = add_terms(y, n, o, logok, &f, tvals, tss, m);
    free(tvals);
    return rc;
}

int tscope_model_fit(const tscope_mseries_t *s, unsigned nparams, const tscope_mfit_opts_t *opts,
                     tscope_model_t *out)
{
    tscope_mfit_opts_t o = {sizeof o, 1, 1};
    if (opts) {
        if (opts->struct_size < sizeof o)
            return TSCOPE_EINVAL;
        o = *opts;
        if (o.max_terms < 1)
            o.max_terms = 1;
    }
    if (!s || !out || nparams < 1 || nparams > TSCOPE_MODEL_MAX_PARAMS || !s->npoints)
        return TSCOPE_EINVAL;
    if (nparams > 1)
        return tscope__fit_multi(s, nparams, &o, out);
    double *xy = malloc(2 * s->npoints * sizeof *xy);
    if (!xy)
        return TSCOPE_ENOMEM;
    for (size_t i = 0; i < s->npoints; i++) {
        xy[i] = s->points[i].coord[0];
        xy[s->npoints + i] = s->points[i].mean;
    }
    int rc = tscope__fit_single(xy, xy + s->npoints, s->npoints, &o, out);
    free(xy);
    return rc;
}

double tscope_model_eval(const tscope_model_t *m, const double *coord)
{
    double v = m->c0;
    for (unsigned k = 0; k < m->nterms; k++)
        v += m->terms[k].coef * tscope__term_eval(&m->terms[k], m->nparams, coord);
    return v;
}
