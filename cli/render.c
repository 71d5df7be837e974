/* render.c - the pictures of a run (concurrency, heatmap, scatter;
 * messages and ranks in an MPI job's global/; SVG, or PNG under
 * TASKSCOPE_PICTURES=png: each script names its file) rendered
 * from the gnuplot scripts and data files the library wrote into an output
 * folder (src/export/timeline.c): at the end of `taskscope run`, and again
 * by `taskscope report FOLDER`.
 *
 * One gnuplot process draws them all: it reads `load 'NAME.gp'`, `unset
 * output` (the picture is complete once its output is closed) and `reset
 * session` (the next script starts from gnuplot's defaults, as if run
 * alone) per script from a pipe.  A gnuplot start costs ~20 ms of loading
 * here and each PNG ~30-60 ms (an SVG a few), so one process for all of them, started
 * while the program still runs (tscope_cli_render_start before the
 * program is forked), leaves only the drawing after the program's end.
 *
 * Pictures are whole or absent: gnuplot exits 0 even when a full disk cut
 * its file, so a PNG must end with the IEND chunk, an SVG with its closing
 * tag.  When the shared process failed (a non-zero status, or a picture
 * that is not whole), the
 * scripts concerned are run again one process each, as a user would run
 * them, and a picture that still fails is removed and said, one line. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char *const scripts[] = {"concurrency.gp", "heatmap.gp", "scatter.gp", "messages.gp",
                                      "ranks.gp"}; /* the last two: global */
enum { NSCRIPTS = sizeof scripts / sizeof scripts[0] };

/* Forks gnuplot in outdir with the launcher's adapter kept out of it and
 * its output discarded; stdin_fd >= 0 becomes its standard input.  Its pid
 * (0 in the child never returns), or -1 when fork failed. */
static pid_t gnuplot_fork(const char *outdir, const char *script, int stdin_fd)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* its own process group: a Ctrl-C meant for the program does not end
     * the renderer that waits for the program's data */
    setpgid(0, 0);
    if (chdir(outdir) != 0)
        _exit(126);
    if (stdin_fd >= 0 && stdin_fd != 0) {
        dup2(stdin_fd, 0);
        close(stdin_fd);
    }
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
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
}

/* 1 if path is a whole picture: a PNG ends with the IEND chunk, an SVG
 * with its closing tag (and gnuplot's two newlines).  gnuplot exits with 0
 * even when the disk is full or a file size limit cut its output short. */
static int png_whole(const char *path)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    static const char svg_end[] = "</svg>\n\n";
    size_t n = strlen(path);
    int svg = n > 4 && strcmp(path + n - 4, ".svg") == 0;
    size_t want = svg ? sizeof svg_end - 1 : sizeof iend;
    unsigned char tail[12];
    FILE *f = fopen(path, "rb");
    int ok = f && fseek(f, -(long)want, SEEK_END) == 0 && fread(tail, 1, want, f) == want &&
             memcmp(tail, svg ? (const void *)svg_end : (const void *)iend, want) == 0;
    if (f)
        fclose(f);
    return ok;
}

/* The picture a script draws: the file its `set output` line names
 * (pictures.h writes it), in outdir; NAME.svg when the line is not there. */
static void png_of(char *png, size_t len, const char *outdir, const char *script)
{
    char gp[PATH_MAX + 32], line[512], name[256] = "";
    snprintf(gp, sizeof gp, "%s/%s", outdir, script);
    FILE *f = fopen(gp, "r");
    while (f && !name[0] && fgets(line, sizeof line, f))
        if (sscanf(line, "set output '%255[^']'", name) != 1)
            name[0] = 0;
    if (f)
        fclose(f);
    if (name[0] && !strchr(name, '/'))
        snprintf(png, len, "%s/%s", outdir, name);
    else
        snprintf(png, len, "%s/%.*s.svg", outdir, (int)(strlen(script) - 3), script);
}

static int script_there(const char *outdir, const char *script)
{
    char gp[PATH_MAX + 32];
    snprintf(gp, sizeof gp, "%s/%s", outdir, script);
    return access(gp, R_OK) == 0;
}

/* Its exit status; -1 when it did not exit (a signal). */
static int wait_status(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Renders NAME.gp alone (gnuplot NAME.gp in outdir): 0 when the picture
 * is drawn, 127 when gnuplot is missing, 1 when it failed: a picture that
 * is not whole is removed, and said once. */
static int render_alone(const char *outdir, const char *name)
{
    pid_t pid = gnuplot_fork(outdir, name, -1);
    if (pid < 0)
        return 0;
    int code = wait_status(pid);
    if (code == 127)
        return 127;
    char png[PATH_MAX + 32];
    png_of(png, sizeof png, outdir, name);
    if (code != 0 || !png_whole(png)) {
        int had = unlink(png) == 0;
        fprintf(stderr, "taskscope: gnuplot failed on %s/%s%s; the data is next to it (.csv)\n",
                outdir, name,
                had ? " (its partial picture removed: disk full or file size limit?)" : "");
        return 1;
    }
    return 0;
}

void tscope_cli_render_start(struct tscope_cli_renderer *r, const char *outdir)
{
    r->pid = -1;
    r->fd = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC))
        return;
    pid_t pid = gnuplot_fork(outdir, "-", fds[0]);
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        return;
    }
    r->pid = pid;
    r->fd = fds[1];
}

void tscope_cli_render_send(struct tscope_cli_renderer *r, const char *outdir)
{
    if (r->fd < 0)
        return;
    char cmds[NSCRIPTS * 96];
    size_t n = 0;
    for (int i = 0; i < NSCRIPTS; i++)
        if (script_there(outdir, scripts[i]))
            n += (size_t)snprintf(cmds + n, sizeof cmds - n,
                                  "load '%s'\nunset output\nreset session\n", scripts[i]);
    /* a gnuplot that is gone (not installed: exec failed) must not end the
     * launcher with SIGPIPE: the write fails with EPIPE instead */
    sigset_t pipe_sig, old;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
    for (size_t off = 0; off < n;) {
        ssize_t w = write(r->fd, cmds + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(r->fd); /* end of input: gnuplot exits after the last script */
    r->fd = -1;
    struct timespec now = {0, 0};
    sigtimedwait(&pipe_sig, NULL, &now); /* the SIGPIPE a failed write left pending */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tscope_cli_render_finish(struct tscope_cli_renderer *r, const char *outdir, int quiet)
{
    tscope_cli_render_send(r, outdir);
    if (r->pid < 0)
        return;
    int code = wait_status(r->pid);
    r->pid = -1;
    int missing = code == 127;
    for (int i = 0; i < NSCRIPTS && !missing; i++) {
        if (!script_there(outdir, scripts[i]))
            continue;
        char png[PATH_MAX + 32];
        png_of(png, sizeof png, outdir, scripts[i]);
        /* a failure of the shared process: each script again, alone, so
         * that the one that fails is named */
        if (code != 0 || !png_whole(png))
            missing = render_alone(outdir, scripts[i]) == 127;
    }
    if (missing && !quiet)
        fprintf(stderr, "taskscope: gnuplot is not installed: the pictures' scripts (.gp) are not "
                        "rendered (apt-get install gnuplot-nox)\n");
}

void tscope_cli_render_cancel(struct tscope_cli_renderer *r)
{
    if (r->fd >= 0)
        close(r->fd); /* no script: gnuplot reads the end of its input and exits */
    r->fd = -1;
    if (r->pid >= 0)
        wait_status(r->pid);
    r->pid = -1;
}

void tscope_cli_render(const char *outdir, int quiet)
{
    int any = 0;
    for (int i = 0; i < NSCRIPTS; i++)
        any |= script_there(outdir, scripts[i]);
    if (!any) /* no picture to draw (--outputs json, ...): no gnuplot to start (~40 ms) */
        return;
    struct tscope_cli_renderer r;
    tscope_cli_render_start(&r, outdir);
    tscope_cli_render_finish(&r, outdir, quiet);
}

int tscope_cli_render_script(const char *outdir, const char *name, int quiet)
{
    if (!script_there(outdir, name))
        return 1;
    int rc = render_alone(outdir, name);
    if (rc == 127) {
        if (!quiet)
            fprintf(stderr,
                    "taskscope: gnuplot is not installed: %s/%s not rendered (apt-get "
                    "install gnuplot-nox)\n",
                    outdir, name);
        return 1;
    }
    return rc;
}
