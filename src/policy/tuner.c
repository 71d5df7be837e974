/* tuner.c - search strategies over a parameter space, as ask/tell sessions
 * (include/taskscope/policy.h).
 *
 * Every strategy is a pair: plan() fills a batch of points to measure,
 * digest() reads their objectives and decides the next batch (or that the
 * search is over).  next()/report() walk through the batch; a point already
 * measured (points are snapped to the grid, so strategies revisit them) is
 * answered from the cache without a new evaluation.  Internally points live
 * in [0,1]^d (scaled per dimension); they are snapped to the grid and
 * clamped to the range before they are measured.
 *
 *   exhaustive   every grid point in order; with passes = 2 there and back,
 *                each point's objective the mean of its two measurements
 *   random       uniformly random grid points, max_evals of them
 *   hill climb   all 2d neighbours of the current point (one step each way);
 *                moves to the best only if it gains more than the
 *                hysteresis (relative), else stops: no oscillation on a
 *                flat, noisy objective
 *   nelder-mead  the downhill simplex (reflect 1, expand 2, contract 1/2,
 *                shrink 1/2), d+1 vertices; stops when the simplex is
 *                smaller than half a grid step in every dimension
 *   pro          parallel rank order (Tabatabaee, Tiwari, Hollingsworth):
 *                2d points; all but the best reflected through the best;
 *                expanded if that found a better point, otherwise the
 *                simplex shrinks towards the best
 *   annealing    random neighbours within a radius that shrinks with the
 *                temperature; a worse point is accepted with probability
 *                exp(-relative loss / temperature)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "taskscope/policy.h"

enum { MAXD = TSCOPE_TUNER_MAX_DIMS, MAXB = 2 * MAXD + 2 };

struct cached {
    double p[MAXD], f; /* f: the mean of n measurements */
    unsigned n;
};

struct tscope_tuner {
    tscope_tuner_kind_t kind;
    unsigned d;
    tscope_tune_dim_t dims[MAXD];
    tscope_tuner_opts_t o;
    unsigned evals, max_evals;
    int converged, pending;
    uint64_t rng;
    /* the batch */
    double batch[MAXB][MAXD], val[MAXB];
    unsigned nbatch, cursor;
    /* best so far */
    double best[MAXD], best_f;
    int has_best;
    /* cache of measured points */
    struct cached *cache;
    size_t ncache, cap_cache;
    unsigned cache_streak; /* consecutive cache answers: a search going in circles */
    /* strategy state */
    double x[MAXB][MAXD], fx[MAXB];       /* simplex / current point(s) */
    double refl[MAXB][MAXD], frefl[MAXB]; /* PRO: the reflected simplex */
    unsigned nx, phase, index;
    double cur[MAXD], fcur, temp;
    double start[MAXD]; /* copied from opts: the caller's array need not live on */
    int has_start;
};

static double urand(tscope_tuner_t *t)
{
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    return (double)(t->rng >> 11) / 9007199254740992.0;
}

/* grid positions of a dimension (0: continuous) */
static double positions(const tscope_tune_dim_t *dm)
{
    return dm->step > 0 ? floor((dm->max - dm->min) / dm->step + 1e-9) + 1 : 0;
}

/* [0,1] -> a value in range, on the grid */
static double to_value(const tscope_tune_dim_t *dm, double u)
{
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    if (dm->step > 0) {
        double n = positions(dm);
        double k = n > 1 ? floor(u * (n - 1) + 0.5) : 0;
        return dm->min + k * dm->step;
    }
    return dm->min + u * (dm->max - dm->min);
}

static double to_unit(const tscope_tune_dim_t *dm, double v)
{
    double w = dm->step > 0 ? (positions(dm) - 1) * dm->step : dm->max - dm->min;
    return w > 0 ? (v - dm->min) / w : 0.5;
}

/* half a grid step in unit coordinates (continuous: 1e-3) */
static double resolution(const tscope_tune_dim_t *dm)
{
    double n = positions(dm);
    return dm->step > 0 ? (n > 1 ? 0.5 / (n - 1) : 1) : 1e-3;
}

static void add_point(tscope_tuner_t *t, const double *u)
{
    memcpy(t->batch[t->nbatch++], u, t->d * sizeof *u);
}

static double worst(double f)
{
    return f != f ? INFINITY : f;
}

/* ---- strategies --------------------------------------------------------- */

static void plan_exhaustive(tscope_tuner_t *t)
{
    /* index -> grid point, mixed radix; odd passes walk the grid backwards */
    unsigned long long k = t->index++, grid = t->max_evals / t->o.passes;
    k = (k / grid) % 2 ? grid - 1 - k % grid : k % grid;
    double u[MAXD];
    for (unsigned i = 0; i < t->d; i++) {
        unsigned long long n = (unsigned long long)positions(&t->dims[i]);
        u[i] = n > 1 ? (double)(k % n) / (double)(n - 1) : 0;
        k /= n;
    }
    add_point(t, u);
}

static void plan_random(tscope_tuner_t *t)
{
    double u[MAXD];
    for (unsigned i = 0; i < t->d; i++)
        u[i] = urand(t);
    add_point(t, u);
}

static void start_point(tscope_tuner_t *t, double *u)
{
    for (unsigned i = 0; i < t->d; i++)
        u[i] = t->has_start ? to_unit(&t->dims[i], t->start[i]) : 0.5;
}

/* hill climbing: phase 0 measure the start, then sweeps of neighbours */
static void plan_hill(tscope_tuner_t *t)
{
    if (t->phase == 0) {
        start_point(t, t->cur);
        add_point(t, t->cur);
        return;
    }
    for (unsigned i = 0; i < t->d; i++) {
        double s = 2 * resolution(&t->dims[i]);
        if (t->dims[i].step <= 0)
            s = 0.1;
        for (int dir = -1; dir <= 1; dir += 2) {
            double u[MAXD];
            memcpy(u, t->cur, sizeof u);
            u[i] += dir * s;
            if (u[i] < -1e-12 || u[i] > 1 + 1e-12)
                continue;
            add_point(t, u);
        }
    }
}

static void digest_hill(tscope_tuner_t *t)
{
    if (t->phase == 0) {
        t->fcur = worst(t->val[0]);
        t->phase = 1;
        return;
    }
    unsigned b = 0;
    for (unsigned k = 1; k < t->nbatch; k++)
        if (worst(t->val[k]) < worst(t->val[b]))
            b = k;
    double gain = t->fcur - worst(t->val[b]);
    if (t->nbatch && gain > t->o.hysteresis * fabs(t->fcur) && gain > 0) {
        memcpy(t->cur, t->batch[b], sizeof t->cur);
        t->fcur = worst(t->val[b]);
    } else {
        t->converged = 1;
    }
}

static void sort_simplex(tscope_tuner_t *t)
{
    for (unsigned i = 1; i < t->nx; i++) /* insertion sort by value */
        for (unsigned j = i; j > 0 && t->fx[j] < t->fx[j - 1]; j--) {
            double tmp[MAXD], tf = t->fx[j];
            memcpy(tmp, t->x[j], sizeof tmp);
            memcpy(t->x[j], t->x[j - 1], sizeof tmp);
            memcpy(t->x[j - 1], tmp, sizeof tmp);
            t->fx[j] = t->fx[j - 1];
            t->fx[j - 1] = tf;
        }
}

/* The simplex has shrunk to one grid point (continuous dimensions: below
 * 1e-3 of the range) in every dimension. */
static int collapsed(const tscope_tuner_t *t)
{
    for (unsigned i = 0; i < t->d; i++) {
        double lo = to_value(&t->dims[i], t->x[0][i]), hi = lo;
        double ulo = t->x[0][i], uhi = ulo;
        for (unsigned k = 1; k < t->nx; k++) {
            double v = to_value(&t->dims[i], t->x[k][i]);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
            ulo = fmin(ulo, t->x[k][i]);
            uhi = fmax(uhi, t->x[k][i]);
        }
        if (t->dims[i].step > 0 ? hi > lo : uhi - ulo > 1e-3)
            return 0;
    }
    return 1;
}

static void initial_simplex(tscope_tuner_t *t, unsigned n)
{
    double s[MAXD];
    start_point(t, s);
    add_point(t, s);
    for (unsigned k = 1; k < n; k++) {
        double u[MAXD];
        memcpy(u, s, sizeof u);
        unsigned i = (k - 1) % t->d;
        double step = fmax(0.25, 2 * resolution(&t->dims[i])); /* at least one grid step */
        double delta = k <= t->d ? step : -step; /* PRO's second half: the other side */
        u[i] = u[i] + delta > 1   ? u[i] - fabs(delta)
               : u[i] + delta < 0 ? u[i] + fabs(delta)
                                  : u[i] + delta;
        add_point(t, u);
    }
}

enum { NM_INIT, NM_REFLECT, NM_EXPAND, NM_CONTRACT, NM_SHRINK };

static void centroid(const tscope_tuner_t *t, double *c)
{
    for (unsigned i = 0; i < t->d; i++) {
        c[i] = 0;
        for (unsigned k = 0; k < t->d; k++) /* the best d of d+1 */
            c[i] += t->x[k][i] / t->d;
    }
}

static void snap(const tscope_tuner_t *t, const double *u, double *v);

/* 1 if u lands on the grid point of a vertex of the simplex. */
static int on_vertex(const tscope_tuner_t *t, const double *u)
{
    double a[MAXD], b[MAXD];
    snap(t, u, a);
    for (unsigned k = 0; k < t->nx; k++) {
        snap(t, t->x[k], b);
        if (memcmp(a, b, t->d * sizeof *a) == 0)
            return 1;
    }
    return 0;
}

/* c + a (c - worst).  On a grid, a move that lands on a vertex again is
 * stretched by one grid step in its direction: otherwise a simplex narrower
 * than two steps can never leave its grid points. */
static void along(const tscope_tuner_t *t, const double *c, double a, double *out)
{
    for (unsigned i = 0; i < t->d; i++) {
        out[i] = c[i] + a * (c[i] - t->x[t->d][i]);
        out[i] = out[i] < 0 ? 0 : out[i] > 1 ? 1 : out[i];
    }
    if (a > 0 && on_vertex(t, out))
        for (unsigned i = 0; i < t->d; i++) {
            double dir = c[i] - t->x[t->d][i];
            if (t->dims[i].step > 0 && fabs(dir) > 1e-12) {
                out[i] += (dir > 0 ? 2 : -2) * resolution(&t->dims[i]);
                out[i] = out[i] < 0 ? 0 : out[i] > 1 ? 1 : out[i];
            }
        }
}

static void plan_nm(tscope_tuner_t *t)
{
    double c[MAXD], p[MAXD];
    switch (t->phase) {
    case NM_INIT:
        initial_simplex(t, t->d + 1);
        return;
    case NM_REFLECT:
        centroid(t, c);
        along(t, c, 1, p);
        break;
    case NM_EXPAND:
        centroid(t, c);
        along(t, c, 2, p);
        break;
    case NM_CONTRACT:
        centroid(t, c);
        along(t, c, t->fcur < t->fx[t->d] ? 0.5 : -0.5, p); /* outside, inside */
        break;
    default: /* shrink towards the best */
        for (unsigned k = 1; k <= t->d; k++) {
            for (unsigned i = 0; i < t->d; i++)
                p[i] = t->x[0][i] + 0.5 * (t->x[k][i] - t->x[0][i]);
            add_point(t, p);
        }
        return;
    }
    add_point(t, p);
}

static void digest_nm(tscope_tuner_t *t)
{
    double f = worst(t->val[0]);
    switch (t->phase) {
    case NM_INIT:
        t->nx = t->d + 1;
        for (unsigned k = 0; k < t->nx; k++) {
            memcpy(t->x[k], t->batch[k], sizeof t->x[k]);
            t->fx[k] = worst(t->val[k]);
        }
        break;
    case NM_REFLECT:
        memcpy(t->cur, t->batch[0], sizeof t->cur);
        t->fcur = f;
        if (f < t->fx[0]) {
            t->phase = NM_EXPAND;
            return;
        }
        if (f < t->fx[t->d - 1]) {
            memcpy(t->x[t->d], t->cur, sizeof t->cur);
            t->fx[t->d] = f;
            break;
        }
        t->phase = NM_CONTRACT;
        return;
    case NM_EXPAND:
        if (f < t->fcur) {
            memcpy(t->x[t->d], t->batch[0], sizeof t->cur);
            t->fx[t->d] = f;
        } else {
            memcpy(t->x[t->d], t->cur, sizeof t->cur);
            t->fx[t->d] = t->fcur;
        }
        break;
    case NM_CONTRACT:
        if (f < fmin(t->fcur, t->fx[t->d])) {
            memcpy(t->x[t->d], t->batch[0], sizeof t->cur);
            t->fx[t->d] = f;
            break;
        }
        t->phase = NM_SHRINK;
        return;
    default:
        for (unsigned k = 1; k <= t->d; k++) {
            memcpy(t->x[k], t->batch[k - 1], sizeof t->x[k]);
            t->fx[k] = worst(t->val[k - 1]);
        }
    }
    sort_simplex(t);
    t->phase = NM_REFLECT;
    if (collapsed(t))
        t->converged = 1;
}

/* PRO: phase 0 initial, 1 reflect, 2 expand, 3 shrink */
static void plan_pro(tscope_tuner_t *t)
{
    if (t->phase == 0) {
        initial_simplex(t, 2 * t->d);
        return;
    }
    double a = t->phase == 1 ? -1 : t->phase == 2 ? -2 : 0.5; /* x' = best + a (x - best) */
    for (unsigned k = 1; k < t->nx; k++) {
        double u[MAXD];
        for (unsigned i = 0; i < t->d; i++) {
            u[i] = t->x[0][i] + a * (t->x[k][i] - t->x[0][i]);
            u[i] = u[i] < 0 ? 0 : u[i] > 1 ? 1 : u[i];
        }
        add_point(t, u);
    }
}

static void take_batch(tscope_tuner_t *t, double (*x)[MAXD], double *fx)
{
    for (unsigned k = 1; k < t->nx; k++) {
        memcpy(x[k], t->batch[k - 1], sizeof x[0]);
        fx[k] = worst(t->val[k - 1]);
    }
}

static void digest_pro(tscope_tuner_t *t)
{
    double bestf = INFINITY;
    for (unsigned k = 0; k < t->nbatch; k++)
        bestf = fmin(bestf, worst(t->val[k]));
    if (t->phase == 0) {
        t->nx = t->nbatch;
        for (unsigned k = 0; k < t->nx; k++) {
            memcpy(t->x[k], t->batch[k], sizeof t->x[k]);
            t->fx[k] = worst(t->val[k]);
        }
        t->phase = 1;
    } else if (t->phase == 1) {
        if (bestf < t->fx[0]) { /* the reflection found a better point: try expanding */
            take_batch(t, t->refl, t->frefl);
            t->fcur = bestf;
            t->phase = 2;
            return;
        }
        t->phase = 3; /* no: shrink towards the best */
        return;
    } else if (t->phase == 2) {
        if (bestf < t->fcur) {
            take_batch(t, t->x, t->fx);
        } else { /* keep the reflected points */
            for (unsigned k = 1; k < t->nx; k++) {
                memcpy(t->x[k], t->refl[k], sizeof t->x[0]);
                t->fx[k] = t->frefl[k];
            }
        }
        t->phase = 1;
    } else {
        take_batch(t, t->x, t->fx);
        t->phase = 1;
    }
    sort_simplex(t);
    if (collapsed(t))
        t->converged = 1;
}

static void plan_annealing(tscope_tuner_t *t)
{
    if (t->phase == 0) {
        start_point(t, t->cur);
        add_point(t, t->cur);
        return;
    }
    double u[MAXD];
    double radius = 0.5 * t->temp + 1e-9;
    for (unsigned i = 0; i < t->d; i++) {
        double r = fmax(radius, 2 * resolution(&t->dims[i]));
        u[i] = t->cur[i] + (2 * urand(t) - 1) * r;
    }
    add_point(t, u);
}

static void digest_annealing(tscope_tuner_t *t)
{
    double f = worst(t->val[0]);
    if (t->phase == 0) {
        t->fcur = f;
        t->phase = 1;
        t->temp = 1;
        return;
    }
    double scale = fabs(t->best_f) > 0 && isfinite(t->best_f) ? fabs(t->best_f) : 1;
    double loss = (f - t->fcur) / scale;
    if (loss <= 0 || urand(t) < exp(-loss / fmax(t->temp * 0.1, 1e-12))) {
        memcpy(t->cur, t->batch[0], sizeof t->cur);
        t->fcur = f;
    }
    /* geometric cooling from 1 to 1e-3 over the budget */
    t->temp *= pow(1e-3, 1.0 / (t->max_evals > 1 ? t->max_evals : 2));
}

/* ---- the session ---------------------------------------------------------- */

static void plan(tscope_tuner_t *t)
{
    t->nbatch = t->cursor = 0;
    switch (t->kind) {
    case TSCOPE_TUNER_EXHAUSTIVE:
        plan_exhaustive(t);
        break;
    case TSCOPE_TUNER_RANDOM:
        plan_random(t);
        break;
    case TSCOPE_TUNER_HILL_CLIMB:
        plan_hill(t);
        break;
    case TSCOPE_TUNER_NELDER_MEAD:
        plan_nm(t);
        break;
    case TSCOPE_TUNER_PRO:
        plan_pro(t);
        break;
    default:
        plan_annealing(t);
    }
}

static void digest(tscope_tuner_t *t)
{
    switch (t->kind) {
    case TSCOPE_TUNER_EXHAUSTIVE:
    case TSCOPE_TUNER_RANDOM:
        break;
    case TSCOPE_TUNER_HILL_CLIMB:
        digest_hill(t);
        break;
    case TSCOPE_TUNER_NELDER_MEAD:
        digest_nm(t);
        break;
    case TSCOPE_TUNER_PRO:
        digest_pro(t);
        break;
    default:
        digest_annealing(t);
    }
}

static void snap(const tscope_tuner_t *t, const double *u, double *v)
{
    for (unsigned i = 0; i < t->d; i++)
        v[i] = to_value(&t->dims[i], u[i]);
}

static struct cached *lookup(tscope_tuner_t *t, const double *v)
{
    for (size_t i = 0; i < t->ncache; i++)
        if (memcmp(t->cache[i].p, v, t->d * sizeof *v) == 0)
            return &t->cache[i];
    return NULL;
}

static int budget_left(const tscope_tuner_t *t)
{
    return t->evals < t->max_evals && t->cache_streak < 10000;
}

int tscope_tuner_next(tscope_tuner_t *t, double *point)
{
    if (!t || !point)
        return TSCOPE_EINVAL;
    if (t->pending)
        return TSCOPE_ESTATE;
    while (!t->converged && budget_left(t)) {
        if (t->cursor == t->nbatch) {
            if (t->nbatch)
                digest(t);
            if (t->converged)
                break;
            plan(t);
            if (!t->nbatch) { /* nothing left to try */
                t->converged = 1;
                break;
            }
        }
        double v[MAXD];
        snap(t, t->batch[t->cursor], v);
        const struct cached *c = t->o.passes > 1 ? NULL : lookup(t, v);
        if (c) { /* measured before: answer from the cache */
            t->val[t->cursor++] = c->f;
            t->cache_streak++;
            continue;
        }
        memcpy(point, v, t->d * sizeof *v);
        t->pending = 1;
        return 0;
    }
    t->converged = 1;
    return TSCOPE_ESTATE;
}

int tscope_tuner_report(tscope_tuner_t *t, double objective)
{
    if (!t)
        return TSCOPE_EINVAL;
    if (!t->pending)
        return TSCOPE_ESTATE;
    double v[MAXD];
    snap(t, t->batch[t->cursor], v);
    struct cached *c = lookup(t, v); /* only repeated passes find one */
    if (c) {
        c->f = (worst(c->f) * c->n + worst(objective)) / (c->n + 1);
        c->n++;
    } else {
        if (t->ncache == t->cap_cache) {
            size_t cc = t->cap_cache ? t->cap_cache * 2 : 64;
            struct cached *n = realloc(t->cache, cc * sizeof *n);
            if (!n)
                return TSCOPE_ENOMEM;
            t->cache = n;
            t->cap_cache = cc;
        }
        c = &t->cache[t->ncache++];
        memcpy(c->p, v, sizeof v);
        c->f = objective;
        c->n = 1;
    }
    t->val[t->cursor++] = objective;
    t->pending = 0;
    t->cache_streak = 0;
    t->evals++;
    if (c->n > 1) { /* a mean changed: the best is the smallest mean */
        for (size_t i = 0; i < t->ncache; i++)
            if (i == 0 || worst(t->cache[i].f) < t->best_f) {
                memcpy(t->best, t->cache[i].p, t->d * sizeof *v);
                t->best_f = worst(t->cache[i].f);
            }
    } else if (!t->has_best || worst(objective) < t->best_f) {
        memcpy(t->best, v, t->d * sizeof *v);
        t->best_f = worst(objective);
    }
    t->has_best = 1;
    if (t->cursor == t->nbatch) {
        digest(t);
        t->nbatch = t->cursor = 0;
    }
    if (t->kind == TSCOPE_TUNER_EXHAUSTIVE && t->index >= t->max_evals && t->cursor == t->nbatch)
        t->converged = 1;
    if (!budget_left(t))
        t->converged = 1;
    return 0;
}

int tscope_tuner_converged(const tscope_tuner_t *t)
{
    return t ? t->converged : 1;
}

int tscope_tuner_best(const tscope_tuner_t *t, double *point, double *objective)
{
    if (!t || !point)
        return TSCOPE_EINVAL;
    if (!t->has_best)
        return TSCOPE_ESTATE;
    memcpy(point, t->best, t->d * sizeof *point);
    if (objective)
        *objective = t->best_f;
    return 0;
}

unsigned tscope_tuner_evals(const tscope_tuner_t *t)
{
    return t ? t->evals : 0;
}

int tscope_tuner_kind_parse(const char *name)
{
    static const char *const names[] = {"exhaustive",  "random", "hill_climb",
                                        "nelder_mead", "pro",    "annealing"};
    for (int i = 0; name && i < 6; i++)
        if (strcmp(name, names[i]) == 0)
            return i + 1;
    return -1;
}

int tscope_tuner_create(tscope_tuner_kind_t kind, const tscope_tune_dim_t *dims, unsigned ndims,
                        const tscope_tuner_opts_t *opts, tscope_tuner_t **out)
{
    if (!dims || !out || ndims < 1 || ndims > MAXD || kind < TSCOPE_TUNER_EXHAUSTIVE ||
        kind > TSCOPE_TUNER_ANNEALING || (opts && opts->struct_size < sizeof *opts))
        return TSCOPE_EINVAL;
    double grid = 1;
    for (unsigned i = 0; i < ndims; i++) {
        if (!(dims[i].min <= dims[i].max) || !(dims[i].step >= 0))
            return TSCOPE_EINVAL;
        if (kind == TSCOPE_TUNER_EXHAUSTIVE && dims[i].step <= 0)
            return TSCOPE_EINVAL; /* exhaustive search needs a grid */
        grid *= dims[i].step > 0 ? positions(&dims[i]) : 1;
    }
    tscope_tuner_t *t = calloc(1, sizeof *t);
    if (!t)
        return TSCOPE_ENOMEM;
    t->kind = kind;
    t->d = ndims;
    memcpy(t->dims, dims, ndims * sizeof *dims);
    t->o = (tscope_tuner_opts_t){sizeof t->o, 0, 0, 0.05, NULL, 1};
    if (opts)
        t->o = *opts;
    if (kind != TSCOPE_TUNER_EXHAUSTIVE || t->o.passes < 1)
        t->o.passes = 1;
    if (t->o.passes > 2)
        t->o.passes = 2;
    if (t->o.start) {
        memcpy(t->start, t->o.start, ndims * sizeof *t->start);
        t->has_start = 1;
        t->o.start = NULL;
    }
    t->max_evals = t->o.max_evals ? t->o.max_evals : 100;
    if (kind == TSCOPE_TUNER_EXHAUSTIVE)
        t->max_evals = (grid < 1e9 ? (unsigned)grid : 1000000000u) * t->o.passes;
    t->rng = t->o.seed ? t->o.seed : 0x9E3779B97F4A7C15ull;
    t->best_f = INFINITY;
    *out = t;
    return 0;
}

void tscope_tuner_destroy(tscope_tuner_t *t)
{
    if (t)
        free(t->cache);
    free(t);
}
