/* test_config.c - TASKSCOPE_* parsing: defaults, accepted words, and one
 * warning naming the variable for each bad value (default used). */
#include <stdlib.h>

#include "core/config.h"
#include "golden.h"
#include "test.h"

static char *warnings;
static size_t warnings_len;

static int load(struct tscope__config *cfg)
{
    FILE *w = open_memstream(&warnings, &warnings_len);
    int n = tscope__config_load(cfg, w);
    fclose(w);
    return n;
}

static void defaults(void)
{
    struct tscope__config c;
    ASSERT_EQ(load(&c), 0);
    ASSERT_EQ(c.enable, 1);
    ASSERT_EQ(c.mode, TSCOPE__MODE_PROFILE);
    ASSERT_EQ(c.full_policy, TSCOPE__FULL_WAIT);
    ASSERT_EQ(c.ring_size, 16384);
    ASSERT_EQ(c.instance_cap, 100000);
    ASSERT_NEAR(c.instance_sample, 1.0, 0);
    ASSERT_EQ(c.outputs, TSCOPE__OUT_ALL);
    ASSERT_EQ(c.summary, 0);
    ASSERT_STR_EQ(c.output_dir, "taskscope-out");
    ASSERT_EQ(c.filter_depth_min, 0);
    ASSERT_EQ(c.filter_depth_max, 65535);
    free(warnings);
}

static void booleans(void)
{
    const char *yes[] = {"1", "true", "YES", "On"}, *no[] = {"0", "False", "no", "OFF"};
    for (int i = 0; i < 4; i++) {
        int v = -1;
        ASSERT_OK(tscope__parse_bool(yes[i], &v));
        ASSERT_EQ(v, 1);
        ASSERT_OK(tscope__parse_bool(no[i], &v));
        ASSERT_EQ(v, 0);
    }
    int v;
    ASSERT_EQ(tscope__parse_bool("maybe", &v), -1);
    ASSERT_EQ(tscope__parse_bool("", &v), -1);
}

static void good_values(void)
{
    setenv("TASKSCOPE_ENABLE", "off", 1);
    setenv("TASKSCOPE_MODE", "naive", 1);
    setenv("TASKSCOPE_FULL_POLICY", "drop", 1);
    setenv("TASKSCOPE_RING_SIZE", "1024", 1);
    setenv("TASKSCOPE_OUTPUTS", "csv, dot", 1);
    setenv("TASKSCOPE_FILTER_TYPES", "fib, sort ,merge", 1);
    setenv("TASKSCOPE_FILTER_DEPTH", "2-5", 1);
    setenv("TASKSCOPE_INSTANCE_SAMPLE", "0.25", 1);
    struct tscope__config c;
    ASSERT_EQ(load(&c), 0);
    ASSERT_EQ(c.enable, 0);
    ASSERT_EQ(c.mode, TSCOPE__MODE_NAIVE);
    ASSERT_EQ(c.full_policy, TSCOPE__FULL_DROP);
    ASSERT_EQ(c.ring_size, 1024);
    ASSERT_EQ(c.outputs, TSCOPE__OUT_CSV | TSCOPE__OUT_DOT);
    ASSERT_EQ(c.filter_ntypes, 3);
    ASSERT_STR_EQ(tscope__config_filter_type(&c, 0), "fib");
    ASSERT_STR_EQ(tscope__config_filter_type(&c, 1), "sort");
    ASSERT_STR_EQ(tscope__config_filter_type(&c, 2), "merge");
    ASSERT_EQ(c.filter_depth_min, 2);
    ASSERT_EQ(c.filter_depth_max, 5);
    ASSERT_NEAR(c.instance_sample, 0.25, 0);
    free(warnings);
}

static void bad_values_warn_once_and_use_defaults(void)
{
    setenv("TASKSCOPE_ENABLE", "maybe", 1);
    setenv("TASKSCOPE_MODE", "fast", 1);
    setenv("TASKSCOPE_FULL_POLICY", "block", 1);
    setenv("TASKSCOPE_RING_SIZE", "1000", 1); /* not a power of two */
    setenv("TASKSCOPE_OUTPUTS", "csv,pdf", 1);
    setenv("TASKSCOPE_FILTER_TYPES", "", 1);
    setenv("TASKSCOPE_FILTER_DEPTH", "5-2", 1);
    setenv("TASKSCOPE_INSTANCE_SAMPLE", "1.5", 1);
    setenv("TASKSCOPE_PERIOD_MS", "10ms", 1);
    struct tscope__config c;
    ASSERT_EQ(load(&c), 8);
    ASSERT_EQ(c.enable, 1);
    ASSERT_EQ(c.mode, TSCOPE__MODE_PROFILE);
    ASSERT_EQ(c.full_policy, TSCOPE__FULL_WAIT);
    ASSERT_EQ(c.ring_size, 16384);
    ASSERT_EQ(c.outputs, TSCOPE__OUT_ALL);
    ASSERT_EQ(c.filter_depth_max, 65535);
    ASSERT_NEAR(c.instance_sample, 1.0, 0);
    ASSERT_EQ(c.period_ms, 10);
    ASSERT(strstr(warnings, "taskscope: warning: TASKSCOPE_RING_SIZE=\"1000\" is invalid "
                            "(accepted: a power of two from 64 to 16777216); using the default "
                            "\"16384\"\n") != NULL);
    ASSERT(strstr(warnings, "TASKSCOPE_MODE=\"fast\" is invalid (accepted: profile, naive)"));
    int lines = 0;
    for (char *p = warnings; *p; p++)
        lines += *p == '\n';
    ASSERT_EQ(lines, 8);
    free(warnings);
}

/* Weights that are not finite are refused (a fuzzer found 1e999 and inf
 * accepted: the score then became NaN); the defaults stay. */
static void infinite_weights_are_refused(void)
{
    setenv("TASKSCOPE_SCORE_WEIGHTS", "1e999,1,1", 1);
    setenv("TASKSCOPE_OPTIMIZE_WEIGHTS", "inf,0,0", 1);
    struct tscope__config c;
    load(&c); /* variables of earlier tests may still warn too */
    ASSERT_NEAR(c.score_w[0], 1.0, 0);
    ASSERT_NEAR(c.optimize_w[0], 1.0, 0);
    ASSERT_NEAR(c.optimize_w[1], 0.5, 0);
    ASSERT(strstr(warnings, "TASKSCOPE_SCORE_WEIGHTS=\"1e999,1,1\" is invalid") != NULL);
    ASSERT(strstr(warnings, "TASKSCOPE_OPTIMIZE_WEIGHTS=\"inf,0,0\" is invalid") != NULL);
    free(warnings);
    unsetenv("TASKSCOPE_SCORE_WEIGHTS");
    unsetenv("TASKSCOPE_OPTIMIZE_WEIGHTS");
}

/* Issue 30: an empty TASKSCOPE_OUTPUTS ("" or ",,,") names no output:
 * one warning and the default, where it once wrote nothing and said
 * nothing; "none" is the way to ask for no files, without a warning. */
static void empty_outputs_warn(void)
{
    const char *empty[] = {"", ",,,", " , "};
    struct tscope__config c;
    for (int i = 0; i < 3; i++) {
        setenv("TASKSCOPE_OUTPUTS", empty[i], 1);
        ASSERT_EQ(load(&c), 1);
        ASSERT_EQ(c.outputs, TSCOPE__OUT_ALL);
        char want[200];
        snprintf(want, sizeof want,
                 "taskscope: warning: TASKSCOPE_OUTPUTS=\"%s\" is invalid (accepted: ", empty[i]);
        ASSERT(strncmp(warnings, want, strlen(want)) == 0);
        ASSERT(strstr(warnings, "using the default \"all\"\n") != NULL);
        free(warnings);
    }
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    ASSERT_EQ(load(&c), 0);
    ASSERT_EQ(c.outputs, 0);
    free(warnings);
    unsetenv("TASKSCOPE_OUTPUTS");
}

static void trace_values(void)
{
    struct tscope__config c;
    load(&c);
    free(warnings);
    ASSERT_EQ(c.trace, 0); /* off by default */
    ASSERT_U64_EQ(c.trace_max_bytes, 0);
    setenv("TASKSCOPE_TRACE", "chrome,OTF2", 1);
    setenv("TASKSCOPE_TRACE_MAX_MB", "3", 1);
    load(&c);
    free(warnings);
    ASSERT_EQ(c.trace, 1);
    ASSERT_EQ(c.trace_formats, TSCOPE__TRACE_CHROME | TSCOPE__TRACE_OTF2);
    ASSERT_U64_EQ(c.trace_max_bytes, 3u << 20);
    setenv("TASKSCOPE_TRACE", "on", 1);
    load(&c);
    free(warnings);
    ASSERT_EQ(c.trace, 1);
    ASSERT_EQ(c.trace_formats, 0);
    setenv("TASKSCOPE_TRACE", "chrome,vampir", 1);
    setenv("TASKSCOPE_TRACE_MAX_MB", "-1", 1);
    load(&c);
    ASSERT_EQ(c.trace, 0); /* the default */
    ASSERT_EQ(c.trace_formats, 0);
    ASSERT(strstr(warnings, "TASKSCOPE_TRACE=\"chrome,vampir\" is invalid") != NULL);
    ASSERT(strstr(warnings, "TASKSCOPE_TRACE_MAX_MB=\"-1\" is invalid") != NULL);
    free(warnings);
    unsetenv("TASKSCOPE_TRACE");
    unsetenv("TASKSCOPE_TRACE_MAX_MB");
}

static void describe_lists_every_variable(void)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    tscope__config_describe(f);
    fclose(f);
    ASSERT(strstr(buf, "| `TASKSCOPE_ENABLE` | `1` |"));
    ASSERT(strstr(buf, "| `TASKSCOPE_CLOCK` | `auto` |"));
    /* docs/configuration.md must hold every row, word for word */
    const char *src = getenv("TSCOPE_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/configuration.md", src ? src : ".");
    char *text = test_slurp(path);
    if (!text)
        TEST_FAIL("cannot open %s", path);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
        if (!strstr(text, line))
            TEST_FAIL("docs/configuration.md lacks the row: %s", line);
    free(text);
    free(buf);
}

/* The distance behind every "did you mean": swaps of neighbours count
 * one, case does not count, a far word gets no guess. */
static void closest_names(void)
{
    ASSERT_EQ(tscope__edit_distance("trcae", 5, "trace", 5), 1);
    ASSERT_EQ(tscope__edit_distance("SAMPL_MS", 8, "SAMPLE_MS", 9), 1);
    ASSERT_EQ(tscope__edit_distance("Rows", 4, "rows", 4), 0);
    ASSERT_EQ(tscope__edit_distance("", 0, "abc", 3), 3);
    ASSERT_EQ(tscope__edit_distance("kitten", 6, "sitting", 7), 3);
    const char *names[] = {"trace", "tools", NULL, "output", "outputs"};
    ASSERT_STR_EQ(tscope__closest("trcae", 5, names, 5), "trace");
    ASSERT_STR_EQ(tscope__closest("uotput", 6, names, 5), "output");
    ASSERT(tscope__closest("zzzzz", 5, names, 5) == NULL);
    ASSERT(tscope__closest("xy", 2, names, 5) == NULL); /* short: at most one edit */
}

/* A TASKSCOPE_* variable nobody reads: one warning with the close name;
 * none for the known ones, none once the launcher checked, none on a rank
 * other than 0. */
static void unknown_variables(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&text, &len);
    ASSERT_EQ(tscope__config_check_environ(w), 0);
    setenv("TASKSCOPE_SAMPL_MS", "5", 1);
    setenv("TASKSCOPE_RUN_DIR", "x", 1); /* the launcher's: known */
    ASSERT_EQ(tscope__config_check_environ(w), 1);
    fclose(w);
    ASSERT_STR_EQ(text, "taskscope: warning: TASKSCOPE_SAMPL_MS is not a taskscope variable (did "
                        "you mean TASKSCOPE_SAMPLE_MS?)\n");
    free(text);
    ASSERT(tscope__config_known("TASKSCOPE_SAMPLE_MS") &&
           tscope__config_known("TASKSCOPE_RUN_DIR"));
    ASSERT(!tscope__config_known("TASKSCOPE_SAMPL_MS"));
    setenv("TASKSCOPE_ENV_CHECKED", "1", 1);
    ASSERT_EQ(tscope__config_check_environ(NULL), 0);
    unsetenv("TASKSCOPE_ENV_CHECKED");
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "2", 1);
    ASSERT_EQ(tscope__config_check_environ(NULL), 0);
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    unsetenv("TASKSCOPE_SAMPL_MS");
    unsetenv("TASKSCOPE_RUN_DIR");
}

int main(void)
{
    RUN(defaults);
    RUN(booleans);
    RUN(trace_values);
    RUN(empty_outputs_warn);
    RUN(good_values);
    RUN(bad_values_warn_once_and_use_defaults);
    RUN(infinite_weights_are_refused);
    RUN(describe_lists_every_variable);
    RUN(closest_names);
    RUN(unknown_variables);
    return 0;
}
