/* merge.c - `taskscope merge DIR...`: the global view of a job built after
 * the run from its ranks' folders (a job that died before MPI_Finalize,
 * ranks of different jobs), by the same reduction the MPI adapter runs at
 * MPI_Finalize (src/global), so both give the same numbers.
 *
 * Each argument is a run folder (its rank-N/ folders are read) or a rank's
 * folder or profile.json.  The ranks are the profiles' own when they come
 * from one job (same number of ranks, no rank twice); ranks missing from
 * the job are named.  Profiles of different jobs are numbered 0, 1, ... in
 * the order given, and that is said; so are those that claim a job of far
 * more ranks than they are (MISSING_MAX): the global view's memory and
 * files grow with the ranks, which a number in a file must not decide. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* The most ranks of one job that may be missing: this many, or as many as
 * are present. */
#define MISSING_MAX 1024

static void usage(FILE *f)
{
    fprintf(f, "usage: taskscope merge [options] FOLDER...\n"
               "\n"
               "Builds the global view of an MPI job from its ranks' outputs: a run folder\n"
               "(taskscope-out, holding rank-N/), or rank folders, or profile.json files.\n"
               "Writes profile.json, summary.txt, ranks.csv, the message matrix and the ranks x\n"
               "time heat map (with their pictures when gnuplot is installed), and prints the\n"
               "summary.  Ranks missing from the job are named.\n"
               "\n"
               "options:\n"
               "  -o, --output DIR  where to write (default: FOLDER/global of the one run folder\n"
               "                    given, or a fresh global.1, ... when that exists; with\n"
               "                    several folders: ./taskscope-global)\n"
               "  --rows N          types in the printed summary (0: all; default 20)\n"
               "  -q, --quiet       no summary, no notes\n"
               "  -h, --help        this text\n"
               "\n"
               "exit status: 0 merged (also with ranks missing), 1 nothing to merge or a\n"
               "profile could not be read or written, 2 usage\n");
}

struct found {
    char **paths;
    size_t n, cap;
};

static int add_path(struct found *f, const char *path)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        char **p = realloc(f->paths, cap * sizeof *p);
        if (!p)
            return -1;
        f->paths = p;
        f->cap = cap;
    }
    return (f->paths[f->n++] = strdup(path)) ? 0 : -1;
}

/* A rank folder without profile.json whose process is gone, leaving its
 * crash journal (its launcher ended with it, as mpirun may end them all):
 * its outputs are rebuilt from the journal, as the launcher would have. */
static void rebuild(const char *run, const char *rank)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", run, rank);
    DIR *d = opendir(dir);
    struct dirent *e;
    long pid = 0, alive = 0;
    while (d && (e = readdir(d))) {
        long p;
        char rest[32];
        if (sscanf(e->d_name, ".taskscope-%ld.%31s", &p, rest) == 2 && !strcmp(rest, "running")) {
            pid = p;
            alive |= kill((pid_t)p, 0) == 0 || errno == EPERM; /* EPERM: it exists */
        }
    }
    if (d)
        closedir(d);
    if (!pid)
        return;
    if (alive) {
        fprintf(stderr, "taskscope merge: %s: its process %ld still runs: not merged\n", dir, pid);
        return;
    }
    int recovered = 0;
    double as_of = 0;
    tscope__offline_take_markers(dir, pid, SIGKILL, 0, NULL, &recovered, &as_of);
    if (recovered)
        fprintf(stderr,
                "taskscope merge: %s: rebuilt from its crash journal (the process ended, "
                "killed, without writing its outputs)\n",
                dir);
}

/* The profiles an argument stands for: its rank-* folders that hold a
 * profile.json, or itself.  1 when it was a run folder. */
static int expand(const char *arg, struct found *f)
{
    char **names = NULL;
    size_t n = tscope__offline_rank_folders(arg, &names);
    if (!n) {
        free(names);
        add_path(f, arg);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/profile.json", arg, names[i]);
        if (stat(path, &st) != 0)
            rebuild(arg, names[i]);
        if (stat(path, &st) == 0)
            add_path(f, path);
        else
            fprintf(stderr, "taskscope merge: %s/%s has no profile.json: skipped\n", arg, names[i]);
        free(names[i]);
    }
    free(names);
    return 1;
}

int tscope_cli_merge(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"output", 'o', 1, TSCOPE_CLI_VALUE, "DIR", NULL, NULL, 0},
        {"rows", 'r', 0, TSCOPE_CLI_VALUE, "N", tscope_cli_count, NULL, 0},
        {"quiet", 'q', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    const char *out = NULL;
    long rows = 20;
    int quiet = 0, c;
    optind = 1;
    while ((c = tscope_cli_getopt("merge", argc, argv, opts, 0)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'r':
            rows = strtol(optarg, NULL, 10);
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "taskscope merge: no folder given (taskscope merge [options] FOLDER...)\n");
        return 2;
    }
    struct found f = {0};
    int runs = 0;
    for (int i = optind; i < argc; i++)
        runs += expand(argv[i], &f);
    struct tscope__profile **ps = calloc(f.n + 1, sizeof *ps);
    int rc = ps ? 0 : 1;
    char err[1024];
    for (size_t i = 0; !rc && i < f.n; i++)
        if (!(ps[i] = tscope__offline_profile_read(f.paths[i], err, sizeof err))) {
            fprintf(stderr, "taskscope merge: %s\n", err);
            rc = 1;
        }
    if (!rc && f.n == 0) {
        fprintf(stderr, "taskscope merge: no profile found in the folders given\n");
        rc = 1;
    }
    /* one job: the same number of ranks, each rank once */
    int nranks = rc ? 0 : ps[0]->nranks, one_job = !rc;
    for (size_t i = 0; !rc && i < f.n; i++)
        if (ps[i]->nranks != nranks || ps[i]->rank < 0 || ps[i]->rank >= nranks)
            one_job = 0;
    char why[160] = "their numbers of ranks differ or a rank comes twice";
    if (one_job && (size_t)nranks > f.n &&
        (size_t)nranks - f.n > (f.n > MISSING_MAX ? f.n : MISSING_MAX)) {
        one_job = 0;
        snprintf(why, sizeof why,
                 "they claim %d ranks, %zu present: more missing than %d or than are present",
                 nranks, f.n, MISSING_MAX);
    }
    struct tscope__profile **by_rank = NULL;
    if (!rc && one_job) {
        by_rank = calloc((size_t)nranks, sizeof *by_rank);
        for (size_t i = 0; by_rank && i < f.n; i++) {
            if (by_rank[ps[i]->rank]) {
                one_job = 0;
                break;
            }
            by_rank[ps[i]->rank] = ps[i];
        }
    }
    if (!rc && !one_job) {
        free(by_rank);
        nranks = (int)f.n;
        by_rank = calloc(f.n, sizeof *by_rank);
        for (size_t i = 0; by_rank && i < f.n; i++)
            by_rank[i] = ps[i];
        if (!quiet)
            fprintf(stderr,
                    "taskscope merge: the profiles are not the ranks of one job (%s): they are "
                    "ranks 0 to %zu in the order given\n",
                    why, f.n - 1);
    }
    if (!rc && !by_rank)
        rc = 1;
    if (!rc && one_job && (int)f.n < nranks) {
        fprintf(stderr, "taskscope merge: %d of %d ranks missing:", nranks - (int)f.n, nranks);
        int shown = 0;
        for (int r = 0; r < nranks; r++)
            if (!by_rank[r] && shown++ < 32)
                fprintf(stderr, " %d", r);
        fprintf(stderr, "%s; the global view is of the %zu present\n", shown > 32 ? " ..." : "",
                f.n);
    }
    struct tscope__profile *g = rc ? NULL : tscope__global_merge(by_rank, nranks);
    if (!rc && !g) {
        fprintf(stderr, "taskscope merge: out of memory\n");
        rc = 1;
    }
    char dir[PATH_MAX], want[PATH_MAX];
    if (!rc) {
        if (out)
            snprintf(want, sizeof want, "%s", out);
        else if (runs == 1 && argc - optind == 1)
            snprintf(want, sizeof want, "%s/global", argv[optind]);
        else
            snprintf(want, sizeof want, "taskscope-global");
        if (tscope__output_make_dir(want, dir, sizeof dir)) {
            fprintf(stderr, "taskscope merge: cannot create %s: %s\n", want, strerror(errno));
            rc = 1;
        } else if (tscope__global_write(g, dir, quiet ? NULL : stderr, (unsigned)rows))
            rc = 1;
        else
            tscope_cli_render(dir, quiet);
    }
    tscope__profile_free(g);
    for (size_t i = 0; i < f.n; i++) {
        tscope__profile_free(ps ? ps[i] : NULL);
        free(f.paths[i]);
    }
    free(f.paths);
    free(ps);
    free(by_rank);
    return rc;
}
