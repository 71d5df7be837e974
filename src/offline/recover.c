/* recover.c - a crashed process's outputs rebuilt after the run: which
 * journal a folder holds, and the markers a run leaves.
 *
 * A process under `taskscope run` leaves, until it finalizes, a marker
 * .taskscope-PID.running in its output folder and its crash journal
 * .taskscope-PID.map (a link to its mapping in /dev/shm,
 * src/lifecycle/journal.c).  Here: finding that journal (or saying why there
 * is none: a profiler that was off keeps none, a wiped /dev/shm left a
 * dangling link), having src/lifecycle/recover.c rebuild the run from it,
 * and removing what the run left once its outputs exist - never the only
 * copy of what a failed recovery could not write.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "lifecycle/journal.h"
#include "lifecycle/recover.h"
#include "offline.h"

uint64_t tscope__offline_mono_ns(void)
{
    return tscope__mono_ns();
}

int tscope__offline_recover(const char *outdir, long pid, int sig, uint64_t death_mono_ns,
                            FILE *summary, double *as_of_s, char *why, size_t whylen)
{
    char base[PATH_MAX + 64], path[PATH_MAX + 128];
    snprintf(base, sizeof base, "%s/.taskscope-%ld", outdir, pid);
    snprintf(path, sizeof path, "%s.map", base);
    if (access(path, R_OK) == 0)
        return tscope__recover_journal(outdir, base, sig, death_mono_ns, summary, as_of_s, why,
                                       whylen);
    int err = errno;
    /* a batch system may wipe /dev/shm after killing a job: the folder's
     * link then names nothing, and what it held is lost */
    char target[PATH_MAX];
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len > 0) {
        target[len] = 0;
        snprintf(why, whylen,
                 "%s is gone (/dev/shm was emptied?): what process %ld measured is lost", target,
                 pid);
        return -3;
    }
    /* the marker says when the program measured without the profiler,
     * which keeps no crash journal (lifecycle.c) */
    char marker[PATH_MAX + 128], said[32] = "";
    snprintf(marker, sizeof marker, "%s.running", base);
    FILE *m = fopen(marker, "r");
    if (m) {
        if (!fgets(said, sizeof said, m))
            said[0] = 0;
        fclose(m);
    }
    if (strcmp(said, TSCOPE__MARKER_NO_JOURNAL) == 0)
        snprintf(why, whylen, "no crash journal in %s: %s", outdir,
                 "the program measured with TASKSCOPE_PROFILER=0, which keeps none");
    else
        snprintf(why, whylen, "no crash journal in %s (%s)", outdir,
                 err == ENOENT ? "it could not be written, see above" : strerror(err));
    return -3; /* nothing to keep */
}

void tscope__offline_recover_release(void)
{
    tscope__recover_release();
}

int tscope__offline_take_markers(const char *outdir, long prog_pid, int sig, uint64_t died_ns,
                                 FILE *summary, int *recovered, double *as_of)
{
    *recovered = 0;
    DIR *d = opendir(outdir);
    if (!d)
        return 0;
    int n = 0;
    long chosen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid;
        char rest[32];
        if (sscanf(e->d_name, ".taskscope-%ld.%31s", &pid, rest) == 2 &&
            strcmp(rest, "running") == 0) {
            n++;
            if (!chosen || pid == prog_pid)
                chosen = pid;
        }
    }
    if (chosen) {
        char why[PATH_MAX + 200];
        int rc =
            tscope__offline_recover(outdir, chosen, sig, died_ns, summary, as_of, why, sizeof why);
        if (rc == 0)
            *recovered = 1;
        else if (rc == -2)
            fprintf(stderr,
                    "taskscope: %s; what process %ld left stays in %s (.taskscope-%ld.*): "
                    "'taskscope recover %s' tries again\n",
                    why, chosen, outdir, chosen, outdir);
        else if (rc == -3)
            fprintf(stderr, "taskscope: %s\n", why);
        else
            fprintf(stderr,
                    "taskscope: %s; what process %ld left stays in %s (.taskscope-%ld.*): "
                    "'taskscope recover %s' tries again, or remove them\n",
                    why, chosen, outdir, chosen, outdir);
        tscope__offline_recover_release();
        if (rc != 0 && rc != -3) { /* never the only copy */
            closedir(d);
            return n;
        }
    }
    rewinddir(d);
    char path[PATH_MAX + 300];
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, ".taskscope-", 11) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
        char target[PATH_MAX];
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) { /* the slots file in /dev/shm (src/lifecycle/journal.c) */
            target[len] = 0;
            if (strncmp(target, "/dev/shm/taskscope-", 19) == 0)
                unlink(target);
        }
        unlink(path);
    }
    closedir(d);
    return n;
}
