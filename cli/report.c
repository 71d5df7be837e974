/* report.c - `taskscope report`: re-renders a saved JSON profile (an MPI
 * job's global one as the global summary the run printed), its per-thread
 * tables (--threads), or prints its critical path (--deps, critpath.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* 1 when dir/name is a file. */
static int is_file_in(const char *dir, const char *name)
{
    char path[1200];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: taskscope report [options] FOLDER|PROFILE.json\n"
            "\n"
            "Prints the summary table of a profile written by taskscope; given a folder,\n"
            "also renders its pictures again (concurrency.svg, heatmap.svg; gnuplot).\n"
            "An MPI job's run folder (or its global/ folder): the global summary the run\n"
            "printed at its end, its types by self time over the ranks (min / mean / max,\n"
            "imbalance), then the ranks; RUN/rank-N: that rank's own profile.\n"
            "\n"
            "options:\n"
            "  --sort KEY   order rows by self (default), running, elapsed, calls, mean or name\n"
            "               (the global summary: always by self, as the run printed it)\n"
            "  --rows N     print at most N task types (0: all; default 20), per thread with\n"
            "               --threads\n"
            "  --threads    also print a table per thread of the program (its task types,\n"
            "               calls, self, running, elapsed; taskscope's own threads apart)\n"
            "  --tree       also print the task tree\n"
            "  --dot        print the task graph in Graphviz DOT instead of the summary\n"
            "  --deps       print the critical path (through the task instances, weighted by\n"
            "               work; --rows: its last N steps) instead of the summary\n"
            "  -h, --help   this text\n"
            "\n"
            "examples:\n"
            "  taskscope report app-out\n"
            "  taskscope report --sort calls --rows 5 --tree app-out/profile.json\n"
            "  taskscope report --threads --sort calls --rows 3 app-out\n"
            "  taskscope report --deps --rows 10 app-out\n"
            "\n"
            "exit status: 0 printed, 1 the profile could not be read, 2 a bad option\n");
}

int tscope_cli_report(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"sort", 's', 0, TSCOPE_CLI_VALUE, "KEY", tscope_cli_sort_key, NULL, 0},
        {"rows", 'r', 0, TSCOPE_CLI_VALUE, "N", tscope_cli_count, NULL, 0},
        {"threads", 'T', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"tree", 't', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"dot", 'd', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"deps", 'D', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    const char *sort = "self";
    long rows = 20;
    int tree = 0, dot = 0, deps = 0, threads = 0, c;
    optind = 1;
    while ((c = tscope_cli_getopt("report", argc, argv, opts, 0)) != -1) {
        switch (c) {
        case 's':
            sort = optarg;
            break;
        case 'r':
            rows = strtol(optarg, NULL, 10);
            break;
        case 't':
            tree = 1;
            break;
        case 'T':
            threads = 1;
            break;
        case 'd':
            dot = 1;
            break;
        case 'D':
            deps = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "taskscope report: %s (taskscope report [options] FOLDER|PROFILE.json)\n",
                optind >= argc ? "no profile given" : "one profile at a time");
        return 2;
    }
    if (deps && (dot || tree)) {
        fprintf(stderr, "taskscope report: --deps cannot be combined with --dot or --tree\n");
        return 2;
    }
    if (threads && (deps || dot)) {
        fprintf(stderr, "taskscope report: --threads cannot be combined with --%s\n",
                deps ? "deps" : "dot");
        return 2;
    }
    char err[1200];
    struct tscope__profile *p = tscope__offline_profile_read(argv[optind], err, sizeof err);
    if (!p) {
        fprintf(stderr, "taskscope report: %s\n", err);
        return 1;
    }
    /* a folder: its pictures are rendered again too (gnuplot scripts and
     * samples.csv are in it when the sampler ran) */
    struct stat sb;
    if (!dot && !deps && stat(argv[optind], &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* an MPI job's run folder: the global view's pictures */
        char global[1100];
        snprintf(global, sizeof global, "%s/global", argv[optind]);
        tscope_cli_render(p->global && !is_file_in(argv[optind], "profile.json") &&
                                  is_file_in(global, "profile.json")
                              ? global
                              : argv[optind],
                          0);
    }
    if (threads && p->global) {
        fprintf(stderr,
                "taskscope report: %s: a job's global profile has no threads; taskscope report "
                "--threads RUN/rank-N shows a rank's\n",
                argv[optind]);
        tscope__profile_free(p);
        return 1;
    }
    int rc;
    if (p->global && !dot && !deps) { /* the summary the run printed (src/global) */
        rc = tscope__global_summary(p, stdout, (unsigned)rows);
        if (!rc && tree) {
            fputc('\n', stdout);
            rc = tscope__export_tree(p, stdout);
        }
    } else if (dot) {
        rc = tscope__export_dot(p, stdout);
    } else if (deps) {
        rc = tscope_cli_critical_path(p, stdout, (unsigned)rows);
        if (rc == TSCOPE_ENOMEM)
            fprintf(stderr, "taskscope report: %s: out of memory\n", argv[optind]);
    } else {
        rc = tscope__export_summary(p, stdout, sort, (unsigned)rows);
        if (!rc && threads) {
            fputc('\n', stdout);
            rc = tscope__export_threads(p, stdout, sort, (unsigned)rows);
        }
        if (!rc && tree) {
            fputc('\n', stdout);
            rc = tscope__export_tree(p, stdout);
        }
    }
    tscope__profile_free(p);
    return rc ? 1 : 0;
}
