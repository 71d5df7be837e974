/* critpath.c - `taskscope report --deps`: the critical path of a run, from
 * its instance graph (p->tasks, p->deps), and the type-level dependency
 * totals (p->deptypes).
 *
 * The path.  Every task that ended (state done, cancelled or unfinished: a
 * live task has no end) has predecessors: the tasks it waited for through
 * a local dependency edge (task_deps with to == the task; remote edges name
 * a task of another rank and are left out) and its children (the parent
 * waits for a child that ended before it).  The critical path is the chain
 * of predecessors with the most self time - the span of work-span analysis:
 * the time the run needs however many threads it gets.  One pass over the
 * tasks by end time finds it (a predecessor ends no later than the task it
 * precedes, so that order is topological; a predecessor later in it - a
 * cycle, bad input - is not followed; ties: the later end, then the smaller
 * id).  A task that never began (cancelled before it ran: begin and running
 * time 0, as the JSON writer decides too) begins at its end.  A task id that
 * appears twice (a program that reuses ids) stands for the first of its
 * tasks in p->tasks.  Cost: O((tasks + edges) log tasks).
 *
 * The output (times in ms, three decimals), e.g. for a diamond a -> b, a -> c,
 * b -> d, c -> d of children of main:
 *
 *   critical path: 4 tasks, 11.000 ms from its first begin to its last end (88.0% of the
 * run's 12.500 ms) work on it: 10.000 ms of self time; all ended tasks: 13.000 ms; parallelism 1.30
 *   type-level dependencies: 7 edges between 6 type pairs: RAW 3, WAR 1, WAW 1, remote 1, other 1
 *    step  type  task    begin ms      end ms  elapsed ms     self ms  link to next
 *       1  a        2       1.000       3.000       2.000       2.000  dep RAW
 *       2  c        4       3.000       8.000       5.000       5.000  dep WAR
 *       3  d        5       8.000      10.000       2.000       2.000  dep WAW, child of next
 *       4  main     1       0.000      12.000      12.000       1.000  -
 *
 * The head lines: the path's task count and length (the end of its last
 * task minus the begin of its first) against the run's length
 * (totals.elapsed_ns); the self time on the path, of all ended tasks, and
 * their ratio (the parallelism the task graph allows).  The dependency
 * line sums p->deptypes: all edges, the type
 * pairs, local edges by hazard, remote edges, and "other N" when the
 * counts by hazard leave edges over; "type-level dependencies: none"
 * without any.  Then one line per task of the path, first to last: its
 * step, type name (left aligned, as wide as the longest name listed, at
 * most 40: longer names are printed whole), task id (right aligned), begin
 * ("-" if it never began), end, elapsed (end - begin), self time, and how
 * it links to the next task: "dep KIND" (the next one depends on it: KIND
 * is RAW, WAR, WAW, or the number of a kind not known; the first edge
 * recorded between the two), "child of next", both ("dep WAW, child of
 * next"), or "-" on the last line.  With rows > 0 only the last `rows`
 * tasks are listed, after a line "... N earlier tasks (--rows 0 lists
 * them all)".  A profile without tasks prints "no task instances in this
 * profile (they are written when ...)" instead of the path, one where none
 * ended "no task in this profile has ended: no critical path"; both then
 * print the dependency line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/hazard.h"

#define NONE UINT32_MAX
#define LINK_CHILD UINT32_MAX /* a predecessor that is a child, not a dep */

/* One predecessor of a task: the task index and the task_deps index of the
 * edge (LINK_CHILD for a child). */
struct pred {
    uint32_t task, dep;
};

struct graph {
    const struct tscope__profile *p;
    uint32_t *by_id;    /* task indexes sorted by (id, index) */
    size_t *first;      /* preds of task i: pred[first[i] .. first[i + 1]) */
    struct pred *preds; /* grouped by the task they precede */
};

static const struct tscope__profile *sort_profile;

static int by_id_then_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t ix = sort_profile->tasks[x].id, iy = sort_profile->tasks[y].id;
    if (ix != iy)
        return ix < iy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The index of the first task with this id, or NONE. */
static uint32_t find_task(const struct graph *g, uint64_t id)
{
    uint32_t lo = 0, hi = g->p->ntasks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->p->tasks[g->by_id[mid]].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->p->ntasks && g->p->tasks[g->by_id[lo]].id == id ? g->by_id[lo] : NONE;
}

static int ended(const struct tscope__ptask *t)
{
    return t->state != TSCOPE_TASK_LIVE;
}

/* Where t began: its begin, or its end if it never began (as json.c
 * decides: no begin and no running time). */
static double start_of(const struct tscope__ptask *t)
{
    return t->begin > 0 || t->running > 0 ? t->begin : t->end;
}

/* Calls add(g, to, pred) for every predecessor edge between ended tasks;
 * a pass that counts and a pass that fills share it. */
static void each_pred(struct graph *g, void (*add)(struct graph *, uint32_t, struct pred))
{
    const struct tscope__profile *p = g->p;
    for (uint32_t i = 0; i < p->ndeps; i++) {
        const struct tscope__pdep *d = &p->deps[i];
        if (d->remote)
            continue;
        uint32_t to = find_task(g, d->to), from = find_task(g, d->from);
        if (to != NONE && from != NONE && to != from && ended(&p->tasks[to]) &&
            ended(&p->tasks[from]))
            add(g, to, (struct pred){from, i});
    }
    for (uint32_t i = 0; i < p->ntasks; i++) {
        if (!p->tasks[i].parent || !ended(&p->tasks[i]))
            continue;
        uint32_t parent = find_task(g, p->tasks[i].parent);
        if (parent != NONE && parent != i && ended(&p->tasks[parent]))
            add(g, parent, (struct pred){i, LINK_CHILD});
    }
}

static void count_pred(struct graph *g, uint32_t to, struct pred pr)
{
    (void)pr;
    g->first[to + 1]++;
}

static void fill_pred(struct graph *g, uint32_t to, struct pred pr)
{
    g->preds[g->first[to]++] = pr;
}

static void graph_free(struct graph *g)
{
    free(g->by_id);
    free(g->first);
    free(g->preds);
}

/* Builds the predecessor lists.  0, or -1 when memory ran out. */
static int graph_build(struct graph *g, const struct tscope__profile *p)
{
    uint32_t n = p->ntasks;
    *g = (struct graph){.p = p};
    g->by_id = malloc(((size_t)n + 1) * sizeof *g->by_id);
    g->first = calloc((size_t)n + 2, sizeof *g->first);
    if (!g->by_id || !g->first)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        g->by_id[i] = i;
    sort_profile = p;
    qsort(g->by_id, n, sizeof *g->by_id, by_id_then_index);
    each_pred(g, count_pred); /* first[i + 1]: the count of task i */
    for (uint32_t i = 0; i < n; i++)
        g->first[i + 1] += g->first[i];
    if (!(g->preds = malloc((g->first[n] + 1) * sizeof *g->preds)))
        return -1;
    each_pred(g, fill_pred); /* first[i] moves on to first[i + 1] */
    memmove(g->first + 1, g->first, (size_t)n * sizeof *g->first);
    g->first[0] = 0;
    return 0;
}

/* a ended later than b (ties: the smaller id, then the earlier entry). */
static int ends_later(const struct tscope__profile *p, uint32_t a, uint32_t b)
{
    const struct tscope__ptask *x = &p->tasks[a], *y = &p->tasks[b];
    if (x->end != y->end)
        return x->end > y->end;
    if (x->id != y->id)
        return x->id < y->id;
    return a < b;
}

static const struct tscope__profile *order_profile;

/* Ascending end time (ties: the larger id first, as ends_later orders). */
static int by_end(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x == y ? 0 : ends_later(order_profile, x, y) ? 1 : -1;
}

/* The critical path into path[] (task indexes, last task first), its
 * length into *n: the chain of predecessors with the most self time (the
 * span of work-span analysis), found in one pass over the tasks by end
 * time - a predecessor ends no later than the task it precedes, so that
 * order is a topological one; a predecessor later in it (a cycle, bad
 * input) is not followed.  -1 when memory runs out. */
static int walk(const struct graph *g, uint32_t *path, uint32_t *n)
{
    const struct tscope__profile *p = g->p;
    uint32_t nt = p->ntasks, ne = 0;
    uint32_t *order = malloc(((size_t)nt + 1) * sizeof *order);
    uint32_t *pos = malloc(((size_t)nt + 1) * sizeof *pos);
    uint32_t *from = malloc(((size_t)nt + 1) * sizeof *from);
    double *dist = malloc(((size_t)nt + 1) * sizeof *dist);
    *n = 0;
    if (!order || !pos || !from || !dist) {
        free(order);
        free(pos);
        free(from);
        free(dist);
        return -1;
    }
    for (uint32_t i = 0; i < nt; i++) {
        pos[i] = NONE;
        if (ended(&p->tasks[i]))
            order[ne++] = i;
    }
    order_profile = p;
    qsort(order, ne, sizeof *order, by_end);
    uint32_t end = NONE;
    for (uint32_t k = 0; k < ne; k++) {
        uint32_t t = order[k], best = NONE;
        pos[t] = k;
        for (size_t e = g->first[t]; e < g->first[t + 1]; e++) {
            uint32_t u = g->preds[e].task;
            if (pos[u] < k && (best == NONE || dist[u] > dist[best] ||
                               (dist[u] == dist[best] && ends_later(p, u, best))))
                best = u;
        }
        double self = p->tasks[t].self > 0 ? p->tasks[t].self : 0;
        dist[t] = self + (best == NONE ? 0 : dist[best]);
        from[t] = best;
        if (end == NONE || dist[t] > dist[end] || (dist[t] == dist[end] && ends_later(p, t, end)))
            end = t;
    }
    for (uint32_t cur = end; cur != NONE && *n < ne; cur = from[cur])
        path[(*n)++] = cur;
    free(order);
    free(pos);
    free(from);
    free(dist);
    return 0;
}

/* How task `from` links to task `to` of the path: its first dependency
 * edge's kind, "child of next", or both. */
static void link_text(const struct graph *g, uint32_t from, uint32_t to, char *buf, size_t len)
{
    uint32_t dep = NONE;
    int child = 0;
    for (size_t e = g->first[to]; e < g->first[to + 1]; e++) {
        if (g->preds[e].task != from)
            continue;
        if (g->preds[e].dep == LINK_CHILD)
            child = 1;
        else if (dep == NONE || g->preds[e].dep < dep)
            dep = g->preds[e].dep;
    }
    char kind[40] = "", text[32];
    if (dep != NONE)
        snprintf(kind, sizeof kind, "dep %s",
                 tscope__hazard_text((unsigned)g->p->deps[dep].kind, text, sizeof text));
    snprintf(buf, len, "%s%s%s", kind, *kind && child ? ", " : "", child ? "child of next" : "");
}

static void print_deptypes(const struct tscope__profile *p, FILE *f)
{
    if (!p->ndeptypes) {
        fputs("type-level dependencies: none\n", f);
        return;
    }
    uint64_t count = 0, raw = 0, war = 0, waw = 0, remote = 0, unknown = 0;
    for (uint32_t i = 0; i < p->ndeptypes; i++) {
        const struct tscope__pdeptype *d = &p->deptypes[i];
        uint64_t sum = d->raw + d->war + d->waw + d->remote;
        count += d->count;
        raw += d->raw;
        war += d->war;
        waw += d->waw;
        remote += d->remote;
        unknown += d->count > sum ? d->count - sum : 0;
    }
    fprintf(f,
            "type-level dependencies: %llu edges between %u type pair%s: RAW %llu, WAR %llu, "
            "WAW %llu, remote %llu",
            (unsigned long long)count, p->ndeptypes, p->ndeptypes == 1 ? "" : "s",
            (unsigned long long)raw, (unsigned long long)war, (unsigned long long)waw,
            (unsigned long long)remote);
    if (unknown)
        fprintf(f, ", other %llu", (unsigned long long)unknown);
    fputc('\n', f);
}

/* The head line, the dependency line and the listed tasks of path[]
 * (indexes, last task first, n of them). */
static void print_path(const struct graph *g, const uint32_t *path, uint32_t n, unsigned rows,
                       FILE *f)
{
    const struct tscope__profile *p = g->p;
    const struct tscope__ptask *first = &p->tasks[path[n - 1]], *last = &p->tasks[path[0]];
    double length = last->end - start_of(first), run = p->totals.elapsed_ns, work = 0, all = 0;
    for (uint32_t k = 0; k < n; k++)
        work += p->tasks[path[k]].self > 0 ? p->tasks[path[k]].self : 0;
    for (uint32_t i = 0; i < p->ntasks; i++)
        if (ended(&p->tasks[i]) && p->tasks[i].self > 0)
            all += p->tasks[i].self;
    fprintf(f, "critical path: %u task%s, %.3f ms from its first begin to its last end (", n,
            n == 1 ? "" : "s", length / 1e6);
    if (run > 0)
        fprintf(f, "%.1f%% of the run's %.3f ms)\n", 100.0 * length / run, run / 1e6);
    else
        fprintf(f, "the run's length is %.3f ms)\n", run / 1e6);
    fprintf(f, "work on it: %.3f ms of self time; all ended tasks: %.3f ms", work / 1e6, all / 1e6);
    if (work > 0)
        fprintf(f, "; parallelism %.2f", all / work);
    fputc('\n', f);
    print_deptypes(p, f);

    uint32_t listed = rows && rows < n ? rows : n; /* the last `listed` steps */
    char buf[32], idtext[24];
    int name_width = 4, id_width = 4; /* "type", "task" */
    for (uint32_t k = 0; k < listed; k++) {
        const struct tscope__ptask *t = &p->tasks[path[k]];
        int w = (int)strlen(tscope__profile_type_name(p, t->type, buf, sizeof buf));
        if (w > name_width)
            name_width = w < 40 ? w : 40;
        w = snprintf(idtext, sizeof idtext, "%llu", (unsigned long long)t->id);
        if (w > id_width)
            id_width = w;
    }
    fprintf(f, " step  %-*s  %*s  %10s  %10s  %10s  %10s  link to next\n", name_width, "type",
            id_width, "task", "begin ms", "end ms", "elapsed ms", "self ms");
    if (listed < n)
        fprintf(f, "... %u earlier task%s (--rows 0 lists them all)\n", n - listed,
                n - listed == 1 ? "" : "s");
    for (uint32_t k = listed; k-- > 0;) {
        const struct tscope__ptask *t = &p->tasks[path[k]];
        char begin[32], link[64] = "-";
        if (t->begin > 0 || t->running > 0)
            snprintf(begin, sizeof begin, "%.3f", t->begin / 1e6);
        else
            strcpy(begin, "-");
        if (k > 0)
            link_text(g, path[k], path[k - 1], link, sizeof link);
        fprintf(f, "%5u  %-*s  %*llu  %10s  %10.3f  %10.3f  %10.3f  %s\n", n - k, name_width,
                tscope__profile_type_name(p, t->type, buf, sizeof buf), id_width,
                (unsigned long long)t->id, begin, t->end / 1e6, (t->end - start_of(t)) / 1e6,
                t->self / 1e6, link);
    }
}

int tscope_cli_critical_path(const struct tscope__profile *p, FILE *f, unsigned rows)
{
    if (!p->ntasks) {
        fputs("no task instances in this profile (they are written when the run recorded "
              "dependencies, or with TASKSCOPE_OUTPUTS=all,tasks)\n",
              f);
        print_deptypes(p, f);
        return ferror(f) ? TSCOPE_EIO : 0;
    }
    struct graph g;
    uint32_t *path = malloc((size_t)p->ntasks * sizeof *path), n = 0;
    int built = path && graph_build(&g, p) == 0;
    int rc = built && walk(&g, path, &n) == 0 ? 0 : TSCOPE_ENOMEM;
    if (!rc) {
        if (n) {
            print_path(&g, path, n, rows, f);
        } else {
            fputs("no task in this profile has ended: no critical path\n", f);
            print_deptypes(p, f);
        }
    }
    if (path)
        graph_free(&g);
    free(path);
    return rc ? rc : ferror(f) ? TSCOPE_EIO : 0;
}
