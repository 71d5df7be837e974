/* summary.c - the screen summary: header, per-type table, counters. */
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* A sampled counter's values a summary line needs to say something: fewer
 * is a run of a few sampling periods or less (min, max and mean of one
 * to four readings, a rate from one to three intervals). */
#define SAMPLES_MEANINGFUL 5

static const char *sort_key;

static int cmp_types(const void *a, const void *b)
{
    const struct tscope__ptype *x = *(const struct tscope__ptype *const *)a;
    const struct tscope__ptype *y = *(const struct tscope__ptype *const *)b;
    double vx, vy;
    if (strcmp(sort_key, "name") == 0)
        return strcmp(x->name, y->name);
    if (strcmp(sort_key, "running") == 0 || strcmp(sort_key, "incl") == 0) { /* its old name */
        vx = x->running_total;
        vy = y->running_total;
    } else if (strcmp(sort_key, "elapsed") == 0) {
        vx = x->elapsed_total;
        vy = y->elapsed_total;
    } else if (strcmp(sort_key, "calls") == 0) {
        vx = (double)x->calls;
        vy = (double)y->calls;
    } else if (strcmp(sort_key, "mean") == 0) {
        vx = x->self.mean;
        vy = y->self.mean;
    } else {
        vx = x->self_total;
        vy = y->self_total;
    }
    if (vx != vy)
        return vx < vy ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id; /* stable tie-break */
}

int tscope__export_summary(const struct tscope__profile *p, FILE *f, const char *sort,
                           unsigned rows)
{
    const tscope_totals_t *t = &p->totals;
    if (!strcmp(p->mode, "global")) /* a job's global view (src/global) */
        fprintf(f,
                "taskscope global profile of '%s' (%d ranks): %u thread%s, %.3f s (the longest "
                "rank)\n",
                p->program, p->nranks, t->threads, t->threads == 1 ? "" : "s", t->elapsed_ns / 1e9);
    else
        fprintf(f,
                "taskscope profile of '%s' (rank %d of %d): %u thread%s, %.3f s, clock %s, mode "
                "%s\n",
                p->program, p->rank, p->nranks, t->threads, t->threads == 1 ? "" : "s",
                t->elapsed_ns / 1e9, p->clock, p->mode);
    fprintf(f,
            "tasks: %llu created, %llu completed, %llu cancelled, %llu unfinished; events: %llu, "
            "dropped %llu\n",
            (unsigned long long)t->tasks_created, (unsigned long long)t->tasks_completed,
            (unsigned long long)t->tasks_cancelled, (unsigned long long)t->tasks_unfinished,
            (unsigned long long)t->events, (unsigned long long)t->events_dropped);
    tscope__fmt_loss_note(p, f, "");
    if (p->filter)
        fprintf(f,
                "filter file: %llu task%s and %llu dependenc%s left out (their time counts in "
                "the tasks they ran inside)\n",
                (unsigned long long)p->tasks_filtered, p->tasks_filtered == 1 ? "" : "s",
                (unsigned long long)p->deps_filtered, p->deps_filtered == 1 ? "y" : "ies");
    char how[32];
    if (p->ended_by)
        fprintf(f, "ended by %s at %.3f s; %llu task%s %s running (closed then, as unfinished)\n",
                tscope__fmt_ended_by(p, how, sizeof how), t->elapsed_ns / 1e9,
                (unsigned long long)t->tasks_unfinished, t->tasks_unfinished == 1 ? "" : "s",
                t->tasks_unfinished == 1 ? "was" : "were");

    const struct tscope__ptype **order = malloc((p->ntypes + 1) * sizeof *order);
    if (!order)
        return TSCOPE_ENOMEM;
    uint32_t n = 0;
    int width = 9; /* "task type" */
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *ty = &p->types[i];
        if (!ty->calls && !ty->created && !ty->cancelled && !ty->unfinished)
            continue;
        order[n++] = ty;
        int w = (int)strlen(ty->name);
        if (w > width)
            width = w; /* as wide as the longest name: none is cut */
    }
    for (uint32_t i = 0; i < p->ncounters; i++) {
        int w = (int)strlen(p->counters[i].name);
        if (p->counters[i].stats.count >= (p->counters[i].sampled ? SAMPLES_MEANINGFUL : 1) &&
            w > width)
            width = w;
    }
    sort_key = sort ? sort : "self";
    qsort(order, n, sizeof *order, cmp_types);
    double total = tscope__profile_total_self(p);
    /* self: the task's own running; running: with what nested inside it on
     * its thread; elapsed: begin to end (totals count recursion once) */
    if (n) { /* no header without rows (a run that ended before its first task) */
        fprintf(f, "\n%-*s %10s %13s %7s %12s %12s", width, "task type", "calls", "self total ms",
                "self %", "self mean us", "self sd us");
        /* --cpu-time: the self time's CPU time, and its share of the self time
         * (a task that waits has little) */
        if (p->cpu_time)
            fprintf(f, " %12s %8s", "cpu total ms", "cpu/self");
        fprintf(f, " %13s %13s %15s %7s\n", "running ms", "elapsed ms", "elapsed mean us",
                "threads");
    } else {
        fputs("\nno task was measured\n", f);
    }
    uint32_t shown = rows && rows < n ? rows : n;
    for (uint32_t i = 0; i < shown; i++) {
        const struct tscope__ptype *ty = order[i];
        fprintf(f, "%-*s %10llu %13.3f %6.1f%% %12.3f %12.3f", width, ty->name,
                (unsigned long long)ty->calls, ty->self_total / 1e6,
                total > 0 ? 100.0 * ty->self_total / total : 0.0, ty->self.mean / 1e3,
                ty->self.stddev / 1e3);
        if (p->cpu_time)
            fprintf(f, " %12.3f %7.1f%%", ty->cpu.sum / 1e6,
                    ty->self.sum > 0 ? 100.0 * ty->cpu.sum / ty->self.sum : 0.0);
        fprintf(f, " %13.3f %13.3f %15.3f %7u\n", ty->running_total / 1e6, ty->elapsed_total / 1e6,
                ty->elapsed.mean / 1e3, ty->threads);
    }
    if (shown < n)
        fprintf(f, "... %u more task types (show all with --rows 0 or TASKSCOPE_SUMMARY_ROWS=0)\n",
                n - shown);
    free(order);

    /* the counters and the unfinished tasks: at most `rows` each too; a
     * sampled counter with fewer than SAMPLES_MEANINGFUL values (a run of
     * about one sampling period or less) says nothing its files do not: left
     * out, said in one line */
    uint32_t any = 0, few = 0;
    for (uint32_t i = 0; i < p->ncounters; i++) {
        const struct tscope__pcounter *c = &p->counters[i];
        if (c->sampled && c->stats.count && c->stats.count < SAMPLES_MEANINGFUL)
            few++;
        if (!c->stats.count || (c->sampled && c->stats.count < SAMPLES_MEANINGFUL))
            continue;
        if (!any++)
            fprintf(f, "\n%-*s %10s %14s %14s %14s %14s %14s\n", width, "counter", "samples", "min",
                    "max", "mean", "stddev", "last");
        if (rows && any > rows)
            continue;
        fprintf(f, "%-*s %10llu %14.6g %14.6g %14.6g %14.6g %14.6g\n", width, c->name,
                (unsigned long long)c->stats.count, c->stats.min, c->stats.max, c->stats.mean,
                c->stats.stddev, c->stats.last);
    }
    if (rows && any > rows)
        fprintf(f, "... %u more counters (show all with --rows 0 or TASKSCOPE_SUMMARY_ROWS=0)\n",
                any - rows);
    if (few)
        fprintf(f,
                "%s%u sampled counter%s left out: fewer than %d samples in this %.3f s run "
                "(TASKSCOPE_SAMPLE_MS sets the period); counters.csv and profile.json have %s\n",
                any ? "" : "\n", few, few == 1 ? "" : "s", SAMPLES_MEANINGFUL, t->elapsed_ns / 1e9,
                few == 1 ? "it" : "them");
    for (uint32_t i = 0; i < p->nunfinished && (!rows || i < rows); i++) {
        char buf[32];
        const struct tscope__punfinished *u = &p->unfinished[i];
        fprintf(f, "%sunfinished: task %llu (%s) begun at %.3f ms on thread %u\n",
                i == 0 ? "\n" : "", (unsigned long long)u->id,
                tscope__profile_type_name(p, u->type, buf, sizeof buf), u->begin / 1e6, u->thread);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}
