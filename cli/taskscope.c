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
            "  convert TRACE|PROFILE --to FORMAT a trace for other tools (Chrome/Perfetto, OTF2,\n"
            "                                    Paraver, ...), or a profile's task tree (TAU,\n"
            "                                    Hatchet, folded stacks, ...): 'taskscope\n"
            "                                    formats' lists the formats\n"
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

static int version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("taskscope %s\n", tscope_version_string());
    return 0;
}

static int help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage(stdout);
    return 0;
}

/* The commands, as typed; dashboard's runs another executable. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", tscope_cli_run},
    {"report", tscope_cli_report},
    {"diff", tscope_cli_diff},
    {"merge", tscope_cli_merge},
    {"top", tscope_cli_top},
    {"recover", tscope_cli_recover_cmd},
    {"convert", tscope_cli_convert},
    {"model", tscope_cli_model},
    {"formats", tscope_cli_formats},
    {"dashboard", NULL},
    {"version", version},
    {"--version", version},
    {"help", help},
    {"--help", help},
    {"-h", help},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    /* the pictures merge, convert and report's global view write scripts
     * for, in the format the run's were (TASKSCOPE_PICTURES; a bad value is
     * the run's to report) */
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    tscope__pictures_use(cfg.pictures);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        if (!commands[i].run)
            return run_dashboard(argv + 1);
        return commands[i].run(argc - 1, argv + 1);
    }
    const char *names[NCOMMANDS];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name[0] == '-' ? NULL : commands[i].name;
    const char *close = tscope__closest(cmd, strlen(cmd), names, NCOMMANDS);
    if (close)
        fprintf(stderr,
                "taskscope: unknown command '%s' (did you mean %s?); taskscope --help lists "
                "them\n",
                cmd, close);
    else
        fprintf(stderr, "taskscope: unknown command '%s'; taskscope --help lists them\n", cmd);
    return 2;
}
