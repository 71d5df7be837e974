/* event_cost.c - cost of one begin/end pair on the producer.
 *
 * Variants (each its own init/finalize cycle, outputs off, 10M start/end
 * pairs on one registered type - tscope_task_start is the begin of a task
 * that was not created separately - only the loop timed).  Every thread
 * aggregates its own events in its shard of the profile (issue 26): no
 * ring and no consumer work to wait for, so the loops run without pauses
 * unless a variant says otherwise.
 *   rdtsc_pair  two raw timestamp reads: the floor
 *   disabled    TASKSCOPE_ENABLE=0: one branch per event
 *   shards      the pair on a task handle (tscope_task_start_h /
 *               tscope_task_end_h), which the calling thread adds to its
 *               own shard: two clock reads and the aggregation.  Its
 *               ratio_to_rdtsc_pair is what the producer pays for the pair
 *               with aggregation
 *   shards_ids  the default path, the pair by id (tscope_task_start /
 *               tscope_task_end): the calling thread aggregates it in its
 *               shard as a handle's (a started task needs no id map: its
 *               end finds it on the thread's stack).  The base of the
 *               ratio_to_shards_ids metrics
 *   naive       TASKSCOPE_MODE=naive: the same shards, every event under
 *               one process-wide lock
 *   dummy       shards_ids with the dummy tool plugin, synchronous delivery:
 *               the thread aggregates each event and hands its shadow to
 *               the plugin's empty callbacks on the spot
 *   dummy_batched  the dummy plugin with batched delivery: the thread
 *               aggregates each event and puts its shadow in its ring for
 *               the consumer, which calls the plugin.  The producer's cost:
 *               pairs are issued in chunks that fit in the ring
 *               (TASKSCOPE_RING_SIZE=1048576, 100000 pairs a chunk); the
 *               consumer's catch-up between chunks (a flush) is not timed
 *   dummy_only  the dummy plugin, synchronous, with the built-in profiler off
 *               (TASKSCOPE_PROFILER=0): the tools interface alone, as the
 *               overhead harness's "dummy" variant runs it; its
 *               ratio_to_disabled
 *   shards_thread  shards_ids on a thread of its own, started for the run
 *               (its shard in ordinary memory), after 600000 pairs of
 *               another type (untimed: the shard's first allocations and
 *               page faults)
 *   shards_mapping  the same with the mapping on, as under `taskscope run`
 *               (TASKSCOPE_OUTPUT_DIR_PREPARED set to a prepared folder):
 *               the thread's shard, slot and ring in the process's shared
 *               file mapping in /dev/shm, the crash journal.  mapping_ratio
 *               (to shards_thread) is what keeping the profile in the
 *               mapping costs the producer: the median of their ratios,
 *               run one after the other in each repetition (a fresh
 *               thread's time jumps by up to 60% between repetitions on a
 *               shared VM, and the ratio of two medians followed it)
 *
 * usage: event_cost [pairs (default 10000000)] [repetitions (default 5)]
 * Each ns_per_pair is the median of the repetitions.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* The same pairs on task handles (the shards variant). */
static double loop_handles(uint64_t first_id)
{
    double t0 = bench_now_s();
    for (uint64_t i = 0; i < pairs; i++)
        tscope_task_end_h(tscope_task_start_h(first_id + i, type));
    return (bench_now_s() - t0) * 1e9 / (double)pairs;
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

/* One variant on the main thread; chunk > 0 (dummy_batched) gives the
 * rings room for a chunk's shadows. */
static double run_variant(const char *variant, const char *enable, const char *mode, uint64_t chunk)
{
    setup(enable, mode, chunk ? "1048576" : "16384");
    static uint64_t next_id = 1;
    double ns =
        strcmp(variant, "shards") == 0 ? loop_handles(next_id) : loop_events(next_id, chunk);
    next_id += pairs;
    tscope_finalize();
    check_counts(variant);
    return ns;
}

/* The output folder as `taskscope run` prepares it, named in
 * TASKSCOPE_OUTPUT_DIR_PREPARED while shards_mapping runs: with it set,
 * tscope_init starts the mapping there. */
static char map_dir[] = "/tmp/taskscope-bench-XXXXXX";

struct fresh {
    uint64_t first;
    double ns;
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
    int *done;
};

/* Runs the loop on its own thread, then stays registered until the end of
 * the program: the next such thread gets a new slot, not this one (slots
 * outlive init cycles, and one made in another cycle is in other memory). */
static void *fresh_loop(void *arg)
{
    struct fresh *f = arg;
    /* untimed: registration (where the mapping maps and populates the
     * slot) and pairs of another type (where the shard makes its first
     * entries and its memory, ordinary or mapped, takes its first-touch
     * faults), so that both variants time only the steady state */
    tscope_type_t warm;
    tscope_type_register("warm-up", &warm);
    for (uint64_t i = 0; i < 600000; i++) {
        tscope_task_start(f->first - 600000 + i, warm);
        tscope_task_end(f->first - 600000 + i);
    }
    tscope_flush();
    f->ns = loop_events(f->first, 0);
    pthread_mutex_lock(f->lock);
    *f->done = 1;
    pthread_cond_broadcast(f->cond);
    while (*f->done != 2)
        pthread_cond_wait(f->cond, f->lock);
    pthread_mutex_unlock(f->lock);
    return NULL;
}

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static int park_state[200];
static struct fresh park_runs[200];
static pthread_t park_threads[200];
static int nparked;

/* shards_ids on a new thread; mapping != 0: with the mapping on. */
static double run_fresh(const char *variant, int mapping)
{
    if (mapping)
        setenv("TASKSCOPE_OUTPUT_DIR_PREPARED", map_dir, 1);
    setup("1", "profile", "16384");
    static uint64_t next_id = 1ull << 40;
    int k = nparked++;
    park_runs[k] = (struct fresh){next_id + 600000, 0, &park_lock, &park_cond, &park_state[k]};
    next_id += pairs + 600000;
    if (pthread_create(&park_threads[k], NULL, fresh_loop, &park_runs[k])) {
        fprintf(stderr, "event_cost: cannot start a thread\n");
        exit(1);
    }
    pthread_mutex_lock(&park_lock);
    while (!park_state[k])
        pthread_cond_wait(&park_cond, &park_lock);
    pthread_mutex_unlock(&park_lock);
    tscope_finalize();
    unsetenv("TASKSCOPE_OUTPUT_DIR_PREPARED");
    check_counts(variant);
    return park_runs[k].ns;
}

static void unpark_all(void)
{
    pthread_mutex_lock(&park_lock);
    for (int k = 0; k < nparked; k++)
        park_state[k] = 2;
    pthread_cond_broadcast(&park_cond);
    pthread_mutex_unlock(&park_lock);
    for (int k = 0; k < nparked; k++)
        pthread_join(park_threads[k], NULL);
}

enum variant {
    RDTSC_PAIR,
    DISABLED,
    NAIVE,
    DUMMY,
    DUMMY_BATCHED,
    DUMMY_ONLY,
    SHARDS,
    SHARDS_IDS,
    SHARDS_THREAD,
    SHARDS_MAPPING,
    NVARIANTS
};

static const char *const variant_names[NVARIANTS] = {
    [RDTSC_PAIR] = "rdtsc_pair",
    [DISABLED] = "disabled",
    [NAIVE] = "naive",
    [DUMMY] = "dummy",
    [DUMMY_BATCHED] = "dummy_batched",
    [DUMMY_ONLY] = "dummy_only",
    [SHARDS] = "shards",
    [SHARDS_IDS] = "shards_ids",
    [SHARDS_THREAD] = "shards_thread",
    [SHARDS_MAPPING] = "shards_mapping",
};

static void ratio(enum variant v, const char *metric, enum variant base, const double *med)
{
    bench_result("event_cost", variant_names[v], metric, med[v] / med[base], "x");
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
    if (reps > 50) {
        fprintf(stderr, "event_cost: at most 50 repetitions\n");
        return 2;
    }
    if (!mkdtemp(map_dir)) {
        fprintf(stderr, "event_cost: cannot create %s\n", map_dir);
        return 1;
    }
    double v[NVARIANTS][100];
    char dummy[1200];
    snprintf(dummy, sizeof dummy, "%s/libtaskscope-tool-dummy.so", TSCOPE_TOOLS_DIR);
    /* Interleave the variants so drift affects all of them alike. */
    for (int r = 0; r < reps; r++) {
        v[RDTSC_PAIR][r] = loop_rdtsc();
        v[DISABLED][r] = run_variant("disabled", "0", "profile", 0);
        v[NAIVE][r] = run_variant("naive", "1", "naive", 0);
        tools = dummy;
        setenv("TASKSCOPE_DUMMY_DELIVERY", "sync", 1);
        v[DUMMY][r] = run_variant("dummy", "1", "profile", 0);
        setenv("TASKSCOPE_DUMMY_DELIVERY", "batched", 1);
        v[DUMMY_BATCHED][r] = run_variant("dummy_batched", "1", "profile", 100000);
        setenv("TASKSCOPE_DUMMY_DELIVERY", "sync", 1);
        profiler = "0";
        v[DUMMY_ONLY][r] = run_variant("dummy_only", "1", "profile", 0);
        profiler = "1";
        tools = "";
        v[SHARDS][r] = run_variant("shards", "1", "profile", 0);
        v[SHARDS_IDS][r] = run_variant("shards_ids", "1", "profile", 0);
        v[SHARDS_THREAD][r] = run_fresh("shards_thread", 0);
        v[SHARDS_MAPPING][r] = run_fresh("shards_mapping", 1);
    }
    unpark_all();
    rmdir(map_dir);
    double paired[100]; /* before the medians sort v */
    for (int r = 0; r < reps; r++)
        paired[r] = v[SHARDS_MAPPING][r] / v[SHARDS_THREAD][r];
    double med[NVARIANTS];
    for (int i = 0; i < NVARIANTS; i++) {
        med[i] = bench_median(v[i], reps);
        bench_result("event_cost", variant_names[i], "ns_per_pair", med[i], "ns");
    }
    ratio(SHARDS, "ratio_to_rdtsc_pair", RDTSC_PAIR, med);
    ratio(SHARDS_IDS, "ratio_to_rdtsc_pair", RDTSC_PAIR, med);
    ratio(SHARDS, "ratio_to_shards_ids", SHARDS_IDS, med);
    ratio(NAIVE, "ratio_to_shards_ids", SHARDS_IDS, med);
    ratio(DUMMY, "ratio_to_shards_ids", SHARDS_IDS, med);
    ratio(DUMMY_BATCHED, "ratio_to_shards_ids", SHARDS_IDS, med);
    ratio(DUMMY_ONLY, "ratio_to_disabled", DISABLED, med);
    bench_result("event_cost", variant_names[SHARDS_MAPPING], "mapping_ratio",
                 bench_median(paired, reps), "x");
    return 0;
}
