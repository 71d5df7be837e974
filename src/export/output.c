/* output.c - orchestrates the outputs of a run into one fresh folder.
 *
 * Every file is written to NAME.tmp and renamed when complete, so a full
 * disk or a crash never leaves a truncated file under the final name.
 */
#include "output.h"
#include "sampler/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "core/ranks.h"
#include "export.h"

/* 1 if dir exists and holds no entries. */
/* Empty but for the launcher's markers of running processes
 * (.taskscope-PID.running, lifecycle.c). */
static int dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strncmp(e->d_name, ".taskscope-", 11) != 0)
            empty = 0;
    closedir(d);
    return empty;
}

/* The folders above `want` (not want itself); 0, or -1 with errno. */
static int make_parents(const char *want)
{
    char path[1100];
    snprintf(path, sizeof path, "%s", want);
    for (char *c = path + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = 0;
        if (mkdir(path, 0777) && errno != EEXIST)
            return -1;
        *c = '/';
    }
    return 0;
}

int tscope__output_make_dir(const char *want, char *out, size_t len)
{
    /* `taskscope run` creates the folder before starting the program and
     * names it here, so the program and the CLI agree on where output goes. */
    const char *prepared = getenv("TASKSCOPE_OUTPUT_DIR_PREPARED");
    if (prepared && strcmp(prepared, want) == 0 && dir_is_empty(want)) {
        snprintf(out, len, "%s", want);
        return 0;
    }
    if (make_parents(want))
        return TSCOPE_EIO;
    for (int i = 0; i < 10000; i++) {
        if (i == 0)
            snprintf(out, len, "%s", want);
        else
            snprintf(out, len, "%s.%d", want, i);
        if (mkdir(out, 0777) == 0)
            return 0;
        if (errno != EEXIST)
            return TSCOPE_EIO;
    }
    errno = EEXIST;
    return TSCOPE_EIO;
}

/* Claims folder dir for job: 1 when it is the job's (claimed now or by
 * another rank of it), 0 when it belongs to another job or holds files of
 * another run, -1 on an error.  The marker .taskscope-job is made whole
 * under a name of this process first and linked into place: link() fails
 * when it exists, so exactly one rank creates it and every rank reads it
 * complete. */
/* Whose the marker says the folder is: 1 job's, 0 another's, -1 no marker
 * (errno ENOENT) or unreadable. */
static int marker_is(const char *mark, const char *job)
{
    char have[300];
    FILE *f = fopen(mark, "r");
    if (!f)
        return -1;
    size_t n = fread(have, 1, sizeof have - 1, f);
    fclose(f);
    have[n] = 0;
    return strcmp(have, job) == 0;
}

static int claim_run_dir(const char *dir, const char *job)
{
    if (mkdir(dir, 0777) && errno != EEXIST)
        return -1;
    char mark[1200], tmp[1320];
    snprintf(mark, sizeof mark, "%s/.taskscope-job", dir);
    for (int attempt = 0; attempt < 2; attempt++) {
        int is = marker_is(mark, job);
        if (is >= 0)
            return is;
        if (errno != ENOENT)
            return -1;
        if (!dir_is_empty(dir)) {
            /* a rank of this job may have claimed it since the look above
             * (the marker comes before any rank's folder): look once more */
            is = marker_is(mark, job);
            return is > 0;
        }
        if (attempt)
            return 0;
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        snprintf(tmp, sizeof tmp, "%s/.taskscope-job.%.63s.%ld", dir, host, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (!f)
            return -1;
        int bad = fputs(job, f) < 0;
        bad = fclose(f) || bad;
        int linked = !bad && link(tmp, mark) == 0;
        int err = errno;
        unlink(tmp);
        if (linked)
            return 1;
        if (bad || err != EEXIST)
            return -1;
        /* another rank made it first: read it */
    }
    return 0;
}

int tscope__output_make_rank_dir(const char *want, int rank, int nranks, char *out, size_t len,
                                 char *run, size_t runlen)
{
    run[0] = 0;
    if (nranks <= 1)
        return tscope__output_make_dir(want, out, len);
    const char *prepared = getenv("TASKSCOPE_OUTPUT_DIR_PREPARED");
    const char *prun = getenv("TASKSCOPE_RUN_DIR");
    if (prepared && strcmp(prepared, want) == 0 && prun && *prun && dir_is_empty(want)) {
        snprintf(out, len, "%s", want);
        snprintf(run, runlen, "%s", prun);
        return 0;
    }
    char job[256];
    tscope__job_id(job, sizeof job);
    if (make_parents(want))
        return TSCOPE_EIO;
    for (int i = 0; i < 10000; i++) {
        if (i == 0)
            snprintf(run, runlen, "%s", want);
        else
            snprintf(run, runlen, "%s.%d", want, i);
        int c = claim_run_dir(run, job);
        if (c < 0) {
            run[0] = 0;
            return TSCOPE_EIO;
        }
        if (c) {
            char mine[1200];
            snprintf(mine, sizeof mine, "%s/rank-%d", run, rank);
            return tscope__output_make_dir(mine, out, len);
        }
    }
    run[0] = 0;
    errno = EEXIST;
    return TSCOPE_EIO;
}

int tscope__output_write_file(const char *dir, const char *name, tscope__writer_fn fn,
                              const struct tscope__profile *p)
{
    char path[1200], tmp[1210];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "taskscope: error: cannot create %s: %s\n", tmp, strerror(errno));
        return TSCOPE_EIO;
    }
    int rc = fn(p, f);
    int saved = errno;
    if (fclose(f) != 0 && rc == 0) {
        rc = TSCOPE_EIO;
        saved = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = TSCOPE_EIO;
        saved = errno;
    }
    if (rc) {
        fprintf(stderr, "taskscope: error: writing %s failed: %s\n", path,
                rc == TSCOPE_EIO ? strerror(saved) : tscope_strerror(rc));
        remove(tmp);
    }
    return rc;
}

int tscope__output_write_files(const char *dir, int outputs, int sampled,
                               const struct tscope__profile *p, char *written, size_t len)
{
    static const struct {
        int bit;
        const char *name;
        tscope__writer_fn fn;
        int sampled; /* only when the sampler kept rows */
    } files[] = {
        {TSCOPE__OUT_JSON, "profile.json", tscope__export_json, 0},
        {TSCOPE__OUT_CSV, "types.csv", tscope__export_csv_types, 0},
        {TSCOPE__OUT_CSV, "counters.csv", tscope__export_csv_counters, 0},
        {TSCOPE__OUT_DOT, "taskgraph.dot", tscope__export_dot, 0},
        {TSCOPE__OUT_TREE, "tasktree.txt", tscope__export_tree, 0},
        {TSCOPE__OUT_FOLDED, "stacks.folded", tscope__export_folded, 0},
        {TSCOPE__OUT_HATCHET, "hatchet.json", tscope__export_hatchet, 0},
        {TSCOPE__OUT_TREEDOT, "tasktree.dot", tscope__export_treedot, 0},
        {TSCOPE__OUT_CSV, "samples.csv", tscope__sampler_write_csv, 1},
        {TSCOPE__OUT_CSV, "concurrency.csv", tscope__export_concurrency_csv, 0},
        {TSCOPE__OUT_CSV, "concurrency.gp", tscope__export_concurrency_gp, 0},
        {TSCOPE__OUT_CSV, "threads.csv", tscope__export_threads_csv, 0},
        {TSCOPE__OUT_CSV, "heatmap.gp", tscope__export_heatmap_gp, 0},
        {TSCOPE__OUT_CSV, "durations.csv", tscope__export_durations_csv, 0},
        {TSCOPE__OUT_CSV, "scatter.gp", tscope__export_scatter_gp, 0},
    };
    int first = 0;
    if (written && len)
        written[0] = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!(outputs & files[i].bit) || (files[i].sampled && !sampled))
            continue;
        int rc = tscope__output_write_file(dir, files[i].name, files[i].fn, p);
        if (rc && !first)
            first = rc;
        if (!rc && written && len) {
            strncat(written, written[0] ? ", " : "", len - strlen(written) - 1);
            strncat(written, files[i].name, len - strlen(written) - 1);
        }
    }
    if (outputs & TSCOPE__OUT_TAU) { /* TAU's file names: a folder of its own */
        char tau[1200], name[64];
        snprintf(tau, sizeof tau, "%s/tau", dir);
        snprintf(name, sizeof name, "tau/profile.%d.0.0", p->rank);
        int rc = mkdir(tau, 0777) && errno != EEXIST ? TSCOPE_EIO : 0;
        if (rc)
            fprintf(stderr, "taskscope: error: cannot create %s: %s\n", tau, strerror(errno));
        else
            rc = tscope__output_write_file(dir, name, tscope__export_tau, p);
        if (rc && !first)
            first = rc;
        if (!rc && written && len) {
            strncat(written, written[0] ? ", " : "", len - strlen(written) - 1);
            strncat(written, name, len - strlen(written) - 1);
        }
    }
    return first;
}
