/* test_stats.c - the exact integer accumulator and Welford's algorithm
 * against a two-pass reference. */
#include "profile/acc.h"
#include "test.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void reference(const double *v, int n, double *mean, double *sd)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = s / n;
    double q = 0;
    for (int i = 0; i < n; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    *sd = sqrt(q / n);
}

static void acc_matches_two_pass(void)
{
    enum { N = 100000 };
    static double v[N];
    struct tscope__acc a = {0};
    for (int i = 0; i < N; i++) {
        uint64_t x = 1000000 + next() % 5000000; /* ticks of a few ms */
        v[i] = (double)x;
        tscope__acc_add(&a, x);
    }
    double mean, sd;
    reference(v, N, &mean, &sd);
    tscope_stats_t s = tscope__acc_stats(&a, 0.5); /* 2 ticks per ns */
    ASSERT_EQ(s.count, N);
    ASSERT_NEAR(s.mean, mean * 0.5, 1e-9 * mean);
    ASSERT_NEAR(s.stddev, sd * 0.5, 1e-9 * sd);
    double mn = v[0], mx = v[0];
    for (int i = 1; i < N; i++) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    ASSERT_NEAR(s.min, mn * 0.5, 0);
    ASSERT_NEAR(s.max, mx * 0.5, 0);
}

static void acc_constant_has_zero_stddev(void)
{
    struct tscope__acc a = {0};
    for (int i = 0; i < 1000; i++)
        tscope__acc_add(&a, 123456789);
    tscope_stats_t s = tscope__acc_stats(&a, 1.0);
    ASSERT_NEAR(s.stddev, 0, 0);
    ASSERT_NEAR(s.sum, 123456789000.0, 0);
}

static void acc_huge_values_fall_back(void)
{
    struct tscope__acc a = {0};
    tscope__acc_add(&a, 1ull << 62);
    tscope__acc_add(&a, (1ull << 62) + 2);
    tscope_stats_t s = tscope__acc_stats(&a, 1.0);
    /* past 128 bits the long double path keeps mean exact and the variance
     * sane (never negative, never NaN), not exact */
    ASSERT_EQ(s.count, 2);
    ASSERT_NEAR(s.mean, 4611686018427387905.0, 1024);
    ASSERT(isfinite(s.stddev) && s.stddev >= 0);
}

static void welford_matches_two_pass(void)
{
    enum { N = 50000 };
    static double v[N];
    struct tscope__welford w = {0};
    for (int i = 0; i < N; i++) {
        v[i] = 1e6 + (double)(next() % 1000000) / 7.0;
        tscope__welford_add(&w, v[i]);
    }
    double mean, sd;
    reference(v, N, &mean, &sd);
    tscope_counter_stats_t s = tscope__welford_stats(&w);
    ASSERT_NEAR(s.mean, mean, 1e-9 * mean);
    ASSERT_NEAR(s.stddev, sd, 1e-7 * sd);
    ASSERT_NEAR(s.last, v[N - 1], 0);
}

int main(void)
{
    RUN(acc_matches_two_pass);
    RUN(acc_constant_has_zero_stddev);
    RUN(acc_huge_values_fall_back);
    RUN(welford_matches_two_pass);
    return 0;
}
