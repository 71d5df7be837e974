/* event_cost.c - cost of one begin/end pair on the producer, and consumer
 * throughput.
 *
 * Variants (each its own init/finalize cycle, outputs off, 10M start/end
 * pairs on one registered type - tscope_task_start is the begin of a task
 * that was not created separately - only the loop timed):
 *   rdtsc_pair  two raw timestamp reads: the floor
 *   disabled    TASKSCOPE_ENABLE=0: one branch per event
 *   profile     the default: rings + consumer thread.  The producer's cost:
 *               pairs are issued in chunks that fit in the ring
 *               (TASKSCOPE_RING_SIZE=1048576, 100000 pairs a chunk); the
 *               consumer's catch-up between chunks (a flush) is not timed
 *   profile_sustained  default ring, no pauses: the rate at which the
 *               consumer absorbs a flood of empty tasks (the producer waits
 *               whenever its ring is full)
 *   naive       TASKSCOPE_MODE=naive: every event under the store lock
 *   dummy       profile with the dummy tool plugin, synchronous delivery:
 *               every event takes the slow path and calls empty callbacks
 *   dummy_batched  the dummy plugin with batched delivery (consumer side),
 *               chunked like profile
 *   dummy_only  the dummy plugin, synchronous, with the built-in profiler off
 *               (TASKSCOPE_PROFILER=0): the tools interface alone, as the
 *               overhead harness's "dummy" variant runs it
 * consumer/profile: 2 producer threads, events processed per second from the
 * first event until a flush returned (median of the repetitions), and the
 * number of events lost over all repetitions (must be 0 with the wait
 * policy).
 *
 * usage: event_cost [pairs (default 10000000)] [repetitions (default 5)]
 * Each ns_per_pair is the median of the repetitions.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <taskscope/taskscope.h>

#include "bench.h"

static uint64_t pairs = 10000000;
static tscope_type_t type;

static double loop_rdtsc(void)
{
    volatile uint64_t sink = 0;
    double t0 = bench_now_s();
    for (uint64_t i = 0; i < pairs; i++) {
#if defined(__x86_64__) || defined(__i386__)
        sink += __rdtsc();
        sink += __rdtsc();
#else
        sink += bench_now_s() > 0;
        sink += bench_now_s() > 0;
#endif
    }
    (void)sink;
    return (bench_now_s() - t0) * 1e9 / (double)pairs;
}

/* Times `pairs` begin/end pairs; with chunk > 0 the clock stops for a flush
 * after every chunk pairs. */
static double loop_events(uint64_t first_id, uint64_t chunk)
{
    double timed = 0;
    uint64_t step = chunk ? chunk : pairs;
    for (uint64_t done = 0; done < pairs; done += step) {
        uint64_t end = done + step < pairs ? done + step : pairs;
        double t0 = bench_now_s();
        for (uint64_t i = done; i < end; i++) {
            tscope_task_start(first_id + i, type);
            tscope_task_end(first_id + i);
        }
        timed += bench_now_s() - t0;
        if (chunk)
            tscope_flush();
    }
    return timed * 1e9 / (double)pairs;
}

static const char *tools = "";
static const char *profiler = "1";

static void setup(const char *enable, const char *mode, const char *ring)
{
    setenv("TASKSCOPE_TOOLS", tools, 1);
    setenv("TASKSCOPE_PROFILER", profiler, 1);
    setenv("TASKSCOPE_RING_SIZE", ring, 1);
    setenv("TASKSCOPE_ENABLE", enable, 1);
    setenv("TASKSCOPE_MODE", mode, 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_INSTANCE_CAP", "0", 1);
    if (tscope_init(0, 1)) {
        fprintf(stderr, "event_cost: tscope_init failed\n");
        exit(1);
    }
    tscope_type_register("bench", &type);
}

static void check_counts(const char *variant)
{
    tscope_type_stats_t st;
    tscope_query_type(type, &st);
    tscope_totals_t tot;
    tscope_query_totals(&tot);
    int counted = strcmp(variant, "disabled") != 0 && strcmp(variant, "dummy_only") != 0;
    if (counted && (st.calls != pairs || tot.events_dropped)) {
        fprintf(stderr, "event_cost: %s: expected %llu calls, got %llu (dropped %llu)\n", variant,
                (unsigned long long)pairs, (unsigned long long)st.calls,
                (unsigned long long)tot.events_dropped);
        exit(1);
    }
}

static double run_variant(const char *variant, const char *enable, const char *mode, uint64_t chunk)
{
    setup(enable, mode, chunk ? "1048576" : "16384");
    static uint64_t next_id = 1;
    double ns = loop_events(next_id, chunk);
    next_id += pairs;
    tscope_finalize();
    check_counts(variant);
    return ns;
}

struct producer {
    uint64_t first;
    uint64_t n;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (uint64_t i = 0; i < p->n; i++) {
        tscope_task_start(p->first + i, type);
        tscope_task_end(p->first + i);
    }
    return NULL;
}

/* One run of 2 producers; returns events per second and adds to *lost and
 * *waits. */
static double consumer_run(double *lost, double *waits)
{
    setup("1", "profile", "16384");
    struct producer prod[2] = {{1, pairs / 2}, {1 + pairs, pairs / 2}};
    pthread_t tid[2];
    double t0 = bench_now_s();
    for (int i = 0; i < 2; i++)
        pthread_create(&tid[i], NULL, produce, &prod[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);
    tscope_flush();
    double secs = bench_now_s() - t0;
    tscope_totals_t tot;
    tscope_query_totals(&tot);
    uint64_t expected = 2 * (pairs / 2) * 2;
    *lost += (double)(expected - tot.events) + (double)tot.events_dropped;
    *waits += (double)tot.ring_waits;
    tscope_finalize();
    return (double)tot.events / secs;
}

static void consumer_throughput(int reps)
{
    double rate[100], lost = 0, waits = 0;
    for (int r = 0; r < reps; r++)
        rate[r] = consumer_run(&lost, &waits);
    bench_result("consumer", "profile", "events_per_s", bench_median(rate, reps), "events/s");
    bench_result("consumer", "profile", "events_lost", lost, "events");
    bench_result("consumer", "profile", "producer_waits", waits / reps, "waits");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        pairs = strtoull(argv[1], NULL, 10);
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (pairs < 2 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: event_cost [pairs >= 2] [repetitions 1..100]\n");
        return 2;
    }
    double v[8][100];
    char dummy[1200];
    snprintf(dummy, sizeof dummy, "%s/libtaskscope-tool-dummy.so", TSCOPE_TOOLS_DIR);
    /* Interleave the variants so drift affects all of them alike. */
    for (int r = 0; r < reps; r++) {
        v[0][r] = loop_rdtsc();
        v[1][r] = run_variant("disabled", "0", "profile", 0);
        v[2][r] = run_variant("profile", "1", "profile", 100000);
        v[3][r] = run_variant("naive", "1", "naive", 0);
        v[4][r] = run_variant("profile_sustained", "1", "profile", 0);
        tools = dummy;
        setenv("TASKSCOPE_DUMMY_DELIVERY", "sync", 1);
        v[5][r] = run_variant("dummy", "1", "profile", 100000);
        setenv("TASKSCOPE_DUMMY_DELIVERY", "batched", 1);
        v[6][r] = run_variant("dummy_batched", "1", "profile", 100000);
        setenv("TASKSCOPE_DUMMY_DELIVERY", "sync", 1);
        profiler = "0";
        v[7][r] = run_variant("dummy_only", "1", "profile", 100000);
        profiler = "1";
        tools = "";
    }
    const char *names[8] = {"rdtsc_pair",        "disabled", "profile",       "naive",
                            "profile_sustained", "dummy",    "dummy_batched", "dummy_only"};
    double med[8];
    for (int i = 0; i < 8; i++) {
        med[i] = bench_median(v[i], reps);
        bench_result("event_cost", names[i], "ns_per_pair", med[i], "ns");
    }
    bench_result("event_cost", "profile", "ratio_to_rdtsc_pair", med[2] / med[0], "x");
    bench_result("event_cost", "naive", "ratio_to_profile", med[3] / med[2], "x");
    bench_result("event_cost", "dummy", "ratio_to_profile", med[5] / med[2], "x");
    bench_result("event_cost", "dummy_batched", "ratio_to_profile", med[6] / med[2], "x");
    bench_result("event_cost", "dummy_only", "ratio_to_disabled", med[7] / med[1], "x");
    consumer_throughput(reps);
    return 0;
}
