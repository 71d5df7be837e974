/* multi.c - the multi-parameter modeler, following Extra-P's method.
 *
 * 1. For each parameter, the points that vary only in it: the points are
 *    grouped by their other coordinates, the largest groups kept, regrouped
 *    by this parameter's value (dropping points whose other coordinates the
 *    first such group does not have), and each value gets the mean of its
 *    points' values (Extra-P's "auto" point selection).
 * 2. The single-parameter modeler (fit.c, one term) on each; parameters
 *    whose model is constant are dropped.
 * 3. None left: the constant model.  One left: its single-parameter model
 *    as is, or refitted on all points, whichever has the lower SMAPE on all
 *    points.  Several: the products and sums of their terms (two: x*y, x+y,
 *    x+x*y, y+x*y; three: Extra-P's 23 combinations; four: product and
 *    sum), each fitted by least squares on all points; the lowest SMAPE on
 *    all points wins, among those whose terms pass the contribution rule
 *    (the first hypothesis is the starting point whatever it scores).
 *
 * Cost: step 1 sorts (O(n log n) in the points; the pairwise comparisons
 * it replaced were quadratic, cubic for scattered points), the fits are
 * linear (fit.c) and the hypotheses of step 3 are a handful of least
 * squares on all points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

/* Hypotheses as lists of terms, each term a bit set of the kept
 * parameters (bit i: the i-th parameter with a term); 0 ends a list. */
static const uint8_t hyp2[][4] = {{3}, {1, 2}, {1, 3}, {2, 3}};
static const uint8_t hyp3[][4] = {{7},       {1, 2, 4}, {7, 1},    {7, 2},    {7, 4},    {7, 3},
                                  {7, 6},    {7, 5},    {7, 3, 4}, {7, 6, 1}, {7, 5, 2}, {7, 1, 2},
                                  {7, 1, 4}, {7, 2, 4}, {3, 4},    {3, 4, 2}, {3, 4, 1}, {5, 2},
                                  {5, 2, 1}, {5, 2, 4}, {6, 1},    {6, 1, 2}, {6, 1, 4}};
static const uint8_t hyp4[][4] = {{15}, {1, 2, 4, 8}};

/* A point's coordinates but the one of the parameter being selected
 * (padded with 0), and its index. */
struct other_key {
    double other[TSCOPE_MODEL_MAX_PARAMS - 1];
    size_t index;
};

/* One coordinate of a point and its position in the member list. */
struct value_key {
    double v;
    size_t pos;
};

/* A total order on doubles that agrees with ==: NaN last. */
static int double_order(double a, double b)
{
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    return (a != a) - (b != b);
}

static int other_key_compare(const void *a, const void *b)
{
    const struct other_key *x = a, *y = b;
    for (unsigned l = 0; l < TSCOPE_MODEL_MAX_PARAMS - 1; l++) {
        int c = double_order(x->other[l], y->other[l]);
        if (c)
            return c;
    }
    return (x->index > y->index) - (x->index < y->index);
}

static int value_key_compare(const void *a, const void *b)
{
    const struct value_key *x = a, *y = b;
    int c = double_order(x->v, y->v);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* Equal other coordinates (==: a NaN equals nothing). */
static int same_other(const struct other_key *x, const struct other_key *y)
{
    for (unsigned l = 0; l < TSCOPE_MODEL_MAX_PARAMS - 1; l++)
        if (x->other[l] != y->other[l])
            return 0;
    return 1;
}

/* Step 1 for parameter p: x[], y[] get the values, *nx their number.
 * Classes (the points with equal other coordinates) come from sorting on
 * the other coordinates, the values of p from sorting the members on p:
 * O(n log n).  The longest classes, first point first, are the members;
 * each value of p among them (in the order first seen) gets the mean of
 * its members' values, skipping after the first value the members whose
 * class has no member at the first value.  0 or TSCOPE_ENOMEM. */
static int select_points(const tscope_mseries_t *s, unsigned np, unsigned p, double *x, double *y,
                         size_t *nx)
{
    size_t n = s->npoints;
    struct other_key *ok = malloc(n * sizeof *ok);
    struct value_key *vk = malloc(n * sizeof *vk);
    size_t *idx = malloc((5 * n + 1) * sizeof *idx);
    double *bsum = malloc(2 * n * sizeof *bsum);
    unsigned char *has_first = calloc(n, 1);
    if (!ok || !vk || !idx || !bsum || !has_first) {
        free(ok);
        free(vk);
        free(idx);
        free(bsum);
        free(has_first);
        return TSCOPE_ENOMEM;
    }
    size_t *class_of = idx, *member = idx + n, *bucket_of = idx + 2 * n, *bcount = idx + 3 * n,
           *run_start = idx + 4 * n; /* n + 1 */
    double *bvalue = bsum + n;
    for (size_t i = 0; i < n; i++) {
        memset(ok[i].other, 0, sizeof ok[i].other);
        for (unsigned l = 0, m = 0; l < np; l++)
            if (l != p)
                ok[i].other[m++] = s->points[i].coord[l];
        ok[i].index = i;
    }
    qsort(ok, n, sizeof *ok, other_key_compare);
    size_t nclass = 0, maxlen = 0;
    for (size_t a = 0, b; a < n; a = b) { /* ok[a .. b): one class, in point order */
        for (b = a + 1; b < n && same_other(&ok[a], &ok[b]); b++)
            ;
        for (size_t c = a; c < b; c++)
            class_of[ok[c].index] = nclass;
        run_start[nclass++] = a;
        if (b - a > maxlen)
            maxlen = b - a;
    }
    run_start[nclass] = n;
    size_t nm = 0; /* members of the longest classes, by first point, then point order */
    for (size_t i = 0; i < n; i++) {
        size_t a = run_start[class_of[i]], b = run_start[class_of[i] + 1];
        if (ok[a].index == i && b - a == maxlen)
            for (size_t c = a; c < b; c++)
                member[nm++] = ok[c].index;
    }
    for (size_t m = 0; m < nm; m++) {
        vk[m].v = s->points[member[m]].coord[p];
        vk[m].pos = m;
    }
    qsort(vk, nm, sizeof *vk, value_key_compare);
    size_t nbuckets = 0;
    for (size_t a = 0, b; a < nm; a = b) { /* vk[a .. b): one value (a NaN: none) */
        for (b = a + 1; b < nm && vk[b].v == vk[a].v; b++)
            ;
        int valid = vk[a].v == vk[a].v;
        for (size_t c = a; c < b; c++)
            bucket_of[vk[c].pos] = valid ? nbuckets : SIZE_MAX;
        if (valid) {
            bvalue[nbuckets] = vk[a].v; /* the first seen of the equal values */
            bsum[nbuckets] = 0;
            bcount[nbuckets++] = 0;
        }
    }
    size_t first = SIZE_MAX; /* the bucket of the first value seen */
    for (size_t m = 0; m < nm && first == SIZE_MAX; m++)
        first = bucket_of[m];
    for (size_t m = 0; m < nm; m++)
        if (bucket_of[m] == first)
            has_first[class_of[member[m]]] = 1;
    for (size_t m = 0; m < nm; m++) {
        size_t bk = bucket_of[m];
        if (bk == SIZE_MAX || (bk != first && !has_first[class_of[member[m]]]))
            continue;
        bsum[bk] += s->points[member[m]].mean;
        bcount[bk]++;
    }
    size_t nb = 0;
    for (size_t m = 0; m < nm; m++) { /* the buckets in the order first seen */
        size_t bk = bucket_of[m];
        if (bk == SIZE_MAX || !bcount[bk])
            continue;
        x[nb] = bvalue[bk];
        y[nb++] = bsum[bk] / (double)bcount[bk];
        bcount[bk] = 0;
    }
    *nx = nb;
    free(ok);
    free(vk);
    free(idx);
    free(bsum);
    free(has_first);
    return 0;
}

struct mcost {
    double rss, smape, re;
};

static struct mcost multi_cost(const tscope_model_t *m, const tscope_mseries_t *s)
{
    struct mcost c = {0, 0, 0};
    double smape = 0, re = 0;
    size_t n = s->npoints;
    for (size_t i = 0; i < n; i++) {
        double pred = tscope_model_eval(m, s->points[i].coord), actual = s->points[i].mean;
        double d = pred - actual, abssum = fabs(actual) + fabs(pred);
        re += d == 0 ? 0 : actual == 0 ? NAN : fabs(d) / actual;
        c.rss += d * d;
        if (abssum != 0)
            smape += fabs(d) / abssum * 2;
    }
    c.re = re / (double)n;
    c.smape = smape / (double)n * 100;
    return c;
}

static void set_cost(tscope_model_t *m, struct mcost c, double tss, size_t n)
{
    m->rss = c.rss;
    m->smape = c.smape;
    m->re = c.re;
    unsigned pairs = 0;
    for (unsigned k = 0; k < m->nterms; k++)
        for (unsigned l = 0; l < m->nparams; l++)
            pairs += m->terms[k].f[l].num || m->terms[k].f[l].log;
    m->ar2 = tscope__adjusted_r2(c.rss, tss, n, pairs);
}

/* Least squares of m's terms (coefficients ignored) on all points. */
static int refit(tscope_model_t *m, const tscope_mseries_t *s)
{
    size_t n = s->npoints, k = m->nterms + 1;
    double *A = malloc((k + 1) * n * sizeof *A);
    if (!A)
        return TSCOPE_ENOMEM;
    double *b = A + k * n, c[TSCOPE_MODEL_MAX_TERMS + 1];
    for (size_t i = 0; i < n; i++) {
        A[i] = 1;
        for (unsigned t = 0; t < m->nterms; t++)
            A[(t + 1) * n + i] = tscope__term_eval(&m->terms[t], m->nparams, s->points[i].coord);
        b[i] = s->points[i].mean;
    }
    tscope__lstsq(A, b, n, k, c);
    m->c0 = c[0];
    for (unsigned t = 0; t < m->nterms; t++)
        m->terms[t].coef = c[t + 1];
    free(A);
    return 0;
}

static int terms_contribute(const tscope_model_t *m, const tscope_mseries_t *s)
{
    for (unsigned t = 0; t < m->nterms; t++) {
        const tscope_mterm_t *term = &m->terms[t];
        if (term->coef == 0)
            return 0;
        double mx = -INFINITY;
        for (size_t i = 0; i < s->npoints; i++) {
            double c = fabs(term->coef * tscope__term_eval(term, m->nparams, s->points[i].coord) /
                            s->points[i].mean);
            if (c != c)
                return 1; /* NaN: numpy's max is NaN, and NaN < eps is false */
            if (c > mx)
                mx = c;
        }
        if (mx < TSCOPE__EPSILON)
            return 0;
    }
    return 1;
}

int tscope__fit_multi(const tscope_mseries_t *s, unsigned np, const tscope_mfit_opts_t *o,
                      tscope_model_t *m)
{
    size_t n = s->npoints;
    double *xy = malloc(2 * n * sizeof *xy);
    if (!xy)
        return TSCOPE_ENOMEM;
    tscope_mfit_opts_t o1 = *o;
    o1.max_terms = 1;
    tscope_model_t sp[TSCOPE_MODEL_MAX_PARAMS];
    int rc = 0;
    for (unsigned p = 0; p < np && !rc; p++) {
        size_t nb = 0;
        rc = select_points(s, np, p, xy, xy + n, &nb);
        if (!rc)
            rc = tscope__fit_single(xy, xy + n, nb, &o1, &sp[p]);
    }
    free(xy);
    if (rc)
        return rc;

    memset(m, 0, sizeof *m);
    m->nparams = np;
    m->npoints = n;
    m->multi_form = 1;
    double sum = 0;
    for (unsigned l = 0; l < np; l++)
        m->lo[l] = m->hi[l] = s->points[0].coord[l];
    for (size_t i = 0; i < n; i++) {
        sum += s->points[i].mean;
        for (unsigned l = 0; l < np; l++) {
            m->lo[l] = fmin(m->lo[l], s->points[i].coord[l]);
            m->hi[l] = fmax(m->hi[l], s->points[i].coord[l]);
        }
    }
    double mean = sum / (double)n, tss = 0;
    for (size_t i = 0; i < n; i++)
        tss += (s->points[i].mean - mean) * (s->points[i].mean - mean);
    unsigned kept[TSCOPE_MODEL_MAX_PARAMS], nkept = 0;
    for (unsigned p = 0; p < np; p++)
        if (sp[p].nterms > 0)
            kept[nkept++] = p;

    if (nkept == 0) { /* Extra-P's constant hypothesis, costed on all points */
        m->c0 = mean;
        double smape = 0;
        for (size_t i = 0; i < n; i++) {
            double a = s->points[i].mean, d = mean - a, abssum = fabs(a) + fabs(mean);
            m->rss += d * d;
            if (a != 0)
                m->re = fabs(d) / a;
            if (abssum != 0)
                smape += fabs(d) / abssum * 2;
        }
        m->smape = smape / (double)n * 100;
        m->ar2 = tss > 0 ? 1 : NAN; /* as the single-parameter constant model */
        m->multi_form = 0;
        return 0;
    }
    if (nkept == 1) {
        unsigned p = kept[0];
        tscope_model_t reused = *m, recomputed;
        reused.nterms = 1;
        reused.c0 = sp[p].c0;
        reused.terms[0].coef = sp[p].terms[0].coef;
        reused.terms[0].f[p] = sp[p].terms[0].f[0];
        struct mcost c = multi_cost(&reused, s);
        recomputed = reused;
        if ((rc = refit(&recomputed, s)))
            return rc;
        struct mcost c2 = multi_cost(&recomputed, s);
        if (c2.smape < c.smape) {
            reused = recomputed;
            c = c2;
        }
        *m = reused;
        set_cost(m, c, tss, n);
        return 0;
    }

    const uint8_t(*hyps)[4] = nkept == 2 ? hyp2 : nkept == 3 ? hyp3 : hyp4;
    size_t nh = nkept == 2   ? sizeof hyp2 / sizeof hyp2[0]
                : nkept == 3 ? sizeof hyp3 / sizeof hyp3[0]
                             : sizeof hyp4 / sizeof hyp4[0];
    tscope_model_t best;
    struct mcost best_cost = {0, 0, 0};
    for (size_t h = 0; h < nh; h++) {
        tscope_model_t cand = *m;
        for (unsigned t = 0; t < 4 && hyps[h][t]; t++) {
            tscope_mterm_t *term = &cand.terms[cand.nterms++];
            memset(term, 0, sizeof *term);
            for (unsigned b = 0; b < nkept; b++)
                if (hyps[h][t] & (1u << b))
                    term->f[kept[b]] = sp[kept[b]].terms[0].f[0];
        }
        if ((rc = refit(&cand, s)))
            return rc;
        struct mcost c = multi_cost(&cand, s);
        if (h == 0) { /* Extra-P starts from the first hypothesis, checked or not */
            best = cand;
            best_cost = c;
        }
        if (!terms_contribute(&cand, s))
            continue;
        if (c.smape < best_cost.smape) {
            best = cand;
            best_cost = c;
        }
    }
    *m = best;
    set_cost(m, best_cost, tss, n);
    return 0;
}
