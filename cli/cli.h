/* cli.h - subcommands of the taskscope command-line tool. */
#ifndef TSCOPE_CLI_CLI_H
#define TSCOPE_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "offline/offline.h"
#include "optparse.h"

/* Each returns the process exit status. */
int tscope_cli_run(int argc, char **argv);
int tscope_cli_report(int argc, char **argv);
int tscope_cli_model(int argc, char **argv);
int tscope_cli_model_calibrate(int argc, char **argv); /* calibrate.c */
void tscope_cli_model_usage(FILE *f);                  /* model --help */
int tscope_cli_diff(int argc, char **argv);
int tscope_cli_convert(int argc, char **argv);
int tscope_cli_formats(int argc, char **argv);
int tscope_cli_merge(int argc, char **argv);
int tscope_cli_top(int argc, char **argv);
int tscope_cli_recover_cmd(int argc, char **argv);
/* Says on stderr, one line each, which folders next to outdir hold what a
 * process that is gone left without anyone rebuilding it, and how to. */
void tscope_cli_report_stale(void);
int tscope_cli_dashboard(int argc, char **argv); /* in taskscope-dashboard */

/* Renders the pictures of a run (concurrency.svg, heatmap.svg, scatter.svg)
 * in outdir from the scripts and data the library wrote (render.c), all in
 * one gnuplot process; failures on stderr, one line each; quiet: no note
 * when gnuplot is missing. */
void tscope_cli_render(const char *outdir, int quiet);
/* The same in steps, so that gnuplot starts while the program runs:
 * render_start forks gnuplot in outdir, reading commands from a pipe (pid
 * and fd -1 when it could not); render_send gives it the scripts outdir
 * holds now and closes the pipe; render_finish (which sends first if that
 * was not done) waits for it, checks each picture and says what failed;
 * render_cancel, in place of finish when there is nothing to render, lets
 * gnuplot exit.  Each started renderer is finished or cancelled once. */
struct tscope_cli_renderer {
    pid_t pid;
    int fd; /* the write end of gnuplot's input */
};
void tscope_cli_render_start(struct tscope_cli_renderer *r, const char *outdir);
void tscope_cli_render_send(struct tscope_cli_renderer *r, const char *outdir);
void tscope_cli_render_finish(struct tscope_cli_renderer *r, const char *outdir, int quiet);
void tscope_cli_render_cancel(struct tscope_cli_renderer *r);
/* Renders one gnuplot script of outdir (NAME.gp -> NAME.png): 0, 1 after a
 * line saying why not (gnuplot missing or failing). */
int tscope_cli_render_script(const char *outdir, const char *name, int quiet);

/* The checks of option values several subcommands share (options.c; the
 * type of optparse.h): --sort's keys of the summary, --trace's and
 * --outputs' lists (the words of TASKSCOPE_TRACE and TASKSCOPE_OUTPUTS). */
int tscope_cli_sort_key(const char *value, char *expected, size_t len);
int tscope_cli_trace_list(const char *value, char *expected, size_t len);
int tscope_cli_outputs_list(const char *value, char *expected, size_t len);

/* Converts the binary trace in to format (TSCOPE__FMT_*, src/core/formats.h)
 * at out (NULL: next to it, the format's file - trace.json, trace-otf2,
 * trace.prv, ...; a name ending in .gz: compressed), then says what it
 * wrote on stderr unless quiet (convert_trace.c).  0, or 1 after a
 * one-line message "taskscope CMD: ...". */
int tscope_cli_trace_convert(const char *cmd, const char *in, int format, const char *out,
                             int quiet);
/* The ranks' traces (paths, by rank) of the job in folder run as one trace
 * of format (one whose descriptor has a job writer: Chrome, OTF2, Paraver)
 * with the messages between ranks, at out (NULL: RUN/ and the format's
 * file, compressed when large where it can be), saying what was written
 * unless quiet; 0, or 1 after one line. */
int tscope_cli_job_trace_convert(const char *cmd, const char *run, const char *const *paths, int n,
                                 int format, const char *out, int quiet);
/* The formats' names (core/formats.h), ", " between, into buf. */
struct tscope__format_id;
void tscope_cli_format_names(char *buf, size_t len, const struct tscope__format_id *ids,
                             unsigned n);
/* text, its words wrapped at 80 columns, continued at column indent; the
 * cursor is at column col now.  Ends the line. */
void tscope_cli_help_wrap(FILE *f, int indent, int col, const char *text);

/* `taskscope report --deps` (critpath.c): prints the critical path of p's
 * instance graph (its last `rows` tasks; 0: all) and the type-level
 * dependency totals to f, or a line saying p has no tasks.  Returns 0,
 * TSCOPE_ENOMEM (nothing printed) or TSCOPE_EIO (f reported an error). */
int tscope_cli_critical_path(const struct tscope__profile *p, FILE *f, unsigned rows);

#endif
