/* test_api.c - lifecycle states, error codes, argument checks, names,
 * task ids, messages and the master switch. */
#include <pthread.h>

#include "core/core.h"
#include "core/names.h"
#include "harness.h"
#include "profile/store.h"

static void errors_and_version(void)
{
    ASSERT_STR_EQ(tscope_strerror(TSCOPE_EINVAL), "invalid argument");
    ASSERT_STR_EQ(tscope_err_name(TSCOPE_ENOENT), "TSCOPE_ENOENT");
    ASSERT_STR_EQ(tscope_strerror(12345), "unknown error");
    ASSERT_EQ(tscope_version(), TSCOPE_VERSION_HEX);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TSCOPE_VERSION_MAJOR, TSCOPE_VERSION_MINOR,
             TSCOPE_VERSION_PATCH);
    ASSERT_STR_EQ(tscope_version_string(), want);
}

static void states(void)
{
    ASSERT_EQ(tscope_task_start(1, 1), TSCOPE_ESTATE); /* before init */
    ASSERT_EQ(tscope_finalize(), TSCOPE_ESTATE);
    ASSERT_EQ(tscope_flush(), TSCOPE_ESTATE);
    ASSERT_EQ(tscope_init(0, 0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_init(3, 2), TSCOPE_EINVAL);
    harness_init();
    ASSERT_EQ(tscope_is_enabled(), 1);
    ASSERT_EQ(tscope_init(0, 1), TSCOPE_ESTATE);
    ASSERT_OK(tscope_finalize());
    ASSERT_EQ(tscope_is_enabled(), 0);
    ASSERT_EQ(tscope_task_start(1, 1), TSCOPE_ESTATE); /* after finalize */
    ASSERT_OK(tscope_flush());                         /* final data: nothing to wait for */
}

static void master_switch_off(void)
{
    setenv("TASKSCOPE_ENABLE", "no", 1);
    harness_init();
    ASSERT_EQ(tscope_is_enabled(), 0);
    tscope_type_t t = type_named("never");
    ASSERT_OK(tscope_task_start(5, t)); /* accepted and ignored */
    ASSERT_OK(tscope_task_end(5));
    ASSERT_OK(tscope_finalize());
    ASSERT_EQ(type_stats(t).calls, 0);
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events, 0);
    unsetenv("TASKSCOPE_ENABLE");
}

static void argument_checks(void)
{
    harness_init();
    tscope_type_t t;
    ASSERT_EQ(tscope_type_register("", &t), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_type_register(NULL, &t), TSCOPE_EINVAL);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    ASSERT_EQ(tscope_type_register(longname, &t), TSCOPE_EINVAL);
    tscope_type_t a = type_named("same"), b = type_named("same");
    ASSERT_EQ(a, b);
    char name[8];
    ASSERT_OK(tscope_type_name(a, name, sizeof name));
    ASSERT_STR_EQ(name, "same");
    ASSERT_EQ(tscope_type_name(9999, name, sizeof name), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_task_create(1, 0, a, 0x80, 0, 0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_dep_local(1, 2, NULL, (tscope_hazard_t)9), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_dep_remote(1, -1, 2, 0, NULL, TSCOPE_DEP_IN), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_counter_sample(0, 1.0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_custom_event(0, 1), TSCOPE_EINVAL);
    tscope_counter_stats_t cs;
    ASSERT_EQ(tscope_query_counter(777, &cs), TSCOPE_ENOENT);
    tscope_task_info_t ti;
    ASSERT_EQ(tscope_query_task(424242, &ti), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_query_type(60000, NULL), TSCOPE_EINVAL);
    /* task id 0 is "no task": every task event refuses it (it used to reach
     * the store, whose task index keeps 0 for empty entries: a crash) */
    ASSERT_EQ(tscope_task_create(0, 0, a, 0, 0, 0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_queued(0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_begin(0, a), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_start(0, a), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_yield(0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_resume(0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_end(0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_cancel(0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_begin(7, 0x10000), TSCOPE_EINVAL); /* no such type id */
    ASSERT_EQ(tscope_task_start(7, 0xFFFF), TSCOPE_EINVAL);
    tscope_totals_t tot;
    ASSERT_OK(tscope_flush());
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events, 0);
    ASSERT_EQ(tot.anomalies, 0);
    ASSERT_OK(tscope_finalize());
}

/* A type's attributes: kept by the name table, refused for unknown types
 * and bits. */
static void type_attributes(void)
{
    harness_init();
    tscope_type_t wait = type_named("barrier here"), work = type_named("work");
    ASSERT_OK(tscope_type_set_attrs(wait, TSCOPE_TYPE_WAIT));
    ASSERT_OK(tscope_type_set_attrs(wait, TSCOPE_TYPE_WAIT)); /* again: the same */
    ASSERT_EQ(tscope_type_set_attrs(work, 4), TSCOPE_EINVAL);
    ASSERT_OK(tscope_type_set_attrs(wait, TSCOPE_TYPE_BARRIER));
    ASSERT_EQ(tscope_type_set_attrs(9999, TSCOPE_TYPE_WAIT), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_type_set_attrs(0, TSCOPE_TYPE_WAIT), TSCOPE_ENOENT);
    ASSERT_EQ(tscope__names_attrs(&tscope__types, wait), TSCOPE_TYPE_WAIT | TSCOPE_TYPE_BARRIER);
    ASSERT_EQ(tscope__names_attrs(&tscope__types, work), 0);
    ASSERT_OK(tscope_finalize());
}

static void dependencies_and_counters(void)
{
    harness_init();
    tscope_counter_t c;
    ASSERT_OK(tscope_counter_register("depth", &c));
    int x;
    ASSERT_OK(tscope_dep_local(1, 2, &x, TSCOPE_DEP_RAW));
    ASSERT_OK(tscope_dep_local(2, 3, &x, TSCOPE_DEP_WAR));
    ASSERT_OK(tscope_dep_remote(3, 0, 4, 1, &x, TSCOPE_DEP_COPYIN));
    for (int i = 1; i <= 4; i++)
        ASSERT_OK(tscope_counter_sample(c, i));
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.dependencies, 3);
    ASSERT_EQ(tot.events, 7); /* EXT records are part of their event */
    ASSERT_EQ(tscope__g.store->ndeps, 3);
    ASSERT_U64_EQ(tscope__g.store->deps[0].addr, (uint64_t)(uintptr_t)&x);
    ASSERT_EQ(tscope__g.store->deps[1].kind, TSCOPE_DEP_WAR);
    ASSERT_EQ(tscope__g.store->deps[2].to_rank, 1);
    tscope_counter_stats_t cs;
    ASSERT_OK(tscope_query_counter(c, &cs));
    ASSERT_EQ(cs.count, 4);
    ASSERT_NEAR(cs.mean, 2.5, 1e-12);
    ASSERT_NEAR(cs.last, 4, 0);
    ASSERT_NEAR(cs.stddev, sqrt(1.25), 1e-12);
    ASSERT_OK(tscope_finalize());
}

/* Messages per peer: point to point and collective shares counted apart,
 * bytes summed, bad arguments refused.  The threads aggregate their own:
 * they are in the calling thread's shard, not the store's own fields. */
static void messages(void)
{
    harness_init();
    ASSERT_OK(tscope_message(3, 100, 7, TSCOPE_MSG_SEND));
    ASSERT_OK(tscope_message(3, 50, 7, TSCOPE_MSG_SEND));
    ASSERT_OK(tscope_message(1, 8, -1, TSCOPE_MSG_RECV));
    ASSERT_OK(tscope_message(1, 16, 0, TSCOPE_MSG_SEND | TSCOPE_MSG_COLLECTIVE));
    ASSERT_OK(tscope_message(65535, 1, 0, TSCOPE_MSG_RECV | TSCOPE_MSG_COLLECTIVE));
    ASSERT_EQ(tscope_message(-1, 1, 0, TSCOPE_MSG_SEND), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_message(65536, 1, 0, TSCOPE_MSG_SEND), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_message(1, 1, 0, TSCOPE_MSG_SEND | TSCOPE_MSG_RECV), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_message(1, 1, 0, TSCOPE_MSG_COLLECTIVE), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_message(1, 1, 0, TSCOPE_MSG_SEND | 64), TSCOPE_EINVAL);
    ASSERT_OK(tscope_flush());
    tscope_peer_stats_t m[4];
    size_t n = 0;
    ASSERT_OK(tscope_query_messages(m, 1, &n));
    ASSERT_EQ(n, 3); /* more than cap: the count says so */
    ASSERT_OK(tscope_query_messages(m, 4, &n));
    ASSERT_EQ(n, 3);
    ASSERT_EQ(m[0].peer, 1);
    ASSERT_EQ(m[0].recv, 1);
    ASSERT_EQ(m[0].recv_bytes, 8);
    ASSERT_EQ(m[0].coll_sent, 1);
    ASSERT_EQ(m[0].coll_sent_bytes, 16);
    ASSERT_EQ(m[0].sent, 0);
    ASSERT_EQ(m[1].peer, 3);
    ASSERT_EQ(m[1].sent, 2);
    ASSERT_EQ(m[1].sent_bytes, 150);
    ASSERT_EQ(m[2].peer, 65535);
    ASSERT_EQ(m[2].coll_recv_bytes, 1);
    ASSERT_EQ(tscope_query_messages(NULL, 1, &n), TSCOPE_EINVAL);
    ASSERT_EQ(tscope__g.store->npeers, 0); /* none through the consumer */
    ASSERT(tscope__g.store->nth_peers > 65535);
    ASSERT_EQ(tscope__g.store->th_peers[3].sent_bytes, 150);
    ASSERT_OK(tscope_finalize());
}

static uint64_t ids[2][5000];

static void *take_ids(void *arg)
{
    uint64_t *out = arg;
    for (int i = 0; i < 5000; i++)
        out[i] = tscope_task_id_next();
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void task_ids_unique_with_rank(void)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    tscope__clock_use_manual(0);
    ASSERT_OK(tscope_init(5, 8));
    pthread_t a, b;
    ASSERT_OK(pthread_create(&a, NULL, take_ids, ids[0]));
    ASSERT_OK(pthread_create(&b, NULL, take_ids, ids[1]));
    ASSERT_OK(pthread_join(a, NULL));
    ASSERT_OK(pthread_join(b, NULL));
    uint64_t *all = &ids[0][0];
    qsort(all, 10000, sizeof *all, cmp_u64);
    for (int i = 0; i < 10000; i++) {
        ASSERT_EQ(all[i] >> 48, 5);
        ASSERT_NE(all[i] & 0xFFFFFFFFFFFFull, 0);
        if (i)
            ASSERT(all[i] != all[i - 1]);
    }
    ASSERT_OK(tscope_finalize());
}

/* The MPI launchers' programs, by file name: the launchers `taskscope run`
 * refuses to start, the daemons the pthread adapter does not measure. */
static void mpi_launchers(void)
{
    ASSERT_EQ(tscope_mpi_launcher("mpirun"), TSCOPE_LAUNCHER_RANKS);
    ASSERT_EQ(tscope_mpi_launcher("/usr/bin/mpiexec.hydra"), TSCOPE_LAUNCHER_RANKS);
    ASSERT_EQ(tscope_mpi_launcher("srun"), TSCOPE_LAUNCHER_RANKS);
    ASSERT_EQ(tscope_mpi_launcher("orted"), TSCOPE_LAUNCHER_DAEMON);
    ASSERT_EQ(tscope_mpi_launcher("/opt/x/bin/hydra_pmi_proxy"), TSCOPE_LAUNCHER_DAEMON);
    ASSERT_EQ(tscope_mpi_launcher("mpirun2"), 0);
    ASSERT_EQ(tscope_mpi_launcher("/usr/bin/"), 0);
    ASSERT_EQ(tscope_mpi_launcher(NULL), 0);
}

static void instance_filters(void)
{
    setenv("TASKSCOPE_FILTER_TYPES", "kept", 1);
    setenv("TASKSCOPE_FILTER_DEPTH", "1-2", 1);
    harness_init();
    tscope_type_t kept = type_named("kept"), other = type_named("other");
    for (unsigned d = 0; d < 4; d++) {
        ASSERT_OK(tscope_task_create(100 + d, 0, kept, 0, d, 0));
        ASSERT_OK(tscope_task_begin(100 + d, 0));
        ASSERT_OK(tscope_task_end(100 + d));
        ASSERT_OK(tscope_task_create(200 + d, 0, other, 0, d, 0));
        ASSERT_OK(tscope_task_begin(200 + d, 0));
        ASSERT_OK(tscope_task_end(200 + d));
    }
    ASSERT_OK(tscope_finalize());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.instances, 2); /* kept at depth 1 and 2 */
    tscope_task_info_t ti;
    ASSERT_OK(tscope_query_task(101, &ti));
    ASSERT_EQ(tscope_query_task(100, &ti), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_query_task(201, &ti), TSCOPE_ENOENT);
    ASSERT_EQ(type_stats(other).calls, 4); /* type-level data is not filtered */
    unsetenv("TASKSCOPE_FILTER_TYPES");
    unsetenv("TASKSCOPE_FILTER_DEPTH");
}

/* Records 1000 tasks with flags alternating; returns how many of the
 * TSCOPE_TASK_PROCESSABLE ones (even ids) were kept, and fills kept[]. */
static uint64_t sampled_run(int kept[1000])
{
    harness_init();
    tscope_type_t t = type_named("sampled");
    for (uint64_t i = 0; i < 1000; i++) {
        unsigned flags = i % 2 ? TSCOPE_TASK_SPLITTABLE : TSCOPE_TASK_PROCESSABLE;
        ASSERT_OK(tscope_task_create(5000 + i, 0, t, flags, 0, 0));
        ASSERT_OK(tscope_task_begin(5000 + i, 0));
        ASSERT_OK(tscope_task_end(5000 + i));
    }
    ASSERT_OK(tscope_finalize());
    uint64_t n = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        tscope_task_info_t ti;
        kept[i] = tscope_query_task(5000 + i, &ti) == 0;
        if (kept[i]) {
            ASSERT_EQ(ti.flags, TSCOPE_TASK_PROCESSABLE);
            n++;
        }
    }
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.instances, n);
    return n;
}

static void sampling_and_flag_filter(void)
{
    setenv("TASKSCOPE_INSTANCE_SAMPLE", "0.5", 1);
    setenv("TASKSCOPE_FILTER_FLAGS", "processable", 1);
    static int a[1000], b[1000];
    uint64_t na = sampled_run(a), nb = sampled_run(b);
    /* about half of the 500 processable tasks, the same ones every run */
    ASSERT_GT(na, 175);
    ASSERT_LE(na, 325);
    ASSERT_EQ(na, nb);
    ASSERT(memcmp(a, b, sizeof a) == 0);
    unsetenv("TASKSCOPE_INSTANCE_SAMPLE");
    unsetenv("TASKSCOPE_FILTER_FLAGS");
}

static void instance_cap_reports_cut_off(void)
{
    setenv("TASKSCOPE_INSTANCE_CAP", "10", 1);
    harness_init();
    tscope_type_t t = type_named("capped");
    for (uint64_t i = 1; i <= 25; i++) {
        ASSERT_OK(tscope_task_start(i, t));
        ASSERT_OK(tscope_task_end(i));
    }
    ASSERT_OK(tscope_finalize());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.instances, 10);
    ASSERT_EQ(tot.instances_cut_off, 15);
    ASSERT_EQ(type_stats(t).calls, 25);
    unsetenv("TASKSCOPE_INSTANCE_CAP");
}

int main(void)
{
    /* no sampler: its counter samples are events (which these tests count),
     * taken by the shards at once, and it takes one at init */
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    RUN(errors_and_version);
    RUN(states);
    RUN(master_switch_off);
    RUN(argument_checks);
    RUN(type_attributes);
    RUN(dependencies_and_counters);
    RUN(messages);
    RUN(task_ids_unique_with_rank);
    RUN(mpi_launchers);
    RUN(instance_filters);
    RUN(instance_cap_reports_cut_off);
    RUN(sampling_and_flag_filter);
    return 0;
}
