/* test_persist.c - the store saved and loaded (src/profile/persist.c), as the
 * crash journal does at a checkpoint and its recovery after a SIGKILL: a
 * store loaded mid-run and then fed the rest of the events ends exactly
 * where the original does; short, corrupt and foreign bytes are refused
 * with a reason, never half-loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "profile/persist.h"
#include "profile/store.h"
#include "test.h"

static struct tscope__rec rec(uint8_t kind, uint64_t ts, uint64_t id, uint64_t arg, uint16_t type)
{
    return (struct tscope__rec){.ts = ts, .id = id, .arg = arg, .type = type, .kind = kind};
}

/* Step k of a workload on three threads: parents created on thread 0 run on
 * thread k % 3, yield around a taskwait for two leaf children, resume and
 * end; counters, custom events and dependencies in between; a round ends
 * every 7 steps.  Applied to every store in s[0..n). */
static void step(struct tscope__store **s, int n, uint64_t k)
{
    uint64_t t0 = k * 1000, parent = 100000 + k, c1 = 200000 + 2 * k, c2 = c1 + 1;
    uint32_t th = (uint32_t)(k % 3);
    struct tscope__rec r[] = {
        rec(TSCOPE__REC_CREATE, t0, parent, 0, (uint16_t)(1 + k % 4)),
        rec(TSCOPE__REC_BEGIN, t0 + 10, parent, 0, 0),
        rec(TSCOPE__REC_CREATE, t0 + 20, c1, parent, 5),
        rec(TSCOPE__REC_CREATE, t0 + 30, c2, parent, 6),
        rec(TSCOPE__REC_YIELD, t0 + 40, parent, 0, 0),
        rec(TSCOPE__REC_BEGIN, t0 + 50, c1, 0, 0),
        rec(TSCOPE__REC_END, t0 + 150 + k % 13, c1, 0, 0),
        rec(TSCOPE__REC_BEGIN, t0 + 200, c2, 0, 0),
        rec(TSCOPE__REC_END, t0 + 260, c2, 0, 0),
        rec(TSCOPE__REC_RESUME, t0 + 300, parent, 0, 0),
        rec(TSCOPE__REC_END, t0 + 400 + k % 7, parent, 0, 0),
    };
    uint32_t thread_of[] = {0, th, 0, 0, th, (th + 1) % 3, (th + 1) % 3, th, th, th, th};
    double v = (double)(k % 17) * 0.5;
    struct tscope__rec counter = rec(TSCOPE__REC_COUNTER, t0 + 5, 0, 0, (uint16_t)(1 + k % 2));
    memcpy(&counter.arg, &v, sizeof v);
    struct tscope__rec custom = rec(TSCOPE__REC_CUSTOM, t0 + 6, 0, k, 3);
    struct tscope__rec dep = rec(TSCOPE__REC_DEP_LOCAL, t0 + 7, c1, c2, 0);
    struct tscope__rec ext = rec(TSCOPE__REC_EXT, t0 + 7, 0x1000 + k, 0, 0);
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < sizeof r / sizeof *r; j++)
            tscope__store_apply(s[i], thread_of[j], &r[j], NULL);
        tscope__store_apply(s[i], 1, &counter, NULL);
        tscope__store_apply(s[i], 2, &custom, NULL);
        tscope__store_apply(s[i], 0, &dep, &ext);
        if (k % 7 == 6)
            tscope__store_end_round(s[i]);
    }
}

static struct tscope__store *new_store(void)
{
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    cfg.instance_cap = 500; /* reached: the cut-off is saved too */
    struct tscope__store *s = tscope__store_new(&cfg, 0);
    ASSERT(s != NULL);
    return s;
}

static FILE *saved(struct tscope__store *s, long *size)
{
    FILE *f = tmpfile();
    ASSERT(f != NULL);
    ASSERT_OK(tscope__store_save(s, f, NULL));
    ASSERT_OK(fflush(f));
    *size = ftell(f);
    rewind(f);
    return f;
}

static void same_acc(const struct tscope__acc *a, const struct tscope__acc *b)
{
    ASSERT(memcmp(a, b, sizeof *a) == 0);
}

/* Everything a profile is made of, compared field by field. */
/* memcmp that takes no pointer when there is nothing to compare (an empty
 * array is NULL, which memcmp must not get) */
static int same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

static int by_dropped_id(const void *x, const void *y)
{
    const struct tscope__dropped *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

static void same_store(struct tscope__store *a, struct tscope__store *b)
{
    ASSERT_EQ(a->events, b->events);
    ASSERT_EQ(a->created, b->created);
    ASSERT_EQ(a->completed, b->completed);
    ASSERT_EQ(a->unfinished, b->unfinished);
    ASSERT_EQ(a->anomalies, b->anomalies);
    ASSERT_EQ(a->dependencies, b->dependencies);
    ASSERT_EQ(a->cut_off, b->cut_off);
    ASSERT_EQ(a->live, b->live);
    ASSERT_EQ(a->ntypes, b->ntypes);
    for (uint32_t i = 0; i < a->ntypes; i++) {
        ASSERT_EQ(a->types[i].calls, b->types[i].calls);
        ASSERT_EQ(a->types[i].created, b->types[i].created);
        ASSERT_EQ(a->types[i].yields, b->types[i].yields);
        ASSERT_EQ(a->types[i].threads, b->types[i].threads);
        same_acc(&a->types[i].excl, &b->types[i].excl);
        same_acc(&a->types[i].incl, &b->types[i].incl);
        same_acc(&a->types[i].elapsed, &b->types[i].elapsed);
        ASSERT_EQ(a->types[i].running_total, b->types[i].running_total);
        ASSERT_EQ(a->types[i].elapsed_total, b->types[i].elapsed_total);
    }
    ASSERT_EQ(a->ndeptypes, b->ndeptypes);
    ASSERT(same_bytes(a->deptypes, b->deptypes, a->ndeptypes * sizeof *a->deptypes));
    /* the instances the cap dropped: the same records, in any order (the
     * appendix gives them in the order they were kept, not dropped) */
    ASSERT_EQ(a->ndropped, b->ndropped);
    if (a->ndropped) {
        qsort(a->dropped, a->ndropped, sizeof *a->dropped, by_dropped_id);
        qsort(b->dropped, b->ndropped, sizeof *b->dropped, by_dropped_id);
    }
    ASSERT(a->ndropped == 0 ||
           memcmp(a->dropped, b->dropped, a->ndropped * sizeof *a->dropped) == 0);
    ASSERT_EQ(a->inst_limit, b->inst_limit);
    ASSERT_EQ(a->held, b->held);
    ASSERT_EQ(a->nnodes, b->nnodes);
    ASSERT(same_bytes(a->nodes, b->nodes, a->nnodes * sizeof *a->nodes));
    ASSERT_EQ(a->nedges, b->nedges);
    ASSERT(same_bytes(a->edges, b->edges, a->nedges * sizeof *a->edges));
    ASSERT_EQ(a->ninst, b->ninst);
    ASSERT(same_bytes(a->inst, b->inst, a->ninst * sizeof *a->inst));
    ASSERT_EQ(a->ndeps, b->ndeps);
    ASSERT(same_bytes(a->deps, b->deps, a->ndeps * sizeof *a->deps));
    ASSERT_EQ(a->ncounters, b->ncounters);
    ASSERT(same_bytes(a->counters, b->counters, a->ncounters * sizeof *a->counters));
    ASSERT_EQ(a->ncustoms, b->ncustoms);
    ASSERT(same_bytes(a->customs, b->customs, a->ncustoms * sizeof *a->customs));
    for (uint32_t i = 0; i < a->nstacks && i < b->nstacks; i++)
        ASSERT_EQ(a->stacks[i].events, b->stacks[i].events);
}

/* Saved after 300 steps, in the middle of a round and with tasks running;
 * both go on for 400 more steps and are completed: identical. */
static void loaded_store_goes_on_exactly(void)
{
    struct tscope__store *a = new_store();
    for (uint64_t k = 0; k < 300; k++)
        step(&a, 1, k);
    struct tscope__rec open = rec(TSCOPE__REC_START, 300000, 999999, 0, 7);
    tscope__store_apply(a, 2, &open, NULL); /* still running at the end */
    long size;
    FILE *f = saved(a, &size);
    const char *why = NULL;
    struct tscope__store *b = tscope__store_load(f, NULL, &why);
    fclose(f);
    ASSERT(b != NULL);
    ASSERT(a->live > 0); /* there was something in flight to carry over */
    struct tscope__store *both[2] = {a, b};
    for (uint64_t k = 300; k < 700; k++)
        step(both, 2, k);
    for (int i = 0; i < 2; i++) {
        tscope__store_end_round(both[i]);
        tscope__store_end_round(both[i]);
        tscope__store_complete(both[i], 800000);
    }
    same_store(a, b);
    ASSERT_EQ(a->types[5].calls, 700);
    ASSERT_EQ(a->unfinished, 1);
    ASSERT(a->cut_off > 0);
    tscope__store_free(a);
    tscope__store_free(b);
}

static void spoil_node(struct tscope__store *s)
{
    s->nodes[1].parent = 2; /* made after node 1 */
}

/* Two live tasks waiting in each other's list. */
static void spoil_waiters(struct tscope__store *s)
{
    uint32_t x = TSCOPE__NONE, y = TSCOPE__NONE;
    for (uint32_t i = 0; i < s->ntasks_cap && y == TSCOPE__NONE; i++)
        if (!(s->tasks[i].bits & TSCOPE__T_FREE)) {
            if (x == TSCOPE__NONE)
                x = i;
            else
                y = i;
        }
    ASSERT(y != TSCOPE__NONE); /* the two created, never begun, at least */
    s->tasks[x].waiters = y;
    s->tasks[y].next_wait = x;
    s->tasks[x].next_wait = y; /* y -> x -> y -> ... */
    s->tasks[y].waiters = TSCOPE__NONE;
    ASSERT(s->ntasks_cap >= 2);
}

static void spoil_type(struct tscope__store *s)
{
    for (uint32_t i = 0; i < s->ntasks_cap; i++)
        if (!(s->tasks[i].bits & TSCOPE__T_FREE)) {
            s->tasks[i].type = (uint16_t)s->ntypes;
            return;
        }
    ASSERT(0); /* there are live tasks */
}

/* Every prefix of a saved store (in steps of 97 bytes) and a flipped layout
 * stamp are refused with a reason. */
static void short_and_foreign_bytes_refused(void)
{
    struct tscope__store *a = new_store();
    for (uint64_t k = 0; k < 50; k++)
        step(&a, 1, k);
    long size;
    FILE *f = saved(a, &size);
    char *bytes = malloc((size_t)size);
    ASSERT(bytes != NULL);
    ASSERT_EQ(fread(bytes, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    for (long cut = 0; cut < size; cut += 97) {
        FILE *g = fmemopen(bytes, (size_t)cut ? (size_t)cut : 1, "r");
        ASSERT(g != NULL);
        if (cut == 0)
            fgetc(g); /* fmemopen needs a size of at least 1: read it away */
        const char *why = NULL;
        ASSERT(tscope__store_load(g, NULL, &why) == NULL);
        ASSERT(why != NULL && *why);
        fclose(g);
    }
    bytes[0] ^= 0x5a;
    FILE *g = fmemopen(bytes, (size_t)size, "r");
    const char *why = NULL;
    ASSERT(tscope__store_load(g, NULL, &why) == NULL);
    ASSERT(strcmp(why, "written by another build of taskscope") == 0);
    fclose(g);
    free(bytes);
    tscope__store_free(a);
}

/* Bytes that are whole but say impossible things: refused with what is
 * wrong (a node's parent made after it, a loop through the waiter lists, a
 * task of a type that does not exist), not followed. */
/* The live task 777001 (inconsistent_bytes_refused makes it): its parent
 * slot is itself; its count of children is one too many; the task index's
 * front holds it in the wrong entry. */
static void spoil_parent_cycle(struct tscope__store *s)
{
    uint32_t slot = tscope__task_find(s, 777001);
    ASSERT(slot != TSCOPE__NONE);
    s->tasks[slot].parent_slot = slot;
    s->tasks[slot].refs++;
}

static void spoil_refs(struct tscope__store *s)
{
    uint32_t slot = tscope__task_find(s, 777001);
    ASSERT(slot != TSCOPE__NONE);
    s->tasks[slot].refs++;
}

static void spoil_front(struct tscope__store *s)
{
    uint32_t slot = tscope__task_find(s, 777001);
    ASSERT(slot != TSCOPE__NONE);
    s->id_front[(777001 + 1) & (TSCOPE__ID_FRONT - 1)] = slot;
}

/* A program killed before the instance graph kept anything (a long first
 * task): its saved state loads, inline and with an appendix. */
static void nothing_kept_yet_loads(void)
{
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    struct tscope__store *s = tscope__store_new(&cfg, 0);
    ASSERT(s != NULL);
    struct tscope__rec r = rec(TSCOPE__REC_CREATE, 10, 1, 0, 1);
    tscope__store_apply(s, 0, &r, NULL);
    r = rec(TSCOPE__REC_BEGIN, 11, 1, 0, 0);
    tscope__store_apply(s, 0, &r, NULL);
    tscope__store_end_round(s);
    ASSERT_EQ(s->ninst, 0);
    long size;
    FILE *f = saved(s, &size);
    const char *why = NULL;
    struct tscope__store *b = tscope__store_load(f, NULL, &why);
    if (!b)
        TEST_FAIL("inline: %s", why);
    same_store(s, b);
    tscope__store_free(b);
    fclose(f);
    FILE *st = tmpfile(), *ax = tmpfile();
    ASSERT(st && ax);
    struct tscope__appendix app = {ax, 0};
    ASSERT_OK(tscope__store_save(s, st, &app));
    rewind(st);
    rewind(ax);
    b = tscope__store_load(st, ax, &why);
    if (!b)
        TEST_FAIL("appendix: %s", why);
    same_store(s, b);
    tscope__store_free(b);
    fclose(st);
    fclose(ax);
    tscope__store_free(s);
}

static void inconsistent_bytes_refused(void)
{
    struct {
        void (*spoil)(struct tscope__store *);
        const char *why;
    } cases[] = {
        {spoil_node, "the task tree is broken"},
        {spoil_waiters, "the lists of waiting tasks are broken"},
        {spoil_type, "a task has a type or tree node that does not exist"},
        {spoil_parent_cycle, "the parents of the tasks form a cycle"},
        {spoil_refs, "a task's count of children is wrong"},
        {spoil_front, "the task index is broken"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct tscope__store *c = new_store();
        for (uint64_t k = 0; k < 50; k++)
            step(&c, 1, k);
        ASSERT(c->nnodes > 2);
        for (uint64_t id = 777001; id <= 777002; id++) { /* live: created, never begun */
            struct tscope__rec r = rec(TSCOPE__REC_CREATE, 900000, id, 0, 2);
            tscope__store_apply(c, 0, &r, NULL);
        }
        cases[i].spoil(c);
        long size;
        FILE *f = saved(c, &size);
        const char *why = NULL;
        ASSERT(tscope__store_load(f, NULL, &why) == NULL);
        ASSERT_STR_EQ(why, cases[i].why);
        fclose(f);
        tscope__store_free(c);
    }
}

/* As the crash journal saves: the instances and dependencies in an appendix,
 * each entry once over successive saves, the last state loaded with it;
 * the appendix short or missing is refused with that said. */
static void appendix_saves_each_entry_once(void)
{
    struct tscope__store *a = new_store();
    FILE *ax = tmpfile(), *st = NULL;
    ASSERT(ax != NULL);
    struct tscope__appendix app = {ax, 0};
    for (int save = 0; save < 3; save++) {
        for (uint64_t k = 100 * (uint64_t)save; k < 100 * (uint64_t)save + 100; k++)
            step(&a, 1, k);
        if (st)
            fclose(st);
        st = tmpfile();
        ASSERT(st != NULL);
        ASSERT_OK(tscope__store_save(a, st, &app));
        ASSERT_EQ(a->inst_saved, a->ninst);
    }
    ASSERT(a->ninst > 0 && a->ndeps > 0);
    long ax_size = ftell(ax);
    /* each instance, dependency and dropped-instance record once (the
     * instances the cap dropped stay in it), the updates of below_*, the
     * chunks' headers */
    ASSERT(a->inst_appended >= a->ninst);
    ASSERT(ax_size <=
           (long)(a->inst_appended * sizeof *a->inst + a->ndeps * sizeof *a->deps +
                  a->ndropped * sizeof *a->dropped + a->inst_updates * (8 + 24) + 3 * 3 * 8));
    rewind(st);
    rewind(ax);
    const char *why = NULL;
    struct tscope__store *b = tscope__store_load(st, ax, &why);
    ASSERT(b != NULL);
    same_store(a, b);
    tscope__store_free(b);
    rewind(st);
    ASSERT(tscope__store_load(st, NULL, &why) == NULL);
    ASSERT_STR_EQ(why, "its appendix (instances, dependencies) is missing");
    rewind(st);
    ASSERT_OK(ftruncate(fileno(ax), ax_size / 2));
    rewind(ax);
    ASSERT(tscope__store_load(st, ax, &why) == NULL);
    ASSERT_STR_EQ(why, "its appendix (instances, dependencies) is short or corrupt");
    fclose(st);
    fclose(ax);
    tscope__store_free(a);
}

int main(void)
{
    RUN(loaded_store_goes_on_exactly);
    RUN(short_and_foreign_bytes_refused);
    RUN(inconsistent_bytes_refused);
    RUN(nothing_kept_yet_loads);
    RUN(appendix_saves_each_entry_once);
    return 0;
}
