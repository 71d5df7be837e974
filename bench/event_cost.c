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
 *   profile_thread  profile on a thread of its own, started for the run
 *               (its slot and ring are new: ordinary memory); before the
 *               timed loop it runs 600000 pairs of another type, which
 *               touch every page of its ring
 *   profile_journal  the same with the crash journal on, as under
 *               `taskscope run`: the new thread's slot and ring live in the
 *               journal's shared file mapping, and the consumer writes each
 *               batch to the journal before releasing it.  Its ratio to
 *               profile_thread is what the journal costs the producer.
 *   profile_sustained_journal  profile_sustained with the journal: what it
 *               costs the consumer, as events absorbed per second
 *   shards_ids  TASKSCOPE_AGGREGATE=thread (the default), the pair by id
 *               (tscope_task_start / tscope_task_end): the calling thread
 *               aggregates it in its shard as a handle's (a started task
 *               needs no id map: its end finds it on the thread's stack)
 *   shards_thread  shards_ids on a thread of its own, started for the run
 *               (its shard in ordinary memory), after 600000 pairs of
 *               another type, as profile_thread
 *   shards_mapping  the same with the mapping on, as under `taskscope run`:
 *               the thread's shard, slot and ring in the process's shared
 *               file mapping in /dev/shm.  mapping_ratio (to shards_thread)
 *               is what keeping the profile in the mapping costs the
 *               producer
 *   shards      TASKSCOPE_AGGREGATE=thread: the pair on a task handle
 *               (tscope_task_start_h / tscope_task_end_h), which the calling
 *               thread adds to its own shard of the profile (issue 26): two
 *               clock reads and the aggregation, no ring, no consumer work
 *               to wait for, so no chunks.  Its ratio_to_rdtsc_pair is what
 *               the producer pays for the pair with aggregation; its
 *               ratio_to_profile compares it with the ring path
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
static const char *aggregate = "consumer";

static void setup(const char *enable, const char *mode, const char *ring)
{
    setenv("TASKSCOPE_AGGREGATE", aggregate, 1);
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
    double ns =
        strcmp(variant, "shards") == 0 ? loop_handles(next_id) : loop_events(next_id, chunk);
    next_id += pairs;
    tscope_finalize();
    check_counts(variant);
    return ns;
}

/* The crash journal's folder (as `taskscope run` prepares it), set while
 * a *_journal variant runs. */
static char journal_dir[] = "/tmp/taskscope-bench-XXXXXX";

struct fresh {
    uint64_t first, chunk;
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
    /* untimed: registration (where the journal maps and populates the
     * slot) and one pass over every page of the ring (where ordinary
     * memory takes its first-touch faults), so that both variants time
     * only the records */
    tscope_type_t warm;
    tscope_type_register("warm-up", &warm);
    for (uint64_t i = 0; i < 600000; i++) {
        tscope_task_start(f->first - 600000 + i, warm);
        tscope_task_end(f->first - 600000 + i);
    }
    tscope_flush();
    f->ns = loop_events(f->first, f->chunk);
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

static double run_fresh(const char *variant, int journal, uint64_t chunk)
{
    if (journal)
        setenv("TASKSCOPE_OUTPUT_DIR_PREPARED", journal_dir, 1);
    setup("1", "profile", chunk ? "1048576" : "16384");
    static uint64_t next_id = 1ull << 40;
    int k = nparked++;
    park_runs[k] =
        (struct fresh){next_id + 600000, chunk, 0, &park_lock, &park_cond, &park_state[k]};
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
    tscope_type_stats_t st;
    tscope_query_type(type, &st);
    /* events of the benchmark's type that did not arrive, from its task
     * count (the totals also hold the sampler's counter events: a plain
     * difference of totals wrapped below zero, 9.2e19, in earlier runs) */
    uint64_t expected = 2 * (pairs / 2), got = st.calls;
    *lost += 2.0 * (double)(expected > got ? expected - got : 0);
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
    if (reps > 50) {
        fprintf(stderr, "event_cost: at most 50 repetitions\n");
        return 2;
    }
    if (!mkdtemp(journal_dir)) {
        fprintf(stderr, "event_cost: cannot create %s\n", journal_dir);
        return 1;
    }
    double v[15][100];
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
        setenv("TASKSCOPE_DUMMY_DELIVERY", "sync", 1);
        v[8][r] = run_fresh("profile_thread", 0, 100000);
        v[9][r] = run_fresh("profile_journal", 1, 100000);
        v[10][r] = run_fresh("profile_sustained_journal", 1, 0);
        aggregate = "thread";
        v[11][r] = run_variant("shards", "1", "profile", 0);
        v[12][r] = run_variant("shards_ids", "1", "profile", 0);
        v[13][r] = run_fresh("shards_thread", 0, 0);
        v[14][r] = run_fresh("shards_mapping", 1, 0);
        aggregate = "consumer";
    }
    unpark_all();
    rmdir(journal_dir);
    const char *names[15] = {"rdtsc_pair",
                             "disabled",
                             "profile",
                             "naive",
                             "profile_sustained",
                             "dummy",
                             "dummy_batched",
                             "dummy_only",
                             "profile_thread",
                             "profile_journal",
                             "profile_sustained_journal",
                             "shards",
                             "shards_ids",
                             "shards_thread",
                             "shards_mapping"};
    double med[15];
    for (int i = 0; i < 15; i++) {
        med[i] = bench_median(v[i], reps);
        bench_result("event_cost", names[i], "ns_per_pair", med[i], "ns");
    }
    bench_result("event_cost", "profile", "ratio_to_rdtsc_pair", med[2] / med[0], "x");
    bench_result("event_cost", "naive", "ratio_to_profile", med[3] / med[2], "x");
    bench_result("event_cost", "dummy", "ratio_to_profile", med[5] / med[2], "x");
    bench_result("event_cost", "dummy_batched", "ratio_to_profile", med[6] / med[2], "x");
    bench_result("event_cost", "dummy_only", "ratio_to_disabled", med[7] / med[1], "x");
    bench_result("event_cost", "profile_journal", "ratio_to_profile_thread", med[9] / med[8], "x");
    bench_result("event_cost", "profile_sustained_journal", "ratio_to_profile_sustained",
                 med[10] / med[4], "x");
    bench_result("event_cost", "shards", "ratio_to_rdtsc_pair", med[11] / med[0], "x");
    bench_result("event_cost", "shards", "ratio_to_profile", med[11] / med[2], "x");
    bench_result("event_cost", "shards_ids", "ratio_to_profile", med[12] / med[2], "x");
    bench_result("event_cost", "shards_mapping", "mapping_ratio", med[14] / med[13], "x");
    consumer_throughput(reps);
    return 0;
}
