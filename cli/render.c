/* render.c - the sampler's pictures (concurrency.png, heatmap.png) rendered
 * from the gnuplot scripts the library wrote into an output folder: at the
 * end of `taskscope run`, and again by `taskscope report FOLDER`.  Pictures
 * are whole or absent: gnuplot exits 0 even when a full disk cut its PNG. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
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
        return -1; /* the sampler did not run */
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (chdir(outdir) != 0)
        _exit(126);
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
        fprintf(stderr, "taskscope: gnuplot failed on %s/%s%s; the data is in samples.csv\n",
                outdir, name,
                had ? " (its partial picture removed: disk full or file size limit?)" : "");
    }
    return 0;
}

/* Rows of sampled data in outdir/samples.csv (the header not counted). */
static int sample_rows(const char *outdir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/samples.csv", outdir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int rows = -1, c, last = '\n';
    while ((c = getc(f)) != EOF) {
        if (c == '\n')
            rows++;
        last = c;
    }
    if (last != '\n')
        rows++;
    fclose(f);
    return rows < 0 ? 0 : rows;
}

/* The sampler's plots, concurrency.png and heatmap.png, rendered side by
 * side; a run with too few samples for a plot (fewer than 5: a run shorter
 * than 4 sampling periods, where a plot shows next to nothing and gnuplot
 * would add ~0.1 s) gets a note instead. */
void tscope_cli_render(const char *outdir, int quiet)
{
    int rows = sample_rows(outdir);
    if (rows == 0)
        return; /* no sampler */
    if (rows < 5) {
        if (quiet)
            return;
        fprintf(stderr,
                "taskscope: concurrency.gp and heatmap.gp not rendered: %d sample%s only (a "
                "shorter --sample-ms gives more; 'gnuplot concurrency.gp' in %s renders anyway)\n",
                rows, rows == 1 ? "" : "s", outdir);
        return;
    }
    pid_t a = render_start(outdir, "concurrency.gp"), b = render_start(outdir, "heatmap.gp");
    int ra = render_wait(a, outdir, "concurrency.gp"), rb = render_wait(b, outdir, "heatmap.gp");
    if (ra == 127 || rb == 127)
        fprintf(stderr, "taskscope: gnuplot is not installed: concurrency.gp and heatmap.gp not "
                        "rendered (apt-get install gnuplot-nox)\n");
}
