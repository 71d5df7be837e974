/* offline.h - everything after the run, in one header: what the taskscope
 * command (cli/) uses of the library besides the public API.
 *
 * The after-the-run code works on explicit objects passed as arguments - a
 * profile (struct tscope__profile, read from profile.json or rebuilt), a
 * run folder, a trace file, a process's mapping - and never on the
 * measurement state of the process it runs in.  The one exception is said
 * where it is: a recovery rebuilds the dead process's run in this process's
 * measurement state, through src/lifecycle/recover.h, because that is what
 * the profile's own functions read.
 *
 * Besides its own functions (src/offline, prefix tscope__offline_) this
 * header re-exports the headers of the objects it hands out and of the
 * functions that already work on them only: the profile, its renderers, the
 * critical path, the global view, trace conversion, a mapping's peek.  cli/
 * includes this header and include/taskscope/ only (tests/test_cli_includes.sh).
 */
#ifndef TSCOPE_OFFLINE_OFFLINE_H
#define TSCOPE_OFFLINE_OFFLINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- a profile: the object every command below reads or writes ---- */
#include "profile/profile.h" /* struct tscope__profile, tscope__profile_free */

/* Reads a JSON profile (a profile.json file, or a folder holding one), the
 * reader beside the writer's knowledge (src/export/json.c; the schema's
 * names and numbers in profile/profile.h).  On error returns NULL and
 * writes a one-line message naming the file (and line, for syntax errors)
 * into err; a folder whose process never wrote one is said (and how to
 * rebuild it).  Without libjansson it says so. */
struct tscope__profile *tscope__offline_profile_read(const char *path, char *err, size_t errlen);

/* Two profiles compared per task type (`taskscope diff`): one row per type
 * of a (b's type of the same name, or NULL), then per type only b has (a
 * NULL); impact: self time in b minus in a, ns.  The rows point into a and
 * b (names, types). */
struct tscope__offline_diff_row {
    const char *name;
    const struct tscope__ptype *a, *b;
    double impact;
};
/* The rows sorted by |impact| (ties by name), or by name when by_names;
 * allocated (the caller frees them), *n rows.  NULL on memory
 * exhaustion. */
struct tscope__offline_diff_row *tscope__offline_diff(const struct tscope__profile *a,
                                                      const struct tscope__profile *b, int by_names,
                                                      size_t *n);

/* What renders a profile: the summary, tree, DOT, CSV, folded, Hatchet,
 * TAU writers (tscope__export_*), and writing one file whole or not at all
 * into a folder, a fresh folder (tscope__output_write_file, _make_dir,
 * _make_rank_dir). */
#include "export/export.h"
#include "export/output.h"
/* the pictures' format (TASKSCOPE_PICTURES) for the scripts merge and
 * convert write */
#include "export/pictures.h"
/* The critical path of a profile's instance graph (report --deps). */
#include "profile/critpath.h"
/* The global view of a job: ranks' profiles merged, written (merge). */
#include "global/global.h"
/* The one JSON string escape, for the commands' own JSON. */
#include "core/json_escape.h"

/* ---- a run folder, and what dead processes left ---- */

/* 1 when process pid exists and is not a zombie. */
int tscope__offline_pid_alive(long pid);
/* The pid of a program that measured in dir and never wrote its outputs
 * (its marker .taskscope-PID.running), 0: none; *running: it still runs. */
long tscope__offline_left_behind(const char *dir, int *running);
/* The folders rank-... of an MPI job's run folder, rank-2 before rank-10,
 * into *names (allocated, like each name; the caller frees both); their
 * number. */
size_t tscope__offline_rank_folders(const char *run, char ***names);

/* A measured descendant of the program a launcher started (a process it
 * forked or executed, or a script's child), which wrote into a folder of
 * its own beside the run's (src/export/output.h, tscope__output_prepared). */
struct tscope__offline_descendant {
    long pid;
    char dir[1100];   /* its folder, RUN.PROG.PID */
    char program[72]; /* PROG */
};
/* The descendants recorded in run folder dir (RUN/.taskscope-PID.descendant),
 * by pid, into *out (allocated, the caller frees it); their number. */
size_t tscope__offline_descendants(const char *dir, struct tscope__offline_descendant **out);

/* A mapping in /dev/shm (taskscope-PID-*) of this user's process that is
 * gone: its process, the bytes its files hold, its output folder from the
 * mapping's header ("" when no header says). */
struct tscope__offline_stale {
    long pid;
    unsigned long long bytes;
    char dir[1024];
};
/* The stale mappings in /dev/shm, one entry per process (at most max);
 * their number.  Reads only /dev/shm. */
size_t tscope__offline_stale_mappings(struct tscope__offline_stale *out, size_t max);

/* The shards file (the mapping, src/lifecycle/journal.h) of process pid:
 * from its /proc/PID/maps, else /dev/shm, else a child's (pid may be that
 * of `taskscope run` or of mpirun), into out.  0, or -1: none. */
int tscope__offline_mapping_of_process(long pid, char *out, size_t len);
/* The shards file in output folder dir (.taskscope-PID.map): a running
 * process's if there is one, else the last met.  0, or -1: none. */
int tscope__offline_mapping_in_folder(const char *dir, char *out, size_t len);

/* ---- a crashed process's run, rebuilt from its crash journal ---- */

/* CLOCK_MONOTONIC now, in ns: the moment a process is seen gone, as a
 * recovery takes it (death_mono_ns). */
uint64_t tscope__offline_mono_ns(void);
/* Rebuilds the outputs of process pid, which died without writing them,
 * from the crash journal it left in outdir (src/lifecycle/journal.h),
 * marked as ended by sig (0: an exit) at death_mono_ns (when it was seen
 * gone; 0: unknown).  Its summary goes to `summary` (NULL: none) when its
 * configuration asks; *as_of_s: the run's length.  0, or with a one-line
 * message in why: -3 (no journal: nothing to keep), -1 (it cannot be read,
 * or memory ran out), -2 (writing the outputs failed: the journal is whole,
 * a later try can succeed).  What it built stays in this process until
 * tscope__offline_recover_release. */
int tscope__offline_recover(const char *outdir, long pid, int sig, uint64_t death_mono_ns,
                            FILE *summary, double *as_of_s, char *why, size_t whylen);
/* Frees what the last recovery built. */
void tscope__offline_recover_release(void);
/* What a program's measurement left in outdir: markers
 * .taskscope-PID.running of processes that never finalized, and their crash
 * journals.  Rebuilds the outputs of prog_pid's (else the first met) from
 * its journal (tscope__offline_recover; its summary to `summary` unless
 * NULL; *recovered, *as_of), then removes every .taskscope-* file - unless
 * the recovery failed with a journal there: then everything stays for
 * `taskscope recover` to try again (said).  Returns how many markers there
 * were. */
int tscope__offline_take_markers(const char *outdir, long prog_pid, int sig, uint64_t died_ns,
                                 FILE *summary, int *recovered, double *as_of);

/* ---- a running or dead process's mapping, read from outside (top) ---- */
#include "profile/peek.h"

/* ---- traces: a binary trace converted (convert, run --trace) ---- */
#include "trace/convert.h"
#include "trace/format.h"

/* ---- what `taskscope run` reads of the program's configuration: the
 * outputs and trace it asked for (TASKSCOPE_*) ---- */
#include "core/config.h"
/* ---- the filter file `run --filter` checks before it starts the program
 * (tscope__filter_parse) ---- */
#include "core/filter.h"

/* ---- what `taskscope model` needs of the fit: the quality line ---- */
#include "model/fit.h"

#endif
