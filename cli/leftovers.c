/* leftovers.c - what measured programs that died left behind, and
 * `taskscope recover`.
 *
 * Under `taskscope run` a program keeps its crash journal next to its
 * outputs (.taskscope-PID.*, lifecycle/journal.h) and its mappings in
 * /dev/shm (taskscope-PID-XXXXXX, linked from the folder).  When the
 * program dies without writing its outputs, its launcher rebuilds them
 * (src/offline/recover.c).  When the launcher died first (killed with its job, a lost
 * ssh session), nobody did: `taskscope recover FOLDER` does it then, `run`
 * says at its start what such programs left in /dev/shm (reading only
 * /dev/shm: each mapping's header names its folder), and `report`,
 * `merge` and `top` point here.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The folder of a stale mapping still holds its journal (its marker). */
static int has_marker(const struct tscope__offline_stale *s)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/.taskscope-%ld.running", s->dir, s->pid);
    return s->dir[0] && access(path, F_OK) == 0;
}

/* One line for each process that is gone and left its mapping in /dev/shm
 * with nobody to rebuild it (its launcher died too): its folder and the
 * command that rebuilds it, or that its folder is gone.  Only /dev/shm is
 * read (a handful of entries): a run's start pays nothing for a busy
 * working folder.  A folder whose mapping a batch system wiped is not
 * named here; `report` on it says what survived. */
void tscope_cli_report_stale(void)
{
    struct tscope__offline_stale s[64];
    size_t n = tscope__offline_stale_mappings(s, 64);
    for (size_t i = 0; i < n; i++) {
        if (has_marker(&s[i]))
            fprintf(stderr,
                    "taskscope: note: %s holds what process %ld left when it died with its "
                    "launcher (%.1f MB in /dev/shm): taskscope recover %s\n",
                    s[i].dir, s[i].pid, s[i].bytes / 1e6, s[i].dir);
        else
            fprintf(stderr,
                    "taskscope: note: /dev/shm/taskscope-%ld-* (%.1f MB) is what process %ld "
                    "left; its folder %s: taskscope recover --clean removes it\n",
                    s[i].pid, s[i].bytes / 1e6, s[i].pid,
                    s[i].dir[0] ? "no longer holds its journal" : "is not known");
    }
}

static int recover_one(const char *dir, int quiet, int rc_desc, int desc_any);

/* The folders of the measured descendants that run folder dir names
 * (RUN.PROG.PID, src/export/output.h) whose process died without its
 * outputs, each rebuilt in its own folder; *any: one was.  0, or 1: one
 * failed (said). */
static int recover_descendants(const char *dir, int quiet, int *any)
{
    struct tscope__offline_descendant *d;
    size_t n = tscope__offline_descendants(dir, &d);
    int rc = 0, running;
    for (size_t i = 0; i < n; i++) {
        long pid = tscope__offline_left_behind(d[i].dir, &running);
        if (pid && !running) {
            *any = 1;
            rc |= recover_one(d[i].dir, quiet, 0, 0);
        }
    }
    free(d);
    return rc;
}

/* Rebuilds what one folder's dead process left, and its dead descendants'
 * in their own folders; 0 done or nothing to do, 1 failed (said). */
static int recover_folder(const char *dir, int quiet)
{
    int any = 0;
    int rc_desc = recover_descendants(dir, quiet, &any);
    return recover_one(dir, quiet, rc_desc, any);
}

/* What recover_folder does for dir itself (its ranks, for an MPI job's run
 * folder), after its descendants' (rc_desc: what that gave, desc_any: one
 * was rebuilt). */
static int recover_one(const char *dir, int quiet, int rc_desc, int desc_any)
{
    int running;
    long pid = tscope__offline_left_behind(dir, &running);
    if (!pid && desc_any)
        return rc_desc;
    if (!pid) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "taskscope recover: %s: %s\n", dir,
                    stat(dir, &st) != 0 ? strerror(errno) : "not a folder");
            return 1;
        }
        /* an MPI job's run folder: its ranks */
        char **names = NULL;
        size_t n = tscope__offline_rank_folders(dir, &names);
        int rc = 0, any = 0;
        for (size_t i = 0; i < n; i++) {
            char sub[PATH_MAX];
            snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
            long p = tscope__offline_left_behind(sub, &running);
            if (p) {
                any = 1;
                rc |= recover_folder(sub, quiet);
            }
            free(names[i]);
        }
        free(names);
        if (!any && !quiet)
            printf("taskscope recover: %s: nothing to recover (no program died there without "
                   "its outputs)\n",
                   dir);
        /* the job's global view, which rank 0 writes at MPI_Finalize: made
         * from the ranks' profiles as `taskscope merge` makes it */
        char global[PATH_MAX + 32];
        snprintf(global, sizeof global, "%s/global/profile.json", dir);
        if (any && !rc && access(global, F_OK) != 0) {
            char *margv[] = {"merge", "-q", (char *)dir, NULL};
            rc = tscope_cli_merge(3, margv);
            if (!rc)
                printf("taskscope recover: %s/global: the job's global view rebuilt from its %zu "
                       "ranks\n",
                       dir, n);
        }
        return rc;
    }
    if (running) {
        fprintf(stderr,
                "taskscope recover: %s: its program (pid %ld) still runs; taskscope top %ld shows "
                "it\n",
                dir, pid, pid);
        return 1;
    }
    int recovered = 0;
    double as_of = 0;
    tscope__offline_take_markers(dir, pid, SIGKILL, 0, quiet ? NULL : stdout, &recovered, &as_of);
    if (!recovered)
        return 1; /* said (the files stay, unless there was no journal to keep) */
    char gp[PATH_MAX + 32];
    snprintf(gp, sizeof gp, "%s/concurrency.gp", dir);
    if (access(gp, F_OK) == 0)
        tscope_cli_render(dir, quiet); /* the pictures, as run draws them */
    printf("taskscope recover: %s: the outputs of process %ld rebuilt (it ran %.3f s)\n", dir, pid,
           as_of);
    return rc_desc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: taskscope recover [-q] [FOLDER...]\n"
               "       taskscope recover --clean\n"
               "\n"
               "Writes the outputs of programs measured under 'taskscope run' that died\n"
               "without writing them when their launcher could not rebuild them (it was killed\n"
               "too), from what they left in FOLDER and in /dev/shm.  An MPI job's run folder\n"
               "recovers each of its ranks, then its global view; a run folder also the\n"
               "measured processes its program started that died, each in its own folder\n"
               "(FOLDER.PROG.PID).  Without FOLDER: every such folder that /dev/shm still\n"
               "names.  If writing fails, what was left stays in place to try again.\n"
               "\n"
               "  -q, --quiet  no summary of the recovered profile\n"
               "  --clean      remove what dead processes left in /dev/shm whose folder is gone\n");
}

int tscope_cli_recover_cmd(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"clean", 'c', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"quiet", 'q', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    int clean = 0, quiet = 0, c;
    optind = 1;
    while ((c = tscope_cli_getopt("recover", argc, argv, opts, 0)) != -1) {
        if (c == 'c')
            clean = 1;
        else if (c == 'q')
            quiet = 1;
        else if (c == 'h') {
            usage(stdout);
            return 0;
        } else
            return TSCOPE_CLI_STATUS(c);
    }
    int rc = 0;
    if (optind < argc) {
        if (clean) {
            fprintf(stderr, "taskscope recover: --clean takes no folder\n");
            return 2;
        }
        for (int i = optind; i < argc; i++)
            rc |= recover_folder(argv[i], quiet);
        return rc;
    }
    struct tscope__offline_stale s[256];
    size_t n = tscope__offline_stale_mappings(s, 256);
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        if (has_marker(&s[i])) {
            if (!clean) {
                rc |= recover_folder(s[i].dir, quiet);
                done++;
            }
            continue;
        }
        if (!clean) {
            fprintf(stderr,
                    "taskscope recover: /dev/shm/taskscope-%ld-* (%.1f MB): its folder %s; "
                    "'taskscope recover --clean' removes it\n",
                    s[i].pid, s[i].bytes / 1e6,
                    s[i].dir[0] ? "no longer holds its journal" : "is not known");
            continue;
        }
        DIR *d = opendir("/dev/shm");
        struct dirent *e;
        char want[64];
        snprintf(want, sizeof want, "taskscope-%ld-", s[i].pid);
        while (d && (e = readdir(d))) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
            if (strncmp(e->d_name, want, strlen(want)) == 0 && unlink(path) != 0) {
                fprintf(stderr, "taskscope recover: cannot remove %s: %s\n", path, strerror(errno));
                rc = 1;
            }
        }
        if (d)
            closedir(d);
        printf("taskscope recover: removed %.1f MB left in /dev/shm by process %ld\n",
               s[i].bytes / 1e6, s[i].pid);
        done++;
    }
    if (!n && !quiet)
        printf("taskscope recover: nothing to recover in /dev/shm; name a FOLDER to recover a "
               "program that left its journal there\n");
    return rc;
}
