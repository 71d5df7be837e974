/* print.c - models as text, in Extra-P's printed form, and back.
 *
 *   -0.8897934098062803 + 0.20168243826499177 * x^(2)
 *   200.0 + 10.0 * x^(1/2) * log2(x)^(1)
 *   3.1 + 0.5 * x^(1) * y^(1/2)           (multi-parameter form)
 *
 * Numbers are printed like Python's repr of a float (the shortest text that
 * reads back to the same double; fixed notation for exponents -4..15,
 * otherwise "1e+16"), because that is what Extra-P prints.  c0 is left out
 * when it is exactly 0; a single-parameter term's coefficient is left out
 * when it is exactly 1 (Extra-P's CompoundTerm), a multi-parameter term
 * always prints it.  Exponents print as reduced fractions.
 *
 * The quality line (RSS, SMAPE, adjusted R^2) prints an adjusted R^2 that
 * is undefined (NaN: no variance, or too few points) as "undefined".
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

/* Python's repr(float) into buf (32 bytes are enough). */
static void pyfloat(double v, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v < 0 ? "-inf" : "inf");
        return;
    }
    char e[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    /* e is "-d.ddde+XX": digits and exponent */
    const char *p = e;
    int neg = *p == '-';
    if (neg)
        p++;
    char digits[20];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (isdigit((unsigned char)*p))
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    int exp = atoi(p + 1);
    char out[64];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (exp >= -4 && exp < 16) { /* fixed notation, as Python's repr */
        if (exp < 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int z = 0; z < -exp - 1; z++)
                out[o++] = '0';
            for (size_t i = 0; i < nd; i++)
                out[o++] = digits[i];
        } else {
            for (int i = 0; i <= exp; i++)
                out[o++] = (size_t)i < nd ? digits[i] : '0';
            out[o++] = '.';
            if ((size_t)exp + 1 < nd)
                for (size_t i = (size_t)exp + 1; i < nd; i++)
                    out[o++] = digits[i];
            else
                out[o++] = '0';
        }
        out[o] = 0;
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (size_t i = 1; i < nd; i++)
                out[o++] = digits[i];
        }
        snprintf(out + o, sizeof out - o, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    }
    snprintf(buf, len, "%s", out);
}

struct sbuf {
    char *buf;
    size_t len, used;
};

static void put(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = b->used < b->len ? b->buf + b->used : NULL;
    int n = vsnprintf(dst, dst ? b->len - b->used : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->used += (size_t)n;
}

static int gcd(int a, int b)
{
    a = abs(a);
    b = abs(b);
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a ? a : 1;
}

static void put_factors(struct sbuf *b, const tscope_mterm_t *t, unsigned np,
                        const char *const *params, int first)
{
    for (unsigned l = 0; l < np; l++) {
        const tscope_mfactor_t *f = &t->f[l];
        if (f->num) {
            int g = gcd(f->num, f->den);
            put(b, first ? "%s^(" : " * %s^(", params[l]);
            if (f->den / g == 1)
                put(b, "%d)", f->num / g);
            else
                put(b, "%d/%d)", f->num / g, f->den / g);
            first = 0;
        }
        if (f->log) {
            put(b, first ? "log2(%s)^(%d)" : " * log2(%s)^(%d)", params[l], f->log);
            first = 0;
        }
    }
}

int tscope_model_format(const tscope_model_t *m, const char *const *params, char *buf, size_t len)
{
    struct sbuf b = {buf, len, 0};
    if (len)
        buf[0] = 0;
    char num[40];
    int any = 0;
    if (m->c0 != 0 || m->nterms == 0) {
        pyfloat(m->c0, num, sizeof num);
        put(&b, "%s", num);
        any = 1;
    }
    for (unsigned k = 0; k < m->nterms; k++) {
        const tscope_mterm_t *t = &m->terms[k];
        if (any)
            put(&b, " + ");
        any = 1;
        if (m->multi_form || t->coef != 1) {
            pyfloat(t->coef, num, sizeof num);
            put(&b, "%s * ", num);
        }
        put_factors(&b, t, m->nparams, params, 1);
    }
    return (int)b.used;
}

int tscope__model_quality_format(const tscope_model_t *m, char *buf, size_t len)
{
    char ar2[32] = "undefined";
    if (!isnan(m->ar2))
        snprintf(ar2, sizeof ar2, "%.6g", m->ar2);
    return snprintf(buf, len, "RSS %.6g, SMAPE %.6g, adj. R^2 %s", m->rss, m->smape, ar2);
}

/* ---- parsing ------------------------------------------------------------ */

struct parser {
    const char *s;
    char *err;
    size_t errlen;
    const char *text;
};

static void skip_ws(struct parser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static int fail(struct parser *p, const char *what)
{
    snprintf(p->err, p->errlen, "model '%s', at character %d: %s", p->text,
             (int)(p->s - p->text) + 1, what);
    return TSCOPE_EINVAL;
}

static int param_index(const char *name, size_t len, unsigned np, const char *const *params)
{
    for (unsigned l = 0; l < np; l++)
        if (strlen(params[l]) == len && strncmp(params[l], name, len) == 0)
            return (int)l;
    return -1;
}

/* "^(a)" or "^(a/b)" */
static int parse_exponent(struct parser *p, int *num, int *den)
{
    if (p->s[0] != '^' || p->s[1] != '(')
        return fail(p, "expected ^(exponent)");
    p->s += 2;
    char *end;
    long a = strtol(p->s, &end, 10), b = 1;
    if (end == p->s)
        return fail(p, "expected an integer exponent");
    p->s = end;
    if (*p->s == '/') {
        p->s++;
        b = strtol(p->s, &end, 10);
        if (end == p->s || b <= 0)
            return fail(p, "expected a positive denominator");
        p->s = end;
    }
    if (*p->s != ')')
        return fail(p, "expected ')'");
    p->s++;
    if (a < -1000 || a > 1000 || b > 1000)
        return fail(p, "exponent out of range");
    *num = (int)a;
    *den = (int)b;
    return 0;
}

static int parse_factor(struct parser *p, unsigned np, const char *const *params, tscope_mterm_t *t)
{
    int num, den, rc;
    if (strncmp(p->s, "log2(", 5) == 0) {
        p->s += 5;
        const char *name = p->s;
        while (*p->s && *p->s != ')')
            p->s++;
        int l = param_index(name, (size_t)(p->s - name), np, params);
        if (l < 0 || *p->s != ')')
            return fail(p, "unknown parameter in log2()");
        p->s++;
        if ((rc = parse_exponent(p, &num, &den)))
            return rc;
        if (den != 1)
            return fail(p, "log2 exponents are integers");
        t->f[l].log = (int16_t)(t->f[l].log + num);
        return 0;
    }
    const char *name = p->s;
    while (*p->s && (isalnum((unsigned char)*p->s) || *p->s == '_'))
        p->s++;
    int l = param_index(name, (size_t)(p->s - name), np, params);
    if (l < 0)
        return fail(p, "unknown parameter");
    if ((rc = parse_exponent(p, &num, &den)))
        return rc;
    if (t->f[l].num) {
        num = num * t->f[l].den + t->f[l].num * den;
        den *= t->f[l].den;
    }
    int g = gcd(num, den);
    t->f[l].num = (int16_t)(num / g);
    t->f[l].den = (int16_t)(den / g);
    if (!t->f[l].num)
        t->f[l].den = 0;
    return 0;
}

int tscope_model_parse(const char *text, unsigned np, const char *const *params,
                       tscope_model_t *out, char *err, size_t errlen)
{
    struct parser p = {text, err, errlen, text};
    memset(out, 0, sizeof *out);
    out->nparams = np;
    if (np < 1 || np > TSCOPE_MODEL_MAX_PARAMS)
        return fail(&p, "1 to 4 parameters");
    for (unsigned l = 0; l < np; l++)
        out->lo[l] = out->hi[l] = NAN;
    for (;;) {
        skip_ws(&p);
        tscope_mterm_t t;
        memset(&t, 0, sizeof t);
        t.coef = 1;
        int has_factor = 0, has_num = 0;
        for (;;) { /* product: numbers and factors joined by '*' */
            skip_ws(&p);
            char *end;
            double v = strtod(p.s, &end);
            if (end != p.s && !isalpha((unsigned char)*p.s)) {
                if (!isfinite(v))
                    return fail(&p, "a number out of the range of a double (not finite)");
                t.coef *= v;
                if (!isfinite(t.coef))
                    return fail(&p, "the product of the numbers overflows (not finite)");
                has_num = 1;
                p.s = end;
            } else {
                int rc = parse_factor(&p, np, params, &t);
                if (rc)
                    return rc;
                has_factor = 1;
            }
            skip_ws(&p);
            if (*p.s != '*')
                break;
            p.s++;
        }
        if (!has_factor) {
            out->c0 += t.coef;
            if (!isfinite(out->c0))
                return fail(&p, "the sum of the constants overflows (not finite)");
        } else {
            if (out->nterms == TSCOPE_MODEL_MAX_TERMS)
                return fail(&p, "too many terms");
            out->terms[out->nterms++] = t;
            if (has_num && np > 1)
                out->multi_form = 1;
        }
        skip_ws(&p);
        if (!*p.s)
            return 0;
        if (*p.s != '+' && *p.s != '-')
            return fail(&p, "expected '+' or the end");
        if (*p.s == '+')
            p.s++;
    }
}
