/* convert.c - `taskscope convert`: a saved trace (trace.tsct, or the
 * folder holding it) into the formats other tools read (convert_trace.c
 * does one conversion and says what it wrote). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "trace/convert.h"
#include "trace/format.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: taskscope convert [options] TRACE|FOLDER --to FORMAT[,FORMAT...]\n"
               "\n"
               "Converts a trace written with TASKSCOPE_TRACE / taskscope run --trace (the file\n"
               "trace.tsct, or the output folder holding it) for other tools (docs/tracing.md):\n"
               "  chrome     Chrome/Perfetto trace JSON (trace.json; OUTPUT.gz: compressed)\n"
               "  otf2       an OTF2 archive for Vampir and otf2-print (trace-otf2/)\n"
               "  paraver    Paraver's trace.prv, trace.pcf and trace.row\n"
               "  timeline   a picture of the threads over time (timeline.csv, timeline.gp,\n"
               "             timeline.png when gnuplot is installed)\n"
               "\n"
               "options:\n"
               "  --to LIST       the formats, comma-separated (all: every one)\n"
               "  -o, --output P  where to write (one format only; chrome: - for standard\n"
               "                  output); default: next to the trace, with the names above\n"
               "  -q, --quiet     say nothing but errors\n"
               "  -h, --help      this text\n"
               "\n"
               "exit status: 0 converted, 1 the trace could not be read or an output not\n"
               "written, 2 a bad option\n");
}

/* The trace file of path (a folder: its trace.tsct) into buf; 0, or 1
 * after one line on stderr. */
static int trace_path(const char *path, char *buf, size_t len)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "taskscope convert: %s: no such file or folder\n", path);
        return 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        snprintf(buf, len, "%s/trace.tsct", path);
        if (stat(buf, &sb) != 0) {
            fprintf(stderr,
                    "taskscope convert: %s holds no trace.tsct (run with --trace or "
                    "TASKSCOPE_TRACE=1)\n",
                    path);
            return 1;
        }
        return 0;
    }
    snprintf(buf, len, "%s", path);
    return 0;
}

int tscope_cli_convert(int argc, char **argv)
{
    static const struct option opts[] = {{"to", required_argument, NULL, 't'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *to = NULL, *out = NULL;
    int quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            to = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "taskscope convert: %s\n",
                optind >= argc ? "no trace given" : "one trace at a time");
        usage(stderr);
        return 2;
    }
    if (!to) {
        fprintf(stderr, "taskscope convert: --to FORMAT missing (chrome, otf2, paraver, "
                        "timeline or all)\n");
        return 2;
    }
    /* the formats, checked before anything is written */
    int formats[8], n = 0;
    char item[64];
    for (const char *p = to;;) {
        size_t len = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < 63 ? len : 63), p);
        if (strcmp(item, "all") == 0) {
            for (int f = TSCOPE__FMT_CHROME; f <= TSCOPE__FMT_TIMELINE && n < 8; f++)
                formats[n++] = f;
        } else if ((formats[n] = tscope__trace_format(item)) != 0 && n < 7) {
            n++;
        } else {
            fprintf(stderr,
                    "taskscope convert: --to %s: expected chrome, otf2, paraver, timeline or "
                    "all\n",
                    item);
            return 2;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    if (out && n > 1) {
        fprintf(stderr, "taskscope convert: -o names one output: give one format with it\n");
        return 2;
    }
    char in[4200];
    if (trace_path(argv[optind], in, sizeof in))
        return 1;
    int rc = 0;
    for (int i = 0; i < n; i++)
        rc |= tscope_cli_trace_convert("convert", in, formats[i], out, quiet);
    return rc ? 1 : 0;
}
