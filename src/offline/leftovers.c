/* leftovers.c - run folders, and what measured programs that died left.
 *
 * Under `taskscope run` a program keeps its crash journal next to its
 * outputs (.taskscope-PID.*, src/lifecycle/journal.h) and its mappings in
 * /dev/shm (taskscope-PID-XXXXXX, linked from the folder).  This finds
 * them: a folder's marker of a process that never finalized, the mappings
 * in /dev/shm of processes that are gone (each mapping's header names its
 * folder), an MPI job's rank folders, the folders of a program's measured
 * descendants (their records in the run's folder), the mapping of a process or folder
 * that `taskscope top` reads (a file is one when it starts with the
 * shards file's magic, src/profile/shard.h).  Reading only: nothing here removes
 * or rebuilds (recover.c does).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/shard.h"
#include "offline.h"

int tscope__offline_pid_alive(long pid)
{
    if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM)) /* EPERM: it exists */
        return 0;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}

long tscope__offline_left_behind(const char *dir, int *running)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    long found = 0;
    *running = 0;
    while (d && (e = readdir(d))) {
        long pid;
        char rest[32];
        if (sscanf(e->d_name, ".taskscope-%ld.%31s", &pid, rest) == 2 &&
            strcmp(rest, "running") == 0) {
            found = pid;
            if ((*running = tscope__offline_pid_alive(pid)) != 0)
                break;
        }
    }
    if (d)
        closedir(d);
    return found;
}

static int by_rank(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    /* rank-2 before rank-10 */
    if (!strncmp(x, "rank-", 5) && !strncmp(y, "rank-", 5)) {
        long a5 = strtol(x + 5, NULL, 10), b5 = strtol(y + 5, NULL, 10);
        if (a5 != b5)
            return a5 < b5 ? -1 : 1;
    }
    return strcmp(x, y);
}

size_t tscope__offline_rank_folders(const char *run, char ***names)
{
    *names = NULL;
    DIR *d = opendir(run);
    struct dirent *e;
    size_t n = 0, cap = 0;
    while (d && (e = readdir(d))) {
        /* rank-N only: rank-N.PROG.PID is a folder of a descendant of rank N's program */
        if (strncmp(e->d_name, "rank-", 5) != 0 || !e->d_name[5] ||
            strspn(e->d_name + 5, "0123456789") != strlen(e->d_name + 5))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(*names, cap * sizeof *p);
            if (!p)
                break;
            *names = p;
        }
        if (((*names)[n] = strdup(e->d_name)))
            n++;
    }
    if (d)
        closedir(d);
    if (n)
        qsort(*names, n, sizeof **names, by_rank);
    return n;
}

static int by_pid(const void *a, const void *b)
{
    const struct tscope__offline_descendant *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

size_t tscope__offline_descendants(const char *dir, struct tscope__offline_descendant **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0, cap = 0;
    while (d && (e = readdir(d))) {
        long pid;
        char rest[16], path[PATH_MAX + 300];
        if (sscanf(e->d_name, ".taskscope-%ld.%15s", &pid, rest) != 2 ||
            strcmp(rest, "descendant") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        struct tscope__offline_descendant one = {.pid = pid};
        int whole = fgets(one.dir, sizeof one.dir, f) && fgets(one.program, sizeof one.program, f);
        fclose(f);
        size_t dl = strcspn(one.dir, "\n"), pl = strcspn(one.program, "\n");
        if (!whole || !dl || one.dir[dl] != '\n' || one.program[pl] != '\n')
            continue; /* not written whole: nothing to name */
        one.dir[dl] = 0;
        one.program[pl] = 0;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            struct tscope__offline_descendant *p = realloc(*out, cap * sizeof *p);
            if (!p)
                break;
            *out = p;
        }
        (*out)[n++] = one;
    }
    if (d)
        closedir(d);
    if (n)
        qsort(*out, n, sizeof **out, by_pid);
    return n;
}

size_t tscope__offline_stale_mappings(struct tscope__offline_stale *out, size_t max)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    size_t n = 0;
    while (d && (e = readdir(d))) {
        long pid;
        char path[PATH_MAX];
        struct stat st;
        if (strncmp(e->d_name, "taskscope-", 10) != 0 || /* most are not ours (libomp's, MPI's) */
            sscanf(e->d_name, "taskscope-%ld-", &pid) != 1 || pid <= 0 ||
            tscope__offline_pid_alive(pid))
            continue;
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (stat(path, &st) != 0 || st.st_uid != getuid())
            continue; /* another user's: not ours to name or remove */
        size_t k = 0;
        while (k < n && out[k].pid != pid)
            k++;
        if (k == n) {
            if (n == max)
                continue;
            memset(&out[n], 0, sizeof out[n]);
            out[n++].pid = pid;
        }
        out[k].bytes += (unsigned long long)st.st_blocks * 512;
        FILE *f = fopen(path, "r");
        struct tscope__shfile h;
        if (f && fread(&h, sizeof h, 1, f) == 1 &&
            memcmp(h.magic, TSCOPE__SHFILE_MAGIC, sizeof TSCOPE__SHFILE_MAGIC) == 0 &&
            h.sum == tscope__shfile_sum(&h) && h.pid == pid) {
            h.dir[sizeof h.dir - 1] = 0;
            snprintf(out[k].dir, sizeof out[k].dir, "%s", h.dir);
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* 1 when path is a shards file (its magic). */
static int is_shards(const char *path)
{
    FILE *f = fopen(path, "r");
    char magic[16] = {0};
    int yes = f && fread(magic, 1, sizeof magic, f) == sizeof magic &&
              memcmp(magic, "taskscope-sh-", 13) == 0;
    if (f)
        fclose(f);
    return yes;
}

/* The shards file of process pid: from its mappings, else /dev/shm. */
static int mapping_of_pid(long pid, char *out, size_t len)
{
    char maps[64], line[PATH_MAX + 256], tag[64];
    snprintf(maps, sizeof maps, "/proc/%ld/maps", pid);
    snprintf(tag, sizeof tag, "taskscope-%ld", pid);
    FILE *f = fopen(maps, "r");
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, tag))
            continue;
        path[strcspn(path, "\n")] = 0;
        char *del = strstr(path, " (deleted)");
        if (del)
            *del = 0;
        if (is_shards(path)) {
            snprintf(out, len, "%s", path);
            fclose(f);
            return 0;
        }
    }
    if (f)
        fclose(f);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    char want[64];
    snprintf(want, sizeof want, "taskscope-%ld-", pid);
    while (d && (e = readdir(d))) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        if (strncmp(e->d_name, want, strlen(want)) == 0 && is_shards(path)) {
            snprintf(out, len, "%s", path);
            closedir(d);
            return 0;
        }
    }
    if (d)
        closedir(d);
    return -1;
}

/* The shards file of a child of pid (the pid of `taskscope run` itself,
 * or of mpirun, was given). */
static int find_child(long pid, char *out, size_t len, int depth)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
    FILE *f = depth < 3 ? fopen(path, "r") : NULL;
    long child;
    int rc = -1;
    while (f && rc && fscanf(f, "%ld", &child) == 1)
        rc = mapping_of_pid(child, out, len) == 0 ? 0 : find_child(child, out, len, depth + 1);
    if (f)
        fclose(f);
    return rc;
}

int tscope__offline_mapping_of_process(long pid, char *out, size_t len)
{
    return mapping_of_pid(pid, out, len) == 0 ? 0 : find_child(pid, out, len, 0);
}

int tscope__offline_mapping_in_folder(const char *dir, char *out, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d))) {
        long pid;
        char rest[16];
        if (sscanf(e->d_name, ".taskscope-%ld.%15s", &pid, rest) != 2 || strcmp(rest, "map"))
            continue;
        char path[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!is_shards(path))
            continue;
        snprintf(out, len, "%s", path);
        found = 1;
        if (tscope__offline_pid_alive(pid))
            break;
    }
    if (d)
        closedir(d);
    return found ? 0 : -1;
}
