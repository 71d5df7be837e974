/* optparse.c - one parser for the options of every subcommand.
 *
 * A subcommand describes its options in a table (optparse.h): name, letter,
 * whether it takes a value and what the value may be (a check function, or
 * the TASKSCOPE_* variable the option sets, whose own parser decides:
 * core/config.c).  tscope_cli_getopt runs getopt_long over the table, with
 * getopt's own messages off, and answers each mistake with one line on
 * stderr, naming the subcommand, then the caller exits with status 2:
 *   taskscope run: --rows -3: expected a number >= 0
 *   taskscope run: --rows needs a value: expected a number >= 0
 *   taskscope run: unrecognized option '--trcae' (did you mean --trace?);
 *     taskscope run --help lists them
 * The hint is the closest name by edit distance (core/closest.c), given
 * only when it is close.  --list-options prints the table, one option a
 * line, so that tests/test_cli_options.sh tries a bad value for every
 * option of every subcommand, a new one included. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offline/offline.h" /* core/config.h: tscope__closest, tscope__config_check */
#include "optparse.h"

#define OPTIONS_MAX 64

int tscope_cli_count(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "a number >= 0");
    char *end;
    long n = v ? strtol(v, &end, 10) : -1;
    return v && end != v && !*end && n >= 0 ? 0 : -1;
}

/* What the variable var takes, its "a, b, c" said as "a, b or c". */
static int check_var(const char *var, const char *v, char *expected, size_t len)
{
    const char *accepted;
    int rc = tscope__config_check(var, v ? v : "", &accepted);
    const char *last = strstr(accepted, ", "), *at;
    while (last && (at = strstr(last + 2, ", ")))
        last = at;
    if (last && !strchr(last + 2, ' ') && !strchr(accepted, '('))
        snprintf(expected, len, "%.*s or %s", (int)(last - accepted), accepted, last + 2);
    else
        snprintf(expected, len, "%s", accepted);
    return v && rc == 0 ? 0 : -1;
}

static int check(const struct tscope_cli_option *o, const char *v, char *expected, size_t len)
{
    if (o->check)
        return o->check(v, expected, len);
    if (o->var)
        return check_var(o->var, v, expected, len);
    snprintf(expected, len, "a value");
    return v ? 0 : -1;
}

/* The option as messages name it: --NAME, or -K when it has no name. */
static void said(const struct tscope_cli_option *o, char *buf, size_t len)
{
    if (o->name)
        snprintf(buf, len, "--%s", o->name);
    else
        snprintf(buf, len, "-%c", o->key);
}

/* A value as a message shows it: its ends only when long, in quotes when
 * it has no letter or digit (",,", ""). */
static void shown(const char *v, char *buf, size_t len)
{
    size_t n = strlen(v);
    int word = 0;
    for (const char *p = v; *p; p++)
        word |= isalnum((unsigned char)*p) != 0;
    if (n > 60)
        snprintf(buf, len, "\"%.24s...%s\" (%zu bytes)", v, v + n - 24, n);
    else if (!word)
        snprintf(buf, len, "'%s'", v);
    else
        snprintf(buf, len, "%s", v);
}

static void list(const struct tscope_cli_option *opts)
{
    for (const struct tscope_cli_option *o = opts; o->name || o->key; o++) {
        char name[64];
        said(o, name, sizeof name);
        printf("%s %s %s\n", name, o->arg == TSCOPE_CLI_FLAG ? "-" : o->value,
               o->arg == TSCOPE_CLI_FLAG       ? "flag"
               : !o->check && !o->var          ? "any"
               : o->arg == TSCOPE_CLI_OPTIONAL ? "optional"
               : o->secret                     ? "secret"
                                               : "checked");
    }
}

/* The line for an unrecognized argument arg: the closest option named
 * when one is close, or those it abbreviates when several. */
static void unrecognized(const char *cmd, const char *arg, const struct tscope_cli_option *opts)
{
    const char *names[OPTIONS_MAX];
    size_t n = 0;
    for (const struct tscope_cli_option *o = opts; (o->name || o->key) && n < OPTIONS_MAX; o++)
        names[n++] = o->name;
    char hint[256] = "";
    if (arg[0] == '-' && arg[1] == '-') {
        const char *word = arg + 2;
        size_t len = strcspn(word, "=");
        size_t prefixed = 0;
        for (size_t i = 0; i < n; i++)
            if (names[i] && strncmp(names[i], word, len) == 0)
                snprintf(hint + strlen(hint), sizeof hint - strlen(hint), "%s--%s",
                         prefixed++ ? ", " : " (ambiguous: ", names[i]);
        if (prefixed > 1)
            snprintf(hint + strlen(hint), sizeof hint - strlen(hint), ")");
        else {
            const char *close = tscope__closest(word, len, names, n);
            if (close)
                snprintf(hint, sizeof hint, " (did you mean --%s?)", close);
            else
                hint[0] = 0;
        }
    }
    fprintf(stderr, "taskscope %s: unrecognized option '%s'%s; taskscope %s --help lists them\n",
            cmd, arg, hint, cmd);
}

int tscope_cli_getopt(const char *cmd, int argc, char **argv, const struct tscope_cli_option *opts,
                      int flags)
{
    struct option longs[OPTIONS_MAX + 2];
    char shorts[2 * OPTIONS_MAX + 4];
    size_t nl = 0, ns = 0;
    if (flags & TSCOPE_CLI_STOP_AT_OPERAND)
        shorts[ns++] = '+';
    shorts[ns++] = ':'; /* a missing value: ':', not '?' */
    for (const struct tscope_cli_option *o = opts; (o->name || o->key) && nl < OPTIONS_MAX; o++) {
        int has = o->arg == TSCOPE_CLI_FLAG    ? no_argument
                  : o->arg == TSCOPE_CLI_VALUE ? required_argument
                                               : optional_argument;
        if (o->name)
            longs[nl++] = (struct option){o->name, has, NULL, o->key};
        if (o->letter) {
            shorts[ns++] = (char)o->key;
            if (has == required_argument)
                shorts[ns++] = ':';
        }
    }
    longs[nl++] = (struct option){"list-options", no_argument, NULL, TSCOPE_CLI_LISTED};
    longs[nl] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = 0;

    opterr = 0;
    int c = getopt_long(argc, argv, shorts, longs, NULL);
    if (c == -1)
        return -1;
    if (c == TSCOPE_CLI_LISTED) {
        list(opts);
        return TSCOPE_CLI_LISTED;
    }
    const char *arg = argv[optind - 1];
    int as_long = arg[0] == '-' && arg[1] == '-';
    if (c == '?' && !(optopt && as_long && strchr(arg, '='))) {
        if (optopt) /* (getopt names a short one by optopt alone) */
            fprintf(stderr,
                    "taskscope %s: unrecognized option '-%c'; taskscope %s --help lists them\n",
                    cmd, optopt, cmd);
        else
            unrecognized(cmd, arg, opts);
        return TSCOPE_CLI_BAD;
    }
    const struct tscope_cli_option *o = opts;
    for (; o->name || o->key; o++)
        if (o->key == (c == ':' || c == '?' ? optopt : c))
            break;
    char name[80], expected[700], value[128];
    said(o, name, sizeof name);
    if (c == '?') { /* a value given to a flag: --tree=x */
        fprintf(stderr, "taskscope %s: %s takes no value ('%s')\n", cmd, name, arg);
        return TSCOPE_CLI_BAD;
    }
    if (c == ':') {
        check(o, NULL, expected, sizeof expected);
        fprintf(stderr, "taskscope %s: %s needs a value: expected %s\n", cmd, name, expected);
        return TSCOPE_CLI_BAD;
    }
    if (o->arg == TSCOPE_CLI_FLAG || !optarg || check(o, optarg, expected, sizeof expected) == 0)
        return c;
    if (o->secret)
        fprintf(stderr, "taskscope %s: %s: expected %s\n", cmd, name, expected);
    else {
        shown(optarg, value, sizeof value);
        fprintf(stderr, "taskscope %s: %s%s%s: expected %s\n", cmd, name,
                o->arg == TSCOPE_CLI_OPTIONAL ? "=" : " ", value, expected);
    }
    return TSCOPE_CLI_BAD;
}
