/* contention.c - the contention table of a calibration: from measurements
 * of components alone and next to synthetic co-runners (src/model/probe.c,
 * or a user's own runs read from a file), each component's sensitivity
 * (slowdown next to k copies of each probe), demand (how much it slows a
 * probe, in copies of that probe), handover (time added per element when
 * its input was just written on another core) and writes (how much of its
 * element it leaves written), each a model in the size: PMNF where the
 * measurements vary, a constant where they do not.  The composition
 * (compose.c) asks for them at one size through contention.h.
 *
 * Measurements file: one "COMPONENT<tab>KIND<tab>N<tab>VALUE" per line,
 * repetitions as repeated lines (their median is used); docs/modeling.md
 * documents the kinds.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contention.h"
#include "fit.h"

static const char *const kind_help =
    "alone, stream:K, cache:K, spin:K, slows:stream, slows:cache, slows:spin, after-writer, "
    "after-cold, reader-after, reader-writer, reader-cold, queue-in, queue-out, cores";

/* Whether kind is one of kind_help's (K: 1 .. TSCOPE_CONTENTION_MAX_COPIES). */
static int known_kind(const char *kind)
{
    static const char *const plain[] = {"alone",        "after-writer",  "after-cold",
                                        "reader-after", "reader-writer", "reader-cold",
                                        "queue-in",     "queue-out",     "cores"};
    for (size_t k = 0; k < sizeof plain / sizeof *plain; k++)
        if (strcmp(kind, plain[k]) == 0)
            return 1;
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        const char *name = tscope_probe_name(p);
        size_t l = strlen(name);
        if (strncmp(kind, "slows:", 6) == 0 && strcmp(kind + 6, name) == 0)
            return 1;
        if (strncmp(kind, name, l) == 0 && kind[l] == ':' && isdigit((unsigned char)kind[l + 1])) {
            char *end;
            unsigned long c = strtoul(kind + l + 1, &end, 10);
            return !*end && c >= 1 && c <= TSCOPE_CONTENTION_MAX_COPIES;
        }
    }
    return 0;
}

int tscope_contention_read(const char *path, tscope_cmeas_t **out, size_t *n, char *err,
                           size_t errlen)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TSCOPE_EIO;
    }
    char line[512];
    int lineno = 0, rc = 0;
    size_t cap = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line longer than %zu characters", path, lineno,
                     sizeof line - 2);
            rc = TSCOPE_EINVAL;
            break;
        }
        line[strcspn(line, "\r\n")] = 0;
        char *s = line + strspn(line, " \t");
        if (!*s || *s == '#')
            continue;
        tscope_cmeas_t m;
        memset(&m, 0, sizeof m);
        char comp[128], kind[32];
        int used = 0;
        if (sscanf(s, "%127[^\t]\t%31[^\t]\t%lf\t%lf%n", comp, kind, &m.n, &m.value, &used) != 4 ||
            s[used + strspn(s + used, " \t")]) {
            snprintf(err, errlen, "%s:%d: expected COMPONENT<tab>KIND<tab>N<tab>VALUE", path,
                     lineno);
            rc = TSCOPE_EINVAL;
        } else if (strlen(comp) >= sizeof m.component) {
            snprintf(err, errlen, "%s:%d: component name longer than %zu characters", path, lineno,
                     sizeof m.component - 1);
            rc = TSCOPE_EINVAL;
        } else if (!known_kind(kind)) {
            snprintf(err, errlen, "%s:%d: unknown kind '%s' (known: %s; K 1..%d)", path, lineno,
                     kind, kind_help, TSCOPE_CONTENTION_MAX_COPIES);
            rc = TSCOPE_EINVAL;
        } else if (!isfinite(m.n) || m.n < 0 || !isfinite(m.value) || m.value < 0) {
            snprintf(err, errlen, "%s:%d: N and VALUE must be finite numbers >= 0", path, lineno);
            rc = TSCOPE_EINVAL;
        } else {
            if (*n == cap) {
                cap = cap ? 2 * cap : 64;
                tscope_cmeas_t *g = realloc(*out, cap * sizeof *g);
                if (!g) {
                    snprintf(err, errlen, "%s: out of memory", path);
                    rc = TSCOPE_ENOMEM;
                    break;
                }
                *out = g;
            }
            snprintf(m.component, sizeof m.component, "%s", comp);
            snprintf(m.kind, sizeof m.kind, "%s", kind);
            (*out)[(*n)++] = m;
        }
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = TSCOPE_EIO;
    }
    fclose(f);
    if (!rc && !*n) {
        snprintf(err, errlen, "%s: no measurements", path);
        rc = TSCOPE_EINVAL;
    }
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int tscope_contention_write(const char *path, const tscope_cmeas_t *m, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return TSCOPE_EIO;
    fprintf(f, "# taskscope contention measurements: component, kind, n, value "
               "(docs/modeling.md)\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\t%s\t%.17g\t%.17g\n", m[i].component, m[i].kind, m[i].n, m[i].value);
    return fclose(f) ? TSCOPE_EIO : 0;
}

/* ---- fitting -------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..k) (sorts v); NAN if k is 0. */
static double median_of(double *v, int k)
{
    if (!k)
        return NAN;
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

enum { MAX_VALUES = 1024 }; /* repetitions of one point the median looks at */

/* The median of the values of (component, kind) at size n (any size where
 * n is NAN: the machine's constants); NAN if none. */
static double median_at(const tscope_cmeas_t *m, size_t nm, const char *comp, const char *kind,
                        double n)
{
    double v[MAX_VALUES];
    int k = 0;
    for (size_t i = 0; i < nm && k < MAX_VALUES; i++)
        if ((isnan(n) || m[i].n == n) && strcmp(m[i].component, comp) == 0 &&
            strcmp(m[i].kind, kind) == 0)
            v[k++] = m[i].value;
    return median_of(v, k);
}

/* The noise of a component's measurements: the median over its sizes of the
 * relative median absolute deviation of its "alone" repetitions (0 with
 * fewer than three at every size). */
static double noise_of(const tscope_cmeas_t *m, size_t nm, const char *comp)
{
    double rel[64];
    int nr = 0;
    for (size_t i = 0; i < nm && nr < 64; i++) {
        if (strcmp(m[i].component, comp) != 0 || strcmp(m[i].kind, "alone") != 0)
            continue;
        int first = 1; /* one entry per size: at its first line */
        for (size_t j = 0; j < i && first; j++)
            first = !(m[j].n == m[i].n && strcmp(m[j].component, comp) == 0 &&
                      strcmp(m[j].kind, "alone") == 0);
        if (!first)
            continue;
        double v[MAX_VALUES], med = median_at(m, nm, comp, "alone", m[i].n);
        int k = 0;
        for (size_t j = 0; j < nm && k < MAX_VALUES; j++)
            if (m[j].n == m[i].n && strcmp(m[j].component, comp) == 0 &&
                strcmp(m[j].kind, "alone") == 0)
                v[k++] = fabs(m[j].value - med);
        if (k < 3 || !(med > 0))
            continue;
        rel[nr++] = median_of(v, k) / med;
    }
    return nr ? median_of(rel, nr) : 0;
}

/* The distinct sizes of (component, kind), ascending; how many (<= max). */
static int sizes_of(const tscope_cmeas_t *m, size_t nm, const char *comp, const char *kind,
                    double *out, int max)
{
    int k = 0;
    for (size_t i = 0; i < nm; i++)
        if (strcmp(m[i].component, comp) == 0 && strcmp(m[i].kind, kind) == 0) {
            int seen = 0;
            for (int j = 0; j < k && !seen; j++)
                seen = out[j] == m[i].n;
            if (!seen && k < max)
                out[k++] = m[i].n;
        }
    qsort(out, (size_t)k, sizeof *out, cmp_double);
    return k;
}

static void constant(tscope_model_t *out, double c)
{
    memset(out, 0, sizeof *out);
    out->nparams = 1;
    out->c0 = c;
    out->lo[0] = out->hi[0] = NAN;
}

/* A factor's model from its values v at sizes x: a constant (their mean)
 * unless they vary by more than the noise (thr, at least 2%) on average and
 * a PMNF model (the single-parameter modeler) halves that deviation.  An
 * effect (the caller's measure of how far the factor is from having none)
 * not above thr gives the constant none. */
static void fit_factor(const double *x, const double *v, int k, double effect, double none,
                       double thr, tscope_model_t *out)
{
    double mean = 0;
    for (int i = 0; i < k; i++)
        mean += v[i] / k;
    if (!k || !(effect > thr)) {
        constant(out, none);
        return;
    }
    constant(out, mean);
    if (k < 4 || mean == 0)
        return;
    double dev_c = 0, dev_m = 0;
    for (int i = 0; i < k; i++)
        dev_c += fabs(v[i] - mean) / fabs(mean) / k;
    tscope_model_t m;
    tscope_mfit_opts_t o = {sizeof o, 1, 1};
    if (dev_c <= fmax(0.02, thr) || tscope__fit_single(x, v, (size_t)k, &o, &m))
        return;
    for (int i = 0; i < k; i++)
        dev_m += fabs(tscope_model_eval(&m, &x[i]) - v[i]) / fabs(mean) / k;
    if (dev_m < dev_c / 2) {
        *out = m;
        out->lo[0] = x[0];
        out->hi[0] = x[k - 1];
    }
}

/* A factor's value at n: the model at n, held to a factor of two past its
 * calibrated sizes (so a PMNF fitted to four sizes does not run off), then
 * to [lo, hi]. */
static double factor_at(const tscope_model_t *m, double n, double lo, double hi)
{
    if (isfinite(m->lo[0]) && n < m->lo[0] / 2)
        n = m->lo[0] / 2;
    if (isfinite(m->hi[0]) && n > m->hi[0] * 2)
        n = m->hi[0] * 2;
    double v = tscope_model_eval(m, &n);
    if (!isfinite(v) || v < lo)
        v = lo;
    return v > hi ? hi : v;
}

enum { MAX_SIZES = 64 };

int tscope_contention_fit(const tscope_cmeas_t *m, size_t nm, tscope_contention_t *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    double q;
    out->queue_in = isfinite(q = median_at(m, nm, "-", "queue-in", NAN)) ? q : 0;
    out->queue_out = isfinite(q = median_at(m, nm, "-", "queue-out", NAN)) ? q : 0;
    /* a machine's cores: 1 .. 2^20 (else not known; a file's value is any number) */
    q = median_at(m, nm, "-", "cores", NAN);
    out->cores = isfinite(q) && q >= 1 && q <= (1u << 20) ? (unsigned)q : 0;
    double self[TSCOPE_NPROBES];
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        char kind[32];
        snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
        self[p] = median_at(m, nm, "-", kind, NAN);
    }
    for (size_t i = 0; i < nm; i++) {
        if (strcmp(m[i].component, "-") == 0 || strcmp(m[i].kind, "alone") != 0)
            continue;
        int seen = 0;
        for (size_t c = 0; c < out->ncomp && !seen; c++)
            seen = strcmp(out->comp[c].name, m[i].component) == 0;
        if (seen)
            continue;
        tscope_ccomp_t *g = realloc(out->comp, (out->ncomp + 1) * sizeof *g);
        if (!g) {
            snprintf(err, errlen, "contention: out of memory");
            tscope_contention_free(out);
            return TSCOPE_ENOMEM;
        }
        out->comp = g;
        tscope_ccomp_t *c = &g[out->ncomp++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", m[i].component);
        double x[MAX_SIZES], v[MAX_SIZES], sz[MAX_SIZES];
        int ns;
        /* An effect smaller than the component's own noise (at least 2%),
         * on average over the sizes, is taken as none: a slowdown of 1, a
         * demand, handover or write of 0. */
        double thr = fmax(0.02, noise_of(m, nm, c->name));
        for (int p = 0; p < TSCOPE_NPROBES; p++) {
            for (unsigned k = 1; k <= TSCOPE_CONTENTION_MAX_COPIES; k++) {
                char kind[32];
                snprintf(kind, sizeof kind, "%s:%u", tscope_probe_name(p), k);
                ns = sizes_of(m, nm, c->name, kind, sz, MAX_SIZES);
                int cnt = 0;
                double effect = 0;
                for (int s = 0; s < ns; s++) {
                    double a = median_at(m, nm, c->name, "alone", sz[s]);
                    if (a > 0) {
                        x[cnt] = sz[s];
                        v[cnt] = median_at(m, nm, c->name, kind, sz[s]) / a;
                        effect += v[cnt++] - 1;
                    }
                }
                if (!cnt)
                    break;
                fit_factor(x, v, cnt, effect / cnt, 1, thr, &c->sens[p][k - 1]);
                c->copies[p] = k;
            }
            char kind[32];
            snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
            ns = sizes_of(m, nm, c->name, kind, sz, MAX_SIZES);
            double effect = 0;
            for (int s = 0; s < ns; s++) {
                x[s] = sz[s];
                /* a probe is the most intense thread of its kind (a stream
                 * that does nothing but stream): a component demands at most
                 * one copy.  Where the probe's own copy slows it by less than
                 * the noise, the ratio would be noise over noise (3% / 1.5%
                 * made a demand of 2): the noise stands for the divisor. */
                double e = median_at(m, nm, c->name, kind, sz[s]) - 1;
                v[s] = fmin(1, fmax(0, e / fmax(self[p] - 1, thr)));
                effect += e / ns;
            }
            fit_factor(x, v, ns, effect, 0, thr, &c->demand[p]);
        }
        ns = sizes_of(m, nm, c->name, "after-writer", sz, MAX_SIZES);
        int cnt = 0;
        double effect = 0;
        for (int s = 0; s < ns; s++) {
            double cold = median_at(m, nm, c->name, "after-cold", sz[s]);
            if (cold > 0) {
                x[cnt] = sz[s];
                v[cnt] = median_at(m, nm, c->name, "after-writer", sz[s]) - cold;
                effect += v[cnt++] / cold;
            }
        }
        fit_factor(x, v, cnt, cnt ? effect / cnt : 0, 0, thr, &c->handover);
        ns = sizes_of(m, nm, c->name, "reader-after", sz, MAX_SIZES);
        cnt = 0;
        for (int s = 0; s < ns; s++) {
            double w = median_at(m, nm, "-", "reader-writer", sz[s]),
                   cold = median_at(m, nm, "-", "reader-cold", sz[s]);
            if (isfinite(w) && isfinite(cold) && w - cold > thr * cold) {
                x[cnt] = sz[s];
                v[cnt] = (median_at(m, nm, c->name, "reader-after", sz[s]) - cold) / (w - cold);
                v[cnt] = fmin(1, fmax(0, v[cnt]));
                cnt++;
            }
        }
        /* a reader that tells a written element from a cold one: the writes
         * are what it measured, 0 included */
        fit_factor(x, v, cnt, INFINITY, 0, thr, &c->writes);
    }
    if (!out->ncomp) {
        snprintf(err, errlen, "contention: no component measured alone (kind 'alone')");
        return TSCOPE_EINVAL;
    }
    return 0;
}

void tscope_contention_free(tscope_contention_t *c)
{
    free(c->comp);
    memset(c, 0, sizeof *c);
}

/* ---- queried by the composition ------------------------------------------- */

const tscope_ccomp_t *tscope__contention_find(const tscope_contention_t *ct, const char *name)
{
    for (size_t i = 0; ct && i < ct->ncomp; i++)
        if (strcmp(ct->comp[i].name, name) == 0)
            return &ct->comp[i];
    return NULL;
}

double tscope__contention_slowdown(const tscope_ccomp_t *c, const double load[TSCOPE_NPROBES],
                                   double n)
{
    double most = 1;
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        unsigned k = c->copies[p];
        double d = load[p];
        if (!k || !(d > 0))
            continue;
        /* the points (0, 1), (1, S_1), ..., (k, S_k) */
        unsigned j = d >= k ? k - 1 : (unsigned)floor(d); /* (any load past k: the last) */
        double lo = j ? factor_at(&c->sens[p][j - 1], n, 1, 1e6) : 1,
               hi = factor_at(&c->sens[p][j], n, 1, 1e6);
        double s = lo + (hi - lo) * (d - j);
        if (s > most)
            most = s;
    }
    return most;
}

double tscope__contention_demand(const tscope_ccomp_t *c, int probe, double n)
{
    return factor_at(&c->demand[probe], n, 0, 1e6);
}

double tscope__contention_handover(const tscope_ccomp_t *c, double n)
{
    return factor_at(&c->handover, n, 0, INFINITY);
}

double tscope__contention_writes(const tscope_ccomp_t *c, double n)
{
    return factor_at(&c->writes, n, 0, 1);
}
