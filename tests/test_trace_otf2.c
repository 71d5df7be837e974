/* test_trace_otf2.c - the OTF2 writer (src/trace/otf2.c), its archives read
 * back by OTF2's own otf2-print (Debian otf2-tools; skipped, saying so,
 * when CMake did not find it):
 * - the fixed log of trace_log.h: one ENTER and one LEAVE per stay, at the
 *   exact ns of the log, with the types' names; the counter as a metric
 *   (2.5), the custom event as a parameter (7); the locations named after
 *   the threads, with the number of events each really has;
 * - a real run of the bundled runtime (two workers): ENTER == LEAVE ==
 *   the replay's stays, at least one per call the profile counted;
 * - a trace without events: an archive otf2-print takes;
 * - the output folder: an earlier archive is replaced (files of a
 *   location it no longer has included), anything else is refused with a
 *   message and left alone; an OTF2 write error (a file size limit, in a
 *   child process) is one line naming the archive and OTF2's error, and
 *   leaves no half archive.
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden.h"
#include "harness.h"
#include "trace_log.h"
#include "trace/convert.h"

#ifdef TSCOPE_HAVE_OTF2

/* ---- otf2-print ---- */

#ifdef TSCOPE_OTF2_PRINT
/* Runs otf2-print ARGS ANCHOR; its exit status, its output in *text (free
 * it). */
static int otf2_print(const char *args, const char *anchor, char **text)
{
    char cmd[1400], log[1200];
    snprintf(log, sizeof log, "%s.print", anchor);
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' >'%s' 2>&1", TSCOPE_OTF2_PRINT, args, anchor, log);
    int status = system(cmd);
    *text = test_slurp(log);
    ASSERT(*text != NULL);
    unlink(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One event line of otf2-print: "KIND  LOCATION  TIMESTAMP  details". */
struct event {
    char kind[40];
    unsigned loc;
    unsigned long long ts;
    const char *rest; /* into the text, up to the end of the line */
    int len;
};

/* The next event line at or after *p, 1, or 0 at the end. */
static int next_event(const char **p, struct event *e)
{
    while (**p) {
        const char *line = *p, *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        *p = *end ? end + 1 : end;
        int at = 0;
        if (sscanf(line, "%39s %u %llu %n", e->kind, &e->loc, &e->ts, &at) == 3 && at > 0 &&
            line + at <= end) {
            e->rest = line + at;
            e->len = (int)(end - e->rest);
            return 1;
        }
    }
    return 0;
}

static int has(const struct event *e, const char *s)
{
    size_t n = strlen(s);
    for (int i = 0; i + (int)n <= e->len; i++)
        if (memcmp(e->rest + i, s, n) == 0)
            return 1;
    return 0;
}

static size_t count_kind(const char *text, const char *kind, const char *detail)
{
    size_t n = 0;
    struct event e;
    for (const char *p = text; next_event(&p, &e);)
        n += strcmp(e.kind, kind) == 0 && (!detail || has(&e, detail));
    return n;
}

/* Whether otf2-print listed KIND on loc at ts with detail. */
static int seen(const char *text, const char *kind, unsigned loc, unsigned long long ts,
                const char *detail)
{
    struct event e;
    for (const char *p = text; next_event(&p, &e);)
        if (strcmp(e.kind, kind) == 0 && e.loc == loc && e.ts == ts && has(&e, detail))
            return 1;
    return 0;
}

/* The number of events -G gives location loc (its "# Events"), and
 * whether its name is name; -1 when it has no such location. */
static long long location_events(const char *defs, unsigned loc, const char *name)
{
    for (const char *p = defs; (p = strstr(p, "\nLOCATION ")) != NULL;) {
        p++;
        unsigned id;
        char got[300];
        long long events;
        if (sscanf(p, "LOCATION %u Name: \"%299[^\"]\" <%*u>, Type: CPU_THREAD, # Events: %lld",
                   &id, got, &events) == 3 &&
            id == loc)
            return strcmp(got, name) == 0 ? events : -1;
    }
    return -1;
}

/* Every location's "# Events" is the number of its event lines. */
static void check_counts(const char *events, const char *defs, unsigned nloc, const char **names)
{
    for (unsigned loc = 0; loc < nloc; loc++) {
        long long n = 0;
        struct event e;
        for (const char *p = events; next_event(&p, &e);)
            n += e.loc == loc;
        ASSERT_EQ(location_events(defs, loc, names[loc]), n);
    }
}
#endif

/* folder/traces.otf2, the archive's anchor file. */
static void anchor_of(const char *folder, char *anchor, size_t len)
{
    snprintf(anchor, len, "%s/traces.otf2", folder);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    ASSERT_EQ(fclose(f), 0);
}

/* ---- the fixed log ---- */

static char fixed_trace[400], fixed_out[400];

static void fixed_log(void)
{
    trace_fixed_log("tscope-test-trace-otf2");
    char anchor[1200], err[1400];
    snprintf(fixed_trace, sizeof fixed_trace, "%s/trace.tsct", trace_dir);
    tscope__trace_default_output(fixed_trace, TSCOPE__FMT_OTF2, 0, fixed_out, sizeof fixed_out);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_OTF2, fixed_out, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.slices, 5); /* root twice (a yield splits it), 2, 3, 4 */
    ASSERT_EQ(st.counters, 1);
    ASSERT_EQ(st.instants, 1);
    ASSERT_U64_EQ(st.end_ns, 50);
    anchor_of(fixed_out, anchor, sizeof anchor);
    ASSERT(exists(anchor));
#ifdef TSCOPE_OTF2_PRINT
    char *ev, *defs;
    ASSERT_EQ(otf2_print("-Werror", anchor, &ev), 0);
    ASSERT_EQ(otf2_print("-Werror -G", anchor, &defs), 0);
    ASSERT_EQ(count_kind(ev, "ENTER", NULL), st.slices);
    ASSERT_EQ(count_kind(ev, "LEAVE", NULL), st.slices);
    /* the threads: main is slot 0, worker-b slot 1 */
    const char *names[] = {"main", "worker-b"};
    ASSERT_EQ(location_events(defs, 0, "main"), 8);
    ASSERT_EQ(location_events(defs, 1, "worker-b"), 4);
    check_counts(ev, defs, 2, names);
    /* exact ns since the start, on the thread that recorded them */
    ASSERT(seen(ev, "ENTER", 0, 0, "Region: \"root\""));
    ASSERT(seen(ev, "ENTER", 0, 15, "Region: \"leaf\""));
    ASSERT(seen(ev, "LEAVE", 0, 18, "Region: \"leaf\""));
    ASSERT(seen(ev, "LEAVE", 0, 20, "Region: \"root\"")); /* the yield */
    ASSERT(seen(ev, "ENTER", 0, 41, "Region: \"root\"")); /* the resume */
    ASSERT(seen(ev, "LEAVE", 0, 50, "Region: \"root\""));
    ASSERT(seen(ev, "ENTER", 1, 21, "Region: \"child \"quoted\"\""));
    ASSERT(seen(ev, "LEAVE", 1, 30, "Region: \"child \"quoted\"\""));
    ASSERT(seen(ev, "ENTER", 1, 31, "Region: \"child \"quoted\"\""));
    ASSERT(seen(ev, "LEAVE", 1, 40, "Region: \"child \"quoted\"\""));
    ASSERT(seen(ev, "METRIC", 0, 12, "(\"queue\" <0>; DOUBLE; 2.5)"));
    ASSERT(seen(ev, "PARAMETER_UINT64", 0, 12, "Parameter: \"mark\" <0>, Value: 7"));
    /* the definitions */
    ASSERT(strstr(defs, "Ticks per Seconds: 1000000000, Global Offset: 0, Length: 50") != NULL);
    ASSERT(strstr(defs, "Name: \"root\" <1> (Aka. \"root\" <1>), Descr.: \"\" <0>, Role: TASK, "
                        "Paradigm: USER") != NULL);
    ASSERT(strstr(defs, "Type: DOUBLE") != NULL);
    ASSERT(strstr(defs, "Occurrence: ASYNCHRONOUS") != NULL);
    ASSERT(strstr(defs, "Name: \"mark\" <5>, Type: UINT64") != NULL);
    ASSERT(strstr(defs, "Name: \"rank 0\" <8>, Type: PROCESS") != NULL);
    free(ev);
    free(defs);
#else
    printf("test_trace_otf2: otf2-print not found (Debian otf2-tools): the archives are written "
           "but not read back\n");
#endif
}

/* ---- a real run: the bundled runtime on two workers ---- */

static void runtime_run(void)
{
    tscope_type_stats_t fib, dep;
    trace_runtime_log("tscope-test-trace-otf2-rt", &fib, &dep);

    char path[400], out[400], anchor[1200], err[1400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    tscope__trace_default_output(path, TSCOPE__FMT_OTF2, 0, out, sizeof out);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_OTF2, out, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.unmatched, 0);
    ASSERT_U64_EQ(st.tasks, fib.calls + dep.calls);
    ASSERT(st.slices >= st.tasks);
    anchor_of(out, anchor, sizeof anchor);
#ifdef TSCOPE_OTF2_PRINT
    char *ev, *defs;
    ASSERT_EQ(otf2_print("-Werror", anchor, &ev), 0);
    ASSERT_EQ(otf2_print("-Werror -G", anchor, &defs), 0);
    ASSERT_U64_EQ(count_kind(ev, "ENTER", NULL), st.slices);
    ASSERT_U64_EQ(count_kind(ev, "LEAVE", NULL), st.slices);
    /* every task the profile counted has at least one stay */
    ASSERT(count_kind(ev, "ENTER", "Region: \"fib\"") >= fib.calls);
    ASSERT(count_kind(ev, "ENTER", "Region: \"dep\"") >= dep.calls);
    /* real times: the clock's length is the last one */
    char length[64];
    snprintf(length, sizeof length, "Global Offset: 0, Length: %llu,",
             (unsigned long long)st.end_ns);
    ASSERT(st.end_ns > 0);
    ASSERT(strstr(defs, length) != NULL);
    /* a location per thread that recorded (main is one of the two workers;
     * the other may have stolen nothing), each with its events counted */
    unsigned nloc = 0;
    const char *names[8];
    static char namebuf[8][300];
    for (const char *p = defs; (p = strstr(p, "\nLOCATION ")) != NULL && nloc < 8; p++) {
        unsigned id;
        if (sscanf(p + 1, "LOCATION %u Name: \"%299[^\"]\"", &id, namebuf[nloc]) != 2)
            continue;
        ASSERT_EQ(id, nloc);
        names[nloc] = namebuf[nloc];
        nloc++;
    }
    ASSERT_GE(nloc, 1);
    check_counts(ev, defs, nloc, names);
    free(ev);
    free(defs);
#endif
}

/* A trace without events: still an archive readers take (one location). */
static void empty(void)
{
    outdir("tscope-test-trace-otf2-empty");
    trace_env("1");
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_finalize());
    char path[400], out[400], anchor[1200], err[1400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    tscope__trace_default_output(path, TSCOPE__FMT_OTF2, 0, out, sizeof out);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_OTF2, out, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    ASSERT_EQ(st.slices, 0);
    anchor_of(out, anchor, sizeof anchor);
#ifdef TSCOPE_OTF2_PRINT
    char *ev;
    ASSERT_EQ(otf2_print("-Werror", anchor, &ev), 0);
    ASSERT_EQ(count_kind(ev, "ENTER", NULL), 0);
    free(ev);
#endif
}

/* ---- the output folder ---- */

/* A conversion of the fixed log into out that must be refused with a
 * message holding want (and naming out). */
static void refused(const char *out, const char *want)
{
    char err[1400];
    struct tscope__replay_stats st;
    ASSERT_EQ(tscope__trace_convert(fixed_trace, TSCOPE__FMT_OTF2, out, 0, &st, err, sizeof err),
              -1);
    if (!strstr(err, out) || !strstr(err, want))
        TEST_FAIL("expected a message naming %s and saying '%s', got: %s", out, want, err);
    ASSERT(strchr(err, '\n') == NULL);
}

static void folders(void)
{
    char path[700], anchor[1200], err[1400];
    struct tscope__replay_stats st;
    /* an earlier archive, with a location this one does not have: replaced */
    snprintf(path, sizeof path, "%s/traces/7.evt", fixed_out);
    write_file(path, "stale");
    snprintf(path, sizeof path, "%s/traces.marker", fixed_out);
    write_file(path, "stale");
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_OTF2, fixed_out, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    snprintf(path, sizeof path, "%s/traces/7.evt", fixed_out);
    ASSERT(!exists(path));
    snprintf(path, sizeof path, "%s/traces.marker", fixed_out);
    ASSERT(!exists(path));
    anchor_of(fixed_out, anchor, sizeof anchor);
#ifdef TSCOPE_OTF2_PRINT
    char *ev;
    ASSERT_EQ(otf2_print("-Werror", anchor, &ev), 0);
    ASSERT_EQ(count_kind(ev, "ENTER", NULL), 5);
    free(ev);
#endif
    /* anything else in the folder: refused, nothing removed */
    snprintf(path, sizeof path, "%s/notes.txt", fixed_out);
    write_file(path, "mine");
    refused(fixed_out, "(notes.txt)");
    ASSERT(exists(path));
    ASSERT(exists(anchor));
    unlink(path);
    snprintf(path, sizeof path, "%s/traces/readme", fixed_out);
    write_file(path, "mine");
    refused(fixed_out, "(traces)");
    ASSERT(exists(path));
    unlink(path);
    /* a file named like the anchor that is not one */
    char fake[400];
    snprintf(fake, sizeof fake, "%s/fake-otf2", trace_dir);
    ASSERT_EQ(mkdir(fake, 0777), 0);
    anchor_of(fake, anchor, sizeof anchor);
    write_file(anchor, "not an anchor");
    refused(fake, "is not an OTF2 anchor file");
    ASSERT(exists(anchor));
    /* a file, and a folder that cannot be made */
    refused(fixed_trace, "not a folder");
    snprintf(path, sizeof path, "%s/sub", fixed_trace);
    refused(path, "cannot create");
    refused("-", "a folder");
    /* an empty folder, and a new one two levels down */
    snprintf(path, sizeof path, "%s/empty", trace_dir);
    ASSERT_EQ(mkdir(path, 0777), 0);
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_OTF2, path, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    snprintf(path, sizeof path, "%s/new/deeper", trace_dir);
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_OTF2, path, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    anchor_of(path, anchor, sizeof anchor);
    ASSERT(exists(anchor));
}

/* An OTF2 write that fails (a file size limit), in a child process: one
 * line naming the archive and OTF2's error, on stdout (a pipe: the limit
 * would cut a file). */
static int fsize_child(const char *trace, const char *out)
{
    struct rlimit rl = {64, 64};
    signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
    char err[1400];
    struct tscope__replay_stats st;
    int rc = tscope__trace_convert(trace, TSCOPE__FMT_OTF2, out, 0, &st, err, sizeof err);
    printf("%s\n", err);
    return rc == -1 ? 0 : 3;
}

static void write_fails(const char *self)
{
    char out[500], cmd[2000], text[2000];
    snprintf(out, sizeof out, "%s/fsize-otf2", trace_dir);
    snprintf(cmd, sizeof cmd, "'%s' fsize-child '%s' '%s'", self, fixed_trace, out);
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = 0;
    ASSERT_EQ(pclose(p), 0);
    printf("test_trace_otf2: a failing write says: %s", text);
    ASSERT(strstr(text, "cannot write the OTF2 archive") != NULL);
    ASSERT(strstr(text, out) != NULL);
    ASSERT(strstr(text, "OTF2_ERROR_") != NULL || strstr(text, "errno ") != NULL);
    ASSERT(strchr(text, '\n') == text + n - 1); /* one line */
    /* it left nothing behind, and the folder is free for the next one */
    ASSERT(!exists(out));
    char err[1400];
    struct tscope__replay_stats st;
    if (tscope__trace_convert(fixed_trace, TSCOPE__FMT_OTF2, out, 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "fsize-child") == 0)
        return fsize_child(argv[2], argv[3]);
    RUN(runtime_run); /* first: the fixed log leaves a manual clock installed */
    RUN(fixed_log);
    RUN(folders);
    write_fails(argv[0]);
    RUN(empty);
    printf("test_trace_otf2: ok\n");
    return 0;
}

#else /* built without libotf2: the conversion says so */

int main(void)
{
    trace_fixed_log("tscope-test-trace-otf2");
    char path[400], err[1400];
    snprintf(path, sizeof path, "%s/trace.tsct", trace_dir);
    struct tscope__replay_stats st;
    ASSERT_EQ(tscope__trace_convert(path, TSCOPE__FMT_OTF2, "x", 0, &st, err, sizeof err), -1);
    ASSERT_STR_EQ(err, "this taskscope was built without OTF2 (install libotf2-trace-dev)");
    printf("test_trace_otf2: built without OTF2 (libotf2-trace-dev): only the refusal is "
           "checked\n");
    return 0;
}

#endif
