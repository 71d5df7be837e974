/* options.c - what the values of options that several subcommands share
 * may be (the checks of their option tables, optparse.h), and the help's
 * line wrapping.  The words of --outputs and --trace are the
 * configuration's, which come from the list of formats (core/formats.h):
 * one definition of what a value may be. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "offline/offline.h"

int tscope_cli_sort_key(const char *v, char *expected, size_t len)
{
    /* excl and incl: the names before self and running */
    static const char *const ok[] = {"self", "running", "elapsed", "calls", "mean",
                                     "name", "excl",    "incl",    NULL};
    snprintf(expected, len, "self, running, elapsed, calls, mean or name");
    for (const char *const *k = ok; v && *k; k++)
        if (strcmp(v, *k) == 0)
            return 0;
    return -1;
}

/* Each comma-separated word of v, checked by word_ok; 0, or -1 when one is
 * not a word (the first such one into bad). */
static int check_words(const char *v, int (*word_ok)(const char *w, size_t n), char *bad,
                       size_t len)
{
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        while (n && *p == ' ') {
            p++;
            n--;
        }
        size_t wl = n;
        while (wl && p[wl - 1] == ' ')
            wl--;
        if (wl && !word_ok(p, wl)) {
            snprintf(bad, len, "%.*s", (int)wl, p);
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

int tscope_cli_trace_list(const char *v, char *expected, size_t len)
{
    char names[512], bad[64] = "";
    tscope_cli_format_names(names, sizeof names, tscope__trace_ids, tscope__ntrace_ids);
    int rc = v ? check_words(v, trace_word, bad, sizeof bad) : -1;
    snprintf(expected, len,
             "a comma-separated list of %s, all (or on: the binary trace only)%s%s%s", names,
             bad[0] ? "; '" : "", bad, bad[0] ? "' is none" : "");
    return rc;
}

int tscope_cli_outputs_list(const char *v, char *expected, size_t len)
{
    char names[512], bad[64] = "";
    tscope_cli_format_names(names, sizeof names, tscope__output_ids, tscope__noutput_ids);
    const char *accepted;
    /* every word one, and at least one word (not "" or ",,") */
    int rc = !v || check_words(v, output_word, bad, sizeof bad) ||
                     tscope__config_check("TASKSCOPE_OUTPUTS", v, &accepted) != 0
                 ? -1
                 : 0;
    snprintf(expected, len, "a comma-separated list of %s, tasks, all or none%s%s%s", names,
             bad[0] ? "; '" : "", bad, bad[0] ? "' is none" : "");
    return rc;
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
