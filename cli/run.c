/* run.c - `taskscope run`, the launcher: configures measurement through the
 * TASKSCOPE_* environment, prepares a fresh output folder, puts the right
 * adapter into the program (launch.c: OMPT for OpenMP, the pthread wrapper,
 * nothing for programs that call taskscope themselves), runs it with its
 * stdin, stdout, stderr and exit status untouched, and says where the
 * outputs went.
 *
 * As a parent it behaves like a shell running a command: SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT sent to it are passed on to the program (those from
 * the terminal reach the program directly, being sent to the whole
 * foreground process group), it waits for the program and exits with its
 * status, 128+N when a signal N ended it.
 *
 * The folder is the program's alone: a process it starts (a child it forks
 * and executes, the program a script runs) writes into a folder of its own
 * beside it, RUN.PROG.PID, listed here after the run's outputs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"
#include "offline/offline.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: taskscope run [options] -- PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM with measurement on, prints the summary table when it finishes and\n"
            "says where the outputs went.  An unmodified program is measured through an\n"
            "adapter chosen by what it loads: OpenMP on libomp (or GCC's libgomp, run on\n"
            "libomp) through the OMPT tool, anything else through the pthread wrapper;\n"
            "a program linked with libtaskscope reports itself.\n"
            "\n"
            "  --ompt                use the OMPT tool (OMP_TOOL_LIBRARIES)\n"
            "  --pthread             use the pthread wrapper (LD_PRELOAD)\n"
            "  --no-preload          no adapter: the program calls tscope_init itself\n"
            "  --pthread-waits       with the pthread wrapper, time mutex and condition waits\n"
            "                        as tasks (TASKSCOPE_PTHREAD_WAITS=1)\n"
            "  --tools LIST          tool plugins, colon-separated (TASKSCOPE_TOOLS)\n"
            "  --sample-ms N         sampler period in ms, 0 off (TASKSCOPE_SAMPLE_MS)\n"
            "  --filter FILE         measure only the task types the filter file keeps\n"
            "                        (TASKSCOPE_FILTER_FILE, docs/filter.md)\n"
            "  --cpu-time            each task type's CPU time (the thread CPU clock) beside\n"
            "                        its wall time in every output (TASKSCOPE_CPU_TIME=1)\n"
            "\n"
            "options (each sets the TASKSCOPE_* variable named; see docs/configuration.md):\n"
            "  -o, --output DIR      output folder (TASKSCOPE_OUTPUT_DIR, default taskscope-out;\n"
            "                        an existing folder is never reused: DIR.1, DIR.2, ...)\n");
    /* the formats' words: the list's (core/formats.h) */
    char names[512];
    tscope_cli_format_names(names, sizeof names, tscope__output_ids, tscope__noutput_ids);
    char text[800];
    snprintf(text, sizeof text,
             "the files, comma-separated: %s, tasks (the instance graph in profile.json), all "
             "or none (TASKSCOPE_OUTPUTS, docs/output-formats.md)",
             names);
    fprintf(f, "      --outputs LIST    ");
    tscope_cli_help_wrap(f, 24, 24, text);
    fprintf(f, "      --mode MODE       profile or naive (TASKSCOPE_MODE)\n"
               "      --policy NAME     runtime adaptation: none, throttle, optimize or powercap\n"
               "                        (TASKSCOPE_POLICY, docs/policy.md)\n"
               "      --full-policy P   when a thread's ring is full: wait or drop\n"
               "                        (TASKSCOPE_FULL_POLICY)\n"
               "      --sort KEY        summary order: self, running, elapsed, calls, mean, name\n"
               "      --rows N          summary rows, 0 for all (TASKSCOPE_SUMMARY_ROWS)\n"
               "      --no-summary      do not print the summary (TASKSCOPE_SUMMARY=0)\n");
    tscope_cli_format_names(names, sizeof names, tscope__trace_ids, tscope__ntrace_ids);
    snprintf(text, sizeof text,
             "trace every event into trace.tsct and, when the program ends, convert it: %s or "
             "all, comma-separated (default chrome; on: the binary trace only; TASKSCOPE_TRACE, "
             "docs/tracing.md)",
             names);
    fprintf(f, "      --trace[=LIST]    ");
    tscope_cli_help_wrap(f, 24, 24, text);
    fprintf(f, "      --live[=VALUE]    stream snapshots to 'taskscope dashboard': VALUE is the\n"
               "                        HOST:PORT/SECRET it prints (TASKSCOPE_LIVE; plain --live\n"
               "                        takes TASKSCOPE_LIVE's value; docs/dashboard.md)\n"
               "  -q, --quiet           no summary and no notes: only warnings, errors and what\n"
               "                        ended the program (TASKSCOPE_QUIET=1)\n"
               "      --off             run with measurement off (TASKSCOPE_ENABLE=0)\n"
               "  -h, --help            this text\n"
               "\n"
               "examples:\n"
               "  taskscope run -o app-out -- ./app\n"
               "      measure ./app: the summary when it ends, the outputs in app-out/\n"
               "  taskscope run -o app-traced --trace --sort calls --rows 5 -- ./app\n"
               "      also trace every event (app-traced/trace.json for Perfetto); 5 rows\n"
               "  taskscope run -q --outputs json,folded --sample-ms 0 -o app-quiet -- ./app\n"
               "      only profile.json and the folded stacks, no sampler, nothing said\n"
               "\n"
               "exit status: the program's (128+N when signal N ended it); 127 the program was\n"
               "not found, 126 it is not executable, 2 a bad option, 1 taskscope itself failed\n");
}

/* The binary trace the program wrote (TASKSCOPE_TRACE), converted to the
 * formats the variable names; one line each. */
static void convert_traces(const char *outdir, int quiet)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/trace.tsct", outdir);
    if (access(path, R_OK) != 0)
        return;
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL); /* the program said what was wrong */
    for (unsigned i = 0; i < tscope__ntraces; i++)
        if (cfg.trace_formats & tscope__traces[i].id->bit)
            tscope_cli_trace_convert("run", path, tscope__traces[i].format, NULL, quiet);
}

/* The files in dir, in name order (hidden ones aside). */
static void list_outputs(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.')
            fprintf(stderr, " %s", names[i]->d_name);
        free(names[i]);
    }
    if (n >= 0)
        free(names);
}

/* A value in quotes for a message, its start only when it is long:
 * "abc...xyz" (5000 bytes). */
static const char *show_value(const char *v, char *buf, size_t len)
{
    size_t n = strlen(v);
    if (n <= 60)
        snprintf(buf, len, "\"%s\"", v);
    else
        snprintf(buf, len, "\"%.24s...%s\" (%zu bytes)", v, v + n - 24, n);
    return buf;
}

/* The program's measured descendants (a child it forked or executed, a
 * script's program: each in a folder of its own, RUN.PROG.PID, beside the
 * run's; src/export/output.h): one line each, after the run's own.  The
 * pictures and traces of each that finished are made as the run's are; a
 * folder left empty (the process measured nothing) goes; one that died
 * without its outputs, or still runs, is said (never touched).  Returns
 * how many were said. */
static int say_descendants(const char *prog, const struct tscope__offline_descendant *d, size_t n,
                           int quiet)
{
    int said = 0;
    for (size_t i = 0; i < n; i++) {
        int running;
        long left = tscope__offline_left_behind(d[i].dir, &running);
        if (left && running)
            fprintf(stderr,
                    "taskscope: %s (pid %ld, under %s) still runs: its outputs will be in %s/\n",
                    d[i].program, d[i].pid, prog, d[i].dir);
        else if (left)
            fprintf(stderr,
                    "taskscope: %s (pid %ld, under %s) ended without writing its outputs: "
                    "taskscope recover %s rebuilds them\n",
                    d[i].program, d[i].pid, prog, d[i].dir);
        else if (rmdir(d[i].dir) == 0 || errno == ENOENT)
            continue; /* it measured nothing (or its folder is gone) */
        said++;
        if (left)
            continue;
        convert_traces(d[i].dir, quiet);
        tscope_cli_render(d[i].dir, quiet);
        if (quiet)
            continue;
        fprintf(stderr, "taskscope: outputs of %s (pid %ld, under %s) in %s/:", d[i].program,
                d[i].pid, prog, d[i].dir);
        list_outputs(d[i].dir);
        fputc('\n', stderr);
    }
    return said;
}

/* --live's value: TASKSCOPE_LIVE's, which 'taskscope dashboard' prints. */
static int live_value(const char *v, char *expected, size_t len)
{
    const char *accepted;
    snprintf(expected, len,
             "HOST:PORT/SECRET, the whole TASKSCOPE_LIVE value 'taskscope dashboard' prints");
    return v && tscope__config_check("TASKSCOPE_LIVE", v, &accepted) == 0 ? 0 : -1;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* The signals the launcher waits for: those it passes on, and SIGCHLD. */
static void waited_signals(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaddset(set, forwarded[i]);
    sigaddset(set, SIGCHLD);
}

/* Waits for the program, passing on each signal sent to taskscope by kill()
 * (si_code <= 0); one from the terminal (SI_KERNEL) has reached the program
 * already, being sent to the whole foreground process group.  The signals
 * are blocked (since before fork) and taken with sigwaitinfo, not by a
 * handler: nothing is lost between fork and here, and no handler runs in
 * the middle of waitpid. */
static int wait_program(pid_t pid, const sigset_t *set)
{
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return status;
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig > 0 && sig != SIGCHLD && si.si_code <= 0)
            kill(pid, sig);
    }
}

static void say_end(const char *prog, int status, int unfinished, int recovered, double as_of,
                    int wrote, int left)
{
    const char *lost = left ? "; what it measured stays (see above)" : "; what it measured is lost";
    if (recovered) {
        char how[96], when[64] = "";
        if (WIFSIGNALED(status))
            snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
        else
            snprintf(how, sizeof how, "exited (status %d) without finalizing measurement",
                     WEXITSTATUS(status));
        if (as_of >= 0)
            snprintf(when, sizeof when, " at %.3f s", as_of);
        fprintf(stderr,
                "taskscope: %s %s%s; its outputs were rebuilt from the crash journal, with every "
                "event it recorded\n",
                prog, how, when);
    } else if (WIFSIGNALED(status))
        fprintf(stderr, "taskscope: %s was killed by signal %d (%s)%s\n", prog, WTERMSIG(status),
                strsignal(WTERMSIG(status)),
                !unfinished ? ""
                : left      ? lost
                : wrote     ? "; what it measured is lost but for the outputs listed below"
                            : "; what it measured is lost (taskscope writes its outputs at exit)");
    else if (unfinished)
        fprintf(stderr,
                "taskscope: %s exited (status %d) without finalizing measurement (_exit() or "
                "an exit that skipped the atexit handlers)%s%s\n",
                prog, WEXITSTATUS(status), lost,
                wrote && !left ? " but for the outputs listed below" : "");
}

int tscope_cli_run(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"output", 'o', 1, TSCOPE_CLI_VALUE, "DIR", NULL, "TASKSCOPE_OUTPUT_DIR", 0},
        {"outputs", 'O', 0, TSCOPE_CLI_VALUE, "LIST", tscope_cli_outputs_list, NULL, 0},
        {"mode", 'm', 0, TSCOPE_CLI_VALUE, "MODE", NULL, "TASKSCOPE_MODE", 0},
        {"policy", 'p', 0, TSCOPE_CLI_VALUE, "NAME", NULL, "TASKSCOPE_POLICY", 0},
        {"full-policy", 'F', 0, TSCOPE_CLI_VALUE, "P", NULL, "TASKSCOPE_FULL_POLICY", 0},
        {"sort", 's', 0, TSCOPE_CLI_VALUE, "KEY", tscope_cli_sort_key, NULL, 0},
        {"rows", 'r', 0, TSCOPE_CLI_VALUE, "N", tscope_cli_count, NULL, 0},
        {"no-summary", 'n', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"off", 'x', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"ompt", 'P', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"pthread", 'T', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"no-preload", 'N', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"tools", 't', 0, TSCOPE_CLI_VALUE, "LIST", NULL, NULL, 0},
        {"sample-ms", 'S', 0, TSCOPE_CLI_VALUE, "N", NULL, "TASKSCOPE_SAMPLE_MS", 0},
        {"pthread-waits", 'W', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"filter", 'I', 0, TSCOPE_CLI_VALUE, "FILE", NULL, NULL, 0},
        {"cpu-time", 'C', 0, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"quiet", 'q', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"trace", 'R', 0, TSCOPE_CLI_OPTIONAL, "LIST", tscope_cli_trace_list, NULL, 0},
        {"live", 'L', 0, TSCOPE_CLI_OPTIONAL, "VALUE", live_value, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    int summary = 1, c, adapter = TSCOPE_ADAPT_AUTO;
    const char *dir = getenv("TASKSCOPE_OUTPUT_DIR");
    optind = 1;
    int quiet = 0;
    while ((c = tscope_cli_getopt("run", argc, argv, opts, TSCOPE_CLI_STOP_AT_OPERAND)) != -1) {
        switch (c) {
        case 'o':
            dir = optarg;
            break;
        case 'O':
            setenv("TASKSCOPE_OUTPUTS", optarg, 1);
            break;
        case 'm':
            setenv("TASKSCOPE_MODE", optarg, 1);
            break;
        case 'p':
            setenv("TASKSCOPE_POLICY", optarg, 1);
            break;
        case 'F':
            setenv("TASKSCOPE_FULL_POLICY", optarg, 1);
            break;
        case 's':
            setenv("TASKSCOPE_SUMMARY_SORT", optarg, 1);
            break;
        case 'r':
            setenv("TASKSCOPE_SUMMARY_ROWS", optarg, 1);
            break;
        case 'n':
            summary = 0;
            break;
        case 'q':
            quiet = 1;
            summary = 0;
            setenv("TASKSCOPE_QUIET", "1", 1);
            break;
        case 'x':
            setenv("TASKSCOPE_ENABLE", "0", 1);
            break;
        case 'P':
            adapter = TSCOPE_ADAPT_OMPT;
            break;
        case 'T':
            adapter = TSCOPE_ADAPT_PTHREAD;
            break;
        case 'N':
            adapter = TSCOPE_ADAPT_NONE;
            break;
        case 't':
            setenv("TASKSCOPE_TOOLS", optarg, 1);
            break;
        case 'S':
            setenv("TASKSCOPE_SAMPLE_MS", optarg, 1);
            break;
        case 'W':
            setenv("TASKSCOPE_PTHREAD_WAITS", "1", 1);
            break;
        case 'C':
            setenv("TASKSCOPE_CPU_TIME", "1", 1);
            break;
        case 'I': {
            /* read here, so that a mistake stops the run before it starts */
            struct tscope__filter *filter;
            char err[1024];
            if (tscope__filter_parse(optarg, &filter, err, sizeof err)) {
                fprintf(stderr, "taskscope run: --filter %s\n", err);
                return 2;
            }
            tscope__filter_free(filter);
            char *path = realpath(optarg, NULL); /* the program may change folder */
            setenv("TASKSCOPE_FILTER_FILE", path ? path : optarg, 1);
            free(path);
            break;
        }
        case 'R':
            setenv("TASKSCOPE_TRACE", optarg ? optarg : "chrome", 1);
            break;
        case 'L': { /* plain --live: the value TASKSCOPE_LIVE holds already */
            const char *to = optarg ? optarg : getenv("TASKSCOPE_LIVE");
            char expected[200];
            if (!to || !*to) {
                fprintf(stderr, "taskscope run: --live needs the value 'taskscope dashboard' "
                                "prints: --live=HOST:PORT/SECRET, or TASKSCOPE_LIVE set to it\n");
                return 2;
            }
            if (!optarg && live_value(to, expected, sizeof expected) != 0) {
                fprintf(stderr, "taskscope run: --live with TASKSCOPE_LIVE=%s: expected %s\n", to,
                        expected);
                return 2;
            }
            setenv("TASKSCOPE_LIVE", to, 1);
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "taskscope run: no program given\n");
        return 2;
    }
    /* a variable the library would refuse: as the library does, one
     * warning and the default (an option's bad value is refused above) */
    const char *accepted;
    if (dir && tscope__config_check("TASKSCOPE_OUTPUT_DIR", dir, &accepted) != 0) {
        char shown[96];
        fprintf(stderr,
                "taskscope: warning: TASKSCOPE_OUTPUT_DIR=%s is invalid (accepted: %s); using the "
                "default \"taskscope-out\"\n",
                show_value(dir, shown, sizeof shown), accepted);
        dir = NULL;
    }
    if (!dir)
        dir = "taskscope-out";
    const char *prog = argv[optind];
    const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
    if (tscope_mpi_launcher(prog) == TSCOPE_LAUNCHER_RANKS) {
        fprintf(stderr,
                "taskscope run: %s starts the ranks: put taskscope run after it, so that "
                "every rank is measured (%s -np 4 taskscope run [OPTIONS] -- PROGRAM)\n",
                base, base);
        return 2;
    }
    /* a rank of an MPI job: its folder RUN/rank-N, the run folder shared */
    int rank = 0, nranks = 1;
    tscope_rank_from_env(&rank, &nranks);
    if (nranks > 1 && rank != 0) { /* rank 0 speaks for the job; errors still show */
        summary = 0;
        quiet = 1;
        setenv("TASKSCOPE_QUIET", "1", 1);
    }
    /* a TASKSCOPE_* variable nobody reads: said once, here, for the job
     * (rank 0), and not again by the program's library */
    if (rank == 0)
        tscope__config_check_environ(stderr);
    setenv("TASKSCOPE_ENV_CHECKED", "1", 1);
    struct tscope_launch launch;
    int err = tscope_launch_inspect(prog, &launch);
    if (err) { /* as a shell says it */
        fprintf(stderr, "taskscope run: %s: %s\n", prog,
                err == ENOENT ? "command not found" : "permission denied (not executable)");
        return err == ENOENT ? 127 : 126;
    }
    char outdir[1100], rundir[1100];
    if (tscope__output_make_rank_dir(dir, rank, nranks, outdir, sizeof outdir, rundir,
                                     sizeof rundir)) {
        fprintf(stderr, "taskscope run: cannot create output folder %s: %s\n", dir,
                strerror(errno));
        return 1;
    }
    if (quiet)
        ; /* where the outputs went is not said either */
    else if (nranks > 1 && rank == 0 && strcmp(rundir, dir) != 0)
        fprintf(stderr, "taskscope: %s is another run's; writing to %s instead\n", dir, rundir);
    else if (nranks <= 1 && strcmp(outdir, dir) != 0)
        fprintf(stderr, "taskscope: %s already exists; writing to %s instead\n", dir, outdir);
    if (nranks > 1)
        setenv("TASKSCOPE_RUN_DIR", rundir, 1);
    setenv("TASKSCOPE_OUTPUT_DIR", outdir, 1);
    setenv("TASKSCOPE_OUTPUT_DIR_PREPARED", outdir, 1);
    /* the folder is the program's, which this process is the parent of
     * (an exec keeps it); a descendant takes its own (src/export/output.h) */
    char self[32];
    snprintf(self, sizeof self, "%ld", (long)getpid());
    setenv("TASKSCOPE_LAUNCHER_PID", self, 1);
    setenv("TASKSCOPE_SUMMARY", summary ? "1" : "0", 1);
    char tmpdir[PATH_MAX];
    tscope_launch_prepare(&launch, adapter, prog, tmpdir, sizeof tmpdir, quiet);
    /* gnuplot loads while the program runs, then draws all the pictures
     * (render.c); only when the pictures' scripts will be written */
    struct tscope_cli_renderer renderer = {-1, -1};
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL); /* the program says what is wrong */
    int drawn = 0;                   /* a format selected writes gnuplot scripts */
    for (unsigned i = 0; i < tscope__noutputs; i++)
        drawn |= (cfg.outputs & tscope__outputs[i].id->bit) &&
                 (tscope__outputs[i].format->flags & TSCOPE__OUTPUT_DRAWN);
    if (cfg.enable && drawn)
        tscope_cli_render_start(&renderer, outdir);

    /* blocked from before fork: a signal that comes before the child's
     * pid is known waits, and is then passed on (wait_program) */
    sigset_t waited, old_mask;
    waited_signals(&waited);
    sigprocmask(SIG_BLOCK, &waited, &old_mask);
    /* posix_spawn (a vfork): nothing of taskscope's memory is copied */
    posix_spawnattr_t attr;
    pid_t pid = -1;
    err = posix_spawnattr_init(&attr);
    if (!err && !(err = posix_spawnattr_setsigmask(&attr, &old_mask)) &&
        !(err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK)))
        err = posix_spawn(&pid, launch.path, NULL, &attr, argv + optind, environ);
    posix_spawnattr_destroy(&attr);
    int status = 127 << 8; /* as a shell says a program it cannot run: status 127 */
    if (err) {
        fprintf(stderr, "taskscope run: cannot run %s: %s\n", argv[optind], strerror(err));
        pid = 0;
    } else {
        /* what killed runs left, once their launcher died too: looked for
         * while the program starts (only /dev/shm is read) */
        if (!quiet)
            tscope_cli_report_stale();
        status = wait_program(pid, &waited);
    }
    uint64_t died_ns = tscope__offline_mono_ns();
    /* a Ctrl-C that came with the program's end is the program's: taken
     * here, it does not end taskscope before it reports */
    struct timespec now = {0, 0};
    while (sigtimedwait(&waited, NULL, &now) > 0)
        ;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    tscope_launch_cleanup(tmpdir);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    int recovered;
    double as_of;
    /* read before the markers go (their records are among them) */
    struct tscope__offline_descendant *desc;
    size_t ndesc = tscope__offline_descendants(outdir, &desc);
    int unfinished =
        tscope__offline_take_markers(outdir, pid, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                                     died_ns, stderr, &recovered, &as_of);
    int wrote = rmdir(outdir) != 0; /* only succeeds when empty */
    int still;
    say_end(prog, status, unfinished, recovered, as_of, wrote,
            tscope__offline_left_behind(outdir, &still) != 0);
    int named = -1; /* the descendants: not said yet */
    if (!wrote && !unfinished && !WIFSIGNALED(status) && code != 127 &&
        (named = say_descendants(base, desc, ndesc, quiet)) > 0) {
        /* a script that runs the measured program: where its outputs went is said */
    } else if (!wrote && !unfinished && !WIFSIGNALED(status) && code != 127) {
        /* what the program read (cfg, the same variables): nothing asked
         * for, or nothing measured */
        if (quiet && (!cfg.enable || !cfg.profiler || (!cfg.outputs && !cfg.trace)))
            ; /* nothing was asked for: nothing to say */
        else if (!cfg.enable)
            fprintf(stderr, "taskscope: no outputs written: measurement is off "
                            "(TASKSCOPE_ENABLE=0)\n");
        else if (!cfg.profiler)
            fprintf(stderr, "taskscope: no outputs written: the profiler is off "
                            "(TASKSCOPE_PROFILER=0)\n");
        else if (!cfg.outputs && !cfg.trace)
            fprintf(stderr, "taskscope: no outputs written (TASKSCOPE_OUTPUTS=none)\n");
        else
            fprintf(stderr,
                    "taskscope: %s wrote no outputs: it never started measuring (no adapter "
                    "could be loaded into it, see above)\n",
                    prog);
    } else if (wrote) {
        tscope_cli_render_send(&renderer, outdir); /* drawn while the traces convert */
        convert_traces(outdir, quiet);
        if (renderer.pid >= 0)
            tscope_cli_render_finish(&renderer, outdir, quiet);
        else
            tscope_cli_render(outdir, quiet);
        if (nranks > 1 && rank == 0) { /* the job's global view, written by this rank */
            char global[1200];
            snprintf(global, sizeof global, "%s/global", rundir);
            tscope_cli_render(global, 1);
        }
        if (!quiet && nranks > 1) {
            fprintf(stderr,
                    "taskscope: outputs of %s's %d ranks in %s/: rank-N/ (each rank's), global/ "
                    "(the job's: summary.txt, profile.json, messages.svg, ranks.svg)\n"
                    "taskscope: re-render with: taskscope report %s/global; rebuild the global "
                    "view with: taskscope merge %s\n",
                    prog, nranks, rundir, rundir, rundir);
        } else if (!quiet) {
            fprintf(stderr, "taskscope: outputs of %s in %s/:", prog, outdir);
            list_outputs(outdir);
            char profile[1200];
            snprintf(profile, sizeof profile, "%s/profile.json", outdir);
            if (access(profile, F_OK) == 0) /* (a trace alone, of a killed run, has none) */
                fprintf(stderr, "\ntaskscope: re-render with: taskscope report %s\n", outdir);
            else
                fputc('\n', stderr);
        }
    }
    tscope_cli_render_cancel(&renderer); /* nothing was written: gnuplot is not needed */
    if (named < 0)
        say_descendants(base, desc, ndesc, quiet);
    free(desc);
    return code;
}
