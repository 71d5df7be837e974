/* test_timeline.c - the run over time (profile/timeline.h) from exact
 * begin and end times, with the manual clock (1 tick = 1 ns, bins of 2^18
 * ns at first):
 * - self time per type and busy time per thread, split exactly at bin
 *   boundaries, through the task table and the leaf path, across a yield;
 * - the bins widen (adjacent ones merged) when the run outgrows them, and no
 *   time is lost;
 * - the duration sample, and its thinning when full;
 * - concurrency.csv: threads per type = self time / bin width. */
#include <pthread.h>
#include <stdio.h>

#include "core/core.h"
#include "export/export.h"
#include "harness.h"
#include "profile/profile.h"
#include "profile/store.h"

#define W 262144u /* the first bin width */

static tscope_type_t ta, tb, tc;

static void *other_thread(void *arg)
{
    (void)arg;
    ASSERT_OK(tscope_thread_register("other"));
    at(200000);
    ASSERT_OK(tscope_task_start(30, tc));
    at(400000);
    ASSERT_OK(tscope_task_end(30));
    return NULL;
}

static double bin(const double *row, uint32_t b)
{
    return row ? row[b] : 0;
}

static void exact_bins(void)
{
    setenv("TASKSCOPE_DURATION_SAMPLE", "1", 1);
    harness_init();
    ta = type_named("a");
    tb = type_named("b");
    tc = type_named("c");
    /* A: 0 .. 1000000 with a leaf B inside (100000 .. 300000) and a yield
     * 500000 .. 700000; C on another thread 200000 .. 400000 */
    at(0);
    ASSERT_OK(tscope_task_create(10, 0, ta, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(10, 0));
    at(100000);
    ASSERT_OK(tscope_task_start(20, tb));
    at(300000);
    ASSERT_OK(tscope_task_end(20));
    pthread_t o;
    ASSERT_EQ(pthread_create(&o, NULL, other_thread, NULL), 0);
    ASSERT_EQ(pthread_join(o, NULL), 0);
    at(500000);
    ASSERT_OK(tscope_task_yield(10));
    at(700000);
    ASSERT_OK(tscope_task_resume(10));
    at(1000000);
    ASSERT_OK(tscope_task_end(10));
    ASSERT_OK(tscope_flush());

    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    const struct tscope__ptimeline *tl = &p->tl;
    ASSERT_NEAR(tl->bin_ns, W, 0);
    ASSERT_EQ(tl->nbins, 4); /* 1000000 ns in bins of 262144 */
    /* A's self time: [0,100000) [300000,500000) [700000,1000000) */
    const double *a = tl->type[ta], *b = tl->type[tb], *c = tl->type[tc];
    ASSERT_NEAR(bin(a, 0), 100000, 0);
    ASSERT_NEAR(bin(a, 1), 200000, 0);
    ASSERT_NEAR(bin(a, 2), 786432 - 700000, 0);
    ASSERT_NEAR(bin(a, 3), 1000000 - 786432, 0);
    /* the leaf B over the first boundary */
    ASSERT_NEAR(bin(b, 0), W - 100000, 0);
    ASSERT_NEAR(bin(b, 1), 300000 - W, 0);
    ASSERT_NEAR(bin(b, 2), 0, 0);
    ASSERT_NEAR(bin(c, 0), W - 200000, 0);
    ASSERT_NEAR(bin(c, 1), 400000 - W, 0);
    /* busy: main [0,500000) and [700000,1000000), the other [200000,400000) */
    uint32_t main_slot = UINT32_MAX, other_slot = UINT32_MAX;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        if (strcmp(p->threads[t].name, "main") == 0)
            main_slot = t;
        if (strcmp(p->threads[t].name, "other") == 0)
            other_slot = t;
    }
    ASSERT(main_slot < tl->nthread && other_slot < tl->nthread);
    const double *m = tl->thread[main_slot], *x = tl->thread[other_slot];
    ASSERT_NEAR(bin(m, 0), W, 0);
    ASSERT_NEAR(bin(m, 1), 500000 - W, 0);
    ASSERT_NEAR(bin(m, 2), 786432 - 700000, 0);
    ASSERT_NEAR(bin(m, 3), 1000000 - 786432, 0);
    ASSERT_NEAR(bin(x, 0) + bin(x, 1), 200000, 0);
    /* every task sampled (TASKSCOPE_DURATION_SAMPLE=1), by end time */
    ASSERT_EQ(tl->npoints, 3);
    ASSERT_NEAR(tl->points[0].end, 300000, 0);
    ASSERT_NEAR(tl->points[0].duration, 200000, 0);
    ASSERT_EQ(tl->points[0].type, tb);
    ASSERT_NEAR(tl->points[1].end, 400000, 0);
    ASSERT_EQ(tl->points[1].type, tc);
    ASSERT_NEAR(tl->points[2].end, 1000000, 0);
    ASSERT_NEAR(tl->points[2].duration, 1000000, 0); /* elapsed, the yield included */
    ASSERT_EQ(tl->points[2].type, ta);

    /* concurrency.csv: threads = self time / bin width */
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    ASSERT_OK(tscope__export_concurrency_csv(p, f));
    fclose(f);
    ASSERT(strstr(text, "time_s,bin_s,a,b,c,threads_busy\n") == text);
    char want[200];
    snprintf(want, sizeof want, "\n%.9g,%.9g,%.6g,%.6g,%.6g,%.6g\n", W * 1e-9, W * 1e-9,
             200000.0 / W, (300000.0 - W) / W, (400000.0 - W) / W,
             ((500000.0 - W) + (400000.0 - W)) / W);
    if (!strstr(text, want))
        TEST_FAIL("concurrency.csv lacks the row %s in:\n%s", want, text);
    free(text);
    tscope__profile_free(p);

    /* a task at 600 ms: bins of 2^21 ns (three widenings), nothing lost */
    at(600000000);
    ASSERT_OK(tscope_task_start(40, tb));
    at(600000000 + 5000000);
    ASSERT_OK(tscope_task_end(40));
    ASSERT_OK(tscope_flush());
    p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    tl = &p->tl;
    ASSERT_NEAR(tl->bin_ns, 1u << 21, 0);
    ASSERT_NEAR(bin(tl->type[ta], 0), 600000, 0); /* all of A in bin 0 now */
    ASSERT_NEAR(bin(tl->type[tb], 0), 200000, 0);
    /* the new leaf, 600000000 .. 605000000 over bins 286 .. 288 */
    double sum = 0;
    for (uint32_t k = 0; k < tl->nbins; k++)
        sum += bin(tl->type[tb], k);
    ASSERT_NEAR(sum, 200000 + 5000000, 0);
    ASSERT_NEAR(bin(tl->type[tb], 286), (287.0 * (1u << 21)) - 600000000, 0);
    ASSERT(tl->nbins >= 289 && tl->nbins <= TSCOPE__TL_BINS);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_DURATION_SAMPLE");
}

/* 100,000 leaves with the default 25%: the sample full twice (8192), the
 * fraction halved to 6.25%, about 6,250 kept, spread over the run; 10^6
 * with everything sampled: thinned to at most 8192, every remaining one
 * chosen by the halved threshold. */
static void duration_sample(void)
{
    harness_init();
    ta = type_named("a");
    for (uint64_t i = 1; i <= 100000; i++) {
        at(i * 10);
        ASSERT_OK(tscope_task_start(i, ta));
        at(i * 10 + 5);
        ASSERT_OK(tscope_task_end(i));
    }
    ASSERT_OK(tscope_flush());
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p->tl.npoints > 5000 && p->tl.npoints < 7500);
    ASSERT_NEAR(p->tl.sampled, 0.0625, 1e-9);
    ASSERT(p->tl.points[0].end < 200000 && p->tl.points[p->tl.npoints - 1].end > 800000);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());

    setenv("TASKSCOPE_DURATION_SAMPLE", "1", 1);
    harness_init();
    ta = type_named("a");
    for (uint64_t i = 1; i <= 1000000; i++) {
        at(i * 10);
        ASSERT_OK(tscope_task_start(i, ta));
        at(i * 10 + 5);
        ASSERT_OK(tscope_task_end(i));
    }
    ASSERT_OK(tscope_flush());
    p = tscope__profile_snapshot();
    ASSERT(p->tl.npoints <= TSCOPE__TL_POINTS && p->tl.npoints > TSCOPE__TL_POINTS / 4);
    ASSERT(p->tl.sampled < 0.02); /* halved 7 times: 1/128 */
    ASSERT_NEAR(p->tl.sampled * 1000000, p->tl.npoints, p->tl.npoints * 0.05);
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
    unsetenv("TASKSCOPE_DURATION_SAMPLE");
}

/* Adds [from, to) to bins of width W, split at their boundaries. */
static void expect_add(double *bins, uint64_t from, uint64_t to)
{
    while (from < to) {
        uint64_t end = (from / W + 1) * W;
        if (end > to)
            end = to;
        bins[from / W] += (double)(end - from);
        from = end;
    }
}

/* 10,000 leaves (100 ns, 50 ns apart) in a task, batched by the consumer:
 * the bins hold exactly the intervals, those that cross a boundary too. */
static void leaf_batches(void)
{
    harness_init();
    ta = type_named("a");
    tb = type_named("b");
    double want_a[8] = {0}, want_b[8] = {0};
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, ta, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    uint64_t t = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        expect_add(want_a, t, t + 50);
        at(t + 50);
        ASSERT_OK(tscope_task_start(100 + i, tb));
        expect_add(want_b, t + 50, t + 150);
        at(t + 150);
        ASSERT_OK(tscope_task_end(100 + i));
        t += 150;
    }
    expect_add(want_a, t, t + 10);
    at(t + 10);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_flush());
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT_EQ(p->tl.nbins, 6); /* 1500010 ns */
    for (uint32_t k = 0; k < 6; k++) {
        ASSERT_NEAR(bin(p->tl.type[ta], k), want_a[k], 0);
        ASSERT_NEAR(bin(p->tl.type[tb], k), want_b[k], 0);
    }
    tscope__profile_free(p);
    ASSERT_OK(tscope_finalize());
}

int main(void)
{
    exact_bins();
    leaf_batches();
    duration_sample();
    printf("test_timeline: ok\n");
    return 0;
}
