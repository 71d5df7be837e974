/* compose.c - compositional models of parallel patterns (Calotoiu et al.):
 * expressions over named single-parameter component models.
 *
 *   tpool(T, m)    a task pool of T workers, each element processed once:
 *                  the time per element is m / T (every coefficient / T)
 *   pipe(a, b..)   a pipeline: its throughput is that of the slowest stage,
 *                  the stage of the highest asymptotic order
 *
 * The order (tscope_model_compare) is total: the leading term's exponent of
 * p, then of log2 p, where a leading term with a negative coefficient (the
 * model falls with p) ranks below every rising or constant model, the
 * faster falling the lower; at equal order the larger value at the upper end of the
 * measured range (of both models; the components of one study share it);
 * then the coefficients.  So pipe is associative and commutative, and since
 * dividing by T keeps the order, pipe(tpool(T,a), tpool(T,b)) equals
 * tpool(T, pipe(a,b)).  tests/test_model.c checks these.
 *
 * Grammar: expr := NAME | "tpool" "(" NUMBER "," expr ")"
 *                | "pipe" "(" expr ("," expr)* ")"
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

/* Leading term's order: (polynomial exponent, log exponent), lexicographic,
 * and the sign of its coefficient (a constant model: order 0, sign of c0). */
static int lead_order(const tscope_model_t *m, double *poly, int *log)
{
    *poly = 0;
    *log = 0;
    double coef = m->c0;
    int found = 0;
    for (unsigned k = 0; k < m->nterms; k++) {
        const tscope_mfactor_t *f = &m->terms[k].f[0];
        double e = f->num ? (double)f->num / (double)f->den : 0;
        if (m->terms[k].coef != 0 && (!found || e > *poly || (e == *poly && f->log > *log))) {
            found = 1;
            *poly = e;
            *log = f->log;
            coef = m->terms[k].coef;
        }
    }
    return coef < 0 ? -1 : 1;
}

static int sign(double d)
{
    return d > 0 ? 1 : d < 0 ? -1 : 0;
}

/* The order of growth: the leading term's, and a model whose leading term
 * falls (a negative coefficient: in a fitted cost model, a spurious term
 * fitted to noise) grows less than any that does not, the faster it falls
 * the less. */
int tscope_model_compare(const tscope_model_t *a, const tscope_model_t *b)
{
    double pa, pb;
    int la, lb;
    int sa = lead_order(a, &pa, &la), sb = lead_order(b, &pb, &lb);
    if (sa != sb)
        return sa;
    if (pa != pb)
        return sa * sign(pa - pb);
    if (la != lb)
        return sa * (la > lb ? 1 : -1);
    double x = NAN;
    if (isfinite(a->hi[0]))
        x = a->hi[0];
    if (isfinite(b->hi[0]) && !(b->hi[0] <= x))
        x = b->hi[0];
    if (isfinite(x)) {
        int s = sign(tscope_model_eval(a, &x) - tscope_model_eval(b, &x));
        if (s)
            return s;
    }
    if (a->c0 != b->c0)
        return sign(a->c0 - b->c0);
    if (a->nterms != b->nterms)
        return a->nterms > b->nterms ? 1 : -1;
    for (unsigned k = 0; k < a->nterms; k++)
        if (a->terms[k].coef != b->terms[k].coef)
            return sign(a->terms[k].coef - b->terms[k].coef);
    return 0;
}

struct cparser {
    const char *s, *text;
    tscope_model_lookup_fn lookup;
    void *data;
    char *err;
    size_t errlen;
    int depth;
};

static int cfail(struct cparser *p, const char *what)
{
    snprintf(p->err, p->errlen, "composition '%s', at character %d: %s", p->text,
             (int)(p->s - p->text) + 1, what);
    return TSCOPE_EINVAL;
}

static void cskip(struct cparser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static int expect(struct cparser *p, char c)
{
    cskip(p);
    if (*p->s != c) {
        char msg[32];
        snprintf(msg, sizeof msg, "expected '%c'", c);
        return cfail(p, msg);
    }
    p->s++;
    return 0;
}

static int expr(struct cparser *p, tscope_model_t *out)
{
    cskip(p);
    if (++p->depth > 100)
        return cfail(p, "nested too deeply");
    const char *name = p->s;
    size_t len;
    int quoted = *p->s == '"';
    if (quoted) { /* "any call path" */
        name = ++p->s;
        while (*p->s && *p->s != '"')
            p->s++;
        if (*p->s != '"')
            return cfail(p, "a quoted model name has no closing '\"'");
        len = (size_t)(p->s++ - name);
    } else {
        /* call paths as Extra-P writes them: main, main->solve, solve() */
        while (isalnum((unsigned char)*p->s) || *p->s == '_' || *p->s == '.' || *p->s == '-' ||
               (*p->s == '>' && p->s > name && p->s[-1] == '-') || *p->s == ':')
            p->s++;
        len = (size_t)(p->s - name);
        if (len && p->s[0] == '(' && p->s[1] == ')') /* main(): a name, not a call */
            p->s += 2, len += 2;
    }
    if (!len)
        return cfail(p, "expected a model name, tpool( or pipe(");
    cskip(p);
    int rc;
    if (!quoted && *p->s == '(' && len == 5 && strncmp(name, "tpool", 5) == 0) {
        p->s++;
        cskip(p);
        char *end;
        double t = strtod(p->s, &end);
        if (end == p->s || !(t > 0) || !isfinite(t))
            return cfail(p, "tpool needs a positive number of workers");
        p->s = end;
        if ((rc = expect(p, ',')) || (rc = expr(p, out)) || (rc = expect(p, ')')))
            return rc;
        out->c0 /= t;
        int finite = isfinite(out->c0);
        for (unsigned k = 0; k < out->nterms; k++) {
            out->terms[k].coef /= t;
            finite = finite && isfinite(out->terms[k].coef);
        }
        if (!finite) /* T < 1 multiplies: 1e308 / 0.5 */
            return cfail(p, "tpool: a coefficient divided by the workers overflows (not finite)");
    } else if (!quoted && *p->s == '(' && len == 4 && strncmp(name, "pipe", 4) == 0) {
        p->s++;
        if ((rc = expr(p, out)))
            return rc;
        for (;;) {
            cskip(p);
            if (*p->s == ')') {
                p->s++;
                break;
            }
            if ((rc = expect(p, ',')))
                return rc;
            tscope_model_t stage;
            if ((rc = expr(p, &stage)))
                return rc;
            if (tscope_model_compare(&stage, out) > 0)
                *out = stage;
        }
    } else {
        char buf[256];
        if (len >= sizeof buf)
            return cfail(p, "model name too long");
        memcpy(buf, name, len);
        buf[len] = 0;
        if (p->lookup(p->data, buf, out)) {
            snprintf(p->err, p->errlen, "composition '%s': no model named '%s'", p->text, buf);
            return TSCOPE_ENOENT;
        }
        if (out->nparams != 1)
            return cfail(p, "compositions take single-parameter models");
    }
    p->depth--;
    return 0;
}

int tscope_model_compose(const char *text, tscope_model_lookup_fn lookup, void *data,
                         tscope_model_t *out, char *err, size_t errlen)
{
    struct cparser p = {text, text, lookup, data, err, errlen, 0};
    if (!text || !lookup || !out)
        return TSCOPE_EINVAL;
    int rc = expr(&p, out);
    if (rc)
        return rc;
    cskip(&p);
    if (*p.s)
        return cfail(&p, "unexpected text after the expression");
    return 0;
}
