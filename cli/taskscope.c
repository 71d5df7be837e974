/* taskscope.c - entry point of the taskscope tool: dispatches subcommands. */
#include <stdio.h>
#include <string.h>

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
            "  convert TRACE --to FORMAT         a trace for other tools: Chrome/Perfetto,\n"
            "                                    OTF2, Paraver, a timeline picture\n"
            "  model [options] FILE...           performance models (Extra-P inputs or labelled\n"
            "                                    profiles); 'model compose' composes them\n"
            "  dashboard [options]               the live view of running processes in the\n"
            "                                    browser (TASKSCOPE_LIVE)\n"
            "  version                           print the version\n"
            "\n"
            "'taskscope <command> --help' describes each command.\n");
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
    if (strcmp(cmd, "convert") == 0)
        return tscope_cli_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "model") == 0)
        return tscope_cli_model(argc - 1, argv + 1);
    if (strcmp(cmd, "dashboard") == 0)
        return tscope_cli_dashboard(argc - 1, argv + 1);
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
