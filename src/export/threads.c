/* threads.c - the per-thread tables (`taskscope report --threads`, as
 * TAU's pprof prints them): for each of the program's threads the task
 * types it completed tasks of (or began one still running at the end), with
 * calls, self time, running and elapsed as the type table counts them;
 * taskscope's own threads are named apart.
 * A thread's rows over all threads add up to the type's row. */
#include <stdlib.h>
#include <string.h>

#include "export.h"

struct row {
    const struct tscope__pthread_type *e;
    const char *name;
};

static const char *sort_key;

static int cmp_rows(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    double vx, vy;
    if (strcmp(sort_key, "name") == 0)
        return strcmp(x->name, y->name);
    if (strcmp(sort_key, "running") == 0 || strcmp(sort_key, "incl") == 0) {
        vx = x->e->running;
        vy = y->e->running;
    } else if (strcmp(sort_key, "elapsed") == 0) {
        vx = x->e->elapsed;
        vy = y->e->elapsed;
    } else if (strcmp(sort_key, "calls") == 0) {
        vx = (double)x->e->calls;
        vy = (double)y->e->calls;
    } else if (strcmp(sort_key, "mean") == 0) {
        vx = x->e->calls ? x->e->self / (double)x->e->calls : 0; /* 0: unfinished only */
        vy = y->e->calls ? y->e->self / (double)y->e->calls : 0;
    } else {
        vx = x->e->self;
        vy = y->e->self;
    }
    if (vx != vy)
        return vx < vy ? 1 : -1;
    return x->e->type < y->e->type ? -1 : x->e->type > y->e->type; /* stable tie-break */
}

/* The name of type id in p, as the type table shows it. */
static const char *type_name(const struct tscope__profile *p, uint32_t id, char *buf, unsigned len)
{
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].id == id)
            return p->types[i].name;
    return tscope__profile_type_name(p, id, buf, len);
}

/* One thread's table (rows: at most that many, 0 all). */
static int one_thread(const struct tscope__profile *p, uint32_t index, FILE *f, unsigned rows)
{
    const struct tscope__pthread *t = &p->threads[index];
    struct row *order = calloc((size_t)t->ntypes + 1, sizeof *order);
    char(*bufs)[32] = calloc((size_t)t->ntypes + 1, sizeof *bufs);
    if (!order || !bufs) {
        free(order);
        free(bufs);
        return TSCOPE_ENOMEM;
    }
    uint64_t calls = 0;
    double self = 0;
    int width = 9; /* "task type" */
    for (uint32_t i = 0; i < t->ntypes; i++) {
        order[i].e = &t->types[i];
        order[i].name = type_name(p, t->types[i].type, bufs[i], sizeof bufs[i]);
        calls += t->types[i].calls;
        self += t->types[i].self;
        if ((int)strlen(order[i].name) > width)
            width = (int)strlen(order[i].name); /* none is cut */
    }
    qsort(order, t->ntypes, sizeof *order, cmp_rows);
    fprintf(f, "\nthread %u (%s): %llu task%s completed, self %.3f ms\n", index, t->name,
            (unsigned long long)calls, calls == 1 ? "" : "s", self / 1e6);
    if (t->ntypes)
        fprintf(f, "%-*s %10s %13s %7s %12s %13s %13s\n", width, "task type", "calls",
                "self total ms", "self %", "self mean us", "running ms", "elapsed ms");
    uint32_t shown = rows && rows < t->ntypes ? rows : t->ntypes;
    for (uint32_t i = 0; i < shown; i++) {
        const struct tscope__pthread_type *e = order[i].e;
        fprintf(
            f, "%-*s %10llu %13.3f %6.1f%% %12.3f %13.3f %13.3f\n", width, order[i].name,
            (unsigned long long)e->calls, e->self / 1e6, self > 0 ? 100.0 * e->self / self : 0.0,
            e->calls ? e->self / (double)e->calls / 1e3 : 0.0, e->running / 1e6, e->elapsed / 1e6);
    }
    if (shown < t->ntypes)
        fprintf(f, "... %u more task types (show all with --rows 0)\n", t->ntypes - shown);
    free(order);
    free(bufs);
    return 0;
}

int tscope__export_threads(const struct tscope__profile *p, FILE *f, const char *sort,
                           unsigned rows)
{
    sort_key = sort ? sort : "self";
    uint32_t program = 0, own = 0, with = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        own += p->threads[i].own;
        program += !p->threads[i].own;
        with += p->threads[i].ntypes > 0;
    }
    fprintf(f, "per thread: %u thread%s of the program", program, program == 1 ? "" : "s");
    if (own) {
        fputs(" (taskscope's own left out:", f);
        for (uint32_t i = 0; i < p->nthreads; i++)
            if (p->threads[i].own)
                fprintf(f, " %u %s", i, p->threads[i].name);
        fputc(')', f);
    }
    fputc('\n', f);
    if (!with && p->totals.tasks_completed)
        fputs("this profile has no per-thread figures (written by a taskscope before them)\n", f);
    for (uint32_t i = 0; i < p->nthreads && with; i++) {
        if (p->threads[i].own)
            continue;
        int rc = one_thread(p, i, f, rows);
        if (rc)
            return rc;
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}
