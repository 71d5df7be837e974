/* options.c - the checks of options that several subcommands share (run,
 * report, diff), so that a bad value gets the same one-line message and
 * exit status 2 from each, before anything runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int one_of(const char *cmd, const char *opt, const char *v, const char *const *ok,
                  const char *expected)
{
    for (; *ok; ok++)
        if (strcmp(v, *ok) == 0)
            return 0;
    fprintf(stderr, "taskscope %s: %s %s: expected %s\n", cmd, opt, v, expected);
    return -1;
}

int tscope_cli_check_sort(const char *cmd, const char *v)
{
    /* excl and incl: the names before self and running */
    static const char *const ok[] = {"self", "running", "elapsed", "calls", "mean",
                                     "name", "excl",    "incl",    NULL};
    return one_of(cmd, "--sort", v, ok, "self, running, elapsed, calls, mean or name");
}

int tscope_cli_check_rows(const char *cmd, const char *v, long *rows)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < 0) {
        fprintf(stderr, "taskscope %s: --rows %s: expected a number >= 0\n", cmd, v);
        return -1;
    }
    if (rows)
        *rows = n;
    return 0;
}

int tscope_cli_check_word(const char *cmd, const char *opt, const char *v)
{
    static const char *const policy[] = {"none", "throttle", "optimize", "powercap", NULL};
    static const char *const full[] = {"wait", "drop", NULL};
    static const char *const mode[] = {"profile", "naive", NULL};
    if (strcmp(opt, "--policy") == 0)
        return one_of(cmd, opt, v, policy, "none, throttle, optimize or powercap");
    if (strcmp(opt, "--full-policy") == 0)
        return one_of(cmd, opt, v, full, "wait or drop");
    if (strcmp(opt, "--mode") == 0)
        return one_of(cmd, opt, v, mode, "profile or naive");
    return 0;
}

int tscope_cli_check_trace(const char *cmd, const char *v)
{
    static const char *const ok[] = {"1",        "on",  "binary", "chrome", "otf2", "paraver",
                                     "timeline", "all", "0",      "off",    NULL};
    char item[64];
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(n < 63 ? n : 63), p);
        if (one_of(cmd, "--trace", item, ok,
                   "a comma-separated list of chrome, otf2, paraver, timeline, all "
                   "(or on: the binary trace only)"))
            return -1;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}
