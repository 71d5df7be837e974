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
 *
 * An expression is parsed into a tree (struct cnode), then folded: into a
 * model (tscope_model_compose, the plain operators), or into a value at one
 * size with what the threads share (tscope_model_compose_at, the
 * contention-aware operators of contention.c's table).
 */
#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contention.h"
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

enum { C_LEAF, C_TPOOL, C_PIPE };

/* A node of the parsed expression: a component (its model and name), a task
 * pool of t workers over child first, or a pipeline of the stages first,
 * first->next, ... */
struct cnode {
    int kind;
    double t;
    int first, next; /* node indices, -1: none */
    int pos;         /* tpool: the character after its ')' (for messages) */
    char name[64];
    tscope_model_t m;
};

struct cparser {
    const char *s, *text;
    tscope_model_lookup_fn lookup;
    void *data;
    char *err;
    size_t errlen;
    int depth;
    struct cnode *nodes;
    int nnodes, cap;
};

static int cfail_at(struct cparser *p, int pos, const char *what)
{
    snprintf(p->err, p->errlen, "composition '%s', at character %d: %s", p->text, pos, what);
    return TSCOPE_EINVAL;
}

static int cfail(struct cparser *p, const char *what)
{
    return cfail_at(p, (int)(p->s - p->text) + 1, what);
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

static int new_node(struct cparser *p, int kind)
{
    if (p->nnodes == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        struct cnode *n = realloc(p->nodes, (size_t)cap * sizeof *n);
        if (!n) {
            snprintf(p->err, p->errlen, "composition '%s': out of memory", p->text);
            return TSCOPE_ENOMEM;
        }
        p->nodes = n;
        p->cap = cap;
    }
    struct cnode *n = &p->nodes[p->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->first = n->next = -1;
    return p->nnodes++;
}

/* Parses an expression into *at (a node index). */
static int expr(struct cparser *p, int *at)
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
    int rc, me;
    if (!quoted && *p->s == '(' && len == 5 && strncmp(name, "tpool", 5) == 0) {
        p->s++;
        cskip(p);
        char *end;
        double t = strtod(p->s, &end);
        if (end == p->s || !(t > 0) || !isfinite(t))
            return cfail(p, "tpool needs a positive number of workers");
        p->s = end;
        int child;
        if ((me = new_node(p, C_TPOOL)) < 0)
            return me;
        if ((rc = expect(p, ',')) || (rc = expr(p, &child)) || (rc = expect(p, ')')))
            return rc;
        p->nodes[me].t = t;
        p->nodes[me].first = child;
        p->nodes[me].pos = (int)(p->s - p->text) + 1;
    } else if (!quoted && *p->s == '(' && len == 4 && strncmp(name, "pipe", 4) == 0) {
        p->s++;
        if ((me = new_node(p, C_PIPE)) < 0)
            return me;
        int stage, last;
        if ((rc = expr(p, &stage)))
            return rc;
        p->nodes[me].first = last = stage;
        for (;;) {
            cskip(p);
            if (*p->s == ')') {
                p->s++;
                break;
            }
            if ((rc = expect(p, ',')) || (rc = expr(p, &stage)))
                return rc;
            p->nodes[last].next = stage;
            last = stage;
        }
    } else {
        if (len >= sizeof p->nodes[0].name)
            return cfail(p, "model name too long");
        if ((me = new_node(p, C_LEAF)) < 0)
            return me;
        struct cnode *n = &p->nodes[me];
        memcpy(n->name, name, len);
        n->name[len] = 0;
        if (p->lookup(p->data, n->name, &n->m)) {
            snprintf(p->err, p->errlen, "composition '%s': no model named '%s'", p->text, n->name);
            return TSCOPE_ENOENT;
        }
        if (n->m.nparams != 1)
            return cfail(p, "compositions take single-parameter models");
    }
    p->depth--;
    *at = me;
    return 0;
}

/* The plain operators: tpool divides every coefficient by T, pipe takes the
 * stage of the highest order. */
static int fold(struct cparser *p, int at, tscope_model_t *out)
{
    const struct cnode *n = &p->nodes[at];
    int rc;
    if (n->kind == C_LEAF) {
        *out = n->m;
    } else if (n->kind == C_TPOOL) {
        if ((rc = fold(p, n->first, out)))
            return rc;
        out->c0 /= n->t;
        int finite = isfinite(out->c0);
        for (unsigned k = 0; k < out->nterms; k++) {
            out->terms[k].coef /= n->t;
            finite = finite && isfinite(out->terms[k].coef);
        }
        if (!finite) /* T < 1 multiplies: 1e308 / 0.5 */
            return cfail_at(p, n->pos,
                            "tpool: a coefficient divided by the workers overflows (not finite)");
    } else {
        if ((rc = fold(p, n->first, out)))
            return rc;
        for (int s = p->nodes[n->first].next; s >= 0; s = p->nodes[s].next) {
            tscope_model_t stage;
            if ((rc = fold(p, s, &stage)))
                return rc;
            if (tscope_model_compare(&stage, out) > 0)
                *out = stage;
        }
    }
    return 0;
}

static int parse(struct cparser *p, int *root)
{
    if (!p->text || !p->lookup)
        return TSCOPE_EINVAL;
    int rc = expr(p, root);
    if (rc)
        return rc;
    cskip(p);
    if (*p->s)
        return cfail(p, "unexpected text after the expression");
    return 0;
}

int tscope_model_compose(const char *text, tscope_model_lookup_fn lookup, void *data,
                         tscope_model_t *out, char *err, size_t errlen)
{
    struct cparser p = {text, text, lookup, data, err, errlen, 0, NULL, 0, 0};
    int root, rc;
    if (!out)
        return TSCOPE_EINVAL;
    if (!(rc = parse(&p, &root)))
        rc = fold(&p, root, out);
    free(p.nodes);
    return rc;
}

/* ---- with contention: a value at one size ------------------------------ */

/* Per component node: what the fixed point of compose_at works with. */
struct cleaf {
    const tscope_ccomp_t *c; /* NULL: not calibrated (slowed by nothing) */
    double copies;           /* product of the enclosing pools' workers */
    double base, handover, queue;
    double busy; /* fraction of the run its copies work (1: always) */
    double slow, time;
};

/* Writes of a node's output: of its last component. */
static int last_leaf(const struct cparser *p, int at)
{
    const struct cnode *n = &p->nodes[at];
    if (n->kind == C_LEAF)
        return at;
    int s = n->first;
    if (n->kind == C_PIPE)
        while (p->nodes[s].next >= 0)
            s = p->nodes[s].next;
    return last_leaf(p, s);
}

/* Sets each leaf's copies, base time, handover and queue costs: prev is the
 * leaf whose output this node's first component reads (-1: the caller's
 * array), out whether its last component pushes into a queue. */
static void setup(const struct cparser *p, int at, double copies, int prev, int in, int out,
                  const tscope_contention_t *ct, double x, struct cleaf *lv)
{
    const struct cnode *n = &p->nodes[at];
    if (n->kind == C_LEAF) {
        struct cleaf *l = &lv[at];
        l->c = tscope__contention_find(ct, n->name);
        l->copies = copies;
        l->base = tscope_model_eval(&n->m, &x);
        l->handover = 0;
        if (prev >= 0 && l->c && lv[prev].c)
            l->handover =
                tscope__contention_writes(lv[prev].c, x) * tscope__contention_handover(l->c, x);
        l->queue = (in ? ct->queue_in : 0) + (out ? ct->queue_out : 0);
        l->busy = 1;
        return;
    }
    if (n->kind == C_TPOOL) {
        setup(p, n->first, copies * n->t, prev, in, out, ct, x, lv);
        return;
    }
    for (int s = n->first; s >= 0; s = p->nodes[s].next) {
        int more = p->nodes[s].next >= 0;
        setup(p, s, copies, prev, s != n->first || in, more || out, ct, x, lv);
        prev = last_leaf(p, s);
    }
}

/* The time per element of node at from its leaves' times. */
static double node_time(const struct cparser *p, int at, const struct cleaf *lv)
{
    const struct cnode *n = &p->nodes[at];
    if (n->kind == C_LEAF)
        return lv[at].time;
    if (n->kind == C_TPOOL)
        return node_time(p, n->first, lv) / n->t;
    double most = 0;
    for (int s = n->first; s >= 0; s = p->nodes[s].next) {
        double t = node_time(p, s, lv);
        if (s == n->first || t > most)
            most = t;
    }
    return most;
}

static void explain_add(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void explain_add(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (!buf || *used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (k > 0)
        *used += (size_t)k < len - *used ? (size_t)k : len - *used - 1;
}

int tscope_model_compose_at(const char *text, tscope_model_lookup_fn lookup, void *data,
                            const tscope_contention_t *ct, double x, double *value, char *explain,
                            size_t explainlen, char *err, size_t errlen)
{
    struct cparser p = {text, text, lookup, data, err, errlen, 0, NULL, 0, 0};
    int root, rc;
    if (!value)
        return TSCOPE_EINVAL;
    if (explain && explainlen)
        explain[0] = 0;
    if ((rc = parse(&p, &root)))
        goto out;
    if (!ct) {
        tscope_model_t m;
        if (!(rc = fold(&p, root, &m)))
            *value = tscope_model_eval(&m, &x);
        goto out;
    }
    struct cleaf *lv = calloc((size_t)p.nnodes, sizeof *lv);
    if (!lv) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    setup(&p, root, 1, -1, 0, 0, ct, x, lv);
    /* The fixed point: every component is slowed by the others' demand,
     * weighted by how busy they are; how busy a stage is depends on the
     * slowest stage, which depends on the slowdowns.  Damped, it settles
     * in a few dozen steps. */
    double period = 0;
    for (int it = 0; it < 200; it++) {
        double threads = 0, load[TSCOPE_NPROBES] = {0};
        for (int i = 0; i < p.nnodes; i++)
            if (p.nodes[i].kind == C_LEAF) {
                threads += lv[i].copies * lv[i].busy;
                for (int k = 0; k < TSCOPE_NPROBES && lv[i].c; k++)
                    load[k] += lv[i].copies * lv[i].busy * tscope__contention_demand(lv[i].c, k, x);
            }
        double over = ct->cores && threads > ct->cores ? threads / ct->cores : 1;
        for (int i = 0; i < p.nnodes; i++)
            if (p.nodes[i].kind == C_LEAF) {
                struct cleaf *l = &lv[i];
                double others[TSCOPE_NPROBES];
                for (int k = 0; k < TSCOPE_NPROBES; k++)
                    others[k] =
                        l->c ? load[k] - l->busy * tscope__contention_demand(l->c, k, x) : 0;
                l->slow = (l->c ? tscope__contention_slowdown(l->c, others, x) : 1) * over;
                l->time = l->base * l->slow + l->handover + l->queue;
            }
        period = node_time(&p, root, lv);
        double moved = 0;
        for (int i = 0; i < p.nnodes; i++)
            if (p.nodes[i].kind == C_LEAF) {
                double b = period > 0 ? lv[i].time / lv[i].copies / period : 1;
                b = b > 1 ? 1 : b < 0 ? 0 : b;
                moved = fmax(moved, fabs(b - lv[i].busy));
                lv[i].busy = it ? (lv[i].busy + b) / 2 : b;
            }
        if (moved < 1e-12)
            break;
    }
    *value = period;
    size_t used = 0;
    for (int i = 0; i < p.nnodes; i++)
        if (p.nodes[i].kind == C_LEAF)
            explain_add(explain, explainlen, &used,
                        "%s%s: %.6g x slowdown %.4g + handover %.6g + queue %.6g = %.6g "
                        "(%g workers, busy %.3g)\n",
                        p.nodes[i].name, lv[i].c ? "" : " (not calibrated)", lv[i].base, lv[i].slow,
                        lv[i].handover, lv[i].queue, lv[i].time, lv[i].copies, lv[i].busy);
    free(lv);
out:
    free(p.nodes);
    return rc;
}
