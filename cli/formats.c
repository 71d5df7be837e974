/* formats.c - `taskscope formats`: the output and trace formats this
 * taskscope has (the list, core/formats.h, with each format's
 * descriptor), as the two Markdown tables that docs/output-formats.md and
 * docs/tracing.md hold, so that tests/test_formats.sh can check the docs,
 * `run` and `convert` against the list. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "offline/offline.h"

/* `a`, `b`, `c`: a format's words. */
static void words(FILE *f, const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        fprintf(f, "%s`%.*s`", p == list ? "" : ", ", (int)n, p);
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
}

static void output_table(FILE *f)
{
    fprintf(f, "| words | files | in `all` | `convert` from profile.json | what |\n"
               "|---|---|---|---|---|\n");
    for (unsigned i = 0; i < tscope__noutputs; i++) {
        const struct tscope__output_format *d = tscope__outputs[i].format;
        fprintf(f, "| ");
        words(f, tscope__outputs[i].id->words);
        fprintf(f, " |");
        for (const struct tscope__output_file *o = d->files; o->name; o++)
            fprintf(f, "%s`%s`%s", o == d->files ? " " : ", ", o->name,
                    o->sampled ? " (with the sampler)" : "");
        fprintf(f, " | %s | %s | %s |\n",
                tscope__outputs[i].id->flags & TSCOPE__FORMAT_IN_ALL ? "yes" : "no",
                d->flags & TSCOPE__OUTPUT_FROM_PROFILE ? "yes" : "no", d->help);
    }
}

static void trace_table(FILE *f)
{
    fprintf(f, "| words | written | with it | an MPI job's run folder | what |\n"
               "|---|---|---|---|---|\n");
    for (unsigned i = 0; i < tscope__ntraces; i++) {
        const struct tscope__trace_format *d = tscope__traces[i].desc;
        fprintf(f, "| ");
        words(f, tscope__traces[i].id->words);
        fprintf(f, " | `%s`", d->file);
        if (d->file_gz)
            fprintf(f, " (big traces: `%s`)", d->file_gz);
        fprintf(f, " | %s | %s | %s |\n", d->also[0] ? d->also : "-",
                d->write_job ? "one output of all ranks" : "rank by rank", d->help);
    }
}

int tscope_cli_formats(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    int c;
    optind = 1;
    while ((c = tscope_cli_getopt("formats", argc, argv, opts, 0)) != -1) {
        if (c != 'h')
            return TSCOPE_CLI_STATUS(c);
        printf("usage: taskscope formats\n"
               "\n"
               "Prints the output formats (run --outputs, TASKSCOPE_OUTPUTS) and the trace\n"
               "formats (run --trace, TASKSCOPE_TRACE, convert --to) of this taskscope, with\n"
               "the words that name them, as the tables of docs/output-formats.md and\n"
               "docs/tracing.md.\n");
        return 0;
    }
    if (optind < argc) {
        fprintf(stderr, "taskscope formats: no arguments expected ('%s')\n", argv[optind]);
        return 2;
    }
    printf("output formats (run --outputs, TASKSCOPE_OUTPUTS):\n\n");
    output_table(stdout);
    printf("\ntrace formats (run --trace, TASKSCOPE_TRACE, convert --to):\n\n");
    trace_table(stdout);
    return 0;
}
