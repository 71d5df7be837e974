/* render.c - the pictures of a run (concurrency.png, heatmap.png,
 * scatter.png) rendered from the gnuplot scripts and data files the library
 * wrote into an output folder (src/export/timeline.c): at the end of
 * `taskscope run`, and again by `taskscope report FOLDER`.  Pictures are
 * whole or absent: gnuplot exits 0 even when a full disk cut its PNG. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* Starts gnuplot on NAME.gp in outdir (NAME.png); its pid, or -1 when the
 * script is not there or fork failed. */
static pid_t render_start(const char *outdir, const char *name)
{
    char gp[PATH_MAX + 32];
    snprintf(gp, sizeof gp, "%s/%s", outdir, name);
    if (access(gp, R_OK) != 0)
        return -1; /* not written (TASKSCOPE_OUTPUTS) */
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (chdir(outdir) != 0)
        _exit(126);
    /* gnuplot is no program to measure: the adapter the launcher arranged
     * for the program stays out of it */
    unsetenv("LD_PRELOAD");
    unsetenv("OMP_TOOL_LIBRARIES");
    setenv("TASKSCOPE_ENABLE", "0", 1);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
    }
    execlp("gnuplot", "gnuplot", name, (char *)NULL);
    _exit(127);
}

/* 1 if path is a whole PNG file: it ends with the IEND chunk.  gnuplot
 * exits with 0 even when the disk is full or a file size limit cut its
 * output short. */
static int png_whole(const char *path)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    unsigned char tail[12];
    FILE *f = fopen(path, "rb");
    int ok = f && fseek(f, -12, SEEK_END) == 0 && fread(tail, 1, 12, f) == 12 &&
             memcmp(tail, iend, 12) == 0;
    if (f)
        fclose(f);
    return ok;
}

/* Waits for a render_start of NAME.gp; 127 when gnuplot is missing, else
 * 0.  A picture that is not whole is removed, and said once. */
static int render_wait(pid_t pid, const char *outdir, const char *name)
{
    if (pid < 0)
        return 0;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return 127;
    char png[PATH_MAX + 32];
    snprintf(png, sizeof png, "%s/%.*s.png", outdir, (int)(strlen(name) - 3), name);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !png_whole(png)) {
        int had = unlink(png) == 0;
        fprintf(stderr, "taskscope: gnuplot failed on %s/%s%s; the data is next to it (.csv)\n",
                outdir, name,
                had ? " (its partial picture removed: disk full or file size limit?)" : "");
    }
    return 0;
}

/* The pictures, rendered side by side; one line when gnuplot is missing. */
void tscope_cli_render(const char *outdir, int quiet)
{
    static const char *const scripts[] = {"concurrency.gp", "heatmap.gp", "scatter.gp",
                                          "messages.gp", "ranks.gp"}; /* the last two: global */
    enum { N = sizeof scripts / sizeof scripts[0] };
    pid_t pid[N];
    for (int i = 0; i < N; i++)
        pid[i] = render_start(outdir, scripts[i]);
    int missing = 0;
    for (int i = 0; i < N; i++)
        missing |= render_wait(pid[i], outdir, scripts[i]) == 127;
    if (missing && !quiet)
        fprintf(stderr, "taskscope: gnuplot is not installed: the pictures' scripts (.gp) are not "
                        "rendered (apt-get install gnuplot-nox)\n");
}

int tscope_cli_render_script(const char *outdir, const char *name, int quiet)
{
    pid_t pid = render_start(outdir, name);
    if (pid < 0)
        return 1;
    if (render_wait(pid, outdir, name) == 127) {
        if (!quiet)
            fprintf(stderr,
                    "taskscope: gnuplot is not installed: %s/%s not rendered (apt-get "
                    "install gnuplot-nox)\n",
                    outdir, name);
        return 1;
    }
    return 0;
}
