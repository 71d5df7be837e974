/* test_export.c - golden files for the CSV, JSON, DOT, task tree and
 * summary outputs of a deterministic run (manual clock, one thread).
 * TSCOPE_REGENERATE=1 rewrites the golden files instead of comparing. */
#include <stdlib.h>
#include <unistd.h>

#include "export/export.h"
#include "export/output.h"
#include "golden.h"
#include "harness.h"

typedef int (*render_fn)(const struct tscope__profile *p, FILE *f);

static char *render(render_fn fn, const struct tscope__profile *p)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_OK(fn(p, f));
    fclose(f);
    return buf;
}

static int render_summary(const struct tscope__profile *p, FILE *f)
{
    return tscope__export_summary(p, f, "excl", 20);
}

/* A fixed little program: a root "main" task that creates two "work" tasks
 * (one nested "leaf" each), a cancelled "work", an unfinished "leaf", a
 * counter with three samples and a custom event. */
static struct tscope__profile *deterministic_profile(void)
{
    harness_init();
    tscope_type_t tmain = type_named("main"), twork = type_named("work"),
                  tleaf = type_named("leaf, \"quoted\"");
    tscope_counter_t c;
    ASSERT_OK(tscope_counter_register("queue_length", &c));
    tscope_event_t e;
    ASSERT_OK(tscope_event_register("phase", &e));
    at(0);
    ASSERT_OK(tscope_task_create(1, 0, tmain, 0, 0, 0));
    ASSERT_OK(tscope_task_begin(1, 0));
    uint64_t t = 100;
    for (uint64_t w = 2; w <= 3; w++) {
        at(t);
        ASSERT_OK(tscope_task_create(w, 1, twork, TSCOPE_TASK_SPLITTABLE, 1, 0));
        ASSERT_OK(tscope_counter_sample(c, (double)w));
        ASSERT_OK(tscope_task_begin(w, 0));
        at(t + 1000);
        ASSERT_OK(tscope_task_start(w + 10, tleaf));
        at(t + 1000 + 500 * w);
        ASSERT_OK(tscope_task_end(w + 10));
        at(t + 3000);
        ASSERT_OK(tscope_task_end(w));
        t += 4000;
    }
    ASSERT_OK(tscope_task_create(4, 1, twork, 0, 1, 0));
    ASSERT_OK(tscope_task_cancel(4));
    ASSERT_OK(tscope_counter_sample(c, 7.5));
    ASSERT_OK(tscope_custom_event(e, 42));
    at(t);
    ASSERT_OK(tscope_task_end(1));
    ASSERT_OK(tscope_task_start(20, tleaf));
    at(t + 250);
    ASSERT_OK(tscope_finalize());
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    return p;
}

static void outputs_match_golden(void)
{
    struct tscope__profile *p = deterministic_profile();
    ASSERT_EQ(p->totals.tasks_completed, 5);
    ASSERT_EQ(p->totals.tasks_cancelled, 1);
    ASSERT_EQ(p->totals.tasks_unfinished, 1);
    struct {
        const char *name;
        render_fn fn;
    } outs[] = {
        {"profile.json", tscope__export_json},         {"types.csv", tscope__export_csv_types},
        {"counters.csv", tscope__export_csv_counters}, {"taskgraph.dot", tscope__export_dot},
        {"tasktree.txt", tscope__export_tree},         {"summary.txt", render_summary}};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        char *text = render(outs[i].fn, p);
        test_check_golden(outs[i].name, text);
        free(text);
    }
    tscope__profile_free(p);
}

static void dot_renders_with_graphviz(void)
{
    if (system("command -v dot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "SKIPPED part: graphviz 'dot' is not installed (./scripts/setup "
                        "installs it); the DOT text is still checked against its golden file\n");
        return;
    }
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null", test_golden_path("taskgraph.dot"));
    ASSERT_EQ(system(cmd), 0);
}

static void dropped_events_are_stated(void)
{
    struct tscope__profile p = {0};
    p.program = "x";
    p.clock = "manual";
    p.mode = "profile";
    p.full_policy = "drop";
    p.totals.events_dropped = 17;
    char *text = render(tscope__export_csv_types, &p);
    ASSERT(strstr(text, "# WARNING: 17 events were dropped"));
    free(text);
    text = render(tscope__export_dot, &p);
    ASSERT(strstr(text, "17 events dropped"));
    free(text);
    text = render(tscope__export_tree, &p);
    ASSERT(strstr(text, "17 events were dropped"));
    free(text);
    text = render(render_summary, &p);
    ASSERT(strstr(text, "17 events were dropped"));
    free(text);
    text = render(tscope__export_json, &p);
    ASSERT(strstr(text, "\"events_dropped\":17"));
    free(text);
}

/* A full disk: the file's error is one line, the temporary file goes away,
 * an earlier complete file under the final name is left alone. */
static void full_disk_is_reported(void)
{
    char dir[] = "/tmp/tscope-full-XXXXXX";
    ASSERT(mkdtemp(dir) != NULL);
    char tmp[1100], final[1100];
    snprintf(tmp, sizeof tmp, "%s/profile.json.tmp", dir);
    snprintf(final, sizeof final, "%s/profile.json", dir);
    ASSERT_OK(symlink("/dev/full", tmp)); /* every write there fails: ENOSPC */
    FILE *f = fopen(final, "w");
    ASSERT(f != NULL);
    fputs("earlier", f);
    fclose(f);
    struct tscope__profile p = {0};
    p.program = "x";
    p.clock = "manual";
    p.mode = "profile";
    p.full_policy = "wait";
    char errpath[] = "/tmp/tscope-err-XXXXXX";
    int fd = mkstemp(errpath);
    ASSERT(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    int rc = tscope__output_write_file(dir, "profile.json", tscope__export_json, &p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    ASSERT_EQ(rc, TSCOPE_EIO);
    char *err = test_slurp(errpath);
    unlink(errpath);
    ASSERT(err != NULL);
    char want[1300];
    snprintf(want, sizeof want, "taskscope: error: writing %s failed: No space left on device\n",
             final);
    ASSERT_STR_EQ(err, want);
    free(err);
    char *kept = test_slurp(final);
    ASSERT_STR_EQ(kept, "earlier");
    free(kept);
    ASSERT(access(tmp, F_OK) != 0); /* the temporary (the link) was removed */
    unlink(final);
    rmdir(dir);
}

int main(void)
{
    RUN(outputs_match_golden);
    RUN(dot_renders_with_graphviz);
    RUN(dropped_events_are_stated);
    RUN(full_disk_is_reported);
    return 0;
}
