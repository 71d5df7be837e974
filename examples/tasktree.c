/* tasktree.c - bundled example: a parallel merge sort on taskscope's task
 * runtime (include/taskscope/rt.h), measured by taskscope.
 *
 * Tasks: "sort" (splittable, with its recursion depth) spawns two child
 * sorts and waits for them (the wait shows as a yield/resume), then runs a
 * "merge"; below a cut-off a "leaf_sort" (processable) sorts directly; a
 * final "verify" task checks the result.  The runtime also publishes its
 * counters (queue length, idle time, tasks completed).
 *
 * usage: tasktree [elements (default 2000000)] [threads (default: cores)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <taskscope/rt.h>
#include <taskscope/taskscope.h>

#define LEAF 4096

static tscope_type_t t_sort, t_leaf, t_merge, t_verify;

struct range {
    int *a, *tmp;
    size_t n;
    unsigned depth;
};

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void leaf_sort(void *arg)
{
    struct range *r = arg;
    qsort(r->a, r->n, sizeof *r->a, cmp_int);
}

static void merge(void *arg)
{
    struct range *r = arg;
    size_t h = r->n / 2, i = 0, k = h, o = 0;
    while (i < h && k < r->n)
        r->tmp[o++] = r->a[i] <= r->a[k] ? r->a[i++] : r->a[k++];
    while (i < h)
        r->tmp[o++] = r->a[i++];
    while (k < r->n)
        r->tmp[o++] = r->a[k++];
    memcpy(r->a, r->tmp, r->n * sizeof *r->a);
}

static void sort(void *arg)
{
    struct range *r = arg;
    tscope_rt_spawn_opts_t o = {sizeof o,     t_leaf, 0, TSCOPE_TASK_PROCESSABLE,
                                r->depth + 1, NULL,   0};
    if (r->n <= LEAF) { /* the leaf's work is a task of its own type */
        tscope_rt_spawn(leaf_sort, r, &o, NULL);
        tscope_rt_taskwait();
        return;
    }
    size_t h = r->n / 2;
    struct range kids[2] = {{r->a, r->tmp, h, r->depth + 1},
                            {r->a + h, r->tmp + h, r->n - h, r->depth + 1}};
    o.type = t_sort;
    o.flags = TSCOPE_TASK_SPLITTABLE;
    for (int k = 0; k < 2; k++)
        tscope_rt_spawn(sort, &kids[k], &o, NULL);
    tscope_rt_taskwait();
    o.type = t_merge;
    o.flags = 0;
    tscope_rt_spawn(merge, r, &o, NULL);
    tscope_rt_taskwait();
}

struct check {
    const int *a;
    size_t n, bad;
};

static void verify(void *arg)
{
    struct check *c = arg;
    for (size_t i = 1; i < c->n; i++)
        c->bad += c->a[i - 1] > c->a[i];
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = argc > 2 ? atoi(argv[2]) : (int)(cores > 0 ? cores : 2);
    if (n < 2 || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: tasktree [elements >= 2] [threads 1..256]\n");
        return 2;
    }
    int rc = tscope_init(0, 1);
    if (rc)
        fprintf(stderr, "tasktree: tscope_init: %s (running unmeasured)\n", tscope_strerror(rc));
    tscope_type_register("sort", &t_sort);
    tscope_type_register("leaf_sort", &t_leaf);
    tscope_type_register("merge", &t_merge);
    tscope_type_register("verify", &t_verify);

    int *a = malloc(n * sizeof *a), *tmp = malloc(n * sizeof *tmp);
    if (!a || !tmp)
        return 1;
    srand(42);
    for (size_t i = 0; i < n; i++)
        a[i] = rand();

    if (tscope_rt_init((unsigned)threads)) {
        fprintf(stderr, "tasktree: cannot start the runtime\n");
        return 1;
    }
    struct range all = {a, tmp, n, 0};
    tscope_rt_spawn_opts_t o = {sizeof o, t_sort, 0, TSCOPE_TASK_SPLITTABLE, 0, NULL, 0};
    tscope_rt_spawn(sort, &all, &o, NULL);
    tscope_rt_taskwait();
    struct check c = {a, n, 0};
    o.type = t_verify;
    o.flags = 0;
    tscope_rt_spawn(verify, &c, &o, NULL);
    tscope_rt_taskwait();
    tscope_rt_finalize();

    printf("tasktree: sorted %zu integers with %d threads: %s\n", n, threads,
           c.bad ? "WRONG ORDER" : "ok");
    free(a);
    free(tmp);
    tscope_finalize();
    return c.bad != 0;
}
