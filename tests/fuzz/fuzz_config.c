/* fuzz_config.c - fuzz target "config": the TASKSCOPE_* parser
 * (tscope__config_load in src/core/config.c).
 *
 * The input is lines NAME=VALUE: each sets one environment variable (a NAME
 * without the TASKSCOPE_ prefix gets it, so "RING_SIZE=64" sets
 * TASKSCOPE_RING_SIZE; a line without '=' or with an empty name is skipped;
 * a later line wins; at most MAX_VARS lines).  The target sets them, loads
 * the configuration, checks it, and unsets them again.  What it checks:
 *   - every field is within what its variable accepts (config.c's table);
 *   - the warning text has one line per warning counted, each
 *     "taskscope: warning: NAME=..." for a variable the input set;
 *   - each variable alone warns at most once, and when it warns the
 *     configuration is exactly the default one (an invalid value leaves the
 *     default); the warnings of all variables together are the sum of
 *     theirs alone (each variable is parsed on its own);
 *   - loading twice gives the same configuration.
 * Once per process it also checks that every variable set to its own
 * default (from tscope__config_describe) loads without a warning.
 *
 * Concurrency: single-threaded (the environment is process-wide).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "core/config.h"
#include "fuzz.h"
#include "taskscope/taskscope.h"

#define MAX_VARS 64

extern char **environ;

static struct tscope__config defaults;

/* Bytes no field stands for zeroed, so two configurations compare with
 * memcmp: the filter type slots past filter_ntypes (a list that failed
 * half-way leaves names there) and string bytes past their NUL. */
static void normalise(struct tscope__config *c)
{
    int used = c->filter_ntypes >= 0 && c->filter_ntypes <= TSCOPE__FILTER_MAX_TYPES
                   ? c->filter_ntypes
                   : 0;
    size_t keep = 0;
    for (int i = 0; i < used && keep < sizeof c->filter_types; i++)
        keep += strnlen(c->filter_types + keep, sizeof c->filter_types - keep) + 1;
    if (keep < sizeof c->filter_types)
        memset(c->filter_types + keep, 0, sizeof c->filter_types - keep);
#define NORMALISE_STRING(f)                                                                        \
    do {                                                                                           \
        size_t n_ = strnlen(c->f, sizeof c->f);                                                    \
        memset(c->f + n_, 0, sizeof c->f - n_);                                                    \
    } while (0)
    NORMALISE_STRING(output_dir);
    NORMALISE_STRING(summary_sort);
    NORMALISE_STRING(clock);
    NORMALISE_STRING(tools);
    NORMALISE_STRING(policy);
    NORMALISE_STRING(throttle_type);
    NORMALISE_STRING(papi_events);
#undef NORMALISE_STRING
}

/* Loads the configuration (normalised); its warning text in *text (free it). */
static int load(struct tscope__config *c, char **text)
{
    size_t len;
    FILE *w = open_memstream(text, &len);
    if (!w)
        FUZZ_FAIL("open_memstream failed");
    int n = tscope__config_load(c, w);
    fclose(w);
    normalise(c);
    return n;
}

static int one_of(const char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, words[i]) == 0)
            return 1;
    return 0;
}

#define ONE_OF(s, ...)                                                                             \
    one_of(s, (const char *const[]){__VA_ARGS__},                                                  \
           sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* A string field holds its NUL. */
#define TERMINATED(field) (memchr(field, 0, sizeof field) != NULL)

static int weights_ok(const double *w)
{
    /* ">= 0, not all 0" (config.c), and finite: node.score divides by their
     * sum, which an infinite weight makes NaN.  config.c accepts "inf" and
     * "1e999" today: tests/fuzz/crashes/config-inf-weights */
    return w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[0] + w[1] + w[2] > 0 && isfinite(w[0]) &&
           isfinite(w[1]) && isfinite(w[2]);
}

/* Every field within what its variable accepts. */
static void check_ranges(const struct tscope__config *c)
{
    FUZZ_ASSERT(c->enable == 0 || c->enable == 1);
    FUZZ_ASSERT(c->profiler == 0 || c->profiler == 1);
    FUZZ_ASSERT(c->summary == 0 || c->summary == 1);
    FUZZ_ASSERT(c->tree_fold == 0 || c->tree_fold == 1);
    FUZZ_ASSERT(c->mode == TSCOPE__MODE_PROFILE || c->mode == TSCOPE__MODE_NAIVE);
    FUZZ_ASSERT(c->full_policy == TSCOPE__FULL_WAIT || c->full_policy == TSCOPE__FULL_DROP);
    FUZZ_ASSERT(c->ring_size >= 64 && c->ring_size <= (1u << 24));
    FUZZ_ASSERT((c->ring_size & (c->ring_size - 1)) == 0);
    FUZZ_ASSERT(c->max_threads >= 1 && c->max_threads <= 65535);
    FUZZ_ASSERT(c->period_ms >= 1 && c->period_ms <= 10000);
    FUZZ_ASSERT(c->batch >= 64 && c->batch <= (1u << 24));
    FUZZ_ASSERT(c->instance_cap <= 1000000000u);
    FUZZ_ASSERT(c->instance_sample >= 0.0 && c->instance_sample <= 1.0);
    FUZZ_ASSERT(c->filter_ntypes >= 0 && c->filter_ntypes <= TSCOPE__FILTER_MAX_TYPES);
    FUZZ_ASSERT(TERMINATED(c->filter_types));
    size_t at = 0;
    for (int i = 0; i < c->filter_ntypes; i++) {
        FUZZ_ASSERT(at < sizeof c->filter_types);
        const char *t = c->filter_types + at;
        FUZZ_ASSERT(memchr(t, 0, sizeof c->filter_types - at) != NULL);
        size_t n = strlen(t);
        at += n + 1;
        FUZZ_ASSERT(n > 0 && !strchr(t, ','));
        FUZZ_ASSERT(!isspace((unsigned char)t[0]) && !isspace((unsigned char)t[n - 1]));
    }
    FUZZ_ASSERT(c->filter_flags == 0 || c->filter_flags == (int)TSCOPE_TASK_SPLITTABLE ||
                c->filter_flags == (int)TSCOPE_TASK_PROCESSABLE);
    FUZZ_ASSERT(c->filter_depth_min <= c->filter_depth_max && c->filter_depth_max <= 65535);
    FUZZ_ASSERT(TERMINATED(c->output_dir) && c->output_dir[0]);
    FUZZ_ASSERT((c->outputs & ~TSCOPE__OUT_ANY) == 0);
    FUZZ_ASSERT(TERMINATED(c->summary_sort) && ONE_OF(c->summary_sort, "self", "running", "elapsed",
                                                      "calls", "mean", "name", "excl", "incl"));
    FUZZ_ASSERT(c->summary_rows <= 1000000);
    FUZZ_ASSERT(TERMINATED(c->clock) && ONE_OF(c->clock, "auto", "tsc", "monotonic"));
    FUZZ_ASSERT(TERMINATED(c->tools));
    FUZZ_ASSERT(c->sample_ms == 0 || (c->sample_ms >= 5 && c->sample_ms <= 3600000));
    FUZZ_ASSERT(c->sample_keep >= 16 && c->sample_keep <= 1000000);
    FUZZ_ASSERT(c->power_idle_w >= 0 && c->power_max_w >= c->power_idle_w &&
                c->power_max_w <= 10000);
    FUZZ_ASSERT(TERMINATED(c->policy) &&
                ONE_OF(c->policy, "none", "throttle", "powercap", "optimize"));
    FUZZ_ASSERT(c->policy_period_ms >= 1 && c->policy_period_ms <= 60000);
    FUZZ_ASSERT(TERMINATED(c->throttle_type));
    FUZZ_ASSERT(c->power_low_w >= 0 && c->power_high_w > c->power_low_w && c->power_high_w <= 1e6);
    FUZZ_ASSERT(weights_ok(c->score_w));
    FUZZ_ASSERT(weights_ok(c->optimize_w));
    FUZZ_ASSERT(TERMINATED(c->papi_events));
}

/* The warning text: `n` lines, each naming one of the variables set. */
static void check_warnings(const char *text, int n, char *const *names, size_t nnames)
{
    int lines = 0;
    for (const char *l = text; *l; lines++) {
        const char *end = strchr(l, '\n');
        FUZZ_ASSERT(end != NULL); /* every warning ends its line */
        FUZZ_ASSERT(fuzz_starts_with(l, "taskscope: warning: TASKSCOPE_"));
        const char *name = l + strlen("taskscope: warning: ");
        int known = 0;
        for (size_t i = 0; i < nnames && !known; i++) {
            size_t len = strlen(names[i]);
            known = strncmp(name, names[i], len) == 0 && name[len] == '=';
        }
        FUZZ_ASSERT(known);
        l = end + 1;
    }
    FUZZ_ASSERT(lines == n);
}

/* Unsets every TASKSCOPE_* variable of the environment. */
static void clear_environment(void)
{
    for (;;) {
        char name[256] = "";
        for (char **e = environ; e && *e; e++) {
            const char *eq = strchr(*e, '=');
            if (fuzz_starts_with(*e, "TASKSCOPE_") && eq && (size_t)(eq - *e) < sizeof name) {
                memcpy(name, *e, (size_t)(eq - *e));
                name[eq - *e] = 0;
                break;
            }
        }
        if (!name[0])
            return;
        unsetenv(name);
    }
}

/* Once: the default configuration, and each variable set to its default
 * (from the table tscope__config_describe prints) loads it silently. */
static void init_once(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    clear_environment();
    char *text;
    FUZZ_ASSERT(load(&defaults, &text) == 0);
    free(text);
    check_ranges(&defaults);
    char *table;
    size_t len;
    FILE *f = open_memstream(&table, &len);
    if (!f)
        FUZZ_FAIL("open_memstream failed");
    tscope__config_describe(f);
    fclose(f);
    int rows = 0;
    for (char *row = strstr(table, "\n| `TASKSCOPE_"); row; row = strstr(row + 1, "\n| `")) {
        char name[128], def[256];
        if (sscanf(row, "\n| `%127[^`]` | `%255[^`]`", name, def) != 2)
            def[0] = 0; /* an empty default: "| `NAME` | `` |" */
        if (sscanf(row, "\n| `%127[^`]`", name) != 1)
            FUZZ_FAIL("cannot read a row of tscope__config_describe: %.60s", row + 1);
        setenv(name, def, 1);
        struct tscope__config c;
        FUZZ_ASSERT(load(&c, &text) == 0);
        free(text);
        FUZZ_ASSERT(memcmp(&c, &defaults, sizeof c) == 0);
        unsetenv(name);
        rows++;
    }
    free(table);
    FUZZ_ASSERT(rows > 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    char *text = fuzz_text(data, size);
    char *names[MAX_VARS];
    size_t nnames = 0;
    for (char *next, *line = text; line && nnames < MAX_VARS; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *eq = strchr(line, '=');
        if (!eq || eq == line)
            continue;
        *eq = 0;
        char *name;
        if (asprintf(&name, "%s%s", fuzz_starts_with(line, "TASKSCOPE_") ? "" : "TASKSCOPE_",
                     line) < 0)
            FUZZ_FAIL("out of memory");
        if (setenv(name, eq + 1, 1) != 0) {
            free(name);
            continue;
        }
        size_t i = 0;
        while (i < nnames && strcmp(names[i], name) != 0)
            i++;
        if (i < nnames)
            free(name); /* set again: the later value wins */
        else
            names[nnames++] = name;
    }

    struct tscope__config all, again;
    char *warnings, *warnings_again;
    int n = load(&all, &warnings);
    int n_again = load(&again, &warnings_again);
    FUZZ_ASSERT(n >= 0 && n == n_again && strcmp(warnings, warnings_again) == 0);
    FUZZ_ASSERT(memcmp(&all, &again, sizeof all) == 0);
    check_ranges(&all);
    check_warnings(warnings, n, names, nnames);
    free(warnings);
    free(warnings_again);

    /* each variable alone */
    char *values[MAX_VARS];
    for (size_t i = 0; i < nnames; i++) {
        values[i] = strdup(getenv(names[i]));
        if (!values[i])
            FUZZ_FAIL("out of memory");
        unsetenv(names[i]);
    }
    int sum = 0;
    for (size_t i = 0; i < nnames; i++) {
        setenv(names[i], values[i], 1);
        struct tscope__config alone;
        char *w;
        int k = load(&alone, &w);
        FUZZ_ASSERT(k == 0 || k == 1);
        check_warnings(w, k, &names[i], 1);
        if (k)
            FUZZ_ASSERT(memcmp(&alone, &defaults, sizeof alone) == 0);
        check_ranges(&alone);
        sum += k;
        free(w);
        unsetenv(names[i]);
        free(values[i]);
        free(names[i]);
    }
    FUZZ_ASSERT(sum == n);
    free(text);
    return 0;
}
