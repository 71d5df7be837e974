/* note.c - the one way taskscope says something that is neither a warning
 * nor an error (what this machine lacks, where the outputs went): a line
 * on stderr, "taskscope: ...", unless TASKSCOPE_QUIET is set (taskscope
 * run -q).  Warnings and errors are always printed.
 *
 * A note about what the machine lacks (no hardware counters, no RAPL) says
 * the same on every run there, so it is printed once per machine: a marker
 * file per note and host under $XDG_CACHE_HOME/taskscope (else
 * ~/.cache/taskscope) remembers that it was said; TASKSCOPE_VERBOSE prints
 * it on every run.  Every run keeps its machine notes for profile.json
 * ("notes"), printed or not. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

void tscope__note(const char *fmt, ...)
{
    if (tscope__g.cfg.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("taskscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

#define MACHINE_NOTES 8
#define MACHINE_NOTE_LEN 512

static struct {
    pthread_mutex_t lock;
    unsigned n;
    char text[MACHINE_NOTES][MACHINE_NOTE_LEN];
} M = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Whether this is the first time key is said on this machine (the marker
 * made now); 1 as well when no marker can be kept (said rather than lost). */
static int first_on_machine(const char *key)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[1024], host[128] = "", path[1400];
    if (xdg && *xdg == '/')
        snprintf(dir, sizeof dir, "%s/taskscope", xdg);
    else if (home && *home == '/')
        snprintf(dir, sizeof dir, "%s/.cache/taskscope", home);
    else
        return 1;
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "host");
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    /* the folders one by one (~/.cache may not exist yet) */
    for (char *c = dir + 1; *c; c++)
        if (*c == '/') {
            *c = 0;
            mkdir(dir, 0755);
            *c = '/';
        }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return 1;
    snprintf(path, sizeof path, "%s/said-%s-%s", dir, key, host);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        close(fd);
        return 1;
    }
    return errno != EEXIST;
}

void tscope__machine_note(const char *key, const char *fmt, ...)
{
    char text[MACHINE_NOTE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t len = strlen(text);
    if (len && text[len - 1] == '\n')
        text[--len] = 0;
    pthread_mutex_lock(&M.lock);
    int known = 0;
    for (unsigned i = 0; i < M.n; i++)
        known |= strcmp(M.text[i], text) == 0;
    if (!known && M.n < MACHINE_NOTES)
        memcpy(M.text[M.n++], text, len + 1);
    pthread_mutex_unlock(&M.lock);
    if (tscope__g.cfg.quiet || (!tscope__g.cfg.verbose && !first_on_machine(key)))
        return;
    fprintf(stderr, "taskscope: %s%s\n", text,
            tscope__g.cfg.verbose ? ""
                                  : " (said once per machine; TASKSCOPE_VERBOSE=1: every run)");
}

unsigned tscope__machine_notes(char out[][512], unsigned cap)
{
    pthread_mutex_lock(&M.lock);
    unsigned n = M.n < cap ? M.n : cap;
    for (unsigned i = 0; i < n; i++)
        memcpy(out[i], M.text[i], sizeof M.text[i]);
    pthread_mutex_unlock(&M.lock);
    return n;
}
