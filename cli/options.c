/* options.c - the checks of options that several subcommands share (run,
 * report, diff), so that a bad value gets the same one-line message and
 * exit status 2 from each, before anything runs.  An option that sets a
 * TASKSCOPE_ variable is checked by that variable's own parser
 * (core/config.c), and the words of --outputs and --trace are the
 * configuration's, which come from the list of formats (core/formats.h):
 * one definition of what a value may be. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "offline/offline.h"

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

int tscope_cli_check_var(const char *cmd, const char *opt, const char *var, const char *v)
{
    const char *accepted;
    int rc = tscope__config_check(var, v, &accepted);
    if (rc == 0)
        return 0;
    /* "a, b, c" said as "a, b or c" */
    const char *last = strstr(accepted, ", "), *at;
    while (last && (at = strstr(last + 2, ", ")))
        last = at;
    if (last && !strchr(last + 2, ' ') && !strchr(accepted, '('))
        fprintf(stderr, "taskscope %s: %s %s: expected %.*s or %s\n", cmd, opt, v,
                (int)(last - accepted), accepted, last + 2);
    else
        fprintf(stderr, "taskscope %s: %s %s: expected %s\n", cmd, opt, v, accepted);
    return -1;
}

/* Each comma-separated word of v, checked by word_ok; 0, or -1 after one
 * line naming the first bad one. */
static int check_words(const char *cmd, const char *opt, const char *v,
                       int (*word_ok)(const char *w, size_t n), const char *expected)
{
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        while (n && *p == ' ') {
            p++;
            n--;
        }
        size_t len = n;
        while (len && p[len - 1] == ' ')
            len--;
        if (len && !word_ok(p, len)) {
            fprintf(stderr, "taskscope %s: %s %.*s: expected %s\n", cmd, opt, (int)len, p,
                    expected);
            return -1;
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

static int trace_word(const char *w, size_t n)
{
    int on = 0, formats = 0;
    return tscope__config_trace_word(w, n, &on, &formats) == 0;
}

static int output_word(const char *w, size_t n)
{
    int outputs = 0;
    return tscope__config_output_word(w, n, &outputs) == 0;
}

void tscope_cli_format_names(char *buf, size_t len, const struct tscope__format_id *ids, unsigned n)
{
    buf[0] = 0;
    for (unsigned i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? ", " : "", ids[i].name);
}

int tscope_cli_check_trace(const char *cmd, const char *v)
{
    char names[512], expected[600];
    tscope_cli_format_names(names, sizeof names, tscope__trace_ids, tscope__ntrace_ids);
    snprintf(expected, sizeof expected,
             "a comma-separated list of %s, all (or on: the binary trace only)", names);
    return check_words(cmd, "--trace", v, trace_word, expected);
}

int tscope_cli_check_outputs(const char *cmd, const char *v)
{
    char names[512], expected[600];
    tscope_cli_format_names(names, sizeof names, tscope__output_ids, tscope__noutput_ids);
    snprintf(expected, sizeof expected, "a comma-separated list of %s, tasks, all or none", names);
    if (check_words(cmd, "--outputs", v, output_word, expected))
        return -1;
    const char *accepted;
    if (tscope__config_check("TASKSCOPE_OUTPUTS", v, &accepted) == 0)
        return 0;
    /* every word is one, but there is none: "" or ",," */
    fprintf(stderr, "taskscope %s: --outputs '%s': expected %s\n", cmd, v, expected);
    return -1;
}

void tscope_cli_help_wrap(FILE *f, int indent, int col, const char *text)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, " ");
        if (col > indent && col + 1 + (int)n > 80) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)n, p);
        col += (int)n;
        p += n;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}
