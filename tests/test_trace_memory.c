/* test_trace_memory.c - a trace of 10^7 events converts to Chrome JSON in
 * bounded memory: the peak RSS of converting it is within 8 MiB of
 * converting one of 10^6 events (each generated and converted in a
 * process of its own, so each peak is the conversion's alone).
 *
 * The log mixes what keeps the converter's tables busy: explicit tasks
 * (create, begin, end) with a dependency on the one before, and leaves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "harness.h"
#include "trace/convert.h"

static int gen(uint64_t events, const char *dir)
{
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_TRACE", "1", 1);
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_INSTANCE_CAP", "1000", 1);
    ASSERT_OK(tscope_init(0, 1));
    tscope_type_t a, b;
    ASSERT_OK(tscope_type_register("explicit", &a));
    ASSERT_OK(tscope_type_register("leaf", &b));
    static int cell;
    uint64_t id = 1;
    for (uint64_t n = 0; n < events; n += 7, id += 2) {
        ASSERT_OK(tscope_task_create(id, 0, a, 0, 0, 0));
        if (id > 1)
            ASSERT_OK(tscope_dep_local(id - 2, id, &cell, TSCOPE_DEP_RAW));
        ASSERT_OK(tscope_task_begin(id, 0));
        ASSERT_OK(tscope_task_start(id + 1, b));
        ASSERT_OK(tscope_task_end(id + 1));
        ASSERT_OK(tscope_task_end(id));
    }
    ASSERT_OK(tscope_finalize());
    return 0;
}

static int convert(const char *dir)
{
    char path[400], err[400];
    snprintf(path, sizeof path, "%s/trace.tsct", dir);
    struct tscope__replay_stats st;
    if (tscope__trace_convert(path, TSCOPE__FMT_CHROME, "/dev/null", 0, &st, err, sizeof err))
        TEST_FAIL("%s", err);
    /* written into, never replaced by a renamed file (as root a rename could) */
    struct stat dn;
    if (stat("/dev/null", &dn) != 0 || !S_ISCHR(dn.st_mode))
        TEST_FAIL("/dev/null is no longer a character device after a conversion into it");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%llu %ld\n", (unsigned long long)st.records, ru.ru_maxrss);
    return 0;
}

/* Generates and converts a trace of `events` in child processes; returns
 * the conversion's peak RSS in KiB. */
static long measure(const char *self, uint64_t events)
{
    const char *tmp = getenv("TSCOPE_TEST_TMP") ? getenv("TSCOPE_TEST_TMP") : "/tmp";
    char dir[300], cmd[1200];
    snprintf(dir, sizeof dir, "%s/tscope-test-trace-memory-%llu", tmp, (unsigned long long)events);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && '%s' gen %llu '%s'", dir, self,
             (unsigned long long)events, dir);
    ASSERT_EQ(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "'%s' convert '%s'", self, dir);
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    unsigned long long records = 0;
    long rss = 0;
    ASSERT_EQ(fscanf(p, "%llu %ld", &records, &rss), 2);
    ASSERT_EQ(pclose(p), 0);
    ASSERT_GE(records, events);
    printf("test_trace_memory: %llu records converted with a peak RSS of %ld KiB\n", records, rss);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ(system(cmd), 0);
    return rss;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "gen") == 0)
        return gen(strtoull(argv[2], NULL, 10), argv[3]);
    if (argc == 3 && strcmp(argv[1], "convert") == 0)
        return convert(argv[2]);
    long small = measure(argv[0], 1000000), big = measure(argv[0], 10000000);
    ASSERT_LE(big, small + 8 * 1024);
    printf("test_trace_memory: ok\n");
    return 0;
}
