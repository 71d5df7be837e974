/* recover.c - the outputs of a program that could not write them itself.
 *
 * A program killed by SIGKILL (the OOM killer, a batch system's last word)
 * runs no handler.  Under `taskscope run` its library saved the profile so
 * far every TASKSCOPE_CHECKPOINT_MS in .taskscope-PID.checkpoint.json
 * (src/lifecycle/lifecycle.c); this turns that file into the usual outputs,
 * marked with the signal that ended the run.  What happened after the last
 * checkpoint is missing, and said so.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export/export.h"
#include "export/output.h"
#include "profile/profile.h"

int tscope_cli_recover(const char *outdir, const char *checkpoint, int sig, double *as_of_s)
{
    char err[1024];
    struct tscope__profile *p = tscope_cli_profile_read(checkpoint, err, sizeof err);
    if (!p) { /* no JSON reader here: the checkpoint itself is the profile */
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/profile.json", outdir);
        if (rename(checkpoint, path) != 0) {
            fprintf(stderr, "taskscope: cannot recover %s: %s\n", checkpoint, err);
            return -1;
        }
        *as_of_s = -1;
        return 0;
    }
    p->ended_by = sig;
    *as_of_s = p->totals.elapsed_ns / 1e9;
    static const struct {
        const char *name;
        tscope__writer_fn fn;
    } files[] = {
        {"profile.json", tscope__export_json},         {"types.csv", tscope__export_csv_types},
        {"counters.csv", tscope__export_csv_counters}, {"taskgraph.dot", tscope__export_dot},
        {"tasktree.txt", tscope__export_tree},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (tscope__output_write_file(outdir, files[i].name, files[i].fn, p))
            rc = -1;
    tscope__profile_free(p);
    unlink(checkpoint);
    return rc;
}
