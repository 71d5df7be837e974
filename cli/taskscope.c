/* taskscope.c - entry point of the taskscope tool: dispatches subcommands. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "taskscope/taskscope.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: taskscope <command> [options]\n"
            "\n"
            "commands:\n"
            "  run [options] -- PROGRAM [ARGS]   run a program with measurement configured,\n"
            "                                    then say where the outputs went\n"
            "  report [options] FOLDER|FILE      print the summary of a saved profile\n"
            "  diff [options] A B                compare two saved profiles per task type\n"
            "  merge [options] FOLDER...         the global view of an MPI job from its ranks'\n"
            "                                    folders\n"
            "  top PID|FOLDER                    a running program's profile, read from outside,\n"
            "                                    refreshed every second\n"
            "  recover [FOLDER...]               the outputs of programs that died with no one to\n"
            "                                    write them (their launcher was killed too)\n"
            "  convert TRACE --to FORMAT         a trace (or a profile's task tree) for other\n"
            "                                    tools ('taskscope formats' lists the formats)\n"
            "  model [options] FILE...           performance models (Extra-P inputs or labelled\n"
            "                                    profiles); 'model compose' composes them\n"
            "  dashboard [options]               the live view of running processes in the\n"
            "                                    browser (TASKSCOPE_LIVE)\n"
            "  formats                           the output and trace formats, with their words\n"
            "  version                           print the version\n"
            "\n"
            "'taskscope <command> --help' describes each command.\n");
}

/* `taskscope dashboard ARGS`: executes taskscope-dashboard ARGS, found next to
 * this executable (the build tree), else in the installed libexec folder.
 * Returns only when it cannot be executed: 1, said on stderr. */
static int run_dashboard(char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    static const char *const dirs[] = {"", "/" TSCOPE_DASHBOARD_REL};
    int err = ENOENT;
    for (size_t i = 0; slash && i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(path, sizeof path, "%s%s/taskscope-dashboard", self, dirs[i]);
        argv[0] = path;
        execv(path, argv);
        if (errno != ENOENT)
            err = errno;
    }
    fprintf(stderr,
            "taskscope dashboard: cannot run taskscope-dashboard (next to taskscope or in its "
            "%s): %s\n",
            TSCOPE_DASHBOARD_REL, strerror(err));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0)
        return tscope_cli_run(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return tscope_cli_report(argc - 1, argv + 1);
    if (strcmp(cmd, "diff") == 0)
        return tscope_cli_diff(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0)
        return tscope_cli_merge(argc - 1, argv + 1);
    if (strcmp(cmd, "top") == 0)
        return tscope_cli_top(argc - 1, argv + 1);
    if (strcmp(cmd, "recover") == 0)
        return tscope_cli_recover_cmd(argc - 1, argv + 1);
    if (strcmp(cmd, "convert") == 0)
        return tscope_cli_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "model") == 0)
        return tscope_cli_model(argc - 1, argv + 1);
    if (strcmp(cmd, "formats") == 0)
        return tscope_cli_formats(argc - 1, argv + 1);
    if (strcmp(cmd, "dashboard") == 0)
        return run_dashboard(argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("taskscope %s\n", tscope_version_string());
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "taskscope: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
