/* diff.c - `taskscope diff A B`: what changed between two runs, per task
 * type, as Hatchet and Thicket users compare profiles.
 *
 * Types are matched by name (src/offline/diff.c: ids are given in
 * registration order and differ between runs).  For each type: calls in A and B, self time
 * and elapsed time (totals, recursion once) in A and B, the change in self time in ms
 * and in percent; rows sorted by the size of the change in self time (the
 * impact on the run), or by name.  Types present in one run only show "-"
 * for the other.  The head line compares the runs' lengths.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: taskscope diff [options] A B\n"
               "\n"
               "Compares two profiles written by taskscope (folders or profile.json files):\n"
               "per task type, calls, self time and elapsed time (totals, a recursion counted\n"
               "once) in A and in B, and the change in self time, largest change first.\n"
               "\n"
               "options:\n"
               "  --sort KEY   order rows by impact (default: |change in self time|) or name\n"
               "  --rows N     print at most N task types (0: all; default 20)\n"
               "  -h, --help   this text\n"
               "\n"
               "examples:\n"
               "  taskscope diff app-out app-traced\n"
               "  taskscope diff --sort name --rows 0 app-out/profile.json app-traced\n"
               "\n"
               "exit status: 0 compared, 1 a profile could not be read, 2 usage\n");
}

static void cell_u64(const struct tscope__ptype *t, char *buf, size_t len)
{
    if (t)
        snprintf(buf, len, "%llu", (unsigned long long)t->calls);
    else
        snprintf(buf, len, "-");
}

/* self time, or the elapsed total ("-" where a version 1 profile has none) */
static void cell_ms(const struct tscope__ptype *t, int elapsed, char *buf, size_t len)
{
    if (t && (!elapsed || t->elapsed.count || !t->calls))
        snprintf(buf, len, "%.3f", (elapsed ? t->elapsed_total : t->self_total) / 1e6);
    else
        snprintf(buf, len, "-");
}

/* --cpu-time's self CPU time ("-" where its run had it off) */
static void cell_cpu(const struct tscope__profile *p, const struct tscope__ptype *t, char *buf,
                     size_t len)
{
    if (t && p->cpu_time)
        snprintf(buf, len, "%.3f", t->cpu.sum / 1e6);
    else
        snprintf(buf, len, "-");
}

static void print(const struct tscope__profile *a, const struct tscope__profile *b,
                  const struct tscope__offline_diff_row *r, size_t n, long rows)
{
    double ea = a->totals.elapsed_ns / 1e6, eb = b->totals.elapsed_ns / 1e6;
    char head[32] = "";
    if (ea > 0)
        snprintf(head, sizeof head, ", %+.1f%%", 100.0 * (eb - ea) / ea);
    printf("run length: A %.3f ms, B %.3f ms (%+.3f ms%s)\n", ea, eb, eb - ea, head);
    size_t shown = rows ? (size_t)rows : n;
    int width = 28; /* as wide as the longest name shown: none is cut */
    for (size_t i = 0; i < n && i < shown; i++)
        if ((int)strlen(r[i].name) > width)
            width = (int)strlen(r[i].name);
    int cpu = a->cpu_time || b->cpu_time; /* the columns only then: the table as it was */
    printf("%-*s %10s %10s %12s %12s", width, "task type", "calls A", "calls B", "self A ms",
           "self B ms");
    if (cpu)
        printf(" %12s %12s", "cpu A ms", "cpu B ms");
    printf(" %13s %13s %12s %8s\n", "elapsed A ms", "elapsed B ms", "self +- ms", "self %");
    for (size_t i = 0; i < n && i < shown; i++) {
        char ca[24], cb[24], sa[24], sb[24], ia[24], ib[24], pct[16];
        cell_u64(r[i].a, ca, sizeof ca);
        cell_u64(r[i].b, cb, sizeof cb);
        cell_ms(r[i].a, 0, sa, sizeof sa);
        cell_ms(r[i].b, 0, sb, sizeof sb);
        cell_ms(r[i].a, 1, ia, sizeof ia);
        cell_ms(r[i].b, 1, ib, sizeof ib);
        if (r[i].a && r[i].b && r[i].a->self_total > 0)
            snprintf(pct, sizeof pct, "%+.1f%%", 100.0 * r[i].impact / r[i].a->self_total);
        else
            snprintf(pct, sizeof pct, "%s", !r[i].b ? "gone" : !r[i].a ? "new" : "-");
        printf("%-*s %10s %10s %12s %12s", width, r[i].name, ca, cb, sa, sb);
        if (cpu) {
            char pa[24], pb[24];
            cell_cpu(a, r[i].a, pa, sizeof pa);
            cell_cpu(b, r[i].b, pb, sizeof pb);
            printf(" %12s %12s", pa, pb);
        }
        printf(" %13s %13s %+12.3f %8s\n", ia, ib, r[i].impact / 1e6, pct);
    }
    if (n > shown)
        printf("(%zu more task types; --rows 0 shows all)\n", n - shown);
}

static int diff_sort(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "impact or name");
    return v && (strcmp(v, "impact") == 0 || strcmp(v, "name") == 0) ? 0 : -1;
}

int tscope_cli_diff(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"sort", 's', 0, TSCOPE_CLI_VALUE, "KEY", diff_sort, NULL, 0},
        {"rows", 'r', 0, TSCOPE_CLI_VALUE, "N", tscope_cli_count, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    int by_names = 0;
    long rows = 20;
    int c;
    optind = 1;
    while ((c = tscope_cli_getopt("diff", argc, argv, opts, 0)) != -1) {
        switch (c) {
        case 's':
            by_names = strcmp(optarg, "name") == 0;
            break;
        case 'r':
            rows = strtol(optarg, NULL, 10);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind != argc - 2) {
        fprintf(stderr,
                "taskscope diff: two profiles expected, %d given (taskscope diff [options] "
                "A B)\n",
                argc - optind);
        return 2;
    }
    char err[1200];
    struct tscope__profile *p[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        p[i] = tscope__offline_profile_read(argv[optind + i], err, sizeof err);
        if (!p[i]) {
            fprintf(stderr, "taskscope diff: %s\n", err);
            tscope__profile_free(p[0]);
            return 1;
        }
    }
    size_t n;
    struct tscope__offline_diff_row *r = tscope__offline_diff(p[0], p[1], by_names, &n);
    if (!r) {
        fprintf(stderr, "taskscope diff: out of memory\n");
        tscope__profile_free(p[0]);
        tscope__profile_free(p[1]);
        return 1;
    }
    print(p[0], p[1], r, n, rows);
    free(r);
    tscope__profile_free(p[0]);
    tscope__profile_free(p[1]);
    return 0;
}
