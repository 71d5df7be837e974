/* test_filter_rules.c - the filter file (core/filter.h, docs/filter.md):
 * its rules evaluated on type names and files (wildcards, the last rule
 * that matches wins, a type's file taken from its name's "(FILE:LINE)"), and
 * in the library with the manual clock: an excluded type's create and start
 * on handles give NULL and are counted, its time is exactly in the self time
 * of the task it runs inside, an edge with an excluded end is dropped and
 * counted, a type registered before tscope_init is decided at init, and the
 * profile lists no excluded type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/filter.h"
#include "harness.h"
#include "profile/profile.h"
#include "test.h"

static char dir[] = "/tmp/test_filter_rulesXXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
    return path;
}

static struct tscope__filter *parse(const char *text)
{
    struct tscope__filter *f;
    char err[512];
    if (tscope__filter_parse(write_file("f.txt", text), &f, err, sizeof err))
        TEST_FAIL("parse: %s", err);
    return f;
}

static void rules(void)
{
    struct tscope__filter *f = parse("# a comment\n"
                                     "TASKSCOPE_TYPE_NAMES_BEGIN\n"
                                     "  EXCLUDE fib *\n"
                                     "  EXCLUDE task (x?.c:*)\n"
                                     "  EXCLUDE [bc]ar\n"
                                     "  INCLUDE fib (fib.c:1[0-9])\n"
                                     "TASKSCOPE_TYPE_NAMES_END\n"
                                     "\n"
                                     "TASKSCOPE_FILE_NAMES_BEGIN\n"
                                     "\tEXCLUDE gen_*.c\n"
                                     "TASKSCOPE_FILE_NAMES_END\n"
                                     "TASKSCOPE_TYPE_NAMES_BEGIN\n"
                                     "  INCLUDE keep (gen_a.c:*)\n"
                                     "TASKSCOPE_TYPE_NAMES_END\n");
    ASSERT_EQ((int)tscope__filter_rules(f), 6);
    ASSERT_EQ(tscope__filter_excludes(f, "fib (fib.c:20)"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "fib (fib.c:17)"), 0); /* a later include */
    ASSERT_EQ(tscope__filter_excludes(f, "fibonacci (fib.c:20)"), 0);
    ASSERT_EQ(tscope__filter_excludes(f, "task (x1.c:9)"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "task (x12.c:9)"), 0);
    ASSERT_EQ(tscope__filter_excludes(f, "bar"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "car"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "far"), 0);
    /* file rules: the FILE of "(FILE:LINE)" at the name's end */
    ASSERT_EQ(tscope__filter_excludes(f, "work (gen_b.c:3)"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "taskwait work (gen_b.c:12)"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "main._omp_fn.0 (gen_x.c:48)"), 1);
    ASSERT_EQ(tscope__filter_excludes(f, "keep (gen_a.c:4)"), 0); /* the last rule */
    ASSERT_EQ(tscope__filter_excludes(f, "gen_b.c"), 0);          /* no location */
    ASSERT_EQ(tscope__filter_excludes(f, "work (gen_b.c)"), 0);   /* no line */
    ASSERT_EQ(tscope__filter_excludes(f, "work (gen_b.c:1x)"), 0);
    ASSERT_EQ(tscope__filter_excludes(f, "(unknown location)"), 0);
    ASSERT_EQ(tscope__filter_excludes(NULL, "fib (fib.c:20)"), 0);
    tscope__filter_free(f);
}

static void errors(void)
{
    const struct {
        const char *text, *err;
    } cases[] = {
        {"EXCLUDE a\n", ":1: \"EXCLUDE\" outside a block"},
        {"TASKSCOPE_TYPE_NAMES_BEGIN\nTASKSCOPE_FILE_NAMES_BEGIN\n",
         ":2: TASKSCOPE_FILE_NAMES_BEGIN inside the block that line 1 begins (expected "
         "TASKSCOPE_TYPE_NAMES_END)"},
        {"TASKSCOPE_TYPE_NAMES_BEGIN\nTASKSCOPE_FILE_NAMES_END\n",
         ":2: TASKSCOPE_FILE_NAMES_END without its TASKSCOPE_FILE_NAMES_BEGIN"},
        {"TASKSCOPE_TYPE_NAMES_BEGIN x\n", ":1: TASKSCOPE_TYPE_NAMES_BEGIN takes nothing after it"},
        {"\n\nTASKSCOPE_TYPE_NAMES_BEGIN\n", ":3: TASKSCOPE_TYPE_NAMES_BEGIN has no"},
        {"TASKSCOPE_TYPE_NAMES_BEGIN\nexclude a\n", ":2: \"exclude\" is no rule"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tscope__filter *f = (void *)1;
        char err[512], want[512];
        const char *path = write_file("bad.txt", cases[i].text);
        ASSERT_EQ(tscope__filter_parse(path, &f, err, sizeof err), -1);
        ASSERT(f == NULL);
        snprintf(want, sizeof want, "%s%s", path, cases[i].err);
        if (strncmp(err, want, strlen(want)) != 0)
            TEST_FAIL("case %zu: got \"%s\", expected \"%s...\"", i, err, want);
    }
}

static const struct tscope__ptype *ptype(const struct tscope__profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (strcmp(p->types[i].name, name) == 0)
            return &p->types[i];
    return NULL;
}

/* parent (0..1000) runs an excluded child (100..700) inside it and a
 * measured one (800..900); an excluded timer (start) too; two edges with an
 * excluded end, one between measured tasks. */
static void in_the_library(void)
{
    tscope_type_t early = type_named("early (a.c:1)"); /* before init */
    setenv("TASKSCOPE_FILTER_FILE",
           write_file("lib.txt", "TASKSCOPE_TYPE_NAMES_BEGIN\n  EXCLUDE small*\n"
                                 "TASKSCOPE_TYPE_NAMES_END\n"
                                 "TASKSCOPE_FILE_NAMES_BEGIN\n  EXCLUDE a.c\n"
                                 "TASKSCOPE_FILE_NAMES_END\n"),
           1);
    harness_init();
    ASSERT_EQ(tscope_type_measured(early), 0);
    tscope_type_t parent = type_named("parent"), small = type_named("small (b.c:2)"),
                  kept = type_named("kept (b.c:3)");
    ASSERT_EQ(tscope_type_measured(small), 0);
    ASSERT_EQ(tscope_type_measured(kept), 1);
    ASSERT_EQ(tscope_type_measured(parent), 1);
    at(0);
    tscope_task_t *hp = tscope_task_start_h(1, parent);
    ASSERT(hp != NULL);
    at(100);
    tscope_task_t *hs = tscope_task_create_h(2, hp, small, 0, 1, 0);
    ASSERT(hs == NULL);
    ASSERT_EQ(tscope_task_begin_h(hs), TSCOPE_EINVAL); /* the adapter's calls on it: refused */
    at(700);
    ASSERT_EQ(tscope_task_end_h(hs), TSCOPE_EINVAL);
    ASSERT(tscope_task_start_h(3, early) == NULL);
    at(800);
    tscope_task_t *hk = tscope_task_create_h(4, hp, kept, 0, 1, 0);
    ASSERT(hk != NULL);
    ASSERT_OK(tscope_task_begin_h(hk));
    at(900);
    ASSERT_OK(tscope_task_end_h(hk));
    int x;
    ASSERT_OK(tscope_dep_edge(2, small, 4, kept, TSCOPE_HAZARD_RAW, 1, &x));
    ASSERT_OK(tscope_dep_edge(4, kept, 3, early, TSCOPE_HAZARD_WAW, 1, &x));
    ASSERT_OK(tscope_dep_edge(1, parent, 4, kept, TSCOPE_HAZARD_RAW, 1, &x));
    at(1000);
    ASSERT_OK(tscope_task_end_h(hp));
    ASSERT_OK(tscope_finalize());
    struct tscope__profile *p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_EQ(p->filter, 1);
    ASSERT_U64_EQ(p->tasks_filtered, 2);
    ASSERT_U64_EQ(p->deps_filtered, 2);
    ASSERT_U64_EQ(p->totals.dependencies, 1);
    ASSERT_U64_EQ(p->totals.tasks_created, 2);
    ASSERT(ptype(p, "small (b.c:2)") == NULL);
    ASSERT(ptype(p, "early (a.c:1)") == NULL);
    const struct tscope__ptype *tp = ptype(p, "parent"), *tk = ptype(p, "kept (b.c:3)");
    ASSERT(tp != NULL && tk != NULL);
    ASSERT_NEAR(tp->self.sum, 900, 0); /* 1000 but the kept child's 100: the small one's in it */
    ASSERT_NEAR(tk->self.sum, 100, 0);
    tscope__profile_free(p);

    /* no filter: the same types are measured, nothing counted */
    unsetenv("TASKSCOPE_FILTER_FILE");
    harness_init();
    ASSERT_EQ(tscope_type_measured(small), 1);
    ASSERT_EQ(tscope_type_measured(early), 1);
    at(0);
    hs = tscope_task_start_h(5, small);
    ASSERT(hs != NULL);
    at(10);
    ASSERT_OK(tscope_task_end_h(hs));
    ASSERT_OK(tscope_finalize());
    p = tscope__profile_snapshot();
    ASSERT(p != NULL);
    ASSERT_EQ(p->filter, 0);
    ASSERT_U64_EQ(p->tasks_filtered, 0);
    ASSERT(ptype(p, "small (b.c:2)") != NULL);
    tscope__profile_free(p);
}

int main(void)
{
    ASSERT(mkdtemp(dir) != NULL);
    RUN(rules);
    RUN(errors);
    RUN(in_the_library);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) != 0;
}
