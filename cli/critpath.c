/* critpath.c - `taskscope report --deps`: the critical path of a run
 * (src/profile/critpath.c finds it, as profile.json's writer does) and the
 * type-level dependency totals (p->deptypes), as text.
 *
 * The output (times in ms, three decimals), e.g. for a taskwait on a chain
 * of two tasks a -> b made in a `single`:
 *
 *   critical path: 80.114 ms of work in 9 steps (98.9% of the run's 81.000 ms)
 *   all work: 80.500 ms in 7 tasks; parallelism (work / path) 1.00
 *   type-level dependencies: 1 edge between 1 type pair: RAW 1, WAR 0, WAW 0, remote 0
 *    step  type               task     from ms       to ms     work ms  next
 *       1  initial task          2       0.000       0.100       0.100  created
 *       2  parallel main         3       0.100       0.102       0.002  created
 *       ...
 *       5  a                     6       0.130      40.130      40.000  RAW
 *       6  b                     7      40.131      80.131      40.000  joined
 *       ...
 *   the path by type:
 *      49.9%      40.000 ms  a
 *      ...
 *
 * Head lines: the work on the path against the run's length
 * (totals.elapsed_ns); all tasks' work and the ratio (the parallelism the
 * task graph allows); a line when the instance graph was capped (the path
 * runs through the tasks kept); a line when no type is marked as a wait (a
 * profile before version 3, or a program whose runtime marks none: every
 * task's self time counts as work); the dependency line (p->deptypes: all
 * edges (one per pair of tasks), the type pairs, the edges with each
 * hazard (an edge may carry several), remote edges, "mutex N" when some
 * are mutual exclusions, "other N" for edges of no known kind; "type-level dependencies: none"
 * without any).  Then one line per step, first to last: step, type name (left aligned, as wide as
 * the longest name listed, at most 40: longer names are printed whole), task id, the stretch of the
 * task (from, to), the work done there, and why the next step follows (created; a dependence's
 * hazards and first address, "RAW on 0x... +1 more"; joined; barrier; "-" on the last).  With rows
 * > 0 only the last `rows` steps are listed, after "... N earlier steps
 * (--rows 0 lists them all)".  Last, each type's share of the path's work,
 * the largest first.  A profile without tasks prints "no task instances in
 * this profile (they are written when ...)" instead of the path, one where
 * none ended "no task in this profile has ended: no critical path"; both
 * then print the dependency line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_deptypes(const struct tscope__profile *p, FILE *f)
{
    if (!p->ndeptypes) {
        fputs("type-level dependencies: none\n", f);
        return;
    }
    uint64_t count = 0, raw = 0, war = 0, waw = 0, mutex = 0, remote = 0, unknown = 0;
    for (uint32_t i = 0; i < p->ndeptypes; i++) {
        const struct tscope__pdeptype *d = &p->deptypes[i];
        uint64_t sum = d->raw + d->war + d->waw + d->remote;
        count += d->count;
        raw += d->raw;
        war += d->war;
        waw += d->waw;
        mutex += d->mutex;
        remote += d->remote;
        unknown += d->count > sum ? d->count - sum : 0;
    }
    fprintf(f,
            "type-level dependencies: %llu edge%s between %u type pair%s: RAW %llu, WAR %llu, "
            "WAW %llu, remote %llu",
            (unsigned long long)count, count == 1 ? "" : "s", p->ndeptypes,
            p->ndeptypes == 1 ? "" : "s", (unsigned long long)raw, (unsigned long long)war,
            (unsigned long long)waw, (unsigned long long)remote);
    if (mutex)
        fprintf(f, ", mutex %llu", (unsigned long long)mutex);
    if (unknown)
        fprintf(f, ", other %llu", (unsigned long long)unknown);
    fputc('\n', f);
}

/* Types by their work on the path (arg: the work per type index), the
 * largest first (ties: the earlier type). */
static int by_share(const void *a, const void *b, void *arg)
{
    const double *work = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (work[x] != work[y])
        return work[x] > work[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Each type's share of the path's work; -1 when memory runs out. */
static int print_shares(const struct tscope__profile *p, const struct tscope__critpath *cp, FILE *f)
{
    double *work = malloc(((size_t)p->ntypes + 1) * sizeof *work);
    uint32_t *order = malloc(((size_t)p->ntypes + 1) * sizeof *order), n = 0;
    if (!work || !order) {
        free(work);
        free(order);
        return -1;
    }
    double other = tscope__critpath_by_type(p, cp, work);
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (work[i] > 0)
            order[n++] = i;
    qsort_r(order, n, sizeof *order, by_share, work);
    fputs("the path by type:\n", f);
    for (uint32_t k = 0; k < n; k++)
        fprintf(f, "  %5.1f%%  %10.3f ms  %s\n",
                cp->length > 0 ? 100.0 * work[order[k]] / cp->length : 0.0, work[order[k]] / 1e6,
                p->types[order[k]].name);
    if (other > 0)
        fprintf(f, "  %5.1f%%  %10.3f ms  (types the profile does not list)\n",
                cp->length > 0 ? 100.0 * other / cp->length : 0.0, other / 1e6);
    free(work);
    free(order);
    return 0;
}

static void print_head(const struct tscope__profile *p, const struct tscope__critpath *cp, FILE *f)
{
    double run = p->totals.elapsed_ns;
    fprintf(f, "critical path: %.3f ms of work in %u step%s (", cp->length / 1e6, cp->nsteps,
            cp->nsteps == 1 ? "" : "s");
    if (run > 0)
        fprintf(f, "%.1f%% of the run's %.3f ms)\n", 100.0 * cp->length / run, run / 1e6);
    else
        fprintf(f, "the run's length is %.3f ms)\n", run / 1e6);
    fprintf(f, "all work: %.3f ms in %u task%s", cp->work / 1e6, cp->tasks,
            cp->tasks == 1 ? "" : "s");
    if (cp->length > 0)
        fprintf(f, "; parallelism (work / path) %.2f", cp->work / cp->length);
    fputc('\n', f);
    if (cp->tasks_cut_off)
        fprintf(f,
                "the instance graph's cap (TASKSCOPE_INSTANCE_CAP keeps the top of the task tree) "
                "left out %llu tasks: the path runs through the tasks kept; the work of those "
                "left out is on no path\n",
                (unsigned long long)cp->tasks_cut_off);
    if (!cp->waits_marked)
        fputs("no task type is marked as a wait (profiles before version 3 mark none): every "
              "task's self time counts as work\n",
              f);
}

static void print_path(const struct tscope__profile *p, const struct tscope__critpath *cp,
                       unsigned rows, FILE *f)
{
    print_head(p, cp, f);
    print_deptypes(p, f);
    uint32_t n = cp->nsteps, listed = rows && rows < n ? rows : n; /* the last `listed` */
    char buf[32], idtext[24];
    int name_width = 4, id_width = 4; /* "type", "task" */
    for (uint32_t k = n - listed; k < n; k++) {
        const struct tscope__cpstep *s = &cp->steps[k];
        int w = (int)strlen(tscope__profile_type_name(p, s->type, buf, sizeof buf));
        if (w > name_width)
            name_width = w < 40 ? w : 40;
        w = snprintf(idtext, sizeof idtext, "%llu", (unsigned long long)s->id);
        if (w > id_width)
            id_width = w;
    }
    fprintf(f, " step  %-*s  %*s  %10s  %10s  %10s  next\n", name_width, "type", id_width, "task",
            "from ms", "to ms", "work ms");
    if (cp->steps_cut)
        fprintf(f, "... %llu earlier step%s not kept in profile.json (it keeps the last %u)\n",
                (unsigned long long)cp->steps_cut, cp->steps_cut == 1 ? "" : "s",
                TSCOPE__CP_STEPS_KEPT);
    if (listed < n)
        fprintf(f, "... %u earlier step%s (--rows 0 lists them all)\n", n - listed,
                n - listed == 1 ? "" : "s");
    for (uint32_t k = n - listed; k < n; k++) {
        const struct tscope__cpstep *s = &cp->steps[k];
        fprintf(f, "%5llu  %-*s  %*llu  %10.3f  %10.3f  %10.3f  %s\n",
                (unsigned long long)(k + 1 + cp->steps_cut), name_width,
                tscope__profile_type_name(p, s->type, buf, sizeof buf), id_width,
                (unsigned long long)s->id, s->from / 1e6, s->to / 1e6, s->work / 1e6,
                *s->why ? s->why : "-");
    }
}

int tscope_cli_critical_path(const struct tscope__profile *p, FILE *f, unsigned rows)
{
    if (!p->ntasks && !p->path) {
        fputs("no task instances in this profile (they are written when the run recorded "
              "dependencies, or with TASKSCOPE_OUTPUTS=all,tasks)\n",
              f);
        print_deptypes(p, f);
        return ferror(f) ? TSCOPE_EIO : 0;
    }
    struct tscope__critpath cp;
    if (tscope__critpath_find(p, &cp))
        return TSCOPE_ENOMEM;
    int rc = 0;
    if (cp.nsteps) {
        print_path(p, &cp, rows, f);
        rc = print_shares(p, &cp, f) ? TSCOPE_ENOMEM : 0;
    } else {
        fputs("no task in this profile has ended: no critical path\n", f);
        print_deptypes(p, f);
    }
    tscope__critpath_free(&cp);
    return rc ? rc : ferror(f) ? TSCOPE_EIO : 0;
}
