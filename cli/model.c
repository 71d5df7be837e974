/* model.c - `taskscope model`: empirical performance models of every call
 * path and metric of Extra-P inputs or of taskscope profiles from several
 * runs, predictions, and `taskscope model compose` (with a contention
 * table of measurements: its values at --at with the terms it used).
 * `taskscope model calibrate` is calibrate.c.
 *
 * Profiles: each "--param NAME=VALUE[,NAME=VALUE] PROFILE" pair labels one
 * run (a profile.json or the output folder holding one); runs with equal
 * labels are repetitions.  Each task type gives the series self_mean_ns
 * (self time per call), self_sum_ns, calls and - from profiles that have it
 * (version 2) - elapsed_mean_ns (begin to end per call).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "taskscope/model.h"

void tscope_cli_model_usage(FILE *f)
{
    fprintf(f,
            "usage: taskscope model [options] FILE...\n"
            "       taskscope model [options] --param NAME=VALUE PROFILE [--param ... PROFILE]...\n"
            "       taskscope model compose EXPR --models FILE [--range NAME=LO:HI]\n"
            "                               [--contention FILE] [--no-contention]\n"
            "                               [--at NAME=VALUE]...\n"
            "       taskscope model calibrate --sizes N1,N2,... [--copies K] [--reps R]\n"
            "                                 [--name NAME] -o FILE -- PROGRAM [ARGS...]\n"
            "\n"
            "Fits a performance model to every call path and metric of Extra-P inputs\n"
            "(text, JSON, JSON Lines, Talpas: recognised from the content) or of taskscope\n"
            "profiles labelled with parameter values, with Extra-P's default modeler, and\n"
            "prints one line each: the model in Extra-P's form, RSS, SMAPE, adjusted R^2.\n"
            "\n"
            "options:\n"
            "  --format F        text, json, jsonl, talpas or auto (default)\n"
            "  --no-cv           no cross-validation (Extra-P's option of that name)\n"
            "  --terms N         up to N terms per model (1 = Extra-P, default; 2 or 3)\n"
            "  --predict X=V     also print the model's value at X=V (repeatable; one\n"
            "                    X=V,Y=W list per prediction for several parameters)\n"
            "  --json            one JSON object per model, one per line\n"
            "  -h, --help        this text\n"
            "\n"
            "compose: EXPR combines the models of FILE (lines 'NAME: MODEL', MODEL in\n"
            "Extra-P's form, one parameter, or the output of 'taskscope model' itself,\n"
            "named by call path) with tpool(T, E) = E / T and pipe(E1, E2, ...) = the\n"
            "stage of the highest order; prints the composed model and its value at\n"
            "each --at.  Stages of equal order are ranked by their value at the top of\n"
            "the measured range, which a models file does not hold: --range gives it\n"
            "(without it, by their constants).\n"
            "  --contention FILE a measurements file (of calibrate, or written by hand):\n"
            "                    each --at also prints the value with contention - tpool's\n"
            "                    workers and pipe's stages slowed by what they share - with\n"
            "                    the terms it used, one line per component, and the plain\n"
            "                    value; the composed model (and --range) stay the plain ones\n"
            "  --no-contention   ignore --contention: the plain operators only\n"
            "\n"
            "calibrate: runs PROGRAM ARGS at each size (every '{}' in ARGS replaced by it;\n"
            "without one, the size is the last argument; stdout to /dev/null) once untimed,\n"
            "then alone and next to 1..K copies of each synthetic co-runner (a memory\n"
            "stream, a cache-sharing probe, a spinning one), R times, and writes the\n"
            "measurements to FILE\n"
            "(docs/modeling.md lists their kinds): its wall time each way, how much it slows\n"
            "one probe, how much one probe slows another; prints a table.\n"
            "  --sizes N1,N2,... the sizes (required: no default; use others than those you\n"
            "                    predict)\n"
            "  --copies K        probe copies up to K (default: online CPUs - 1, at least 1,\n"
            "                    at most 16)\n"
            "  --reps R          repetitions (default 3; the composition takes the median)\n"
            "  --name NAME       the component's name (default: PROGRAM's base name)\n"
            "  -o, --output FILE the measurements file (rewritten after each size; a failing\n"
            "                    PROGRAM ends the calibration, keeping what was measured)\n"
            "A process shows no handover of elements to another thread, nor the queue's\n"
            "costs: those need the kernel inside the pipeline (scripts/bench composition\n"
            "measures them for its kernels); the composition takes 0 for them.\n"
            "\n"
            "exit status: 0 done, 1 an input could not be read, fitted or composed (or a\n"
            "calibrated program failed), 2 a bad option\n");
}

struct predict {
    double coord[TSCOPE_MODEL_MAX_PARAMS];
    char text[128];
};

/* "x=1,y=2" against the parameter names. */
static int parse_at(const char *s, const tscope_mexp_t *e, struct predict *p)
{
    snprintf(p->text, sizeof p->text, "%s", s);
    unsigned seen = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return -1;
        *eq = 0;
        char *end;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end)
            return -1;
        int found = -1;
        for (unsigned l = 0; l < e->nparams; l++)
            if (strcmp(e->params[l], tok) == 0)
                found = (int)l;
        if (found < 0)
            return -1;
        p->coord[found] = v;
        seen |= 1u << found;
    }
    return seen == (1u << e->nparams) - 1 ? 0 : -1;
}

/* 1 if the point lies outside the measured range in some parameter. */
static int outside_range(const tscope_model_t *m, const struct predict *p)
{
    for (unsigned l = 0; l < m->nparams; l++)
        if (p->coord[l] < m->lo[l] || p->coord[l] > m->hi[l])
            return 1;
    return 0;
}

/* "  at n=1024: 10487.76  (expected error 1.6%: the model's SMAPE; extrapolated)" */
static void print_prediction(const tscope_model_t *m, const struct predict *p)
{
    printf("  at %s: %.10g  (expected error %.3g%%: the model's SMAPE%s)\n", p->text,
           tscope_model_eval(m, p->coord), m->smape,
           outside_range(m, p) ? "; extrapolated beyond the measured range" : "");
}

static void json_string(const char *s)
{
    char buf[8];
    putchar('"');
    size_t n;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += n) {
        const char *e = tscope__json_escape(c, buf, &n);
        if (e)
            fputs(e, stdout);
        else
            fwrite(c, 1, n, stdout);
    }
    putchar('"');
}

static void json_number(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        printf("null");
}

static void print_json(const tscope_mseries_t *s, const tscope_mexp_t *e, const tscope_model_t *m,
                       const char *text, const struct predict *pr, int npr)
{
    printf("{\"callpath\":");
    json_string(s->callpath);
    printf(",\"metric\":");
    json_string(s->metric);
    printf(",\"parameters\":[");
    for (unsigned l = 0; l < e->nparams; l++) {
        printf(l ? "," : "");
        json_string(e->params[l]);
    }
    printf("],\"model\":");
    json_string(text);
    printf(",\"constant\":");
    json_number(m->c0);
    printf(",\"terms\":[");
    for (unsigned k = 0; k < m->nterms; k++) {
        printf("%s{\"coefficient\":", k ? "," : "");
        json_number(m->terms[k].coef);
        printf(",\"factors\":[");
        int first = 1;
        for (unsigned l = 0; l < m->nparams; l++) {
            const tscope_mfactor_t *f = &m->terms[k].f[l];
            if (!f->num && !f->log)
                continue;
            printf("%s{\"parameter\":", first ? "" : ",");
            json_string(e->params[l]);
            printf(",\"exponent\":[%d,%d],\"log2_exponent\":%d}", f->num, f->num ? f->den : 1,
                   f->log);
            first = 0;
        }
        printf("]}");
    }
    printf("],\"rss\":");
    json_number(m->rss);
    printf(",\"smape\":");
    json_number(m->smape);
    printf(",\"adjusted_r2\":");
    json_number(m->ar2);
    printf(",\"points\":%zu", m->npoints);
    if (npr) {
        printf(",\"predictions\":[");
        for (int i = 0; i < npr; i++) {
            printf("%s{\"at\":", i ? "," : "");
            json_string(pr[i].text);
            printf(",\"value\":");
            json_number(tscope_model_eval(m, pr[i].coord));
            printf(",\"expected_error_percent\":");
            json_number(m->smape);
            printf(",\"extrapolated\":%s", outside_range(m, &pr[i]) ? "true" : "false");
            printf("}");
        }
        printf("]");
    }
    printf("}\n");
}

/* Taskscope profiles: the --param/PROFILE pairs become an experiment. */
static int read_profiles(tscope_mexp_t *e, char **labels, char **paths, int n, char *err,
                         size_t errlen)
{
    for (int r = 0; r < n; r++) {
        double coord[TSCOPE_MODEL_MAX_PARAMS] = {0};
        char buf[256];
        snprintf(buf, sizeof buf, "%s", labels[r]);
        unsigned seen = 0, count = 0;
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '='), *end = NULL;
            double v = eq ? strtod(eq + 1, &end) : 0;
            if (!eq || end == eq + 1 || *end) {
                snprintf(err, errlen, "--param '%s': expected NAME=VALUE[,NAME=VALUE]", labels[r]);
                return 2;
            }
            *eq = 0;
            int idx = tscope_mexp_param(e, tok);
            if (idx < 0) {
                snprintf(err, errlen, "--param '%s': at most %d parameters", labels[r],
                         TSCOPE_MODEL_MAX_PARAMS);
                return 2;
            }
            coord[idx] = v;
            seen |= 1u << idx;
            count++;
        }
        if (count != e->nparams || seen != (1u << e->nparams) - 1) {
            snprintf(err, errlen, "--param '%s': every run needs the same parameters", labels[r]);
            return 2;
        }
        struct tscope__profile *p = tscope__offline_profile_read(paths[r], err, errlen);
        if (!p)
            return 1;
        for (uint32_t t = 0; t < p->ntypes; t++) {
            const struct tscope__ptype *ty = &p->types[t];
            if (!ty->calls)
                continue;
            double mean = ty->self.mean, sum = ty->self.sum, calls = (double)ty->calls;
            double elapsed = ty->elapsed.mean;
            if (tscope_mexp_add(e, ty->name, "self_mean_ns", coord, &mean, 1) ||
                tscope_mexp_add(e, ty->name, "self_sum_ns", coord, &sum, 1) ||
                tscope_mexp_add(e, ty->name, "calls", coord, &calls, 1) ||
                (ty->elapsed.count &&
                 tscope_mexp_add(e, ty->name, "elapsed_mean_ns", coord, &elapsed, 1))) {
                tscope__profile_free(p);
                snprintf(err, errlen, "out of memory");
                return 1;
            }
        }
        tscope__profile_free(p);
    }
    tscope_mexp_finish(e);
    return 0;
}

/* compose: component models from a file of "NAME: MODEL" lines. */
struct named {
    char name[128];
    tscope_model_t model;
};

struct named_list {
    struct named *items;
    size_t n;
};

static int lookup(void *data, const char *name, tscope_model_t *out)
{
    struct named_list *l = data;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0) {
            *out = l->items[i].model;
            return 0;
        }
    return TSCOPE_ENOENT;
}

static int name_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The parameter of a model in its printed form: the name in its first term,
 * raised to a power ("n^(1)") or under a logarithm ("log2(n)"), whichever
 * comes first.  1 and the name in buf, or 0 for a constant model. */
static int param_of(const char *m, char *buf, size_t len)
{
    for (const char *c = m; *c; c++) {
        const char *st = NULL, *end = NULL;
        if (strncmp(c, "log2(", 5) == 0) {
            st = c + 5;
            for (end = st; name_char(*end); end++)
                ;
            if (*end != ')')
                st = NULL;
        } else if (*c == '^' && c > m && name_char(c[-1])) {
            end = c;
            for (st = c; st > m && name_char(st[-1]); st--)
                ;
        }
        if (st && end > st && (size_t)(end - st) < len && !(st[0] >= '0' && st[0] <= '9')) {
            memcpy(buf, st, (size_t)(end - st));
            buf[end - st] = 0;
            return 1;
        }
    }
    return 0;
}

/* --range NAME=LO:HI (NAME= optional): 0 with *lo and *hi, else -1. */
static int parse_range(const char *r, double *lo, double *hi)
{
    const char *eq = strchr(r, '=');
    char *end, *end2 = NULL;
    *lo = strtod(eq ? eq + 1 : r, &end);
    *hi = *end == ':' ? strtod(end + 1, &end2) : NAN;
    return end == (eq ? eq + 1 : r) || *end != ':' || end2 == end + 1 || *end2 || !(*lo <= *hi) ? -1
                                                                                                : 0;
}

static int check_range(const char *v, char *expected, size_t len)
{
    double lo, hi;
    snprintf(expected, len, "NAME=LO:HI with LO <= HI");
    return v && parse_range(v, &lo, &hi) == 0 ? 0 : -1;
}

static int check_format(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "text, json, jsonl, talpas or auto");
    return v && tscope_mformat_parse(v) >= 0 ? 0 : -1;
}

static int check_terms(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "1, 2 or 3");
    return v && (!strcmp(v, "1") || !strcmp(v, "2") || !strcmp(v, "3")) ? 0 : -1;
}

/* --contention FILE: read and fitted; 0, or 1 after one line naming the
 * file (and line) and the problem. */
static int read_contention(const char *path, tscope_contention_t *ct)
{
    tscope_cmeas_t *m;
    size_t n;
    char err[512];
    int rc = tscope_contention_read(path, &m, &n, err, sizeof err);
    if (!rc) {
        rc = tscope_contention_fit(m, n, ct, err, sizeof err);
        free(m);
        if (rc) { /* the fit's messages do not name the file */
            fprintf(stderr, "taskscope model compose: %s: %s\n", path, err);
            return 1;
        }
    }
    if (rc)
        fprintf(stderr, "taskscope model compose: %s\n", err);
    return rc ? 1 : 0;
}

/* One --at with contention: the value, then indented the terms of each
 * component (compose_at's explanation) and the plain value.  0, or 1
 * after one line. */
static int print_with_contention(const char *expr, struct named_list *list,
                                 const tscope_contention_t *ct, const char *param, double v,
                                 double plain)
{
    char explain[16384], err[512];
    double value;
    if (tscope_model_compose_at(expr, lookup, list, ct, v, &value, explain, sizeof explain, err,
                                sizeof err)) {
        fprintf(stderr, "taskscope model compose: %s\n", err);
        return 1;
    }
    if (!isfinite(value)) {
        fprintf(stderr,
                "taskscope model compose: the value of %s at %s=%g with contention overflows (not "
                "finite)\n",
                expr, param, v);
        return 1;
    }
    printf("  at %s=%g: %.6g  (with contention)\n", param, v, value);
    for (char *line = explain, *nl; *line; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            nl = line + strlen(line) - 1; /* a last line cut short */
        printf("    %.*s\n", (int)(nl - line + (*nl != '\n')), line);
    }
    printf("    plain (no contention): %.6g\n", plain);
    return 0;
}

static int compose(int argc, char **argv)
{
    const char *models = NULL, *expr = NULL, *param = "p", *contention = NULL;
    int no_contention = 0;
    const char *at[32];
    int nat = 0;
    double lo = NAN, hi = NAN; /* --range: the measured range of every component */
    static const struct tscope_cli_option opts[] = {
        {"models", 'm', 0, TSCOPE_CLI_VALUE, "FILE", NULL, NULL, 0},
        {"at", 'a', 0, TSCOPE_CLI_VALUE, "NAME=VALUE", NULL, NULL, 0},
        {"range", 'r', 0, TSCOPE_CLI_VALUE, "NAME=LO:HI", check_range, NULL, 0},
        {"contention", 'c', 0, TSCOPE_CLI_VALUE, "FILE", NULL, NULL, 0},
        {"no-contention", 'N', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    int c;
    optind = 1;
    while ((c = tscope_cli_getopt("model compose", argc, argv, opts, 0)) != -1) {
        switch (c) {
        case 'm':
            models = optarg;
            break;
        case 'a':
            if (nat == 32) {
                fprintf(stderr, "taskscope model compose: --at: at most 32\n");
                return 2;
            }
            at[nat++] = optarg;
            break;
        case 'r':
            parse_range(optarg, &lo, &hi);
            break;
        case 'c':
            contention = optarg;
            break;
        case 'N':
            no_contention = 1;
            break;
        case 'h':
            tscope_cli_model_usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind < argc)
        expr = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "taskscope model compose: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!expr || !models) {
        fprintf(stderr, "taskscope model compose: needs EXPR and --models FILE\n");
        return 2;
    }
    FILE *f = fopen(models, "r");
    if (!f) {
        fprintf(stderr, "taskscope model compose: cannot open %s: %s\n", models, strerror(errno));
        return 1;
    }
    struct named_list list = {NULL, 0};
    char line[4096];
    int lineno = 0, rc = 0;
    char pname[64] = "";
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line + strspn(line, " \t");
        s[strcspn(s, "\r\n")] = 0;
        if (!*s || *s == '#')
            continue;
        /* "NAME: MODEL", or a line of `taskscope model` itself:
         * "CALLPATH [METRIC]: MODEL  (RSS ..., SMAPE ..., adj. R^2 ...)" */
        char *colon = strstr(s, "]: ");
        colon = colon ? colon + 1 : strchr(s, ':');
        if (!colon) {
            fprintf(stderr, "taskscope model compose: %s:%d: expected 'NAME: MODEL'\n", models,
                    lineno);
            rc = 1;
            break;
        }
        *colon = 0;
        char *quality = strstr(colon + 1, "  (RSS ");
        if (quality)
            *quality = 0;
        if (!pname[0] && param_of(colon + 1, pname, sizeof pname))
            param = pname;
        struct named *n = realloc(list.items, (list.n + 1) * sizeof *n);
        if (!n) {
            fprintf(stderr, "taskscope model compose: out of memory\n");
            rc = 1;
            break;
        }
        list.items = n;
        /* the name: all before the colon, but a metric " [time]" */
        char *metric = strstr(s, " [");
        if (metric)
            *metric = 0;
        size_t nl = strlen(s);
        while (nl && (s[nl - 1] == ' ' || s[nl - 1] == '\t'))
            nl--;
        snprintf(n[list.n].name, sizeof n[list.n].name, "%.*s", (int)nl, s);
        char err[512];
        const char *text = colon + 1 + strspn(colon + 1, " \t");
        if (tscope_model_parse(text, 1, &param, &n[list.n].model, err, sizeof err)) {
            fprintf(stderr, "taskscope model compose: %s:%d: %s\n", models, lineno, err);
            rc = 1;
            break;
        }
        n[list.n].model.lo[0] = lo;
        n[list.n].model.hi[0] = hi;
        list.n++;
    }
    fclose(f);
    tscope_contention_t ct = {0};
    int have_ct = 0;
    if (!rc && contention && !no_contention) {
        if (read_contention(contention, &ct))
            rc = 1;
        else
            have_ct = 1;
    }
    if (!rc) {
        tscope_model_t m;
        char err[512], text[1024];
        if (tscope_model_compose(expr, lookup, &list, &m, err, sizeof err)) {
            fprintf(stderr, "taskscope model compose: %s\n", err);
            rc = 1;
        } else {
            tscope_model_format(&m, &param, text, sizeof text);
            printf("%s = %s\n", expr, text);
            for (int i = 0; i < nat; i++) {
                const char *eq = strchr(at[i], '=');
                char *end;
                double v = strtod(eq ? eq + 1 : at[i], &end);
                if (end == (eq ? eq + 1 : at[i])) {
                    fprintf(stderr, "taskscope model compose: --at '%s': expected %s=VALUE\n",
                            at[i], param);
                    rc = 2;
                    break;
                }
                double value = tscope_model_eval(&m, &v);
                if (!isfinite(value)) { /* its terms are finite, their sum or a power not */
                    fprintf(stderr, "taskscope model compose: the value of %s at %s=%g %s\n", expr,
                            param, v,
                            isnan(value) ? "is not a number (a logarithm or fractional power of "
                                           "a negative value, or terms of infinite values that "
                                           "cancel)"
                                         : "overflows (not finite)");
                    rc = 1;
                    break;
                }
                if (have_ct && (rc = print_with_contention(expr, &list, &ct, param, v, value)))
                    break;
                if (!have_ct)
                    printf("  at %s=%g: %.6g\n", param, v, value);
            }
        }
    }
    tscope_contention_free(&ct);
    free(list.items);
    return rc;
}

int tscope_cli_model(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "compose") == 0)
        return compose(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "calibrate") == 0)
        return tscope_cli_model_calibrate(argc - 1, argv + 1);
    static const struct tscope_cli_option opts[] = {
        {"format", 'f', 0, TSCOPE_CLI_VALUE, "F", check_format, NULL, 0},
        {"no-cv", 'n', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"terms", 't', 0, TSCOPE_CLI_VALUE, "N", check_terms, NULL, 0},
        {"predict", 'p', 0, TSCOPE_CLI_VALUE, "X=V", NULL, NULL, 0},
        {"param", 'P', 0, TSCOPE_CLI_VALUE, "NAME=VALUE", NULL, NULL, 0},
        {"json", 'j', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    tscope_mfit_opts_t fo = {sizeof fo, 1, 1};
    int format = TSCOPE_MFORMAT_AUTO, json = 0, c;
    const char *predict_text[32];
    int npredict = 0;
    char **labels = calloc((size_t)argc, sizeof *labels),
         **paths = calloc((size_t)argc, sizeof *paths);
    int nlabels = 0, rc = 0;
    if (!labels || !paths) {
        free(labels);
        free(paths);
        return 1;
    }
    optind = 1;
    /* stop at the first operand, so that --param X PROFILE pairs keep their order */
    while (!rc &&
           (c = tscope_cli_getopt("model", argc, argv, opts, TSCOPE_CLI_STOP_AT_OPERAND)) != -1) {
        switch (c) {
        case 'f':
            format = tscope_mformat_parse(optarg);
            break;
        case 'n':
            fo.crossvalidation = 0;
            break;
        case 't':
            fo.max_terms = (unsigned)atoi(optarg);
            break;
        case 'p':
            if (npredict < 32)
                predict_text[npredict++] = optarg;
            break;
        case 'P':
            if (optind >= argc || argv[optind][0] == '-') {
                fprintf(stderr, "taskscope model: --param %s: a profile must follow\n", optarg);
                rc = 2;
            } else {
                labels[nlabels] = optarg;
                paths[nlabels++] = argv[optind++];
            }
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            tscope_cli_model_usage(stdout);
            free(labels);
            free(paths);
            return 0;
        default:
            free(labels);
            free(paths);
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (!rc && nlabels == 0 && optind >= argc) {
        fprintf(stderr, "taskscope model: no input: give Extra-P input files or --param/profile "
                        "pairs (taskscope model --help)\n");
        rc = 2;
    }
    if (!rc && nlabels > 0 && optind < argc) {
        fprintf(stderr, "taskscope model: give either input files or --param/profile pairs\n");
        rc = 2;
    }
    tscope_mexp_t e = {0};
    char err[1024];
    if (!rc && nlabels) {
        rc = read_profiles(&e, labels, paths, nlabels, err, sizeof err);
        if (rc)
            fprintf(stderr, "taskscope model: %s\n", err);
    }
    for (int i = optind; !rc && i < argc; i++)
        if (tscope_mexp_read(&e, argv[i], (tscope_mformat_t)format, err, sizeof err)) {
            fprintf(stderr, "taskscope model: %s\n", err);
            rc = 1;
        }
    struct predict pr[32];
    for (int i = 0; !rc && i < npredict; i++)
        if (parse_at(predict_text[i], &e, &pr[i])) {
            fprintf(stderr,
                    "taskscope model: --predict '%s': expected a value for each "
                    "parameter, NAME=VALUE[,NAME=VALUE]\n",
                    predict_text[i]);
            rc = 2;
        }
    int few = 0;
    for (size_t i = 0; !rc && i < e.nseries; i++) {
        const tscope_mseries_t *s = &e.series[i];
        tscope_model_t m;
        int frc = tscope_model_fit(s, e.nparams, &fo, &m);
        if (frc) {
            fprintf(stderr, "taskscope model: %s [%s]: %s\n", s->callpath, s->metric,
                    tscope_strerror(frc));
            rc = 1;
            break;
        }
        int finite = isfinite(m.c0) && isfinite(m.rss);
        for (unsigned k = 0; k < m.nterms; k++)
            finite = finite && isfinite(m.terms[k].coef);
        if (!finite) { /* finite values whose sums or squares are not */
            fprintf(stderr,
                    "taskscope model: %s [%s]: the fit overflows (its sums of the values are not "
                    "finite: values too large for a double)\n",
                    s->callpath, s->metric);
            rc = 1;
            break;
        }
        if (s->npoints < 5)
            few = 1;
        char text[2048];
        tscope_model_format(&m, (const char *const *)e.params, text, sizeof text);
        if (json) {
            print_json(s, &e, &m, text, pr, npredict);
            continue;
        }
        char quality[160];
        tscope__model_quality_format(&m, quality, sizeof quality);
        printf("%s [%s]: %s  (%s)\n", s->callpath, s->metric, text, quality);
        for (int k = 0; k < npredict; k++)
            print_prediction(&m, &pr[k]);
    }
    if (few)
        fprintf(stderr, "taskscope model: note: some series have fewer than 5 points; Extra-P "
                        "asks for at least 5 per parameter\n");
    tscope_mexp_free(&e);
    free(labels);
    free(paths);
    return rc;
}
