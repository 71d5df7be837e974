/* trace.c - what tracing (TASKSCOPE_TRACE, src/trace) costs, and how fast
 * its converters are (`scripts/bench trace`).
 *
 * Variants, each its own init/finalize cycle, profile against trace
 * interleaved in every repetition so that drift affects both alike:
 *   producer   ns per start/end pair on the producer (chunks of 100000
 *              pairs in a 1M-record ring, a flush between chunks, only the
 *              loop timed, as event_cost's "profile"); metric
 *              producer_ratio = trace / profile (target <= 1.10)
 *   sustained  pairs per second absorbed from a flood (default ring, no
 *              pauses: consumer-bound), metric sustained_ratio = trace /
 *              profile (target >= 0.8)
 *   taskbench  200000 empty tasks in 8 types on the bundled runtime with 2
 *              workers: wall time, and the trace's size
 *   bytes_per_event  trace file bytes / events, for the event_cost flood
 *              and taskbench, and their mean (target <= 12)
 *   convert    the largest trace of each kind converted by each writer
 *              (Chrome JSON to a file, OTF2, Paraver), events per second
 *              (the median of the repetitions)
 *
 * usage: bench_trace [pairs (default 10000000)] [repetitions (default 5)]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <taskscope/rt.h>
#include <taskscope/taskscope.h>

#include "bench.h"
#include "trace/convert.h"

static uint64_t pairs = 10000000;
static tscope_type_t type;
static char base[] = "/tmp/taskscope-bench-trace-XXXXXX";
static char dir[300];

static void setup(int trace, const char *ring, const char *name)
{
    snprintf(dir, sizeof dir, "%s/%s", base, name);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        exit(1);
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_TRACE", trace ? "1" : "0", 1);
    setenv("TASKSCOPE_RING_SIZE", ring, 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_INSTANCE_CAP", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    setenv("TASKSCOPE_QUIET", "1", 1);
    if (tscope_init(0, 1)) {
        fprintf(stderr, "bench_trace: tscope_init failed\n");
        exit(1);
    }
    tscope_type_register("bench", &type);
}

/* Bytes and events of the trace just written (0 when none). */
static double trace_size(double *events)
{
    char path[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", dir);
    struct stat sb;
    *events = 0;
    if (stat(path, &sb) != 0)
        return 0;
    struct tscope__trace *t;
    if (tscope__trace_open(path, &t, err, sizeof err)) {
        fprintf(stderr, "bench_trace: %s\n", err);
        exit(1);
    }
    const struct tscope__trace_info *i = tscope__trace_info(t);
    if (!i->has_end || i->end_lost) {
        fprintf(stderr, "bench_trace: %s: %s, %llu events lost\n", path,
                tscope__trace_status_text(i->status, i->cut), (unsigned long long)i->end_lost);
        exit(1);
    }
    *events = (double)i->end_events;
    tscope__trace_close(t);
    return (double)sb.st_size;
}

static void check_calls(uint64_t want)
{
    tscope_type_stats_t st;
    tscope_query_type(type, &st);
    if (st.calls != want) {
        fprintf(stderr, "bench_trace: expected %llu calls, got %llu\n", (unsigned long long)want,
                (unsigned long long)st.calls);
        exit(1);
    }
}

static double producer(int trace)
{
    setup(trace, "1048576", trace ? "producer-trace" : "producer");
    static uint64_t next = 1;
    double timed = 0;
    const uint64_t chunk = 100000;
    for (uint64_t done = 0; done < pairs; done += chunk) {
        uint64_t end = done + chunk < pairs ? done + chunk : pairs;
        double t0 = bench_now_s();
        for (uint64_t i = done; i < end; i++) {
            tscope_task_start(next + i, type);
            tscope_task_end(next + i);
        }
        timed += bench_now_s() - t0;
        tscope_flush();
    }
    next += pairs;
    check_calls(pairs);
    tscope_finalize();
    return timed * 1e9 / (double)pairs;
}

/* Pairs per second; *bytes, *events: the trace's. */
static double sustained(int trace, double *bytes, double *events)
{
    setup(trace, "16384", trace ? "sustained-trace" : "sustained");
    static uint64_t next = 1ull << 40;
    double t0 = bench_now_s();
    for (uint64_t i = 0; i < pairs; i++) {
        tscope_task_start(next + i, type);
        tscope_task_end(next + i);
    }
    tscope_flush();
    double secs = bench_now_s() - t0;
    next += pairs;
    check_calls(pairs);
    tscope_finalize();
    *bytes = trace_size(events);
    return (double)pairs / secs;
}

static void empty(void *arg)
{
    (void)arg;
}

/* Seconds; *bytes, *events: the trace's. */
static double taskbench(int trace, double *bytes, double *events)
{
    setup(trace, "16384", trace ? "taskbench-trace" : "taskbench");
    tscope_type_t types[8];
    for (int k = 0; k < 8; k++) {
        char name[32];
        snprintf(name, sizeof name, "taskbench_class%d", k);
        tscope_type_register(name, &types[k]);
    }
    double t0 = bench_now_s();
    tscope_rt_init(2);
    for (size_t i = 0; i < 200000; i++) {
        tscope_rt_spawn_opts_t o = {sizeof o, types[i % 8], 0, 0, 0, NULL, 0};
        if (tscope_rt_spawn(empty, NULL, &o, NULL))
            exit(1);
    }
    tscope_rt_taskwait();
    tscope_rt_finalize();
    double secs = bench_now_s() - t0;
    tscope_finalize();
    *bytes = trace_size(events);
    return secs;
}

/* Events per second converting the trace in folder name to format. */
static double convert(const char *name, int format, double events)
{
    char in[400], out[400], err[1400], cmd[900];
    snprintf(in, sizeof in, "%s/%s/trace.tsct", base, name);
    tscope__trace_default_output(in, format, 0, out, sizeof out);
    struct tscope__replay_stats st;
    double t0 = bench_now_s();
    if (tscope__trace_convert(in, format, out, 0, &st, err, sizeof err)) {
        fprintf(stderr, "bench_trace: %s\n", err);
        return 0;
    }
    double secs = bench_now_s() - t0;
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'/%s/trace.pcf '%s'/%s/trace.row", out, base, name,
             base, name);
    if (system(cmd) != 0)
        exit(1);
    return events / secs;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        pairs = strtoull(argv[1], NULL, 10);
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (pairs < 100000 || reps < 1 || reps > 50) {
        fprintf(stderr, "usage: bench_trace [pairs >= 100000] [repetitions 1..50]\n");
        return 2;
    }
    if (!mkdtemp(base)) {
        fprintf(stderr, "bench_trace: cannot create %s\n", base);
        return 1;
    }
    static const struct {
        const char *name;
        int format;
    } writers[] = {{"chrome", TSCOPE__FMT_CHROME},
                   {"otf2", TSCOPE__FMT_OTF2},
                   {"paraver", TSCOPE__FMT_PARAVER}};
    enum { NW = sizeof writers / sizeof writers[0] };
    double prod[2][50], sust[2][50], tb[2][50], conv[2][NW][50];
    double bytes[2] = {0, 0}, events[2] = {0, 0};
    for (int r = 0; r < reps; r++) {
        for (int trace = 0; trace < 2; trace++)
            prod[trace][r] = producer(trace);
        for (int trace = 0; trace < 2; trace++)
            sust[trace][r] = sustained(trace, &bytes[0], &events[0]);
        for (int trace = 0; trace < 2; trace++)
            tb[trace][r] = taskbench(trace, &bytes[1], &events[1]);
        for (int w = 0; w < NW; w++) {
            conv[0][w][r] = convert("sustained-trace", writers[w].format, events[0]);
            conv[1][w][r] = convert("taskbench-trace", writers[w].format, events[1]);
        }
    }
    double p0 = bench_median(prod[0], reps), p1 = bench_median(prod[1], reps);
    bench_result("trace", "profile", "ns_per_pair", p0, "ns");
    bench_result("trace", "trace", "ns_per_pair", p1, "ns");
    bench_result("trace", "producer", "producer_ratio", p1 / p0, "ratio");
    double s0 = bench_median(sust[0], reps), s1 = bench_median(sust[1], reps);
    bench_result("trace", "profile_sustained", "pairs_per_s", s0, "pairs/s");
    bench_result("trace", "trace_sustained", "pairs_per_s", s1, "pairs/s");
    bench_result("trace", "sustained", "sustained_ratio", s1 / s0, "ratio");
    double t0 = bench_median(tb[0], reps), t1 = bench_median(tb[1], reps);
    bench_result("trace", "taskbench_profile", "time", t0, "s");
    bench_result("trace", "taskbench_trace", "time", t1, "s");
    bench_result("trace", "taskbench", "time_ratio", t1 / t0, "ratio");
    double b0 = bytes[0] / events[0], b1 = bytes[1] / events[1];
    bench_result("trace", "event_cost", "bytes_per_event", b0, "bytes");
    bench_result("trace", "taskbench", "bytes_per_event", b1, "bytes");
    bench_result("trace", "mean", "bytes_per_event", (b0 + b1) / 2, "bytes");
    for (int w = 0; w < NW; w++) {
        char variant[64];
        for (int k = 0; k < 2; k++) {
            double m = bench_median(conv[k][w], reps);
            if (m <= 0)
                continue; /* said why above (a writer not built) */
            snprintf(variant, sizeof variant, "%s_%s", writers[w].name,
                     k ? "taskbench" : "event_cost");
            bench_result("trace_convert", variant, "events_per_s", m, "events/s");
        }
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    return system(cmd) != 0;
}
