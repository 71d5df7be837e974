/* convert_trace.c - a binary trace (src/trace) converted for other tools,
 * with one line saying what was written: `taskscope convert TRACE` and the
 * end of `taskscope run --trace=FORMATS` share it. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "offline/offline.h"

/* Past this many bytes of binary trace (some 10 million events), Chrome
 * JSON is written compressed: uncompressed it would pass 1 GB. */
#define GZIP_FROM (64ull << 20)

int tscope_cli_trace_convert(const char *cmd, const char *in, int format, const char *out,
                             int quiet)
{
    const struct tscope__trace_entry *e = tscope__trace_entry_of(format);
    char def[1200];
    struct stat sb;
    int gzip = 0;
    if (!out) {
        gzip = e && e->desc->file_gz && stat(in, &sb) == 0 && (uint64_t)sb.st_size > GZIP_FROM;
        tscope__trace_default_output(in, format, gzip, def, sizeof def);
        out = def;
    } else {
        size_t n = strlen(out);
        gzip = n > 3 && strcmp(out + n - 3, ".gz") == 0;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct tscope__replay_stats st;
    char err[1400];
    if (tscope__trace_convert(in, format, out, gzip, &st, err, sizeof err)) {
        fprintf(stderr, "taskscope %s: %s\n", cmd, err);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (!quiet) {
        fprintf(stderr,
                "taskscope: %s: %llu task stays, %llu arrows, %llu counter values from %llu "
                "records (%.2f s)",
                strcmp(out, "-") == 0 ? "standard output" : out, (unsigned long long)st.slices,
                (unsigned long long)st.flows, (unsigned long long)st.counters,
                (unsigned long long)st.records, s);
        if (st.flows_lost)
            fprintf(stderr, "; %llu arrows left out (an end not in the trace)",
                    (unsigned long long)st.flows_lost);
        fputc('\n', stderr);
    }
    if (e->desc->flags & TSCOPE__TRACE_FORMAT_DRAWN) { /* the picture itself */
        char dir[1200] = ".";
        const char *slash = strrchr(out, '/');
        if (slash)
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - out), out);
        if (tscope_cli_render_script(dir, slash ? slash + 1 : out, quiet) == 0 && !quiet)
            fprintf(stderr, "taskscope: %s/timeline.%s drawn\n", dir, tscope__pictures_ext());
    }
    return 0;
}

int tscope_cli_job_trace_convert(const char *cmd, const char *run, const char *const *paths, int n,
                                 int format, const char *out, int quiet)
{
    const struct tscope__trace_format *d = tscope__trace_entry_of(format)->desc;
    char def[1200];
    struct stat sb;
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += stat(paths[i], &sb) == 0 ? (uint64_t)sb.st_size : 0;
    int gzip = 0;
    if (!out) {
        gzip = d->file_gz && bytes > GZIP_FROM;
        snprintf(def, sizeof def, "%s/%s", run, gzip ? d->file_gz : d->file);
        out = def;
    } else {
        size_t len = strlen(out);
        gzip = d->file_gz && len > 3 && strcmp(out + len - 3, ".gz") == 0;
    }
    struct tscope__replay_stats st;
    uint64_t unmatched = 0;
    char err[1400];
    int rc = d->write_job(paths, n, out, gzip, &st, &unmatched, err, sizeof err);
    if (rc) {
        fprintf(stderr, "taskscope %s: %s\n", cmd, err);
        return 1;
    }
    if (!quiet) {
        fprintf(stderr, "taskscope: %s: %d ranks, %llu task stays, ",
                strcmp(out, "-") == 0 ? "standard output" : out, n, (unsigned long long)st.slices);
        /* OTF2 leaves every message out when a rank's trace is missing */
        int whole = (d->flags & TSCOPE__TRACE_FORMAT_WHOLE_JOB) != 0;
        int left_out = whole && st.messages && unmatched == st.messages;
        if (whole)
            fprintf(stderr, "%llu messages as MPI records",
                    (unsigned long long)(left_out ? 0 : st.messages));
        else
            fprintf(stderr, "%llu arrows (messages among them), %llu messages",
                    (unsigned long long)st.flows, (unsigned long long)st.messages);
        fprintf(stderr, ", from %llu records", (unsigned long long)st.records);
        if (left_out)
            fprintf(stderr, "; the %llu messages left out: not every rank's trace is here",
                    (unsigned long long)st.messages);
        else if (unmatched)
            fprintf(stderr, "; %llu message ends without a partner (a rank's trace missing?)",
                    (unsigned long long)unmatched);
        fputc('\n', stderr);
    }
    return 0;
}
