/* convert.c - `taskscope convert`: a saved trace (trace.tsct) into the
 * trace formats (convert_trace.c does one conversion and says what it
 * wrote), a saved profile (profile.json) into the output formats that
 * convert from one, the task-tree formats of other tools (the same
 * exporters as TASKSCOPE_OUTPUTS); a run's folder gives whichever of the
 * two the formats asked for need.  The formats, their words and help
 * lines are the list's (core/formats.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "offline/offline.h"

/* The formats a profile converts into are the output formats marked so
 * (TSCOPE__OUTPUT_FROM_PROFILE); formats[] below holds a trace format's
 * number, or PROFILE_FMT plus an output format's place in the list. */
enum { PROFILE_FMT = 1000 };

static int from_profile(unsigned i)
{
    return (tscope__outputs[i].format->flags & TSCOPE__OUTPUT_FROM_PROFILE) != 0;
}

/* "a, b, c": the names of the formats a profile converts into. */
static void profile_names(char *buf, size_t len)
{
    buf[0] = 0;
    for (unsigned i = 0; i < tscope__noutputs; i++)
        if (from_profile(i))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "",
                     tscope__outputs[i].id->name);
}

/* A format's lines of the help: its name, what it is and its files, its
 * other words. */
static void usage_format(FILE *f, const struct tscope__format_id *id, const char *help,
                         const char *files)
{
    char text[600];
    snprintf(text, sizeof text, "%s (%s)", help, files);
    fprintf(f, "  %-10s ", id->name);
    tscope_cli_help_wrap(f, 13, 13, text);
    if (strcmp(id->words, id->name) != 0)
        fprintf(f, "             (also --to %s)\n", id->words + strlen(id->name) + 2);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: taskscope convert [options] TRACE|PROFILE|FOLDER --to FORMAT[,FORMAT...]\n"
               "\n"
               "Converts a trace written with TASKSCOPE_TRACE / taskscope run --trace (the file\n"
               "trace.tsct, or the output folder holding it) for other tools (docs/tracing.md):\n");
    for (unsigned i = 0; i < tscope__ntraces; i++) {
        const struct tscope__trace_format *d = tscope__traces[i].desc;
        char files[300];
        snprintf(files, sizeof files, "%s%s%s%s%s", d->file, d->file_gz ? ", " : "",
                 d->file_gz ? d->file_gz : "", d->also[0] ? ", " : "", d->also);
        usage_format(f, tscope__traces[i].id, d->help, files);
    }
    /* which formats a job's run folder gives job-wide: the descriptors say */
    char job[300] = "", ranks[300] = "", text[800];
    for (unsigned i = 0; i < tscope__ntraces; i++) {
        char *to = tscope__traces[i].desc->write_job ? job : ranks;
        snprintf(to + strlen(to), 300 - strlen(to), "%s%s", to[0] ? ", " : "",
                 tscope__traces[i].id->name);
    }
    snprintf(text, sizeof text,
             "An MPI job's run folder (rank-N/trace.tsct) gives one trace of all ranks, with the "
             "messages between them, in %s (in RUN/)%s%s%s.",
             job[0] ? job : "no format", ranks[0] ? "; in " : "", ranks,
             ranks[0] ? " rank by rank (in RUN/rank-N/)" : "");
    tscope_cli_help_wrap(f, 0, 0, text);
    fprintf(f, "It also converts a saved profile (profile.json, or the folder holding it) for\n"
               "the tools that read a call tree:\n");
    for (unsigned i = 0; i < tscope__noutputs; i++) {
        if (!from_profile(i))
            continue;
        char files[300] = "";
        for (const struct tscope__output_file *o = tscope__outputs[i].format->files; o->name; o++)
            snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s",
                     files[0] ? ", " : "", o->name);
        usage_format(f, tscope__outputs[i].id, tscope__outputs[i].format->help, files);
    }
    fprintf(f, "\n"
               "options:\n"
               "  --to LIST       the formats, comma-separated (all: every trace format)\n"
               "  -o, --output P  where to write (one format only; chrome: - for standard\n"
               "                  output); default: next to the trace, with the names above\n"
               "  -q, --quiet     say nothing but errors\n"
               "  -h, --help      this text\n"
               "\n"
               "examples:\n"
               "  taskscope convert app-traced --to otf2,paraver\n"
               "  taskscope convert app-out --to folded -o app.folded\n"
               "\n"
               "exit status: 0 converted, 1 the trace could not be read or an output not\n"
               "written, 2 a bad option\n");
}

/* Writes a task-tree format of the profile at in (a file or a folder
 * with profile.json) to out (NULL: next to it, "-": standard output); 0,
 * or 1 after one line. */
static int convert_profile(const char *in, unsigned k, const char *out, int quiet)
{
    const struct tscope__output_file *file = &tscope__outputs[k].format->files[0];
    char path[4200], err[1400], dir[4200] = ".", name[64];
    struct stat sb;
    if (stat(in, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(path, sizeof path, "%s/profile.json", in);
        snprintf(dir, sizeof dir, "%s", in);
    } else {
        snprintf(path, sizeof path, "%s", in);
        const char *slash = strrchr(in, '/');
        if (slash)
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - in), in);
    }
    struct tscope__profile *p = tscope__offline_profile_read(path, err, sizeof err);
    if (!p) {
        fprintf(stderr, "taskscope convert: %s\n", err);
        return 1;
    }
    tscope__output_file_name(file->name, p->rank, name, sizeof name);
    int rc;
    char target[8600];
    if (out && strcmp(out, "-") == 0) {
        rc = file->write(p, stdout);
        fflush(stdout);
        snprintf(target, sizeof target, "standard output");
    } else {
        if (out) { /* its folder and name */
            const char *slash = strrchr(out, '/');
            if (slash)
                snprintf(dir, sizeof dir, "%.*s", (int)(slash - out), out);
            else
                snprintf(dir, sizeof dir, ".");
            snprintf(name, sizeof name, "%s", slash ? slash + 1 : out);
        } else if (strchr(name, '/')) { /* a folder of its own (tau/) */
            char sub[4300];
            snprintf(sub, sizeof sub, "%s/%.*s", dir, (int)(strrchr(name, '/') - name), name);
            if (mkdir(sub, 0777) && errno != EEXIST) {
                fprintf(stderr, "taskscope convert: cannot create %s: %s\n", sub, strerror(errno));
                tscope__profile_free(p);
                return 1;
            }
        }
        rc = tscope__output_write_file(dir, name, file->write, p);
        snprintf(target, sizeof target, "%s/%s", dir, name);
    }
    tscope__profile_free(p);
    if (rc)
        return 1; /* the writer said why */
    if (!quiet)
        fprintf(stderr, "taskscope: %s: %s of %s\n", target, tscope__outputs[k].id->name, path);
    return 0;
}

/* A job's run folder (docs/mpi.md): its ranks' traces, rank-N/trace.tsct,
 * by rank into *paths (allocated); their number, 0 when none. */
static int job_traces(const char *dir, char ***paths)
{
    char **names;
    size_t n = tscope__offline_rank_folders(dir, &names);
    int k = 0;
    *paths = calloc(n + 1, sizeof **paths);
    for (size_t i = 0; i < n; i++) {
        char path[4200], rest;
        long r;
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s/trace.tsct", dir, names[i]);
        /* rank-N exactly (not a rank-N.1 of a rank run twice) */
        if (*paths && sscanf(names[i], "rank-%ld%c", &r, &rest) == 1 && stat(path, &sb) == 0)
            (*paths)[k++] = strdup(path);
        free(names[i]);
    }
    free(names);
    return k;
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

#define FORMATS_MAX 8

/* The formats of --to's value into formats: their number, or -1 when a
 * word names none of them or there are more than FORMATS_MAX. */
static int parse_to(const char *to, int *formats)
{
    int n = 0;
    char item[64];
    for (const char *p = to;;) {
        size_t len = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(len < 63 ? len : 63), p);
        int trace = tscope__trace_format(item), profile = -1;
        for (unsigned k = 0; k < tscope__noutputs && !trace; k++)
            if (from_profile(k) && tscope__format_is(tscope__outputs[k].id, item, strlen(item)))
                profile = (int)k;
        if (n >= FORMATS_MAX)
            return -1;
        else if (strcasecmp(item, "all") == 0) {
            for (unsigned k = 0; k < tscope__ntraces && n < FORMATS_MAX; k++)
                if (tscope__traces[k].id->flags & TSCOPE__FORMAT_IN_ALL)
                    formats[n++] = tscope__traces[k].format;
        } else if (trace)
            formats[n++] = trace;
        else if (profile >= 0)
            formats[n++] = PROFILE_FMT + profile;
        else
            return -1;
        if (!p[len])
            return n;
        p += len + 1;
    }
}

/* --to's check (optparse.h). */
static int check_to(const char *v, char *expected, size_t len)
{
    char traces[512], profiles[512];
    tscope_cli_format_names(traces, sizeof traces, tscope__trace_ids, tscope__ntrace_ids);
    profile_names(profiles, sizeof profiles);
    snprintf(expected, len, "%s, all (a trace) or %s (a profile)", traces, profiles);
    int formats[FORMATS_MAX];
    return v && parse_to(v, formats) > 0 ? 0 : -1;
}

int tscope_cli_convert(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"to", 't', 0, TSCOPE_CLI_VALUE, "LIST", check_to, NULL, 0},
        {"output", 'o', 1, TSCOPE_CLI_VALUE, "P", NULL, NULL, 0},
        {"quiet", 'q', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    const char *to = NULL, *out = NULL;
    int quiet = 0, c;
    optind = 1;
    while ((c = tscope_cli_getopt("convert", argc, argv, opts, 0)) != -1) {
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
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "taskscope convert: %s\n",
                optind >= argc ? "no trace given" : "one trace at a time");
        return 2;
    }
    if (!to) {
        char expected[700];
        check_to(NULL, expected, sizeof expected);
        fprintf(stderr, "taskscope convert: --to FORMAT missing: expected %s\n", expected);
        return 2;
    }
    /* the formats (checked by the option's parser before anything is written) */
    int formats[FORMATS_MAX], n = parse_to(to, formats);
    if (out && n > 1) {
        fprintf(stderr, "taskscope convert: -o names one output: give one format with it\n");
        return 2;
    }
    int rc = 0, traced = 0;
    char in[4200];
    /* a job's run folder: the ranks' traces together in one trace with the
     * messages between them (the timeline picture rank by rank) */
    char **ranks = NULL, probe[4200];
    struct stat sb;
    snprintf(probe, sizeof probe, "%s/trace.tsct", argv[optind]);
    int nranks = stat(probe, &sb) == 0 ? 0 : job_traces(argv[optind], &ranks);
    for (int i = 0; nranks && i < n; i++) {
        if (formats[i] >= PROFILE_FMT)
            rc |= convert_profile(argv[optind], (unsigned)(formats[i] - PROFILE_FMT), out, quiet);
        else if (tscope__trace_entry_of(formats[i])->desc->write_job)
            rc |= tscope_cli_job_trace_convert("convert", argv[optind], (const char *const *)ranks,
                                               nranks, formats[i], out, quiet);
        else
            for (int r = 0; r < nranks; r++)
                rc |= tscope_cli_trace_convert("convert", ranks[r], formats[i], NULL, quiet);
    }
    for (int r = 0; r < nranks; r++)
        free(ranks[r]);
    free(ranks);
    if (nranks)
        return rc ? 1 : 0;
    for (int i = 0; i < n; i++) {
        if (formats[i] >= PROFILE_FMT) {
            rc |= convert_profile(argv[optind], (unsigned)(formats[i] - PROFILE_FMT), out, quiet);
            continue;
        }
        if (!traced++ && trace_path(argv[optind], in, sizeof in))
            return 1;
        rc |= tscope_cli_trace_convert("convert", in, formats[i], out, quiet);
    }
    return rc ? 1 : 0;
}
