/* fuzz_contention.c - fuzz target "contention": a calibration's measurements
 * file (tscope_contention_read, src/model/contention.c), the table fitted
 * from it and compositions evaluated with it (tscope_model_compose_at).
 *
 * What it checks:
 *   - on failure the return value is a negative TSCOPE_E* code and the
 *     message starts with "PATH:";
 *   - on success every measurement is finite and >= 0, its names
 *     terminated; written back and read again it is the same list;
 *   - the fit succeeds or fails with a message; a fitted table's factors
 *     are finite and within their bounds (slowdown >= 1, demand, handover
 *     and writes >= 0, writes <= 1) at sizes across and past the
 *     calibrated ones;
 *   - compositions of its components (and of one it does not have) are
 *     finite, and at least the plain value's share: contention never makes
 *     a pool of T faster than T / (its cores' share) nor a pipeline faster
 *     than its slowest stage alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "model/contention.h"
#include "taskscope/model.h"

static const tscope_contention_t *table;

/* Every component, and "other", is 1000 + n (a rising model). */
static int lookup(void *data, const char *name, tscope_model_t *out)
{
    (void)data;
    (void)name;
    memset(out, 0, sizeof *out);
    out->nparams = 1;
    out->c0 = 1000;
    out->nterms = 1;
    out->terms[0].coef = 1;
    out->terms[0].f[0].num = out->terms[0].f[0].den = 1;
    out->lo[0] = out->hi[0] = NAN;
    return 0;
}

static void check_compose(const char *expr, double n, double least)
{
    double v;
    char err[512];
    int rc = tscope_model_compose_at(expr, lookup, NULL, table, n, &v, NULL, 0, err, sizeof err);
    if (rc)
        FUZZ_FAIL("%s at %g: %s", expr, n, err);
    FUZZ_ASSERT(isfinite(v));
    FUZZ_ASSERT(v >= least * (1 - 1e-9));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    tscope_cmeas_t *m = NULL;
    size_t n = 0;
    char err[1024];
    memset(err, 'x', sizeof err);
    err[sizeof err - 1] = 0;
    int rc = tscope_contention_read(path, &m, &n, err, sizeof err);
    if (rc) {
        FUZZ_ASSERT(rc < 0 && !m && !n);
        FUZZ_ASSERT(fuzz_starts_with(err, path) && err[strlen(path)] == ':');
        return 0;
    }
    FUZZ_ASSERT(n > 0);
    for (size_t i = 0; i < n; i++) {
        FUZZ_ASSERT(memchr(m[i].component, 0, sizeof m[i].component));
        FUZZ_ASSERT(memchr(m[i].kind, 0, sizeof m[i].kind));
        FUZZ_ASSERT(isfinite(m[i].n) && m[i].n >= 0 && isfinite(m[i].value) && m[i].value >= 0);
    }
    static char back[64];
    if (!back[0]) { /* a second in-memory file, for the list written back */
        int fd = memfd_create("taskscope-fuzz-back", 0);
        if (fd < 0)
            FUZZ_FAIL("memfd_create failed");
        snprintf(back, sizeof back, "/proc/self/fd/%d", fd);
    }
    FUZZ_ASSERT(tscope_contention_write(back, m, n) == 0);
    tscope_cmeas_t *m2;
    size_t n2;
    if (tscope_contention_read(back, &m2, &n2, err, sizeof err))
        FUZZ_FAIL("written back and read again: %s", err);
    FUZZ_ASSERT(n2 == n);
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT(strcmp(m[i].component, m2[i].component) == 0 &&
                    strcmp(m[i].kind, m2[i].kind) == 0 && m[i].n == m2[i].n &&
                    m[i].value == m2[i].value);
    free(m2);
    tscope_contention_t ct;
    rc = tscope_contention_fit(m, n, &ct, err, sizeof err);
    free(m);
    if (rc) {
        FUZZ_ASSERT(rc < 0 && strlen(err) > 0);
        return 0;
    }
    FUZZ_ASSERT(ct.ncomp > 0 && isfinite(ct.queue_in) && isfinite(ct.queue_out));
    static const double at[] = {1, 100, 20000, 1e6, 1e12};
    for (size_t c = 0; c < ct.ncomp; c++)
        for (size_t a = 0; a < sizeof at / sizeof *at; a++) {
            const tscope_ccomp_t *cc = &ct.comp[c];
            double load[TSCOPE_NPROBES] = {1.5, 0.5};
            double s = tscope__contention_slowdown(cc, load, at[a]);
            FUZZ_ASSERT(isfinite(s) && s >= 1);
            for (int p = 0; p < TSCOPE_NPROBES; p++) {
                double d = tscope__contention_demand(cc, p, at[a]);
                FUZZ_ASSERT(isfinite(d) && d >= 0);
            }
            double h = tscope__contention_handover(cc, at[a]),
                   w = tscope__contention_writes(cc, at[a]);
            FUZZ_ASSERT(isfinite(h) && h >= 0 && w >= 0 && w <= 1);
        }
    table = &ct;
    const char *a = ct.comp[0].name, *b = ct.ncomp > 1 ? ct.comp[1].name : "other";
    if (strchr(a, '"') || strchr(b, '"')) { /* cannot be quoted in an expression */
        tscope_contention_free(&ct);
        return 0;
    }
    char e[256];
    double x = 65536, one = 1000 + x;
    double cores = ct.cores ? ct.cores : 1e9;
    snprintf(e, sizeof e, "\"%s\"", a);
    check_compose(e, x, one);
    snprintf(e, sizeof e, "tpool(2, \"%s\")", a);
    check_compose(e, x, one / 2 * (2 > cores ? 2 / cores : 1));
    snprintf(e, sizeof e, "pipe(\"%s\", \"%s\")", a, b);
    check_compose(e, x, one);
    snprintf(e, sizeof e, "tpool(2, pipe(tpool(2, \"%s\"), \"%s\"))", a, b);
    check_compose(e, x, one / 2);
    tscope_contention_free(&ct);
    return 0;
}
