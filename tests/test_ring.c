/* test_ring.c - the SPSC ring across wrap-around, and both full-ring
 * policies through the public API with a 64-record ring.  The threads
 * aggregate their own events; the ring gets their shadows for the trace
 * (on here), so a full ring with the drop policy costs the trace events,
 * counted, never the profile.  Also the consumer's subscribers
 * (core/hooks.h): called in their order, never changed while it runs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/hooks.h"
#include "core/ring.h"
#include "core/thread_local.h"
#include "harness.h"
#include "profile/store.h"

static void wrap_around(void)
{
    struct tscope__ring r;
    ASSERT_OK(tscope__ring_init(&r, 8, NULL));
    uint64_t next_read = 1;
    for (uint64_t v = 1; v <= 100; v++) {
        tscope__ring_slot(&r, r.head_local)->id = v;
        tscope__ring_publish(&r, 1);
        if (v % 3 == 0) { /* consume in bursts, so head and tail wrap at different times */
            uint64_t tail;
            uint64_t n = tscope__ring_readable(&r, &tail);
            ASSERT_EQ(n, 3);
            for (uint64_t k = 0; k < n; k++)
                ASSERT_U64_EQ(tscope__ring_slot(&r, tail + k)->id, next_read++);
            tscope__ring_release(&r, tail + n);
        }
    }
    ASSERT_EQ(next_read, 100);
    ASSERT_GT(r.head_local, 8 * 10); /* wrapped many times */
    tscope__ring_free(&r);
}

/* The trace on, in a folder of its own: every event's shadow in the ring. */
static void trace_on(void)
{
    static char dir[300];
    const char *tmp = getenv("TSCOPE_TEST_TMP") ? getenv("TSCOPE_TEST_TMP") : "/tmp";
    snprintf(dir, sizeof dir, "%s/tscope-test-ring-%ld", tmp, (long)getpid());
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_TRACE", "binary", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
}

static void drop_policy_counts_exactly(void)
{
    setenv("TASKSCOPE_RING_SIZE", "64", 1);
    setenv("TASKSCOPE_FULL_POLICY", "drop", 1);
    trace_on();
    harness_init();
    tscope_type_t t = type_named("dropper");
    /* the type's tree path made (under the store lock), the ring emptied */
    ASSERT_OK(tscope_task_start(1000, t));
    ASSERT_OK(tscope_task_end(1000));
    ASSERT_OK(tscope_flush());
    /* Holding the store lock keeps the consumer from releasing any slot. */
    pthread_mutex_lock(&tscope__g.store->lock);
    int dropped_rc = 0;
    for (uint64_t i = 1; i <= 100; i++) {
        int rc = tscope_task_start(i, t);
        if (rc == TSCOPE_EDROPPED)
            dropped_rc++;
        rc = tscope_task_end(i);
        if (rc == TSCOPE_EDROPPED)
            dropped_rc++;
    }
    pthread_mutex_unlock(&tscope__g.store->lock);
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events, 202);              /* the profile has every event */
    ASSERT_EQ(tot.events_dropped, 200 - 64); /* the trace lost what the ring could not hold */
    ASSERT_EQ(dropped_rc, 0);                /* which the program is not told */
    ASSERT_EQ(type_stats(t).calls, 101);
    ASSERT_OK(tscope_finalize());
}

static void wait_policy_loses_nothing(void)
{
    setenv("TASKSCOPE_RING_SIZE", "64", 1);
    setenv("TASKSCOPE_FULL_POLICY", "wait", 1);
    trace_on();
    harness_init();
    tscope_type_t t = type_named("waiter");
    for (uint64_t i = 1; i <= 20000; i++) {
        ASSERT_OK(tscope_task_start(i, t));
        ASSERT_OK(tscope_task_end(i));
    }
    ASSERT_OK(tscope_flush());
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events, 40000);
    ASSERT_EQ(tot.events_dropped, 0);
    ASSERT_EQ(type_stats(t).calls, 20000);
    ASSERT_OK(tscope_finalize());
}

/* Thread slots as the crash journal makes them (hooks.slot_memory): here
 * from a static area, the ring right after the thread struct.  Their
 * rings get their pages at their first write (hooks.slot_back); when that
 * fails, the ring moves to ordinary memory and nothing is lost. */
#define SLOT_RECORDS 1024
#define SLOT_BYTES (((sizeof(struct tscope__thread) + 63) / 64 * 64) + SLOT_RECORDS * 32)
static _Alignas(64) char slot_area[2][SLOT_BYTES];
static _Atomic int slots_given, backs, back_fails;

static void *test_slot_memory(uint32_t index, size_t thread_bytes, uint64_t *records,
                              struct tscope__rec **ring)
{
    (void)index;
    int k = atomic_fetch_add(&slots_given, 1);
    if (k >= 2)
        return NULL;
    *ring = (struct tscope__rec *)(slot_area[k] + (thread_bytes + 63) / 64 * 64);
    *records = SLOT_RECORDS;
    return slot_area[k];
}

static int test_slot_back(void *ring, size_t bytes)
{
    atomic_fetch_add(&backs, 1);
    ASSERT_EQ(bytes, SLOT_RECORDS * sizeof(struct tscope__rec));
    /* the second slot's file is "full" */
    if ((char *)ring > slot_area[1] && (char *)ring < slot_area[1] + SLOT_BYTES) {
        atomic_fetch_add(&back_fails, 1);
        return -1;
    }
    return 0;
}

static tscope_type_t slot_type;
static struct tscope__thread *slot_thread[2];
static pthread_barrier_t slot_barrier;

static void *slot_worker(void *arg)
{
    int k = (int)(intptr_t)arg;
    ASSERT_OK(tscope_thread_register(k ? "slot-b" : "slot-a"));
    struct tscope__thread *t = tscope__thread_self();
    ASSERT((char *)t == slot_area[0] || (char *)t == slot_area[1]);
    pthread_barrier_wait(&slot_barrier); /* both hold a slot: neither is reused */
    for (uint64_t i = 1; i <= 300; i++) {
        uint64_t id = (uint64_t)(k + 1) << 32 | i;
        ASSERT_OK(tscope_task_start(id, slot_type));
        ASSERT_OK(tscope_task_end(id));
    }
    slot_thread[k] = t;
    return NULL;
}

static void *slot_again(void *arg)
{
    (void)arg;
    static _Atomic uint64_t next = 1;
    ASSERT_OK(tscope_thread_register("slot-again"));
    for (int i = 0; i < 300; i++) {
        uint64_t id = 3ull << 32 | atomic_fetch_add(&next, 1);
        ASSERT_OK(tscope_task_start(id, slot_type));
        ASSERT_OK(tscope_task_end(id));
    }
    return NULL;
}

static void slot_rings_get_their_pages_at_their_first_write(void)
{
    setenv("TASKSCOPE_RING_SIZE", "1024", 1);
    setenv("TASKSCOPE_FULL_POLICY", "wait", 1);
    trace_on();
    harness_init();
    slot_type = type_named("slotted");
    tscope__hooks.slot_memory = test_slot_memory;
    tscope__hooks.slot_back = test_slot_back;
    ASSERT_EQ(pthread_barrier_init(&slot_barrier, NULL, 2), 0);
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        ASSERT_EQ(pthread_create(&th[k], NULL, slot_worker, (void *)(intptr_t)k), 0);
    for (int k = 0; k < 2; k++)
        ASSERT_EQ(pthread_join(th[k], NULL), 0);
    pthread_barrier_destroy(&slot_barrier);
    ASSERT_OK(tscope_flush());
    ASSERT_EQ(atomic_load(&backs), 2); /* once a ring, at its first write, not at each */
    ASSERT_EQ(atomic_load(&back_fails), 1);
    /* in its slot, backed; in ordinary memory, said in the slot */
    struct tscope__thread *in_file =
        (char *)slot_thread[0] == slot_area[0] ? slot_thread[0] : slot_thread[1];
    struct tscope__thread *moved = in_file == slot_thread[0] ? slot_thread[1] : slot_thread[0];
    ASSERT((char *)in_file == slot_area[0] && (char *)moved == slot_area[1]);
    ASSERT_EQ(in_file->slot_backed, 1);
    ASSERT_EQ(moved->slot_backed, -1);
    /* two more threads, one after the other, on the slots the first two left
     * (recycled once the consumer drained them): one of them the slot whose
     * file had no room, whose ring goes to ordinary memory again */
    for (int k = 0; k < 2; k++) {
        ASSERT_OK(tscope_flush());
        pthread_t more;
        ASSERT_EQ(pthread_create(&more, NULL, slot_again, NULL), 0);
        ASSERT_EQ(pthread_join(more, NULL), 0);
    }
    ASSERT_OK(tscope_flush());
    ASSERT_EQ(atomic_load(&slots_given), 2); /* no new slot */
    tscope_totals_t tot;
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.events_dropped, 0); /* every shadow found room in a ring */
    ASSERT_EQ(type_stats(slot_type).calls, 1200);
    ASSERT_OK(tscope_finalize());
    tscope__hooks.slot_memory = NULL;
    tscope__hooks.slot_back = NULL;
}

/* The consumer's subscribers (core/hooks.h): each batch, retired thread and
 * round end goes to them in ascending position, equal positions in the
 * order they subscribed; a subscriber whose wanted() says no skips the
 * batch, not the rest; the list cannot change while the consumer runs. */
static char sub_log[256];

static void sub_note(const char *what)
{
    size_t n = strlen(sub_log);
    snprintf(sub_log + n, sizeof sub_log - n, "%s ", what);
}

#define SUBSCRIBER(name)                                                                           \
    static void name##_batch(uint32_t thread, struct tscope__ring *r, uint64_t from, uint64_t to)  \
    {                                                                                              \
        (void)thread;                                                                              \
        ASSERT_EQ(to - from, 1);                                                                   \
        ASSERT_U64_EQ(tscope__ring_slot(r, from)->id, 77);                                         \
        sub_note("batch:" #name);                                                                  \
    }                                                                                              \
    static void name##_round(void)                                                                 \
    {                                                                                              \
        sub_note("round:" #name);                                                                  \
    }                                                                                              \
    static void name##_gone(uint32_t thread)                                                       \
    {                                                                                              \
        (void)thread;                                                                              \
        sub_note("gone:" #name);                                                                   \
    }
SUBSCRIBER(a)
SUBSCRIBER(a2)
SUBSCRIBER(b)
SUBSCRIBER(c)

static int not_wanted(void)
{
    return 0;
}

static void *one_record_then_gone(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("subscribed"));
    struct tscope__ring *r = &tscope__tls_self->ring;
    tscope__ring_slot(r, r->head_local)->id = 77;
    tscope__ring_publish(r, 1);
    ASSERT_OK(tscope_thread_unregister());
    return NULL;
}

static void subscribers_in_their_order(void)
{
    harness_init();
    struct tscope__subscriber s = {.round = a_round};
    ASSERT_EQ(tscope__subscribe(1, &s), TSCOPE_ESTATE); /* the consumer runs */
    ASSERT_EQ(tscope__unsubscribe(1), TSCOPE_ESTATE);
    ASSERT_EQ(tscope__subscribers_clear(), TSCOPE_ESTATE);
    ASSERT_OK(tscope_finalize()); /* the consumer stopped: the test drives the rounds */
    ASSERT_OK(tscope__subscribers_clear());
    ASSERT_OK(tscope__subscribe(
        30,
        &(struct tscope__subscriber){.batch = c_batch, .round = c_round, .thread_gone = c_gone}));
    ASSERT_OK(tscope__subscribe(
        10,
        &(struct tscope__subscriber){.batch = a_batch, .round = a_round, .thread_gone = a_gone}));
    ASSERT_OK(tscope__subscribe(
        20, &(struct tscope__subscriber){
                .wanted = not_wanted, .batch = b_batch, .round = b_round, .thread_gone = b_gone}));
    ASSERT_OK(tscope__subscribe(10, &(struct tscope__subscriber){.batch = a2_batch,
                                                                 .round = a2_round,
                                                                 .thread_gone = a2_gone}));
    ASSERT(tscope__subscribed(20) && !tscope__subscribed(15));
    struct tscope__subscriber none = {0};
    for (int i = 4; i < TSCOPE__SUBSCRIBERS_MAX; i++)
        ASSERT_OK(tscope__subscribe(50, &none)); /* does nothing, wherever it is called */
    ASSERT_EQ(tscope__subscribe(50, &none), TSCOPE_ELIMIT);
    ASSERT_OK(tscope__unsubscribe(50));
    ASSERT(!tscope__subscribed(50));

    uint64_t (*apply)(uint32_t, struct tscope__ring *, uint64_t, uint64_t, uint64_t) =
        tscope__hooks.apply;
    tscope__hooks.apply = NULL; /* the store is complete: the records go to the subscribers only */
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, one_record_then_gone, NULL), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    sub_log[0] = 0;
    tscope__consumer_round();
    ASSERT_STR_EQ(sub_log, "batch:a batch:a2 batch:c gone:a gone:a2 gone:b gone:c "
                           "round:a round:a2 round:b round:c ");
    sub_log[0] = 0;
    tscope__consumer_round(); /* nothing left to drain: the round ends only */
    ASSERT_STR_EQ(sub_log, "round:a round:a2 round:b round:c ");
    ASSERT_OK(tscope__unsubscribe(10));
    sub_log[0] = 0;
    tscope__consumer_round();
    ASSERT_STR_EQ(sub_log, "round:b round:c ");
    ASSERT_OK(tscope__subscribers_clear());
    tscope__hooks.apply = apply;
}

int main(void)
{
    RUN(wrap_around);
    RUN(drop_policy_counts_exactly);
    RUN(wait_policy_loses_nothing);
    RUN(slot_rings_get_their_pages_at_their_first_write);
    RUN(subscribers_in_their_order);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'.*", getenv("TASKSCOPE_OUTPUT_DIR"),
             getenv("TASKSCOPE_OUTPUT_DIR")); /* the second run's folder: DIR.1 */
    ASSERT_EQ(system(cmd), 0);
    return 0;
}
