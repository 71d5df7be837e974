/* test_model.c - the modeling library (include/taskscope/model.h): readers
 * (and their rejections, on files written into a temporary folder),
 * Extra-P's default modeler, the multi-parameter and multi-term modelers,
 * printing and parsing, composition and its algebra.  Arguments name the
 * tests to run (default: all), e.g. `test_model test_non_finite`. */
#include <taskscope/model.h>
#include <unistd.h>

#include "model/contention.h"
#include "model/fit.h"
#include "test.h"

static char dir[1024];

static const char *data(const char *name)
{
    static char path[1200];
    snprintf(path, sizeof path, "%s/tests/data/model/%s", dir, name);
    return path;
}

static void assert_rel(double got, double want, double tol, const char *what)
{
    double d = fabs(got - want) / (fabs(want) > 0 ? fabs(want) : 1);
    if (!(d <= tol))
        TEST_FAIL("%s: got %.17g, want %.17g (relative difference %g)", what, got, want, d);
}

static tscope_model_t fit_arrays(const double *x, const double *y, size_t n, int cv, unsigned terms)
{
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_param(&e, "p"), 0);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(tscope_mexp_add(&e, "f", "time", &x[i], &y[i], 1), 0);
    tscope_mexp_finish(&e);
    tscope_mfit_opts_t o = {sizeof o, cv, terms};
    tscope_model_t m;
    ASSERT_EQ(tscope_model_fit(&e.series[0], 1, &o, &m), 0);
    tscope_mexp_free(&e);
    return m;
}

static void format(const tscope_model_t *m, const char *const *params, char *buf, size_t len)
{
    int n = tscope_model_format(m, params, buf, len);
    ASSERT(n > 0 && (size_t)n < len);
}

/* v as the shortest %g text that reads back as v: how the printer writes a
 * coefficient that is neither a whole number nor needs an exponent (Python's
 * repr, as Extra-P prints). */
static void shortest_double(double v, char *buf, size_t len)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* ---- readers ------------------------------------------------------------ */

static void check_small(const tscope_mexp_t *e, const char *file)
{
    if (e->nparams != 1 || strcmp(e->params[0], "n") || e->nseries != 2)
        TEST_FAIL("%s: %u parameters, %zu series", file, e->nparams, e->nseries);
    const double pts[5] = {4, 8, 16, 32, 64};
    for (size_t s = 0; s < 2; s++) {
        const tscope_mseries_t *se = &e->series[s];
        ASSERT(strcmp(se->callpath, s ? "main->io" : "solve") == 0);
        ASSERT(strcmp(se->metric, "time") == 0);
        ASSERT_EQ(se->npoints, 5);
        for (size_t k = 0; k < 5; k++) {
            double n = pts[k], f = s ? 5 + 3 * log2(n) : 2 + 0.01 * n * n;
            ASSERT(se->points[k].coord[0] == n);
            ASSERT_EQ(se->points[k].nvalues, 3);
            assert_rel(se->points[k].values[0], f * 0.99, 1e-6, file);
            assert_rel(se->points[k].mean, f, 1e-6, file);
        }
    }
}

static void test_readers(void)
{
    static const char *const files[] = {"small.txt", "small_new.json", "small_old.json",
                                        "small.jsonl", "small_talpas.txt"};
    char err[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tscope_mexp_t e = {0};
        if (tscope_mexp_read(&e, data(files[i]), TSCOPE_MFORMAT_AUTO, err, sizeof err))
            TEST_FAIL("%s: %s", files[i], err);
        check_small(&e, files[i]);
        tscope_mexp_free(&e);
    }
    /* a forced format is used as given */
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_read(&e, data("small.jsonl"), TSCOPE_MFORMAT_JSONL, err, sizeof err), 0);
    check_small(&e, "small.jsonl as jsonl");
    tscope_mexp_free(&e);
    ASSERT_EQ(tscope_mformat_parse("talpas"), TSCOPE_MFORMAT_TALPAS);
    ASSERT_EQ(tscope_mformat_parse("xml"), -1);
}

/* A malformed input gives a negative code and a message that holds want. */
static void expect_error(const char *content, tscope_mformat_t format, const char *want)
{
    char path[] = "/tmp/tscope_model_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(content, f);
    fclose(f);
    tscope_mexp_t e = {0};
    char err[512] = "";
    int rc = tscope_mexp_read(&e, path, format, err, sizeof err);
    tscope_mexp_free(&e);
    if (rc >= 0 || !strstr(err, want) || !strstr(err, path))
        TEST_FAIL("input %.60s...: rc %d, message '%s', wanted '%s' and the file name", content, rc,
                  err, want);
    remove(path);
}

static void test_malformed(void)
{
    expect_error("PARAMETER x\nPOINTS ( 1 ) ( 2\nREGION r\nDATA 1\n", TSCOPE_MFORMAT_AUTO,
                 ":2: malformed POINTS");
    expect_error("PARAMETER x\nPOINTS 1 2\nDATA 1\n", TSCOPE_MFORMAT_AUTO,
                 ":3: DATA before any REGION");
    expect_error("PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nDATA 3\n", TSCOPE_MFORMAT_AUTO,
                 ":6: more DATA lines than POINTS");
    expect_error("PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1 abc\n", TSCOPE_MFORMAT_AUTO,
                 ":4: DATA: 'abc' is not a number");
    expect_error("PARAMETER x\nPOINTS 1\nREGION r\nDTA 1\n", TSCOPE_MFORMAT_AUTO,
                 ":4: unknown keyword 'DTA'");
    expect_error("POINTS 1 2\n", TSCOPE_MFORMAT_AUTO, ":1: POINTS before any PARAMETER");
    expect_error("PARAMETER a b c d e\n", TSCOPE_MFORMAT_AUTO, ":1: too many parameters");
    expect_error("# nothing\n", TSCOPE_MFORMAT_AUTO, "no DATA found");
#ifdef TSCOPE_HAVE_JANSSON
    expect_error("{\"parameters\": [\"x\"],\n \"measurements\": {\"a\": {\"t\": [\n"
                 "{\"point\": [1], \"values\": [1,]}]}}}\n",
                 TSCOPE_MFORMAT_AUTO, ":3: column");
    expect_error("{\"parameters\": [\"x\"], \"measurements\": {\"a\": {\"t\": "
                 "[{\"point\": [1, 2], \"values\": [1]}]}}}\n",
                 TSCOPE_MFORMAT_AUTO,
                 ": measurements[\"a\"][\"t\"][0].point: expected a finite number (or a list of "
                 "1), got a list of 2");
    expect_error("{\"foo\": 1}\n", TSCOPE_MFORMAT_JSON, "not an Extra-P JSON experiment");
    expect_error("{\"callpaths\": [{\"id\": 1, \"name\": \"a\"}], \"coordinates\": [], "
                 "\"measurements\": [{\"callpath_id\": 1, \"coordinate_id\": 7, \"metric_id\": 1, "
                 "\"value\": 1}], \"metrics\": [{\"id\": 1, \"name\": \"t\"}], "
                 "\"parameters\": [{\"id\": 1, \"name\": \"x\"}]}\n",
                 TSCOPE_MFORMAT_AUTO,
                 ": measurements[0].coordinate_id: 7 is not the id of an entry of coordinates");
    expect_error("{\"params\": {\"x\": 1}, \"callpath\": \"a\", \"value\": 1}\n"
                 "{\"params\": {\"x\": 2}, \"callpath\": \"a\", \"value\": \"slow\"}\n",
                 TSCOPE_MFORMAT_AUTO,
                 ":2: value: expected a finite number or a non-empty list of them, got a string");
    expect_error("{\"params\": {\"x\": 1}, \"callpath\": \"a\", \"value\": 1}\n"
                 "{\"params\": {\"x\": 2, \"y\": 1}, \"callpath\": \"a\", \"value\": 2}\n",
                 TSCOPE_MFORMAT_JSONL,
                 ":2: params: this line has a different set of parameters (x, y) than line 1 (x)");
    expect_error("{\"parameters\":{\"x\":20};\"callpath\":\"c\";\"value\":1}\n"
                 "{\"parameters\":{\"x\":30};\"callpath\":\"c\";\"value\":1\n",
                 TSCOPE_MFORMAT_AUTO, ":2: column");
#endif
    char err[256];
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_read(&e, "/nonexistent/x.txt", TSCOPE_MFORMAT_AUTO, err, sizeof err),
              TSCOPE_EIO);
    ASSERT(strstr(err, "/nonexistent/x.txt: cannot open"));
}

/* ---- robust readers: files written into a temporary folder -------------- */

static char tmpdir[64];
static char created[64][1200];
static int ncreated;

/* Creates tmpdir/name holding content; its path into path. */
static void temp_file(char *path, size_t len, const char *name, const char *content)
{
    snprintf(path, len, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(content, f);
    ASSERT_EQ(fclose(f), 0);
    if (ncreated < 64)
        snprintf(created[ncreated++], sizeof created[0], "%s", path);
}

static void remove_temp_files(void)
{
    for (int i = 0; i < ncreated; i++)
        remove(created[i]);
    rmdir(tmpdir);
}

/* Reading path into e fails with exactly "PATH" + want. */
static void expect_message(tscope_mexp_t *e, const char *path, tscope_mformat_t format,
                           const char *want)
{
    char err[2048] = "a stale message", full[2048];
    int rc = tscope_mexp_read(e, path, format, err, sizeof err);
    snprintf(full, sizeof full, "%s%s", path, want);
    if (rc >= 0 || strcmp(err, full) != 0)
        TEST_FAIL("%s: rc %d, message\n  '%s', wanted\n  '%s'", path, rc, err, full);
}

#ifdef TSCOPE_HAVE_JANSSON
/* An old-layout JSON file with nparams parameters (named "x" when
 * same_name, else "p1", "p2", ..), one coordinate naming the last. */
static void write_old_json(char *path, size_t len, const char *name, int nparams, int same_name)
{
    snprintf(path, len, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fprintf(f, "{\"callpaths\": [{\"id\": 1, \"name\": \"a\"}], \"metrics\": [{\"id\": 1, "
               "\"name\": \"t\"}], \"parameters\": [");
    for (int i = 1; i <= nparams; i++) {
        if (same_name)
            fprintf(f, "%s{\"id\": %d, \"name\": \"x\"}", i > 1 ? ", " : "", i);
        else
            fprintf(f, "%s{\"id\": %d, \"name\": \"p%d\"}", i > 1 ? ", " : "", i, i);
    }
    fprintf(f,
            "], \"coordinates\": [{\"id\": 1, \"parameter_value_pairs\": [{\"parameter_id\": "
            "%d, \"parameter_value\": 4}]}], \"measurements\": [{\"callpath_id\": 1, "
            "\"coordinate_id\": 1, \"metric_id\": 1, \"value\": 1}]}\n",
            nparams);
    ASSERT_EQ(fclose(f), 0);
    if (ncreated < 64)
        snprintf(created[ncreated++], sizeof created[0], "%s", path);
}
#endif

/* Defect 1: 4,000 parameters of one name wrote past a stack buffer of 4
 * coordinates (a segfault); now rejected with the file and the problem. */
static void test_old_json_many_params(void)
{
#ifdef TSCOPE_HAVE_JANSSON
    char path[1200];
    tscope_mexp_t e = {0};
    write_old_json(path, sizeof path, "model_old_4000_same.json", 4000, 1);
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": parameters: parameter 'x' is named twice (parameters 1 and 2; expected "
                   "distinct names)");
    tscope_mexp_free(&e);
    write_old_json(path, sizeof path, "model_old_4000.json", 4000, 0);
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": parameters: too many parameters: 4000 (at most 4)");
    tscope_mexp_free(&e);
    /* a coordinate that names one parameter twice and leaves out the other */
    temp_file(path, sizeof path, "model_old_pairs.json",
              "{\"callpaths\": [{\"id\": 1, \"name\": \"a\"}], \"metrics\": [{\"id\": 1, \"name\": "
              "\"t\"}], \"parameters\": [{\"id\": 7, \"name\": \"y\"}, {\"id\": 3, \"name\": "
              "\"x\"}], \"coordinates\": [{\"id\": 1, \"parameter_value_pairs\": "
              "[{\"parameter_id\": 3, \"parameter_value\": 10}, {\"parameter_id\": 3, "
              "\"parameter_value\": 20}]}], \"measurements\": [{\"callpath_id\": 1, "
              "\"coordinate_id\": 1, \"metric_id\": 1, \"value\": 1}]}\n");
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": coordinates[0].parameter_value_pairs[1].parameter_id: parameter 2 again "
                   "(expected each parameter once)");
    tscope_mexp_free(&e);
    /* ids are not positions: y (id 7) is the first parameter, x (id 3) the second */
    temp_file(path, sizeof path, "model_old_ids.json",
              "{\"callpaths\": [{\"id\": 1, \"name\": \"a\"}], \"metrics\": [{\"id\": 1, \"name\": "
              "\"t\"}], \"parameters\": [{\"id\": 7, \"name\": \"y\"}, {\"id\": 3, \"name\": "
              "\"x\"}], \"coordinates\": [{\"id\": 1, \"parameter_value_pairs\": "
              "[{\"parameter_id\": 3, \"parameter_value\": 10}, {\"parameter_id\": 7, "
              "\"parameter_value\": 20}]}], \"measurements\": [{\"callpath_id\": 1, "
              "\"coordinate_id\": 1, \"metric_id\": 1, \"value\": 5}]}\n");
    char err[512];
    ASSERT_EQ(tscope_mexp_read(&e, path, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    ASSERT_STR_EQ(e.params[0], "y");
    ASSERT_STR_EQ(e.params[1], "x");
    ASSERT(e.series[0].points[0].coord[0] == 20 && e.series[0].points[0].coord[1] == 10);
    tscope_mexp_free(&e);
    /* duplicate ids are an error, not the first match */
    temp_file(path, sizeof path, "model_old_dup_ids.json",
              "{\"callpaths\": [{\"id\": 1, \"name\": \"a\"}, {\"id\": 1, \"name\": \"b\"}], "
              "\"metrics\": [{\"id\": 1, \"name\": \"t\"}], \"parameters\": [{\"id\": 1, "
              "\"name\": \"x\"}], \"coordinates\": [], \"measurements\": []}\n");
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": callpaths: id 1 is used twice (entries 0 and 1; expected unique ids)");
    tscope_mexp_free(&e);
#endif
}

/* Defect 2: the parameters of several files are matched by name; files
 * whose names differ are rejected naming both files and the names. */
static void test_params_by_name(void)
{
    char a[1200], b[1200], bad[1200], fewer[1200];
    temp_file(a, sizeof a, "model_xy.txt",
              "PARAMETER x y\nPOINTS ( 1 10 ) ( 2 20 )\nREGION r\nDATA 1\nDATA 2\n");
    temp_file(b, sizeof b, "model_yx.txt",
              "PARAMETER y\nPARAMETER x\nPOINTS ( 30 3 )\nREGION r\n"
              "DATA 3\n");
    tscope_mexp_t e = {0};
    char err[1024];
    ASSERT_EQ(tscope_mexp_read(&e, a, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    if (tscope_mexp_read(&e, b, TSCOPE_MFORMAT_AUTO, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(e.nparams, 2);
    ASSERT_STR_EQ(e.params[0], "x");
    ASSERT_EQ(e.series[0].npoints, 3);
    const double *c = e.series[0].points[2].coord;
    if (c[0] != 3 || c[1] != 30)
        TEST_FAIL("y=30, x=3 of %s stored as x=%g, y=%g", b, c[0], c[1]);
#ifdef TSCOPE_HAVE_JANSSON
    char j[1200], l[1200];
    temp_file(j, sizeof j, "model_yx.json",
              "{\"parameters\": [\"y\", \"x\"], \"measurements\": {\"r\": {\"time\": "
              "[{\"point\": [40, 4], \"values\": [4]}]}}}\n");
    temp_file(l, sizeof l, "model_yx.jsonl",
              "{\"params\": {\"y\": 50, \"x\": 5}, \"callpath\": \"r\", \"value\": 5}\n");
    ASSERT_EQ(tscope_mexp_read(&e, j, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    ASSERT_EQ(tscope_mexp_read(&e, l, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    ASSERT_EQ(e.series[0].npoints, 5);
    ASSERT(e.series[0].points[3].coord[0] == 4 && e.series[0].points[3].coord[1] == 40);
    ASSERT(e.series[0].points[4].coord[0] == 5 && e.series[0].points[4].coord[1] == 50);
    char jbad[1200];
    temp_file(jbad, sizeof jbad, "model_xq.json",
              "{\"parameters\": [\"x\", \"q\"], \"measurements\": {\"r\": {\"time\": "
              "[{\"point\": [1, 1], \"values\": [1]}]}}}\n");
    char want[3000];
    snprintf(want, sizeof want,
             ": parameters: (x, q) differ from those of %s (x, y): only here: q; only in %s: y "
             "(expected the same parameter names in every file)",
             a, a);
    expect_message(&e, jbad, TSCOPE_MFORMAT_AUTO, want);
#endif
    temp_file(bad, sizeof bad, "model_xz.txt",
              "# other names\nPARAMETER x z\nPOINTS ( 1 1 )\nREGION r\nDATA 1\n");
    char msg[3000];
    snprintf(msg, sizeof msg,
             ":2: parameters (x, z) differ from those of %s (x, y): only here: z; only in %s: y "
             "(expected the same parameter names in every file)",
             a, a);
    expect_message(&e, bad, TSCOPE_MFORMAT_AUTO, msg);
    temp_file(fewer, sizeof fewer, "model_x.txt", "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\n");
    snprintf(msg, sizeof msg,
             ":1: parameters (x) differ from those of %s (x, y): only here: none; only in %s: y "
             "(expected the same parameter names in every file)",
             a, a);
    expect_message(&e, fewer, TSCOPE_MFORMAT_AUTO, msg);
    ASSERT_EQ(e.nparams, 2); /* nothing declared by the rejected files */
    tscope_mexp_free(&e);
    /* in one file: a name twice, a PARAMETER after POINTS */
    temp_file(bad, sizeof bad, "model_xx.txt", "PARAMETER x x\n");
    expect_message(&e, bad, TSCOPE_MFORMAT_AUTO,
                   ":1: parameter 'x' declared twice (expected distinct names)");
    temp_file(bad, sizeof bad, "model_late.txt", "PARAMETER x\nPOINTS 1\nPARAMETER y\n");
    expect_message(&e, bad, TSCOPE_MFORMAT_AUTO,
                   ":3: PARAMETER after POINTS (expected every PARAMETER before the first "
                   "POINTS)");
    tscope_mexp_free(&e);
}

/* Defect 3: NaN and infinity are rejected by every reader. */
static void test_non_finite(void)
{
    static const struct {
        const char *name, *content, *want;
    } cases[] = {
        {"model_nan.txt", "PARAMETER n\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA nan\nDATA 3\n",
         ":5: DATA: 'nan' is not a finite number (expected finite measurements)"},
        {"model_inf.txt", "PARAMETER n\nPOINTS 1 2\nREGION r\nDATA 1 2\nDATA 3 -inf 4\n",
         ":5: DATA: '-inf' is not a finite number (expected finite measurements)"},
        {"model_overflow.txt", "PARAMETER n\nPOINTS 1 2\nREGION r\nDATA 1e999\n",
         ":4: DATA: '1e999' is not a finite number (expected finite measurements)"},
        {"model_inf_point.txt", "PARAMETER n\nPOINTS ( 1 ) ( infinity )\nREGION r\nDATA 1\n",
         ":2: POINTS: 'infinity' is not a finite number (expected finite coordinates)"},
#ifdef TSCOPE_HAVE_JANSSON
        {"model_nan_new.json",
         "{\"parameters\": [\"x\"],\n \"measurements\": {\"a\": {\"t\": [\n"
         "{\"point\": [1], \"values\": [1, NaN]}]}}}\n",
         ":3: column 32: invalid token near 'NaN' (expected JSON)"},
        {"model_inf_old.json",
         "{\"callpaths\": [{\"id\": 1, \"name\": \"a\"}], \"coordinates\": [{\"id\": 1, "
         "\"parameter_value_pairs\": [{\"parameter_id\": 1, \"parameter_value\": 2}]}],\n"
         "\"measurements\": [{\"callpath_id\": 1, \"coordinate_id\": 1, \"metric_id\": 1, "
         "\"value\": 1e999}], \"metrics\": [{\"id\": 1, \"name\": \"t\"}], "
         "\"parameters\": [{\"id\": 1, \"name\": \"x\"}]}\n",
         ":2: column 86: real number overflow near '1e999' (expected JSON)"},
        {"model_nan.jsonl",
         "{\"params\": {\"x\": 1}, \"callpath\": \"a\", \"value\": 1}\n"
         "{\"params\": {\"x\": Infinity}, \"callpath\": \"a\", \"value\": 2}\n",
         ":2: column 25: invalid token near 'Infinity' (expected JSON)"},
        {"model_nan_talpas.txt",
         "{\"parameters\":{\"x\":20};\"callpath\":\"c\";\"value\":-1e400}\n",
         ":1: column 52: real number overflow near '-1e400' (expected JSON)"},
#endif
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1200];
        temp_file(path, sizeof path, cases[i].name, cases[i].content);
        tscope_mexp_t e = {0};
        expect_message(&e, path, TSCOPE_MFORMAT_AUTO, cases[i].want);
        tscope_mexp_free(&e);
    }
}

/* Defect 4: adjusted R^2 without variance or degrees of freedom is
 * undefined (NaN), printed as "undefined", never -inf. */
static void test_ar2_undefined(void)
{
    char buf[128];
    const double x2[2] = {1, 2}, y2[2] = {1, 3}; /* 2 points, 1 term: n - 1 - 1 = 0 */
    tscope_model_t m = fit_arrays(x2, y2, 2, 1, 1);
    ASSERT_EQ(m.nterms, 1);
    ASSERT(isnan(m.ar2));
    char want[128];
    snprintf(want, sizeof want, "RSS %.6g, SMAPE %.6g, adj. R^2 undefined", m.rss, m.smape);
    tscope__model_quality_format(&m, buf, sizeof buf);
    ASSERT_STR_EQ(buf, want);

    const double x5[5] = {1, 2, 3, 4, 5}, y5[5] = {7, 7, 7, 7, 7}; /* TSS 0 */
    m = fit_arrays(x5, y5, 5, 1, 1);
    ASSERT(isnan(m.ar2));
    tscope__model_quality_format(&m, buf, sizeof buf);
    ASSERT_STR_EQ(buf, "RSS 0, SMAPE 0, adj. R^2 undefined");

    const double y5b[5] = {5, 8, 11, 14, 17}; /* exactly 2 + 3 p: defined, 1 */
    m = fit_arrays(x5, y5b, 5, 1, 1);
    ASSERT(m.ar2 == 1);
    snprintf(want, sizeof want, "RSS %.6g, SMAPE %.6g, adj. R^2 1", m.rss, m.smape);
    tscope__model_quality_format(&m, buf, sizeof buf);
    ASSERT_STR_EQ(buf, want);

    /* two parameters, constant data: TSS 0 */
    tscope_mexp_t e = {0};
    tscope_mexp_param(&e, "x");
    tscope_mexp_param(&e, "y");
    for (int i = 1; i <= 3; i++)
        for (int j = 1; j <= 3; j++) {
            double c[2] = {i, j}, v = 4;
            ASSERT_EQ(tscope_mexp_add(&e, "k", "t", c, &v, 1), 0);
        }
    tscope_mexp_finish(&e);
    ASSERT_EQ(tscope_model_fit(&e.series[0], 2, NULL, &m), 0);
    ASSERT(isnan(m.ar2));
    tscope_mexp_free(&e);
    ASSERT(isnan(tscope__adjusted_r2(1, 2, 3, 2))); /* n - terms - 1 = 0 */
    ASSERT(isnan(tscope__adjusted_r2(1, 2, 2, 3))); /* negative */
    ASSERT_NEAR(tscope__adjusted_r2(1, 4, 5, 1), 1 - 0.25 * 4 / 3, 1e-15);
}

/* Defect 5: names of any length are kept whole, never cut and merged. */
static void test_long_names(void)
{
    size_t len = 3000;
    char *one = malloc(len + 8), *two = malloc(len + 8), *metric = malloc(len + 8);
    ASSERT(one && two && metric);
    memset(one, 'a', len);
    memcpy(one + len, "->one", 6);
    memset(two, 'a', len);
    memcpy(two + len, "->two", 6);
    memset(metric, 'm', len);
    metric[len] = 0;
    size_t cap = 4 * len + 200;
    char *content = malloc(cap), path[1200], err[512];
    ASSERT(content != NULL);
    snprintf(content, cap,
             "PARAMETER p\nPOINTS 1 2\nREGION %s\nMETRIC %s\nDATA 1\nDATA 2\nREGION %s\n"
             "DATA 3\nDATA 4\n",
             one, metric, two);
    temp_file(path, sizeof path, "model_long_names.txt", content);
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_read(&e, path, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    ASSERT_EQ(e.nseries, 2);
    ASSERT_EQ(strlen(e.series[0].callpath), len + 5);
    ASSERT(strcmp(e.series[0].callpath, one) == 0 && strcmp(e.series[1].callpath, two) == 0);
    ASSERT(strcmp(e.series[0].metric, metric) == 0 && strcmp(e.series[1].metric, metric) == 0);
    ASSERT(e.series[0].points[1].values[0] == 2 && e.series[1].points[1].values[0] == 4);
    tscope_mexp_free(&e);
    free(content);
    free(one);
    free(two);
    free(metric);
}

/* Defect 6: every failure has a message of its own: the file, where, what
 * was expected; never empty, never left from an earlier call. */
static void test_messages(void)
{
    char a[1200], path[1200], err[512];
    temp_file(a, sizeof a, "model_ok.txt", "PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\n");
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_read(&e, a, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    /* a later file without measurements was accepted silently */
    temp_file(path, sizeof path, "model_comments.txt", "# nothing here\n");
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ":2: no DATA found by the end of the file (expected PARAMETER, POINTS, REGION "
                   "and DATA lines)");
#ifdef TSCOPE_HAVE_JANSSON
    temp_file(path, sizeof path, "model_empty.json",
              "{\"parameters\": [\"x\"], \"measurements\": {}}\n");
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": no measurements found (expected at least one)");
    temp_file(path, sizeof path, "model_blank.jsonl", "\n\n");
    expect_message(&e, path, TSCOPE_MFORMAT_JSONL,
                   ": no measurements found (expected at least one)");
    temp_file(path, sizeof path, "model_dup_key.jsonl",
              "{\"params\": {\"x\": 1, \"x\": 2}, \"callpath\": \"a\", \"value\": 1}\n");
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ":1: column 23: duplicate object key near '\"x\"' (expected JSON)");
    temp_file(path, sizeof path, "model_bad_param.json",
              "{\"parameters\": [\"x\", 3], \"measurements\": {}}\n");
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": parameters[1]: expected a name (a string), got a number");
    /* jansson quotes the text near the error, here a newline: still one line */
    temp_file(path, sizeof path, "model_newline.json", "{\"a\":\"\\\n\"}\n");
    expect_message(&e, path, TSCOPE_MFORMAT_JSON,
                   ":2: column 0: invalid escape near '\"\\?' (expected JSON)");
#endif
    tscope_mexp_free(&e);
    /* a NUL byte, a folder */
    snprintf(path, sizeof path, "%s/model_nul.txt", tmpdir);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fwrite("PAR\0x", 1, 5, f);
    fclose(f);
    snprintf(created[ncreated++], sizeof created[0], "%s", path);
    expect_message(&e, path, TSCOPE_MFORMAT_AUTO,
                   ": byte 3: a NUL byte: expected text (a model input, not binary data)");
    expect_message(&e, tmpdir, TSCOPE_MFORMAT_AUTO, ": byte 0: Is a directory");
    tscope_mexp_free(&e);
}

/* ---- the default modeler -------------------------------------------------- */

/* Extra-P's own test: f = 200 + 10 * term at p = 2, 4, 8, 16, 32 gives back
 * the term and both coefficients, for each of the 42 hypotheses. */
static void test_recover_42(void)
{
    const double x[5] = {2, 4, 8, 16, 32};
    for (int h = 0; h < TSCOPE__NHYP; h++) {
        tscope_mfactor_t f = {tscope__hyp[h][0], tscope__hyp[h][1], tscope__hyp[h][2]};
        double y[5];
        for (int i = 0; i < 5; i++)
            y[i] = 200 + 10 * tscope__factor_eval(&f, x[i]);
        tscope_model_t m = fit_arrays(x, y, 5, 1, 1);
        if (m.nterms != 1 || m.terms[0].f[0].num * f.den != f.num * m.terms[0].f[0].den ||
            m.terms[0].f[0].log != f.log)
            TEST_FAIL("hypothesis %d (%d/%d, log %d): got %u terms, %d/%d log %d", h, f.num, f.den,
                      f.log, m.nterms, m.terms[0].f[0].num, m.terms[0].f[0].den,
                      m.terms[0].f[0].log);
        assert_rel(m.c0, 200, 1e-6, "c0");
        assert_rel(m.terms[0].coef, 10, 1e-6, "c1");
    }
}

static void test_constant(void)
{
    const double x[5] = {1, 2, 3, 4, 5}, y[5] = {7, 7, 7, 7, 7};
    tscope_model_t m = fit_arrays(x, y, 5, 1, 1);
    ASSERT_EQ(m.nterms, 0);
    ASSERT(m.c0 == 7 && m.rss == 0 && m.smape == 0);
    char buf[64];
    const char *p = "p";
    format(&m, &p, buf, sizeof buf);
    ASSERT(strcmp(buf, "7.0") == 0);
    /* noise without a trend stays constant */
    const double y2[6] = {4.1, 3.9, 4.0, 4.05, 3.95, 4.0}, x2[6] = {1, 2, 4, 8, 16, 32};
    m = fit_arrays(x2, y2, 6, 1, 1);
    ASSERT_EQ(m.nterms, 0);
    assert_rel(m.c0, 4.0, 1e-12, "mean");
}

static void test_noisy(void)
{
    const double x[6] = {16, 32, 64, 128, 256, 512};
    const double noise[6] = {1.02, 0.98, 1.01, 0.99, 1.015, 0.985};
    double y[6];
    for (int i = 0; i < 6; i++)
        y[i] = (50 + 0.3 * x[i] * log2(x[i])) * noise[i];
    tscope_model_t m = fit_arrays(x, y, 6, 1, 1);
    ASSERT_EQ(m.nterms, 1);
    ASSERT(m.terms[0].f[0].num == 1 && m.terms[0].f[0].den == 1 && m.terms[0].f[0].log == 1);
    assert_rel(m.terms[0].coef, 0.3, 0.05, "noisy c1");
    ASSERT(m.smape > 0 && m.smape < 5 && m.ar2 > 0.99);
}

/* The constant cleaning rules: with cross-validation each fold sets c0 to 0
 * when |c0 / min(training values)| < 0.0005 (the final refit keeps it);
 * without, the fit on all points does the same with 0.001. */
static void test_constant_cleaning(void)
{
    const double x[5] = {2, 4, 8, 16, 32};
    double y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 1000 * x[i] + 0.3; /* 0.3 / 2000.3: cleaned in every fold */
    tscope_model_t m = fit_arrays(x, y, 5, 1, 1);
    ASSERT_EQ(m.nterms, 1);
    assert_rel(m.c0, 0.3, 1e-9, "final c0 (refit, not cleaned)");
    assert_rel(m.rss, 5 * 0.3 * 0.3, 1e-6, "cross-validated RSS of the cleaned folds");

    m = fit_arrays(x, y, 5, 0, 1);
    ASSERT(m.c0 == 0); /* 0.3 / 2000.3 < 0.001 */
    char buf[128];
    const char *p = "p";
    format(&m, &p, buf, sizeof buf);
    ASSERT(!strstr(buf, " + ") && strstr(buf, " * p^(1)")); /* c0 exactly 0 is not printed */
    assert_rel(m.terms[0].coef, 1000, 1e-12, "c1 without CV");

    for (int i = 0; i < 5; i++)
        y[i] = 1000 * x[i] + 5; /* 5 / 2005 > 0.001: kept */
    m = fit_arrays(x, y, 5, 0, 1);
    assert_rel(m.c0, 5, 1e-9, "kept c0");
}

static void test_log_needs_one(void)
{
    const double x[5] = {0.5, 1, 2, 4, 8};
    double y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 3 + 2 * x[i];
    tscope_model_t m = fit_arrays(x, y, 5, 1, 1);
    ASSERT(m.nterms == 1 && m.terms[0].f[0].log == 0 && m.terms[0].f[0].num == 1);
}

static void test_two_params(void)
{
    tscope_mexp_t e = {0};
    char err[256];
    ASSERT_EQ(tscope_mexp_read(&e, data("two_params.txt"), TSCOPE_MFORMAT_AUTO, err, sizeof err),
              0);
    ASSERT_EQ(e.nparams, 2);
    ASSERT_EQ(e.series[0].npoints, 25);
    tscope_model_t m;
    ASSERT_EQ(tscope_model_fit(&e.series[0], 2, NULL, &m), 0);
    char buf[256];
    format(&m, (const char *const *)e.params, buf, sizeof buf);
    /* the data: (3 + 0.5 * x * log2(y)) * 1.0005 on average */
    ASSERT_EQ(m.nterms, 1);
    ASSERT(m.multi_form);
    ASSERT(m.terms[0].f[0].num == 1 && m.terms[0].f[0].log == 0 && m.terms[0].f[1].log == 1 &&
           m.terms[0].f[1].num == 0);
    assert_rel(m.terms[0].coef, 0.5 * 1.0005, 1e-9, "x*log2(y) coefficient");
    assert_rel(m.c0, 3 * 1.0005, 1e-9, "c0");
    /* printed exactly: the fitted coefficients as the shortest text that
     * reads back as the same double (their last digits are the solver's
     * rounding, checked above to 1e-9, not what this checks) */
    char c0[32], c1[32], want[256];
    shortest_double(m.c0, c0, sizeof c0);
    shortest_double(m.terms[0].coef, c1, sizeof c1);
    snprintf(want, sizeof want, "%s + %s * x^(1) * log2(y)^(1)", c0, c1);
    ASSERT_STR_EQ(buf, want);
    /* and with the values the data was made from, digit for digit */
    tscope_model_t exact = m;
    exact.c0 = 3.0015;
    exact.terms[0].coef = 0.50025;
    format(&exact, (const char *const *)e.params, buf, sizeof buf);
    ASSERT_STR_EQ(buf, "3.0015 + 0.50025 * x^(1) * log2(y)^(1)");
    double at[2] = {100, 64};
    assert_rel(tscope_model_eval(&m, at), (3 + 0.5 * 100 * 6) * 1.0005, 1e-9, "prediction");
    tscope_mexp_free(&e);

    /* a sum: 10 + 2 * x + 40 * y^(1/2) */
    tscope_mexp_t s = {0};
    tscope_mexp_param(&s, "x");
    tscope_mexp_param(&s, "y");
    for (int i = 1; i <= 5; i++)
        for (int j = 1; j <= 5; j++) {
            double c[2] = {10.0 * i, 4.0 * j}, v = 10 + 2 * c[0] + 40 * sqrt(c[1]);
            ASSERT_EQ(tscope_mexp_add(&s, "k", "t", c, &v, 1), 0);
        }
    tscope_mexp_finish(&s);
    ASSERT_EQ(tscope_model_fit(&s.series[0], 2, NULL, &m), 0);
    ASSERT_EQ(m.nterms, 2);
    ASSERT(m.smape < 1e-6);
    tscope_mexp_free(&s);
}

static void test_multi_term(void)
{
    const double x[8] = {2, 4, 8, 16, 32, 64, 128, 256};
    double y[8];
    for (int i = 0; i < 8; i++)
        y[i] = 200 + 10 * x[i] * x[i] + 5000 * log2(x[i]);
    tscope_model_t one = fit_arrays(x, y, 8, 1, 1), two = fit_arrays(x, y, 8, 1, 2);
    ASSERT_EQ(one.nterms, 1);
    ASSERT_EQ(two.nterms, 2);
    ASSERT(two.smape < one.smape * 0.9);
    int sq = 0, lg = 0;
    for (unsigned k = 0; k < 2; k++) {
        const tscope_mfactor_t *f = &two.terms[k].f[0];
        if (f->num == 2 && f->den == 1 && !f->log) {
            sq = 1;
            assert_rel(two.terms[k].coef, 10, 1e-6, "x^2 coefficient");
        }
        if (!f->num && f->log == 1) {
            lg = 1;
            assert_rel(two.terms[k].coef, 5000, 1e-6, "log coefficient");
        }
    }
    ASSERT(sq && lg);
    /* pure one-term data gets no second term */
    for (int i = 0; i < 8; i++)
        y[i] = 3 + 0.5 * x[i];
    ASSERT_EQ(fit_arrays(x, y, 8, 1, 3).nterms, 1);
}

/* Extra-P's own sample inputs and the results its tests expect, when the
 * team's shared data is there (it is not part of this repository). */
static void test_extrap_samples(void)
{
    char path[1200], err[512];
    snprintf(path, sizeof path, "%s/../shared/data/extrap/one_parameter_1.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("test_extrap_samples: skipped: %s not found (Extra-P's sample inputs live in the "
               "team's shared folder, not in this repository)\n",
               path);
        return;
    }
    fclose(f);
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_read(&e, path, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    tscope_model_t m;
    ASSERT_EQ(tscope_model_fit(&e.series[0], 1, NULL, &m), 0);
    /* Extra-P's test_console: -0.88979340.. + 0.20168243.. * x^(2), RSS 3.43E+01 */
    assert_rel(m.c0, -0.8897934098062803, 1e-6, "one_parameter_1 c0");
    assert_rel(m.terms[0].coef, 0.20168243826499177, 1e-6, "one_parameter_1 c1");
    ASSERT(m.terms[0].f[0].num == 2 && m.terms[0].f[0].den == 1 && !m.terms[0].f[0].log);
    assert_rel(m.rss, 34.3, 0.002, "one_parameter_1 RSS");
    tscope_mexp_free(&e);

    snprintf(path, sizeof path, "%s/../shared/data/extrap/two_parameter_1.txt", dir);
    ASSERT_EQ(tscope_mexp_read(&e, path, TSCOPE_MFORMAT_AUTO, err, sizeof err), 0);
    ASSERT_EQ(tscope_model_fit(&e.series[0], 2, NULL, &m), 0);
    char buf[256];
    format(&m, (const char *const *)e.params, buf, sizeof buf);
    /* Extra-P's test_console: 1.37420831.. + 6.69808039.. * log2(y)^(1) +
     * 0.04384165.. * x^(3/2) * log2(x)^(2) * log2(y)^(1) */
    ASSERT(strstr(buf, " * log2(y)^(1) + ") &&
           strstr(buf, " * x^(3/2) * log2(x)^(2) * log2(y)^(1)"));
    assert_rel(m.c0, 1.37420831, 1e-6, "two_parameter_1 c0");
    assert_rel(m.terms[0].coef, 6.69808039, 1e-6, "two_parameter_1 c1");
    assert_rel(m.terms[1].coef, 0.04384165, 1e-6, "two_parameter_1 c2");
    tscope_mexp_free(&e);
    printf("test_extrap_samples: Extra-P's expected models reproduced\n");
}

/* ---- printing and parsing ----------------------------------------------- */

static void test_print_parse(void)
{
    const char *p = "x";
    tscope_model_t m;
    memset(&m, 0, sizeof m);
    m.nparams = 1;
    m.c0 = 82.0;
    char buf[256];
    struct {
        double v;
        const char *text;
    } nums[] = {{82.0, "82.0"},
                {1e-05, "1e-05"},
                {0.0001, "0.0001"},
                {1e16, "1e+16"},
                {123456789012345678.0, "1.2345678901234568e+17"},
                {-0.8897934098062803, "-0.8897934098062803"},
                {0.1, "0.1"},
                {1234.5, "1234.5"},
                {2.5e-300, "2.5e-300"}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        m.c0 = nums[i].v;
        format(&m, &p, buf, sizeof buf);
        if (strcmp(buf, nums[i].text))
            TEST_FAIL("%.17g printed as '%s', want '%s'", nums[i].v, buf, nums[i].text);
    }
    const char *text = "-0.8897934098062803 + 0.20168243826499177 * x^(2) + 3.5 * x^(1/2) * "
                       "log2(x)^(1) + log2(x)^(2)";
    char err[256];
    ASSERT_EQ(tscope_model_parse(text, 1, &p, &m, err, sizeof err), 0);
    ASSERT_EQ(m.nterms, 3);
    ASSERT(m.terms[1].f[0].num == 1 && m.terms[1].f[0].den == 2 && m.terms[1].f[0].log == 1);
    ASSERT(m.terms[2].coef == 1 && m.terms[2].f[0].num == 0 && m.terms[2].f[0].log == 2);
    format(&m, &p, buf, sizeof buf);
    ASSERT(strcmp(buf, text) == 0);
    ASSERT(tscope_model_parse("1 + 2 * z^(1)", 1, &p, &m, err, sizeof err) == TSCOPE_EINVAL);
    ASSERT(strstr(err, "unknown parameter"));
    ASSERT(tscope_model_parse("1 + 2 * x^(1", 1, &p, &m, err, sizeof err) == TSCOPE_EINVAL);
    ASSERT(strstr(err, "expected ')'"));
}

/* ---- composition -------------------------------------------------------- */

enum { NCOMP = 8 };
static const char *const comp_names[NCOMP] = {"nop", "inc",  "qsort", "lin2",
                                              "sq",  "logc", "fall",  "fall2"};
static tscope_model_t comps[NCOMP];

static int lookup(void *d, const char *name, tscope_model_t *out)
{
    (void)d;
    for (int i = 0; i < NCOMP; i++)
        if (strcmp(name, comp_names[i]) == 0) {
            *out = comps[i];
            return 0;
        }
    return TSCOPE_ENOENT;
}

static tscope_model_t compose(const char *expr)
{
    tscope_model_t m;
    char err[256];
    if (tscope_model_compose(expr, lookup, NULL, &m, err, sizeof err))
        TEST_FAIL("%s: %s", expr, err);
    return m;
}

static void assert_same(const tscope_model_t *a, const tscope_model_t *b, const char *what)
{
    const double at[4] = {1024, 4096, 65536, 1 << 20};
    for (int i = 0; i < 4; i++)
        assert_rel(tscope_model_eval(a, &at[i]), tscope_model_eval(b, &at[i]), 1e-12, what);
    ASSERT_EQ(a->nterms, b->nterms);
}

static void test_compose(void)
{
    const char *p = "p";
    char err[256];
    const char *texts[NCOMP] = {"0.5", "0.2 + 0.001 * p^(1)", "1.0 + 0.01 * p^(1) * log2(p)^(1)",
                                "3.0 + 0.002 * p^(1)", "1.0 + 1e-06 * p^(2)",
                                "2.0 + 0.5 * log2(p)^(1)",
                                /* falling leading terms, as fitted to noise */
                                "8.0 + -5e-11 * p^(7/4)", "100.0 + -0.001 * p^(1)"};
    for (int i = 0; i < NCOMP; i++) {
        ASSERT_EQ(tscope_model_parse(texts[i], 1, &p, &comps[i], err, sizeof err), 0);
        comps[i].lo[0] = 1024;
        comps[i].hi[0] = 65536;
    }
    /* tpool divides, pipe takes the higher order */
    tscope_model_t m = compose("tpool(4, qsort)");
    assert_rel(m.c0, 0.25, 1e-15, "tpool c0");
    assert_rel(m.terms[0].coef, 0.0025, 1e-15, "tpool c1");
    m = compose("pipe(qsort, inc)");
    assert_same(&m, &comps[2], "p log p beats p");
    m = compose("pipe(inc, lin2)"); /* equal order: larger over the range */
    assert_same(&m, &comps[3], "equal order");
    m = compose("pipe(sq, qsort, logc, nop)");
    assert_same(&m, &comps[4], "p^2 beats all");
    m = compose("pipe(nop, logc)");
    assert_same(&m, &comps[5], "log beats constant");
    m = compose("pipe(fall, qsort)"); /* a falling model never dominates */
    assert_same(&m, &comps[2], "rising beats falling");
    m = compose("pipe(fall, nop)");
    assert_same(&m, &comps[0], "constant beats falling");
    m = compose("pipe(fall, fall2)");
    assert_same(&m, &comps[7], "the slower fall is the higher order");
    ASSERT_EQ(tscope_model_compare(&comps[6], &comps[0]), -1);
    ASSERT_EQ(tscope_model_compare(&comps[7], &comps[6]), 1);
    /* the algebra, over all pairs and triples */
    char a[256], b[256];
    for (int i = 0; i < NCOMP; i++)
        for (int j = 0; j < NCOMP; j++) {
            snprintf(a, sizeof a, "pipe(%s, %s)", comp_names[i], comp_names[j]);
            snprintf(b, sizeof b, "pipe(%s, %s)", comp_names[j], comp_names[i]);
            tscope_model_t x = compose(a), y = compose(b);
            assert_same(&x, &y, "pipe is commutative");
            snprintf(a, sizeof a, "pipe(tpool(3, %s), tpool(3, %s))", comp_names[i], comp_names[j]);
            snprintf(b, sizeof b, "tpool(3, pipe(%s, %s))", comp_names[i], comp_names[j]);
            x = compose(a);
            y = compose(b);
            assert_same(&x, &y, "pipe of task pools = task pool of pipes");
            for (int k = 0; k < NCOMP; k++) {
                snprintf(a, sizeof a, "pipe(pipe(%s, %s), %s)", comp_names[i], comp_names[j],
                         comp_names[k]);
                snprintf(b, sizeof b, "pipe(%s, pipe(%s, %s))", comp_names[i], comp_names[j],
                         comp_names[k]);
                x = compose(a);
                y = compose(b);
                assert_same(&x, &y, "pipe is associative");
            }
        }
    /* nesting and errors */
    m = compose("tpool(2, pipe(tpool(2, qsort), inc))");
    assert_rel(m.c0, 0.25, 1e-15, "nested c0");
    ASSERT(tscope_model_compose("pipe(qsort, nothere)", lookup, NULL, &m, err, sizeof err) ==
           TSCOPE_ENOENT);
    ASSERT(strstr(err, "no model named 'nothere'"));
    ASSERT(tscope_model_compose("tpool(0, qsort)", lookup, NULL, &m, err, sizeof err) ==
           TSCOPE_EINVAL);
    ASSERT(tscope_model_compose("pipe(qsort inc)", lookup, NULL, &m, err, sizeof err) ==
           TSCOPE_EINVAL);
    ASSERT(strstr(err, "expected ','"));
}

/* ---- contention: calibration and the contention-aware operators --------- */

static tscope_cmeas_t synth[512];
static size_t nsynth;

static void synth_add(const char *comp, const char *kind, double n, double v)
{
    ASSERT(nsynth < sizeof synth / sizeof *synth);
    tscope_cmeas_t *m = &synth[nsynth++];
    memset(m, 0, sizeof *m);
    snprintf(m->component, sizeof m->component, "%s", comp);
    snprintf(m->kind, sizeof m->kind, "%s", kind);
    m->n = n;
    m->value = v;
}

static double syn_inc(double n)
{
    return 100 + 0.2 * n;
}

static double syn_qsort(double n)
{
    return 50 + 0.5 * n * log2(n);
}

/* The factors synthetic measurements are made with: inc slowed 1.5x by a
 * stream (2.25x by two), qsort (1 + 0.05 log2 n)x; inc slows a stream as much
 * as half a stream does, qsort not at all; qsort's input costs more
 * when just written elsewhere (0.5 n); inc leaves 3/4 of its element written. */
static double syn_sens_qsort(double n)
{
    return 1 + 0.05 * log2(n);
}

static void synth_table(tscope_contention_t *ct)
{
    nsynth = 0;
    synth_add("-", "slows:stream", 0, 1.8);
    synth_add("-", "slows:stream", 0, 1.8);
    synth_add("-", "slows:cache", 0, 1.2);
    synth_add("-", "queue-in", 0, 30);
    synth_add("-", "queue-out", 0, 20);
    synth_add("-", "cores", 0, 4);
    for (double n = 1000; n <= 16000; n *= 2) {
        synth_add("-", "reader-writer", n, 3 * n);
        synth_add("-", "reader-cold", n, n);
        synth_add("inc", "alone", n, syn_inc(n));
        synth_add("inc", "alone", n, 10 * syn_inc(n)); /* a disturbed repetition */
        synth_add("inc", "alone", n, syn_inc(n));
        synth_add("inc", "stream:1", n, 1.5 * syn_inc(n));
        synth_add("inc", "stream:2", n, 2.25 * syn_inc(n));
        synth_add("inc", "cache:1", n, syn_inc(n));
        synth_add("inc", "slows:stream", n, 1.4); /* (1.4 - 1) / (1.8 - 1) = 0.5 */
        synth_add("inc", "slows:cache", n, 1);
        synth_add("inc", "after-writer", n, syn_inc(n));
        synth_add("inc", "after-cold", n, syn_inc(n));
        synth_add("inc", "reader-after", n, 2.5 * n); /* (2.5 - 1) / (3 - 1) = 0.75 */
        synth_add("qsort", "alone", n, syn_qsort(n));
        synth_add("qsort", "stream:1", n, syn_sens_qsort(n) * syn_qsort(n));
        synth_add("qsort", "cache:1", n, syn_qsort(n));
        synth_add("qsort", "slows:stream", n, 1);
        synth_add("qsort", "slows:cache", n, 1);
        synth_add("qsort", "after-writer", n, syn_qsort(n) + 0.5 * n);
        synth_add("qsort", "after-cold", n, syn_qsort(n));
        synth_add("qsort", "reader-after", n, n);
    }
    char err[256];
    if (tscope_contention_fit(synth, nsynth, ct, err, sizeof err))
        TEST_FAIL("contention fit: %s", err);
}

static tscope_model_t cmodels[2];

static int clookup(void *d, const char *name, tscope_model_t *out)
{
    (void)d;
    int i = strcmp(name, "inc") == 0 ? 0 : strcmp(name, "qsort") == 0 ? 1 : -1;
    if (i < 0)
        return TSCOPE_ENOENT;
    *out = cmodels[i];
    return 0;
}

static double compose_ct(const char *expr, const tscope_contention_t *ct, double n, char *explain,
                         size_t len)
{
    double v;
    char err[256];
    if (tscope_model_compose_at(expr, clookup, NULL, ct, n, &v, explain, len, err, sizeof err))
        TEST_FAIL("%s: %s", expr, err);
    return v;
}

static void test_contention_fit(void)
{
    tscope_contention_t ct;
    synth_table(&ct);
    ASSERT_EQ(ct.ncomp, 2u);
    assert_rel(ct.queue_in, 30, 1e-12, "queue in");
    assert_rel(ct.queue_out, 20, 1e-12, "queue out");
    ASSERT_EQ(ct.cores, 4u);
    const tscope_ccomp_t *inc = &ct.comp[0], *qs = &ct.comp[1];
    ASSERT(strcmp(inc->name, "inc") == 0 && strcmp(qs->name, "qsort") == 0);
    ASSERT_EQ(inc->copies[TSCOPE_PROBE_STREAM], 2u);
    ASSERT_EQ(qs->copies[TSCOPE_PROBE_STREAM], 1u);
    for (double n = 1500; n <= 12000; n *= 2) {
        double one[TSCOPE_NPROBES] = {1, 0}, two[TSCOPE_NPROBES] = {2, 0},
               half[TSCOPE_NPROBES] = {0.5, 0}, cache[TSCOPE_NPROBES] = {0, 1};
        assert_rel(tscope__contention_slowdown(inc, one, n), 1.5, 1e-9, "inc next to a stream");
        assert_rel(tscope__contention_slowdown(inc, two, n), 2.25, 1e-9, "inc next to two");
        assert_rel(tscope__contention_slowdown(inc, half, n), 1.25, 1e-9, "interpolated");
        assert_rel(tscope__contention_slowdown(inc, cache, n), 1, 1e-12, "inc: no cache");
        /* varies with n: a PMNF model, recovered */
        assert_rel(tscope__contention_slowdown(qs, one, n), syn_sens_qsort(n), 1e-6,
                   "qsort's slowdown in n");
        assert_rel(tscope__contention_demand(inc, TSCOPE_PROBE_STREAM, n), 0.5, 1e-9, "demand");
        ASSERT(tscope__contention_demand(qs, TSCOPE_PROBE_STREAM, n) == 0);
        ASSERT(tscope__contention_handover(inc, n) == 0);
        assert_rel(tscope__contention_handover(qs, n), 0.5 * n, 1e-6, "handover in n");
        assert_rel(tscope__contention_writes(inc, n), 0.75, 1e-9, "writes");
        ASSERT(tscope__contention_writes(qs, n) == 0);
    }
    /* the operators with these factors, computed by hand */
    char err[256], explain[2048];
    const char *p = "n";
    ASSERT_EQ(tscope_model_parse("100 + 0.2 * n^(1)", 1, &p, &cmodels[0], err, sizeof err), 0);
    ASSERT_EQ(
        tscope_model_parse("50 + 0.5 * n^(1) * log2(n)^(1)", 1, &p, &cmodels[1], err, sizeof err),
        0);
    double n = 4096;
    /* two inc workers: each next to one inc (half a stream): 1.25x */
    assert_rel(compose_ct("tpool(2, inc)", &ct, n, explain, sizeof explain), syn_inc(n) / 2 * 1.25,
               1e-9, "tpool(2, inc)");
    ASSERT(strstr(explain, "inc: ") && strstr(explain, "slowdown 1.25"));
    /* three: next to two incs (one stream): 1.5x */
    assert_rel(compose_ct("tpool(3, inc)", &ct, n, NULL, 0), syn_inc(n) / 3 * 1.5, 1e-9,
               "tpool(3, inc)");
    /* pipe(inc, qsort): qsort is slowest, busy; inc busy u = t_inc / t_qsort,
     * and qsort is slowed by u * 0.5 streams: t_q = a + b u with
     * a = qsort + 0.75 * 0.5 n + queue in, b = qsort * (S - 1) * 0.5 */
    double ti = syn_inc(n) + 20, a = syn_qsort(n) + 0.75 * 0.5 * n + 30,
           b = syn_qsort(n) * (syn_sens_qsort(n) - 1) * 0.5;
    double tq = (a + sqrt(a * a + 4 * b * ti)) / 2;
    assert_rel(compose_ct("pipe(inc, qsort)", &ct, n, explain, sizeof explain), tq, 1e-9,
               "pipe(inc, qsort)");
    ASSERT(strstr(explain, "qsort: ") && strstr(explain, "handover"));
    /* pipe(qsort, inc): inc reads what qsort wrote, but qsort writes nothing
     * (writes 0): no handover; qsort pushes (20), inc pops (30) */
    double t = compose_ct("pipe(qsort, inc)", &ct, n, NULL, 0);
    ASSERT(t > syn_qsort(n) + 20 && t < syn_qsort(n) * syn_sens_qsort(n) + 20);
    /* more busy threads than cores: each slower by threads / cores */
    double t6 = compose_ct("tpool(6, qsort)", &ct, n, NULL, 0);
    assert_rel(t6, syn_qsort(n) / 6 * 6 / 4, 1e-9, "oversubscribed");
    tscope_contention_free(&ct);

    /* reading: a file round trip, and bad lines named */
    char path[] = "/tmp/test_model_cal_XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    synth_table(&ct);
    ASSERT_EQ(tscope_contention_write(path, synth, nsynth), 0);
    tscope_cmeas_t *back;
    size_t nback;
    ASSERT_EQ(tscope_contention_read(path, &back, &nback, err, sizeof err), 0);
    ASSERT_EQ(nback, nsynth);
    for (size_t i = 0; i < nback; i++)
        ASSERT(strcmp(back[i].kind, synth[i].kind) == 0 && back[i].value == synth[i].value &&
               back[i].n == synth[i].n);
    free(back);
    tscope_contention_free(&ct);
    static const char *const bad[][2] = {
        {"inc\talone\t100\n", "expected COMPONENT<tab>KIND<tab>N<tab>VALUE"},
        {"inc\tfaster\t100\t1\n", "unknown kind 'faster'"},
        {"inc\tstream:0\t100\t1\n", "unknown kind 'stream:0'"},
        {"# c\ninc\talone\t100\t-1\n", ":2: N and VALUE must be finite"},
        {"inc\talone\t100\tnan\n", "finite"},
        {"# nothing\n", "no measurements"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        ASSERT(f);
        fputs(bad[i][0], f);
        fclose(f);
        ASSERT(tscope_contention_read(path, &back, &nback, err, sizeof err) < 0);
        ASSERT(strstr(err, path));
        if (!strstr(err, bad[i][1]))
            TEST_FAIL("'%s': %s", bad[i][1], err);
    }
    unlink(path);
    ASSERT(tscope_contention_read("/nonexistent/cal", &back, &nback, err, sizeof err) ==
           TSCOPE_EIO);
    nsynth = 0;
    synth_add("inc", "stream:1", 1000, 1);
    ASSERT(tscope_contention_fit(synth, nsynth, &ct, err, sizeof err) == TSCOPE_EINVAL);
    ASSERT(strstr(err, "no component measured alone"));
}

/* Factor 1, zero handover and queue: the contention-aware operators are
 * today's, over every pair and triple of the rising models (at a size
 * where their values rank as their orders). */
static void test_contention_unit(void)
{
    nsynth = 0;
    for (int i = 0; i < NCOMP; i++)
        for (double n = 1000; n <= 8000; n *= 2) {
            synth_add(comp_names[i], "alone", n, 5);
            synth_add(comp_names[i], "stream:1", n, 5);
            synth_add(comp_names[i], "cache:1", n, 5);
            synth_add(comp_names[i], "slows:stream", n, 1);
            synth_add(comp_names[i], "after-writer", n, 7);
            synth_add(comp_names[i], "after-cold", n, 7);
        }
    synth_add("-", "slows:stream", 0, 1.5);
    tscope_contention_t ct;
    char err[256];
    ASSERT_EQ(tscope_contention_fit(synth, nsynth, &ct, err, sizeof err), 0);
    ASSERT_EQ(ct.ncomp, (size_t)NCOMP);
    const double at = 1 << 20;
    const int rising[] = {0, 1, 2, 3, 4, 5};
    char e[256];
    int checked = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 6; k++) {
                const char *a = comp_names[rising[i]], *b = comp_names[rising[j]],
                           *c = comp_names[rising[k]];
                const char *forms[] = {"pipe(%s, %s, %s)", "tpool(3, pipe(%s, tpool(2, %s), %s))",
                                       "pipe(tpool(2, %s), pipe(%s, %s))"};
                for (int f = 0; f < 3; f++) {
                    snprintf(e, sizeof e, forms[f], a, b, c);
                    tscope_model_t m = compose(e);
                    double plain = tscope_model_eval(&m, &at), v, w;
                    ASSERT_EQ(tscope_model_compose_at(e, lookup, NULL, &ct, at, &v, NULL, 0, err,
                                                      sizeof err),
                              0);
                    ASSERT_EQ(tscope_model_compose_at(e, lookup, NULL, NULL, at, &w, NULL, 0, err,
                                                      sizeof err),
                              0);
                    assert_rel(v, plain, 1e-12, e);
                    ASSERT(w == plain);
                    checked++;
                }
            }
    ASSERT_EQ(checked, 648);
    /* the same errors as tscope_model_compose */
    double v;
    ASSERT(tscope_model_compose_at("pipe(qsort, nothere)", lookup, NULL, &ct, at, &v, NULL, 0, err,
                                   sizeof err) == TSCOPE_ENOENT);
    ASSERT(strstr(err, "no model named 'nothere'"));
    ASSERT(tscope_model_compose_at("pipe(qsort inc)", lookup, NULL, &ct, at, &v, NULL, 0, err,
                                   sizeof err) == TSCOPE_EINVAL);
    tscope_contention_free(&ct);
}

/* ---- large inputs: aggregation and linear-time folds --------------------- */

static uint64_t large_rng = 0x2545f4914f6cdd1dull;

static double large_uniform(void)
{
    large_rng ^= large_rng << 13;
    large_rng ^= large_rng >> 7;
    large_rng ^= large_rng << 17;
    return (double)(large_rng >> 11) / 9007199254740992.0;
}

/* The same model, bit for bit. */
static void assert_identical(const tscope_model_t *a, const tscope_model_t *b, const char *what)
{
    if (a->nterms != b->nterms || a->npoints != b->npoints || memcmp(&a->c0, &b->c0, 8) ||
        memcmp(&a->rss, &b->rss, 8) || memcmp(&a->smape, &b->smape, 8) ||
        memcmp(&a->ar2, &b->ar2, 8) || memcmp(a->terms, b->terms, a->nterms * sizeof *a->terms))
        TEST_FAIL("%s: %u terms, c0 %.17g, RSS %.17g, SMAPE %.17g vs %u terms, c0 %.17g, RSS "
                  "%.17g, SMAPE %.17g",
                  what, a->nterms, a->c0, a->rss, a->smape, b->nterms, b->c0, b->rss, b->smape);
}

/* 20,000 measurements of y = 3 + 2 * x^(3/2) over 20 points (1,000
 * repetitions each, 0.5% noise) give the same points and, bit for bit, the
 * same model whether they are added one at a time, repetition after
 * repetition (no two of a point in a row: tscope_mexp_add appends and the
 * merges fold them into one point), a point's repetitions in one call, or
 * only each point's mean; the model is x^(3/2) with its coefficients. */
static void test_aggregation(void)
{
    enum { NPOINTS = 20, REPS = 1000 };
    static double v[NPOINTS][REPS];
    double x[NPOINTS];
    for (int i = 0; i < NPOINTS; i++) {
        x[i] = 2.0 * (i + 1);
        for (int r = 0; r < REPS; r++)
            v[i][r] = (3 + 2 * pow(x[i], 1.5)) * (1 + 0.005 * (large_uniform() - 0.5));
    }
    tscope_mexp_t single = {0}, whole = {0}, means = {0};
    ASSERT_EQ(tscope_mexp_param(&single, "x"), 0);
    ASSERT_EQ(tscope_mexp_param(&whole, "x"), 0);
    ASSERT_EQ(tscope_mexp_param(&means, "x"), 0);
    for (int r = 0; r < REPS; r++)
        for (int i = 0; i < NPOINTS; i++)
            ASSERT_EQ(tscope_mexp_add(&single, "f", "time", &x[i], &v[i][r], 1), 0);
    for (int i = 0; i < NPOINTS; i++)
        ASSERT_EQ(tscope_mexp_add(&whole, "f", "time", &x[i], v[i], REPS), 0);
    tscope_mexp_finish(&single);
    tscope_mexp_finish(&whole);
    ASSERT_EQ(single.nseries, 1);
    ASSERT_EQ(single.series[0].npoints, NPOINTS);
    for (int i = 0; i < NPOINTS; i++) {
        const tscope_mpoint_t *a = &single.series[0].points[i], *b = &whole.series[0].points[i];
        ASSERT(a->coord[0] == x[i]);
        ASSERT_EQ(a->nvalues, REPS);
        ASSERT(memcmp(a->values, v[i], sizeof v[i]) == 0); /* in the order added */
        ASSERT(memcmp(&a->mean, &b->mean, sizeof a->mean) == 0);
        ASSERT_EQ(tscope_mexp_add(&means, "f", "time", &x[i], &b->mean, 1), 0);
    }
    tscope_mexp_finish(&means);
    tscope_model_t ms, mw, mm;
    ASSERT_EQ(tscope_model_fit(&single.series[0], 1, NULL, &ms), 0);
    ASSERT_EQ(tscope_model_fit(&whole.series[0], 1, NULL, &mw), 0);
    ASSERT_EQ(tscope_model_fit(&means.series[0], 1, NULL, &mm), 0);
    ASSERT_EQ(ms.nterms, 1);
    ASSERT(ms.terms[0].f[0].num == 3 && ms.terms[0].f[0].den == 2 && !ms.terms[0].f[0].log);
    assert_rel(ms.c0, 3, 0.05, "c0 of 3 + 2 * x^(3/2)");
    assert_rel(ms.terms[0].coef, 2, 1e-3, "coefficient of x^(3/2)");
    ASSERT_EQ(ms.npoints, NPOINTS);
    assert_identical(&ms, &mw, "one measurement a call vs a point's repetitions a call");
    assert_identical(&mw, &mm, "repetitions vs their means");
    tscope_mexp_free(&single);
    tscope_mexp_free(&whole);
    tscope_mexp_free(&means);
}

/* Above TSCOPE__LOO_REFIT_MAX points the leave-one-out folds are
 * downdated from the fit on all points instead of refitted: the same model
 * (the final coefficients are computed alike: bit for bit) and the
 * cross-validated RSS and SMAPE to rounding, for noisy data from every
 * hypothesis at evenly spread, geometric and evenly spread but one far out
 * coordinates (that point holds nearly all of a term's variation, and its
 * fold is refitted), with one term and with two. */
static void test_fast_folds(void)
{
    double x[150], y[150];
    for (int trial = 0; trial < 3 * TSCOPE__NHYP + 6; trial++) {
        int one = trial < 3 * TSCOPE__NHYP, layout = one ? trial / TSCOPE__NHYP : trial % 3;
        int h = one ? trial % TSCOPE__NHYP : trial % 2 ? 8 : 30; /* p^(1/2), p^2 */
        size_t n = one ? 150 : 40; /* refitting costs n^2 (per combination of terms) */
        tscope_mfactor_t f = {tscope__hyp[h][0], tscope__hyp[h][1], tscope__hyp[h][2]};
        for (size_t i = 0; i < n; i++) {
            x[i] = layout == 1 ? pow(1.1, (double)i) : (double)(i + 1);
            if (layout == 2 && i == n - 1)
                x[i] = 100.0 * (double)n;
            y[i] = (50 + 3 * tscope__factor_eval(&f, x[i])) * (1 + 0.02 * (large_uniform() - 0.5));
        }
        tscope_mfit_opts_t o = {sizeof o, 1, one ? 1 : 2};
        tscope_model_t refit, down;
        ASSERT_EQ(tscope__fit_single_folds(x, y, n, &o, SIZE_MAX, &refit), 0);
        ASSERT_EQ(tscope__fit_single_folds(x, y, n, &o, 0, &down), 0);
        if (refit.nterms != down.nterms || refit.c0 != down.c0 ||
            memcmp(refit.terms, down.terms, refit.nterms * sizeof *refit.terms))
            TEST_FAIL("trial %d (hypothesis %d): %u terms, c0 %.17g refitted, %u terms, c0 %.17g "
                      "downdated",
                      trial, h, refit.nterms, refit.c0, down.nterms, down.c0);
        assert_rel(down.rss, refit.rss, 1e-6, "cross-validated RSS");
        assert_rel(down.smape, refit.smape, 1e-6, "cross-validated SMAPE");
    }
}

/* Issue 30 (--terms 2 on 300,000 points took 25 s): above
 * TSCOPE__LOO_REFIT_MAX points the pairs are scored from the centred sums
 * of the term values and a pair's folds stop once it cannot win.  It
 * picks what refitting every fold picks, with the same coefficients (bit
 * for bit: the final fit is the same) and the cost to rounding: data of
 * two terms (the pair must win) and of one (it must not), at evenly
 * spread, geometric and one far out coordinates. */
static void test_pair_search(void)
{
    static const struct {
        int a, b; /* hypotheses (b < 0: one term) */
        double ca, cb;
    } truth[] = {{30, 0, 10, 5000}, {8, 18, 40, 5}, {25, -1, 2, 0}};
    enum { N = 120 };
    double x[N], y[N];
    large_rng = 0x9e3779b97f4a7c15ull; /* the same noise whichever tests ran before */
    for (int trial = 0; trial < 9; trial++) {
        int t = trial % 3, layout = trial / 3;
        for (size_t i = 0; i < N; i++) {
            x[i] = layout == 1 ? pow(1.05, (double)i) : (double)(i + 1);
            if (layout == 2 && i == N - 1)
                x[i] = 100.0 * N;
            tscope_mfactor_t fa = {tscope__hyp[truth[t].a][0], tscope__hyp[truth[t].a][1],
                                   tscope__hyp[truth[t].a][2]};
            double v = 200 + truth[t].ca * tscope__factor_eval(&fa, x[i]);
            if (truth[t].b >= 0) {
                tscope_mfactor_t fb = {tscope__hyp[truth[t].b][0], tscope__hyp[truth[t].b][1],
                                       tscope__hyp[truth[t].b][2]};
                v += truth[t].cb * tscope__factor_eval(&fb, x[i]);
            }
            y[i] = v * (1 + 0.0002 * (large_uniform() - 0.5));
        }
        tscope_mfit_opts_t o = {sizeof o, 1, 2};
        tscope_model_t refit, fast;
        ASSERT_EQ(tscope__fit_single_folds(x, y, N, &o, SIZE_MAX, &refit), 0);
        ASSERT_EQ(tscope__fit_single_folds(x, y, N, &o, TSCOPE__LOO_REFIT_MAX, &fast), 0);
        if (refit.nterms != fast.nterms || memcmp(&refit.c0, &fast.c0, sizeof fast.c0) ||
            memcmp(refit.terms, fast.terms, refit.nterms * sizeof *refit.terms))
            TEST_FAIL("trial %d: %u terms, c0 %.17g refitted, %u terms, c0 %.17g from the sums",
                      trial, refit.nterms, refit.c0, fast.nterms, fast.c0);
        assert_rel(fast.rss, refit.rss, 1e-6, "cross-validated RSS");
        assert_rel(fast.smape, refit.smape, 1e-6, "cross-validated SMAPE");
        if (truth[t].b >= 0 && layout == 0) { /* evenly spread: the pair comes back */
            int got[2] = {-1, -1};
            for (unsigned k = 0; k < fast.nterms && k < 2; k++)
                for (int h = 0; h < TSCOPE__NHYP; h++)
                    if (fast.terms[k].f[0].num == tscope__hyp[h][0] &&
                        fast.terms[k].f[0].den == tscope__hyp[h][1] &&
                        fast.terms[k].f[0].log == tscope__hyp[h][2])
                        got[k] = h;
            if (fast.nterms != 2 || !((got[0] == truth[t].a && got[1] == truth[t].b) ||
                                      (got[1] == truth[t].a && got[0] == truth[t].b)))
                TEST_FAIL("trial %d: %u terms, hypotheses %d and %d, expected %d and %d", trial,
                          fast.nterms, got[0], got[1], truth[t].a, truth[t].b);
        }
    }
}

/* Two parameters on an 80 x 80 grid (6,400 points, two repetitions each,
 * added in a shuffled order): 10 + 2 * x + 40 * z^(1/2) comes back. */
static void test_multi_large(void)
{
    enum { SIDE = 80 };
    static double c[2 * SIDE * SIDE][2];
    size_t n = 0;
    for (int i = 1; i <= SIDE; i++)
        for (int j = 1; j <= SIDE; j++, n += 2) {
            c[n][0] = c[n + 1][0] = i;
            c[n][1] = c[n + 1][1] = j;
        }
    for (size_t k = n; k-- > 1;) { /* Fisher-Yates */
        size_t r = (size_t)(large_uniform() * (double)(k + 1));
        double t[2] = {c[k][0], c[k][1]};
        memcpy(c[k], c[r], sizeof t);
        memcpy(c[r], t, sizeof t);
    }
    tscope_mexp_t e = {0};
    ASSERT_EQ(tscope_mexp_param(&e, "x"), 0);
    ASSERT_EQ(tscope_mexp_param(&e, "z"), 1);
    for (size_t k = 0; k < n; k++) {
        double v = 10 + 2 * c[k][0] + 40 * sqrt(c[k][1]);
        ASSERT_EQ(tscope_mexp_add(&e, "k", "t", c[k], &v, 1), 0);
    }
    tscope_mexp_finish(&e);
    ASSERT_EQ(e.series[0].npoints, SIDE * SIDE);
    tscope_model_t m;
    ASSERT_EQ(tscope_model_fit(&e.series[0], 2, NULL, &m), 0);
    char buf[256];
    format(&m, (const char *const *)e.params, buf, sizeof buf);
    if (m.nterms != 2 || !strstr(buf, " * x^(1) + ") || !strstr(buf, " * z^(1/2)") ||
        !(m.smape < 1e-6))
        TEST_FAIL("got %s (SMAPE %g)", buf, m.smape);
    assert_rel(m.c0, 10, 1e-9, "c0");
    tscope_mexp_free(&e);
}

/* Runs every test, or those whose names are given as arguments. */
int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
#define TEST(fn) {#fn, fn}
        TEST(test_readers),        TEST(test_malformed),       TEST(test_old_json_many_params),
        TEST(test_params_by_name), TEST(test_non_finite),      TEST(test_ar2_undefined),
        TEST(test_long_names),     TEST(test_messages),        TEST(test_recover_42),
        TEST(test_constant),       TEST(test_noisy),           TEST(test_constant_cleaning),
        TEST(test_log_needs_one),  TEST(test_two_params),      TEST(test_multi_term),
        TEST(test_extrap_samples), TEST(test_print_parse),     TEST(test_compose),
        TEST(test_contention_fit), TEST(test_contention_unit), TEST(test_aggregation),
        TEST(test_fast_folds),     TEST(test_multi_large),     TEST(test_pair_search),
#undef TEST
    };
    const char *src = getenv("TSCOPE_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s", src ? src : ".");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tscope_model_XXXXXX");
    ASSERT(mkdtemp(tmpdir) != NULL);
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], tests[t].name) == 0;
        if (wanted)
            tests[t].fn();
    }
    remove_temp_files();
    printf("test_model: ok\n");
    return 0;
}
