/* config.c - the table of TASKSCOPE_* variables and their parsers.
 *
 * One table drives everything: defaults are applied by parsing each entry's
 * default text with the same parser as the user's value, so a default can
 * never disagree with what the parser accepts.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "taskscope/taskscope.h"

typedef int (*parse_fn)(struct tscope__config *cfg, const char *value);

struct var {
    const char *name;
    const char *def;
    const char *accepted;
    const char *meaning;
    parse_fn parse;
};

int tscope__parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"1", "true", "yes", "on"};
    static const char *no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* Parses a whole decimal unsigned integer in [lo, hi]. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!*s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int p_enable(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->enable);
}

static int p_profiler(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->profiler);
}

static int p_summary(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->summary);
}

static int p_quiet(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->quiet);
}

static int p_verbose(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->verbose);
}

static int p_cpu_time(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->cpu_time);
}

static int p_mode(struct tscope__config *c, const char *v)
{
    if (strcmp(v, "profile") == 0)
        c->mode = TSCOPE__MODE_PROFILE;
    else if (strcmp(v, "naive") == 0)
        c->mode = TSCOPE__MODE_NAIVE;
    else
        return -1;
    return 0;
}

static int p_pictures(struct tscope__config *c, const char *v)
{
    if (strcmp(v, "svg") == 0)
        c->pictures = 0;
    else if (strcmp(v, "png") == 0)
        c->pictures = 1;
    else
        return -1;
    return 0;
}

static int p_policy(struct tscope__config *c, const char *v)
{
    if (strcmp(v, "wait") == 0)
        c->full_policy = TSCOPE__FULL_WAIT;
    else if (strcmp(v, "drop") == 0)
        c->full_policy = TSCOPE__FULL_DROP;
    else
        return -1;
    return 0;
}

static int p_ring(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 64, 1u << 24, &n) || (n & (n - 1)))
        return -1;
    c->ring_size = (uint32_t)n;
    return 0;
}

static int p_threads(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 1, 65535, &n))
        return -1;
    c->max_threads = (uint32_t)n;
    return 0;
}

static int p_period(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 1, 10000, &n))
        return -1;
    c->period_ms = (uint32_t)n;
    return 0;
}

static int p_batch(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 64, 1u << 24, &n))
        return -1;
    c->batch = (uint32_t)n;
    return 0;
}

static int p_cap(struct tscope__config *c, const char *v)
{
    return parse_u64(v, 0, 1000000000u, &c->instance_cap);
}

static int p_sample(struct tscope__config *c, const char *v)
{
    errno = 0;
    char *end;
    double d = strtod(v, &end);
    if (!*v || errno || *end || !(d >= 0.0 && d <= 1.0))
        return -1;
    c->instance_sample = d;
    return 0;
}

static int p_duration_sample(struct tscope__config *c, const char *v)
{
    errno = 0;
    char *end;
    double d = strtod(v, &end);
    if (!*v || errno || *end || !(d >= 0.0 && d <= 1.0))
        return -1;
    c->duration_sample = d;
    return 0;
}

/* Splits a comma-separated list; calls fn for each non-empty trimmed item.
 * Returns -1 as soon as fn does. */
static int each_item(const char *list, int (*fn)(struct tscope__config *, const char *, size_t),
                     struct tscope__config *c)
{
    const char *p = list;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *start = p;
        while (*p && *p != ',')
            p++;
        const char *end = p;
        while (end > start && isspace((unsigned char)end[-1]))
            end--;
        if (end > start && fn(c, start, (size_t)(end - start)))
            return -1;
    }
    return 0;
}

static int add_filter_type(struct tscope__config *c, const char *s, size_t n)
{
    size_t used = 0;
    for (int i = 0; i < c->filter_ntypes; i++)
        used += strlen(c->filter_types + used) + 1;
    if (c->filter_ntypes >= TSCOPE__FILTER_MAX_TYPES || n + 1 > sizeof c->filter_types - used)
        return -1;
    memcpy(c->filter_types + used, s, n);
    c->filter_types[used + n] = 0;
    c->filter_ntypes++;
    return 0;
}

static int p_ftypes(struct tscope__config *c, const char *v)
{
    c->filter_ntypes = 0;
    memset(c->filter_types, 0, sizeof c->filter_types);
    return each_item(v, add_filter_type, c);
}

static int p_fflags(struct tscope__config *c, const char *v)
{
    if (strcmp(v, "any") == 0)
        c->filter_flags = 0;
    else if (strcmp(v, "splittable") == 0)
        c->filter_flags = TSCOPE_TASK_SPLITTABLE;
    else if (strcmp(v, "processable") == 0)
        c->filter_flags = TSCOPE_TASK_PROCESSABLE;
    else
        return -1;
    return 0;
}

static int p_fdepth(struct tscope__config *c, const char *v)
{
    char buf[64];
    if (strlen(v) >= sizeof buf)
        return -1;
    strcpy(buf, v);
    char *dash = strchr(buf, '-');
    uint64_t lo, hi;
    if (dash) {
        *dash = 0;
        if (parse_u64(buf, 0, 65535, &lo) || parse_u64(dash + 1, 0, 65535, &hi) || lo > hi)
            return -1;
    } else {
        if (parse_u64(buf, 0, 65535, &hi))
            return -1;
        lo = 0;
    }
    c->filter_depth_min = (uint32_t)lo;
    c->filter_depth_max = (uint32_t)hi;
    return 0;
}

static int p_ffile(struct tscope__config *c, const char *v)
{
    if (strlen(v) >= sizeof c->filter_file)
        return -1;
    strcpy(c->filter_file, v);
    return 0;
}

static int p_dir(struct tscope__config *c, const char *v)
{
    if (!*v || strlen(v) >= sizeof c->output_dir)
        return -1;
    strcpy(c->output_dir, v);
    return 0;
}

int tscope__config_output_word(const char *w, size_t n, int *outputs)
{
    const struct tscope__format_id *id = tscope__output_id_find(w, n);
    if (id)
        *outputs |= id->bit;
    else if (n == 5 && strncasecmp(w, "tasks", 5) == 0)
        *outputs |= TSCOPE__OUT_TASKS;
    else if (n == 3 && strncasecmp(w, "all", 3) == 0)
        for (unsigned i = 0; i < tscope__noutput_ids; i++)
            *outputs |=
                tscope__output_ids[i].flags & TSCOPE__FORMAT_IN_ALL ? tscope__output_ids[i].bit : 0;
    else if (n != 4 || strncasecmp(w, "none", 4) != 0)
        return -1;
    return 0;
}

static int add_output(struct tscope__config *c, const char *s, size_t n)
{
    return tscope__config_output_word(s, n, &c->outputs);
}

/* At least one word: an empty list ("" or ",,,") is no choice, so it is
 * refused (a warning and the default), and "none" says "no outputs". */
static int p_outputs(struct tscope__config *c, const char *v)
{
    int saved = c->outputs;
    c->outputs = 0;
    if (!v[strspn(v, ", \t\n\v\f\r")] || each_item(v, add_output, c)) {
        c->outputs = saved;
        return -1;
    }
    return 0;
}

int tscope__config_trace_word(const char *w, size_t n, int *on, int *formats)
{
    static const char *const off[] = {"0", "off", "no", "none", "false"};
    static const char *const binary[] = {"1", "on", "yes", "true", "binary"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strlen(off[i]) == n && strncasecmp(off[i], w, n) == 0)
            return 0;
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
        if (strlen(binary[i]) == n && strncasecmp(binary[i], w, n) == 0) {
            *on = 1;
            return 0;
        }
    const struct tscope__format_id *id = tscope__trace_id_find(w, n);
    if (id)
        *formats |= id->bit;
    else if (n == 3 && strncasecmp(w, "all", 3) == 0)
        for (unsigned i = 0; i < tscope__ntrace_ids; i++)
            *formats |=
                tscope__trace_ids[i].flags & TSCOPE__FORMAT_IN_ALL ? tscope__trace_ids[i].bit : 0;
    else
        return -1;
    *on = 1;
    return 0;
}

static int add_trace(struct tscope__config *c, const char *s, size_t n)
{
    return tscope__config_trace_word(s, n, &c->trace, &c->trace_formats);
}

static int p_trace(struct tscope__config *c, const char *v)
{
    int trace = c->trace, formats = c->trace_formats;
    c->trace = c->trace_formats = 0;
    if (each_item(v, add_trace, c)) {
        c->trace = trace;
        c->trace_formats = formats;
        return -1;
    }
    return 0;
}

static int p_trace_max(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 0, UINT64_MAX / (1024 * 1024), &n))
        return -1;
    c->trace_max_bytes = n * 1024 * 1024;
    return 0;
}

static int p_sort(struct tscope__config *c, const char *v)
{
    /* excl and incl: the names before self and running */
    static const char *keys[] = {"self", "running", "elapsed", "calls",
                                 "mean", "name",    "excl",    "incl"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(v, keys[i]) == 0) {
            strcpy(c->summary_sort, v);
            return 0;
        }
    }
    return -1;
}

static int p_tree_fold(struct tscope__config *c, const char *v)
{
    return tscope__parse_bool(v, &c->tree_fold);
}

static int p_tree_depth(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 0, 65535, &n))
        return -1;
    c->tree_depth = (uint32_t)n;
    return 0;
}

static int p_rows(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 0, 1000000, &n))
        return -1;
    c->summary_rows = (uint32_t)n;
    return 0;
}

static int p_clock(struct tscope__config *c, const char *v)
{
    if (strcmp(v, "auto") && strcmp(v, "tsc") && strcmp(v, "monotonic"))
        return -1;
    strcpy(c->clock, v);
    return 0;
}

static int p_tools(struct tscope__config *c, const char *v)
{
    if (strlen(v) >= sizeof c->tools)
        return -1;
    strcpy(c->tools, v);
    return 0;
}

/* HOST:PORT/SECRET (HOST may be [v6]): the port a number 1..65535, the
 * secret 64 hex digits (what `taskscope dashboard` prints); src/live
 * splits it when it starts (live/auth.c).  The old HOST:PORT is refused:
 * the warning says what to set. */
static int p_live(struct tscope__config *c, const char *v)
{
    const char *slash = strrchr(v, '/');
    char port[8];
    uint64_t n;
    if (!*v) {
        c->live[0] = 0;
        return 0;
    }
    if (!slash || strlen(slash + 1) != 64 || strspn(slash + 1, "0123456789abcdefABCDEF") != 64 ||
        strlen(v) >= sizeof c->live)
        return -1;
    const char *colon = NULL;
    for (const char *p = v; p < slash; p++)
        if (*p == ':')
            colon = p;
    size_t plen = colon ? (size_t)(slash - colon - 1) : 0;
    if (!colon || colon == v || plen == 0 || plen >= sizeof port)
        return -1;
    memcpy(port, colon + 1, plen);
    port[plen] = 0;
    if (parse_u64(port, 1, 65535, &n))
        return -1;
    strcpy(c->live, v);
    return 0;
}

static int p_live_ms(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 10, 60000, &n))
        return -1;
    c->live_ms = (uint32_t)n;
    return 0;
}

static int p_live_queue(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 1, 4096, &n))
        return -1;
    c->live_queue = (uint32_t)n;
    return 0;
}

static int p_sample_ms(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 0, 3600000, &n) || (n > 0 && n < 5))
        return -1;
    c->sample_ms = (uint32_t)n;
    return 0;
}

static int p_sample_keep(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 16, 1000000, &n))
        return -1;
    c->sample_keep = (uint32_t)n;
    return 0;
}

static int p_power_model(struct tscope__config *c, const char *v)
{
    double idle, max;
    char end;
    if (sscanf(v, "%lf,%lf%c", &idle, &max, &end) != 2 || !(idle >= 0) || !(max >= idle) ||
        max > 10000)
        return -1;
    c->power_idle_w = idle;
    c->power_max_w = max;
    return 0;
}

static int p_builtin_policy(struct tscope__config *c, const char *v)
{
    if (strcmp(v, "none") && strcmp(v, "throttle") && strcmp(v, "powercap") &&
        strcmp(v, "optimize"))
        return -1;
    strcpy(c->policy, v);
    return 0;
}

static int p_policy_period(struct tscope__config *c, const char *v)
{
    uint64_t n;
    if (parse_u64(v, 1, 60000, &n))
        return -1;
    c->policy_period_ms = (uint32_t)n;
    return 0;
}

static int p_throttle_type(struct tscope__config *c, const char *v)
{
    if (strlen(v) >= sizeof c->throttle_type)
        return -1;
    strcpy(c->throttle_type, v);
    return 0;
}

static int p_power_band(struct tscope__config *c, const char *v)
{
    double lo, hi;
    char end;
    if (sscanf(v, "%lf,%lf%c", &lo, &hi, &end) != 2 || !(lo >= 0) || !(hi > lo) || hi > 1e6)
        return -1;
    c->power_low_w = lo;
    c->power_high_w = hi;
    return 0;
}

/* Three finite weights >= 0, not all 0 (1e999 and inf are not weights:
 * a score scaled by infinity is NaN). */
static int parse_weights(const char *v, double *w)
{
    char end;
    double x[3];
    if (sscanf(v, "%lf,%lf,%lf%c", &x[0], &x[1], &x[2], &end) != 3)
        return -1;
    for (int i = 0; i < 3; i++)
        if (!(x[i] >= 0) || !isfinite(x[i]))
            return -1;
    if (x[0] + x[1] + x[2] <= 0 || !isfinite(x[0] + x[1] + x[2]))
        return -1;
    memcpy(w, x, sizeof x);
    return 0;
}

static int p_score_weights(struct tscope__config *c, const char *v)
{
    return parse_weights(v, c->score_w);
}

static int p_optimize_weights(struct tscope__config *c, const char *v)
{
    return parse_weights(v, c->optimize_w);
}

static int p_papi_events(struct tscope__config *c, const char *v)
{
    if (strlen(v) >= sizeof c->papi_events)
        return -1;
    strcpy(c->papi_events, v);
    return 0;
}

static const struct var vars[] = {
    {"TASKSCOPE_ENABLE", "1", "1/0, true/false, yes/no, on/off",
     "master switch; off costs one branch per event", p_enable},
    {"TASKSCOPE_PROFILER", "1", "1/0, true/false, yes/no, on/off",
     "the built-in profiler; 0 leaves the events to the tool plugins alone (no profile, no "
     "outputs)",
     p_profiler},
    {"TASKSCOPE_MODE", "profile", "profile, naive",
     "profile: each thread aggregates its own events in its shard of the profile (under "
     "taskscope run in the process's file-backed mapping, the crash journal); naive: the same "
     "under one lock for the whole process (a benchmark baseline only)",
     p_mode},
    {"TASKSCOPE_FULL_POLICY", "wait", "wait, drop",
     "what a producer does when its ring is full: wait for the consumer, or drop the record and "
     "count it (the ring holds what the trace and tools get; the profile has every event)",
     p_policy},
    {"TASKSCOPE_RING_SIZE", "16384", "a power of two from 64 to 16777216",
     "records (32 bytes each) per thread ring: what the trace, tool plugins and triggered "
     "policies get of the events",
     p_ring},
    {"TASKSCOPE_MAX_THREADS", "1024", "1 to 65535", "thread slots (threads measured at once)",
     p_threads},
    {"TASKSCOPE_PERIOD_MS", "10", "1 to 10000",
     "consumer wake-up period in ms (it also wakes when a ring is half full)", p_period},
    {"TASKSCOPE_BATCH", "65536", "64 to 16777216",
     "records the consumer applies per ring before releasing the store lock (bounds query "
     "latency)",
     p_batch},
    {"TASKSCOPE_INSTANCE_CAP", "100000", "0 to 1000000000",
     "tasks kept in the instance graph: when full it keeps the tasks closest to the root and "
     "counts those below in their deepest kept ancestor; type-level data always sees every task",
     p_cap},
    {"TASKSCOPE_TREE_FOLD", "1", "1/0, true/false, yes/no, on/off",
     "fold recursion in the task tree: a path that re-enters a task type already on it "
     "collapses into that node (a recursive program gets one node per type, not per task)",
     p_tree_fold},
    {"TASKSCOPE_TREE_DEPTH", "0", "0 (no limit) to 65535",
     "deepest path of the task tree; deeper tasks count in the node of their type at that "
     "depth (as TAU_CALLPATH_DEPTH)",
     p_tree_depth},
    {"TASKSCOPE_CPU_TIME", "0", "1/0, true/false, yes/no, on/off",
     "1: each task's CPU time (the thread CPU clock read at its begin, end and every switch, "
     "summed over the segments it ran, wherever they ran) beside its wall time in every output; "
     "costs a clock read at each of them (docs/performance.md)",
     p_cpu_time},
    {"TASKSCOPE_INSTANCE_SAMPLE", "1", "a fraction from 0 to 1",
     "fraction of tasks recorded in the instance graph (chosen by a hash of the task id)",
     p_sample},
    {"TASKSCOPE_DURATION_SAMPLE", "0.25", "a fraction from 0 to 1",
     "fraction of tasks in the duration scatter plot (durations.csv; chosen by the task id, at "
     "most 8192 kept: the fraction halves when they are)",
     p_duration_sample},
    {"TASKSCOPE_FILTER_TYPES", "",
     "comma-separated task type names, up to 64 and 1023 bytes (empty: all)",
     "only tasks of these types go into the instance graph", p_ftypes},
    {"TASKSCOPE_FILTER_FLAGS", "any", "any, splittable, processable",
     "only tasks with this flag go into the instance graph", p_fflags},
    {"TASKSCOPE_FILTER_DEPTH", "0-65535", "MAX or MIN-MAX (0 to 65535)",
     "only tasks with a recursion depth in this range go into the instance graph", p_fdepth},
    {"TASKSCOPE_FILTER_FILE", "", "a file path of up to 1023 bytes (empty: none)",
     "the filter file: which task types are measured at all (docs/filter.md); one that cannot "
     "be read or parsed is a warning, and every task is measured",
     p_ffile},
    {"TASKSCOPE_OUTPUT_DIR", "taskscope-out", "a folder path of 1 to 1023 bytes",
     "where tscope_finalize writes; an existing folder is never overwritten (a numeric suffix "
     "is added and the new name printed)",
     p_dir},
    {"TASKSCOPE_OUTPUTS", "all", tscope__outputs_accepted,
     "files written at finalize: those of each format named (docs/output-formats.md has their "
     "words and files, and which all selects); tasks: also the instance graph in profile.json, "
     "written anyway when the run recorded dependencies; none: no files (an empty list names "
     "nothing: a warning, and the default)",
     p_outputs},
    {"TASKSCOPE_PICTURES", "svg", "svg, png",
     "the pictures' format (concurrency, heatmap, scatter; an MPI job's messages and ranks; "
     "convert's timeline): svg takes gnuplot a few ms a picture, png (pngcairo) 30-60 ms",
     p_pictures},
    {"TASKSCOPE_TRACE", "0", tscope__trace_accepted,
     "trace every event: the consumer writes trace.tsct (binary, docs/tracing.md) in the output "
     "folder; the formats named are converted from it when the run ends (by taskscope run; "
     "otherwise taskscope convert)",
     p_trace},
    {"TASKSCOPE_TRACE_MAX_MB", "0", "0 (no limit) to 2^44",
     "the trace stops, marked truncated, when it would grow past this many MiB", p_trace_max},
    {"TASKSCOPE_SUMMARY", "0", "1/0, true/false, yes/no, on/off",
     "print the summary table to stderr at finalize (taskscope run sets 1)", p_summary},
    {"TASKSCOPE_QUIET", "0", "1/0, true/false, yes/no, on/off",
     "1: taskscope prints warnings and errors only, no notes (what this machine lacks, where "
     "the outputs went); taskscope run -q sets it",
     p_quiet},
    {"TASKSCOPE_VERBOSE", "0", "1/0, true/false, yes/no, on/off",
     "1: the notes on what this machine lacks (hardware counters, RAPL) on every run; 0: once "
     "per machine (a marker in ~/.cache/taskscope); profile.json's \"notes\" keep them always",
     p_verbose},
    {"TASKSCOPE_SUMMARY_SORT", "self", "self, running, elapsed, calls, mean, name",
     "summary table order (descending, name ascending; excl and incl, the names before "
     "version 0.2, mean self and running)",
     p_sort},
    {"TASKSCOPE_SUMMARY_ROWS", "20", "0 to 1000000 (0: all)", "rows in the summary table", p_rows},
    {"TASKSCOPE_CLOCK", "auto", "auto, tsc, monotonic",
     "timestamp source; auto uses the invariant TSC when the CPU has one", p_clock},
    {"TASKSCOPE_TOOLS", "", "colon-separated plugin paths or names (docs/tools.md)",
     "tool plugins to load at tscope_init, in this order", p_tools},
    {"TASKSCOPE_SAMPLE_MS", "1000", "0 (off) or 5 to 3600000",
     "period of the sampler thread (docs/sampling.md)", p_sample_ms},
    {"TASKSCOPE_SAMPLE_KEEP", "4096", "16 to 1000000",
     "rows of the sampled time series kept (older rows are thinned, never the whole run lost)",
     p_sample_keep},
    {"TASKSCOPE_LIVE", "",
     "HOST:PORT/SECRET, the whole value `taskscope dashboard` prints (empty: off)",
     "stream snapshots to a running `taskscope dashboard` there (docs/dashboard.md); the "
     "sampler then samples at least every TASKSCOPE_LIVE_MS",
     p_live},
    {"TASKSCOPE_LIVE_MS", "100", "10 to 60000", "period of the live snapshots", p_live_ms},
    {"TASKSCOPE_LIVE_QUEUE", "64", "1 to 4096",
     "snapshots queued for a slow or absent dashboard before the oldest is dropped (drops are "
     "counted and shown)",
     p_live_queue},
    {"TASKSCOPE_POWER_MODEL", "2,10", "IDLE,MAX watts per CPU",
     "the power estimate used where RAPL is not readable", p_power_model},
    {"TASKSCOPE_POLICY", "none", "none, throttle, optimize, powercap",
     "the built-in policy a runtime starts (docs/policy.md)", p_builtin_policy},
    {"TASKSCOPE_POLICY_PERIOD_MS", "100", "1 to 60000", "period of the built-in policy",
     p_policy_period},
    {"TASKSCOPE_THROTTLE_TYPE", "", "a task type name (empty: throughput)",
     "what thread throttling optimises: that type's mean time, or tasks per second",
     p_throttle_type},
    {"TASKSCOPE_POWER_BAND", "0,1000000", "LOW,HIGH watts",
     "the band power capping keeps the power in", p_power_band},
    {"TASKSCOPE_SCORE_WEIGHTS", "1,1,1", "SPEED,EFFICIENCY,POWER weights >= 0, not all 0",
     "weights of node.score (docs/sampling.md)", p_score_weights},
    {"TASKSCOPE_OPTIMIZE_WEIGHTS", "1,0.5,0.5", "TIME,RESOURCES,ENERGY weights >= 0, not all 0",
     "what the optimize policy minimises (docs/policy.md)", p_optimize_weights},
    {"TASKSCOPE_PAPI_EVENTS", "", "comma-separated PAPI event names (empty: none)",
     "PAPI events the sampler counts, when built with PAPI (docs/sampling.md)", p_papi_events},
};

int tscope__config_load(struct tscope__config *cfg, FILE *warn)
{
    memset(cfg, 0, sizeof *cfg);
    int warnings = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        int rc = vars[i].parse(cfg, vars[i].def);
        (void)rc; /* defaults always parse: tests/test_config.c checks it */
        const char *v = getenv(vars[i].name);
        if (!v)
            continue;
        if (vars[i].parse(cfg, v) != 0) {
            vars[i].parse(cfg, vars[i].def);
            if (warn)
                fprintf(warn,
                        "taskscope: warning: %s=\"%s\" is invalid (accepted: %s); using the "
                        "default \"%s\"\n",
                        vars[i].name, v, vars[i].accepted, vars[i].def);
            warnings++;
        }
    }
    return warnings;
}

int tscope__config_check(const char *name, const char *value, const char **accepted)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        if (strcmp(vars[i].name, name) != 0)
            continue;
        *accepted = vars[i].accepted;
        struct tscope__config *scratch = calloc(1, sizeof *scratch);
        int rc = scratch ? vars[i].parse(scratch, value) : -1;
        free(scratch);
        return rc ? -1 : 0;
    }
    *accepted = "";
    return -2;
}

void tscope__config_describe(FILE *out)
{
    fprintf(out, "| variable | default | accepted values | meaning |\n|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        fprintf(out, "| `%s` | `%s` | %s | %s |\n", vars[i].name, vars[i].def, vars[i].accepted,
                vars[i].meaning);
}

/* The TASKSCOPE_* variables read outside the table: the launcher's
 * messages to the library it starts, the adapters', the dashboard's, the
 * bundled plugins' (tools/) and those only the tests set. */
static const char *const others[] = {
    "TASKSCOPE_OUTPUT_DIR_PREPARED",   /* taskscope run: the folder it made */
    "TASKSCOPE_RUN_DIR",               /* taskscope run: an MPI job's run folder */
    "TASKSCOPE_LAUNCHER_PID",          /* taskscope run: whose program this is */
    "TASKSCOPE_ENV_CHECKED",           /* taskscope run: this check was done */
    "TASKSCOPE_PTHREAD_WAITS",         /* the pthread adapter */
    "TASKSCOPE_WEB_DIR",               /* taskscope dashboard: the page's folder */
    "TASKSCOPE_DASHBOARD_DEADLINE_MS", /* taskscope dashboard: tests' deadline */
    "TASKSCOPE_EVENTLOG",              /* tools/eventlog.c */
    "TASKSCOPE_EVENTLOG_DELIVERY",     /* tools/eventlog.c */
    "TASKSCOPE_DUMMY_DELIVERY",        /* tools/dummy.c */
};

#define NVARS (sizeof vars / sizeof vars[0])
#define NOTHERS (sizeof others / sizeof others[0])

int tscope__config_known(const char *name)
{
    for (size_t i = 0; i < NVARS; i++)
        if (strcmp(vars[i].name, name) == 0)
            return 1;
    for (size_t i = 0; i < NOTHERS; i++)
        if (strcmp(others[i], name) == 0)
            return 1;
    return 0;
}

extern char **environ;

int tscope__config_check_environ(FILE *warn)
{
    int rank = 0;
    const char *checked = getenv("TASKSCOPE_ENV_CHECKED");
    if ((checked && *checked) || (tscope_rank_from_env(&rank, NULL) && rank != 0))
        return 0;
    /* compared without the common prefix: only the rest can be mistyped */
    const char *names[NVARS + NOTHERS];
    for (size_t i = 0; i < NVARS; i++)
        names[i] = vars[i].name + 10;
    for (size_t i = 0; i < NOTHERS; i++)
        names[NVARS + i] = others[i] + 10;
    int warnings = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TASKSCOPE_", 10) != 0)
            continue;
        size_t n = strcspn(*e, "=");
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(n < 127 ? n : 127), *e);
        if (tscope__config_known(name))
            continue;
        const char *close = tscope__closest(name + 10, strlen(name + 10), names, NVARS + NOTHERS);
        if (warn && close)
            fprintf(warn,
                    "taskscope: warning: %s is not a taskscope variable (did you mean "
                    "TASKSCOPE_%s?)\n",
                    name, close);
        else if (warn)
            fprintf(warn,
                    "taskscope: warning: %s is not a taskscope variable (docs/configuration.md "
                    "lists them)\n",
                    name);
        warnings++;
    }
    return warnings;
}
