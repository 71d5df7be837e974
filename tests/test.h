/* test.h - assertions for the test programs (after libuv's test/task.h).
 *
 * They survive NDEBUG, print both operands and the location, and abort the
 * test program with a non-zero status.  Each test file is its own program;
 * ctest runs each with a timeout.
 */
#ifndef TSCOPE_TESTS_TEST_H
#define TSCOPE_TESTS_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_FAIL(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#define ASSERT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            TEST_FAIL("assertion failed: %s", #cond);                                              \
    } while (0)

#define ASSERT_INT_OP(a, op, b)                                                                    \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            TEST_FAIL("%s %s %s: %lld vs %lld", #a, #op, #b, a_, b_);                              \
    } while (0)

#define ASSERT_EQ(a, b) ASSERT_INT_OP(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_INT_OP(a, !=, b)
#define ASSERT_GT(a, b) ASSERT_INT_OP(a, >, b)
#define ASSERT_GE(a, b) ASSERT_INT_OP(a, >=, b)
#define ASSERT_LE(a, b) ASSERT_INT_OP(a, <=, b)

#define ASSERT_U64_EQ(a, b)                                                                        \
    do {                                                                                           \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                           \
        if (a_ != b_)                                                                              \
            TEST_FAIL("%s == %s: %" PRIu64 " vs %" PRIu64, #a, #b, a_, b_);                        \
    } while (0)

/* |a - b| <= tol */
#define ASSERT_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            TEST_FAIL("%s ~= %s: %.17g vs %.17g (tolerance %g)", #a, #b, a_, b_, (double)(tol));   \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                                        \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (strcmp(a_, b_) != 0)                                                                   \
            TEST_FAIL("%s == %s: \"%s\" vs \"%s\"", #a, #b, a_, b_);                               \
    } while (0)

#define ASSERT_OK(expr)                                                                            \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0)                                                                              \
            TEST_FAIL("%s returned %d", #expr, rc_);                                               \
    } while (0)

/* Runs one test function, printing its name. */
#define RUN(fn)                                                                                    \
    do {                                                                                           \
        fprintf(stderr, "-- %s\n", #fn);                                                           \
        fn();                                                                                      \
    } while (0)

#endif
