/* write.c - the files of a job's global view (global.h): profile.json (the
 * profile schema, plus the ranks), the summary, the ranks' table, the
 * message matrix and the ranks x time heat map with their gnuplot scripts
 * (rendered by `taskscope run`, `merge` and `report`); the summary is
 * also what `taskscope report` prints of a global profile read back. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/export.h"
#include "export/output.h"
#include "export/pictures.h"
#include "global.h"

static int by_self(const void *a, const void *b)
{
    const struct tscope__ptype *x = *(const struct tscope__ptype *const *)a;
    const struct tscope__ptype *y = *(const struct tscope__ptype *const *)b;
    if (x->self_total != y->self_total)
        return x->self_total < y->self_total ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id; /* ties in one order, the run's and report's */
}

static double mb(uint64_t bytes)
{
    return (double)bytes / 1e6;
}

int tscope__global_summary(const struct tscope__profile *p, FILE *f, unsigned rows)
{
    const struct tscope__pglobal *g = p->global;
    fprintf(f, "taskscope: global view of %s, %d rank%s", p->program, g->nranks,
            g->nranks == 1 ? "" : "s");
    if (g->present < g->nranks)
        fprintf(f, " (%d present)", g->present);
    fprintf(f, ", %.3f s (the longest rank)\n", p->totals.elapsed_ns * 1e-9);
    if (p->filter) /* the ranks' counts summed */
        fprintf(f,
                "filter file: %llu task%s and %llu dependenc%s left out, all ranks (their time "
                "counts in the tasks they ran inside)\n",
                (unsigned long long)p->tasks_filtered, p->tasks_filtered == 1 ? "" : "s",
                (unsigned long long)p->deps_filtered, p->deps_filtered == 1 ? "y" : "ies");
    const struct tscope__ptype **order = malloc((p->ntypes + 1) * sizeof *order);
    if (!order)
        return TSCOPE_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].calls || p->types[i].self_total > 0)
            order[n++] = &p->types[i];
    qsort(order, n, sizeof *order, by_self);
    rows = rows ? rows : n;
    int width = 28; /* as wide as the longest name shown: none is cut */
    for (uint32_t i = 0; i < n && i < rows; i++)
        if ((int)strlen(order[i]->name) > width)
            width = (int)strlen(order[i]->name);
    fprintf(f, "%-*s %10s %12s %32s %9s %5s", width, "type", "calls", "self total s",
            "self s per rank: min / mean / max", "imbalance", "max@");
    if (p->cpu_time) /* every rank measured CPU time (--cpu-time): its sum and share */
        fprintf(f, " %12s %8s", "cpu total s", "cpu/self");
    fputc('\n', f);
    for (uint32_t i = 0; i < n && i < rows; i++) {
        const struct tscope__ptype *t = order[i];
        double mean = g->present ? (double)t->ranks.self_sum / g->present : 0;
        fprintf(f, "%-*s %10llu %12.6f %10.6f / %9.6f / %9.6f %9.2f %5d", width, t->name,
                (unsigned long long)t->calls, t->self_total * 1e-9, t->ranks.self_min * 1e-9,
                mean * 1e-9, t->ranks.self_max * 1e-9,
                mean > 0 ? (double)t->ranks.self_max / mean : 0, t->ranks.self_max_rank);
        if (p->cpu_time)
            fprintf(f, " %12.6f %7.1f%%", t->cpu.sum * 1e-9,
                    t->self.sum > 0 ? 100.0 * t->cpu.sum / t->self.sum : 0.0);
        fputc('\n', f);
    }
    if (n > rows)
        fprintf(f, "(%u more types: --rows, or the global profile.json)\n", n - rows);
    free(order);
    fprintf(f, "%5s %10s %12s %10s %12s %12s\n", "rank", "tasks", "self s", "elapsed s", "sent MB",
            "received MB");
    for (int r = 0; r < g->nranks; r++) {
        const struct tscope__prank *x = &g->ranks[r];
        if (!x->present) {
            fprintf(f, "%5d missing\n", r);
            continue;
        }
        fprintf(f, "%5d %10llu %12.6f %10.6f %12.3f %12.3f\n", r, (unsigned long long)x->tasks,
                x->self_ns * 1e-9, x->elapsed_ns * 1e-9,
                mb(x->msgs.sent_bytes + x->msgs.coll_sent_bytes),
                mb(x->msgs.recv_bytes + x->msgs.coll_recv_bytes));
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* summary.txt: every type. */
static int summary_file(const struct tscope__profile *p, FILE *f)
{
    return tscope__global_summary(p, f, 0);
}

static int ranks_csv(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__pglobal *g = p->global;
    fprintf(f, "rank,present,tasks,events,anomalies,unfinished,threads,self_s,elapsed_s,sent,"
               "sent_bytes,recv,recv_bytes,coll_sent,coll_sent_bytes,coll_recv,"
               "coll_recv_bytes\n");
    for (int r = 0; r < g->nranks; r++) {
        const struct tscope__prank *x = &g->ranks[r];
        const tscope_peer_stats_t *m = &x->msgs;
        fprintf(
            f, "%d,%d,%llu,%llu,%llu,%llu,%llu,%.9f,%.9f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
            r, x->present, (unsigned long long)x->tasks, (unsigned long long)x->events,
            (unsigned long long)x->anomalies, (unsigned long long)x->unfinished,
            (unsigned long long)x->threads, x->self_ns * 1e-9, x->elapsed_ns * 1e-9,
            (unsigned long long)m->sent, (unsigned long long)m->sent_bytes,
            (unsigned long long)m->recv, (unsigned long long)m->recv_bytes,
            (unsigned long long)m->coll_sent, (unsigned long long)m->coll_sent_bytes,
            (unsigned long long)m->coll_recv, (unsigned long long)m->coll_recv_bytes);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* The message matrix: up to TSCOPE__GLOBAL_DENSE_MAX ranks the bytes sent,
 * a row per sender ("from\to,0,1,..."), else a line per pair that
 * exchanged messages ("from,to,bytes,messages"). */
static int messages_csv(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__pglobal *g = p->global;
    if (g->nranks > TSCOPE__GLOBAL_DENSE_MAX) {
        fputs("from,to,bytes,messages\n", f);
        for (size_t i = 0; i < g->nmatrix; i++)
            fprintf(f, "%d,%d,%llu,%llu\n", g->matrix[i].from, g->matrix[i].to,
                    (unsigned long long)g->matrix[i].bytes, (unsigned long long)g->matrix[i].msgs);
        return ferror(f) ? TSCOPE_EIO : 0;
    }
    fputs("from\\to", f);
    for (int j = 0; j < g->nranks; j++)
        fprintf(f, ",%d", j);
    fputc('\n', f);
    const struct tscope__pmsgpair *x = g->matrix, *end = g->matrix + g->nmatrix;
    for (int i = 0; i < g->nranks; i++) {
        fprintf(f, "%d", i);
        for (int j = 0; j < g->nranks; j++) {
            int here = x < end && x->from == i && x->to == j;
            fprintf(f, ",%llu", here ? (unsigned long long)x->bytes : 0ULL);
            x += here;
        }
        fputc('\n', f);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* Dense: the matrix as an image; else a point per pair (no white for 0:
 * the absent pairs are the background). */
static int messages_gp(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__pglobal *g = p->global;
    int n = g->nranks, pairs = n > TSCOPE__GLOBAL_DENSE_MAX;
    fprintf(f,
            "# messages.gp - written by taskscope: gnuplot messages.gp -> messages.%s\n"
            "set datafile separator ','\n",
            tscope__pictures_ext());
    tscope__pictures_terminal(f, "messages", 900, 800);
    fprintf(f,
            "set title 'bytes sent, rank to rank (point to point and collective shares)'\n"
            "set xlabel 'to rank'\nset ylabel 'from rank'\n"
            "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n"
            "set palette defined (%s1 '#fde725', 2 '#21918c', 3 '#440154')\n"
            "set cblabel 'bytes sent'\nset tics out\n"
            "# the colour bar's labels short (1.5 MB), so that they are never cut\n"
            "set format cb '%%.1s %%cB'\nset rmargin 16\n",
            n - 1, n - 1, pairs ? "" : "0 'white', ");
    if (!pairs)
        fputs(
            "plot 'messages.csv' matrix rowheaders columnheaders using 1:2:3 with image notitle\n",
            f);
    else if (g->nmatrix)
        fputs("plot 'messages.csv' skip 1 using 2:1:3 with points pointtype 5 pointsize 0.3 "
              "linecolor palette notitle\n",
              f);
    else
        fputs("set label 'no messages' at graph 0.5,0.5 center\nplot NaN notitle\n", f);
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* Average working threads of each rank per common time bin: busy, less the
 * time a waiting type (an MPI wait, a barrier, a taskwait) had the top. */
static int busy_csv(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__pglobal *g = p->global;
    /* the header is a comment: gnuplot's matrix reads rows after it */
    fprintf(f,
            "# average working threads per rank in bins of %.9g s (a task on the thread, "
            "waiting in one - MPI waits, barriers, taskwaits - excluded; profile.json's "
            "ranks_timeline has busy_ns and wait_ns)\n# rank\\time_s",
            g->bin_ns * 1e-9);
    for (uint32_t b = 0; b < g->nbins; b++)
        fprintf(f, ",%.6g", (b + 0.5) * g->bin_ns * 1e-9);
    fputc('\n', f);
    for (int r = 0; r < g->nranks; r++) {
        fprintf(f, "%d", r);
        for (uint32_t b = 0; b < g->nbins; b++)
            fprintf(f, ",%.6g",
                    g->bin_ns > 0 ? (double)(g->busy[(size_t)r * g->nbins + b] -
                                             g->wait[(size_t)r * g->nbins + b]) /
                                        g->bin_ns
                                  : 0);
        fputc('\n', f);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

static int busy_gp(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__pglobal *g = p->global;
    double end = g->nbins * g->bin_ns * 1e-9;
    fprintf(f,
            "# ranks.gp - written by taskscope: gnuplot ranks.gp -> ranks.%s\n"
            "set datafile separator ','\n",
            tscope__pictures_ext());
    tscope__pictures_terminal(f, "ranks", 1200,
                              (unsigned)(300 + 24 * (g->nranks < 30 ? g->nranks : 30)));
    fprintf(f,
            "set title 'working threads per rank over time (waits excluded: MPI waits, "
            "barriers, taskwaits)'\n"
            "set xlabel 'time (s)'\nset ylabel 'rank'\n"
            "set xrange [0:%.9g]\nset yrange [%d.5:-0.5]\n"
            "set palette defined (0 'white', 1 '#fde725', 2 '#21918c', 3 '#440154')\n"
            "set cblabel 'working threads (average over the bin)'\nset tics out\n",
            end > 0 ? end : 1, g->nranks - 1);
    if (g->nbins)
        fprintf(f,
                "plot 'ranks_busy.csv' matrix rowheaders using ($1 + 0.5) * %.9g:2:3 "
                "with image notitle\n",
                g->bin_ns * 1e-9);
    else
        fprintf(f, "set label 'no time measured' at graph 0.5,0.5 center\nplot NaN notitle\n");
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* A (rank, type) node of the DOT graph: "rR:type", escaped as JSON's (not as
 * a label: two names stay two ids). */
static void rank_node(FILE *f, int rank, const char *type)
{
    char id[400];
    snprintf(id, sizeof id, "r%d:%s", rank, type);
    tscope__fmt_json_string(f, id);
}

/* A label: text as Graphviz reads it (tscope__fmt_dot_text). */
static void dot_label(FILE *f, const char *s)
{
    fputc('"', f);
    tscope__fmt_dot_text(f, s);
    fputc('"', f);
}

/* 1 when (rank, name) is an end of an edge before edge i (or edge i's
 * `from` when end is its `to`): its node is declared already. */
static int seen(const struct tscope__pglobal *g, uint32_t i, int end, int rank, const char *name)
{
    for (uint32_t j = 0; j <= i; j++) {
        const struct tscope__prdep *d = &g->rdeps[j];
        if (d->from_rank == rank && !strcmp(d->from, name) && (j < i || end))
            return 1;
        if (j < i && d->to_rank == rank && !strcmp(d->to, name))
            return 1;
    }
    return 0;
}

/* The remote dependencies between the ranks' task types: a cluster per
 * rank, dashed edges from the type waited for to the type that waited,
 * labelled by direction and count. */
static int taskgraph_dot(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__pglobal *g = p->global;
    fputs("digraph taskscope_global {\n  graph [rankdir=LR, labelloc=t, label=", f);
    char title[200];
    snprintf(title, sizeof title, "%s: remote dependencies between %d ranks (%u edges)", p->program,
             g->nranks, g->nrdeps);
    dot_label(f, title);
    fputs("];\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#FFF3C4\"];\n", f);
    for (int r = 0; r < g->nranks; r++) {
        int any = 0;
        for (uint32_t i = 0; i < g->nrdeps; i++) {
            const struct tscope__prdep *d = &g->rdeps[i];
            for (int end = 0; end < 2; end++) {
                const char *name = end ? d->to : d->from;
                if ((end ? d->to_rank : d->from_rank) != r || seen(g, i, end, r, name))
                    continue;
                if (!any++)
                    fprintf(f, "  subgraph cluster_rank%d {\n    label=\"rank %d\";\n", r, r);
                fputs("    ", f);
                rank_node(f, r, end ? d->to : d->from);
                fputs(" [label=", f);
                dot_label(f, end ? d->to : d->from);
                fputs("];\n", f);
            }
        }
        if (any)
            fputs("  }\n", f);
    }
    for (uint32_t i = 0; i < g->nrdeps; i++) {
        const struct tscope__prdep *d = &g->rdeps[i];
        char label[128] = "";
        size_t at = 0;
        if (d->in)
            at += (size_t)snprintf(label + at, sizeof label - at, "in %llu",
                                   (unsigned long long)d->in);
        if (d->out)
            at += (size_t)snprintf(label + at, sizeof label - at, "%sout %llu", at ? ", " : "",
                                   (unsigned long long)d->out);
        if (d->copyin)
            snprintf(label + at, sizeof label - at, "%scopyin %llu", at ? ", " : "",
                     (unsigned long long)d->copyin);
        fputs("  ", f);
        rank_node(f, d->from_rank, d->from);
        fputs(" -> ", f);
        rank_node(f, d->to_rank, d->to);
        fputs(" [style=dashed, color=\"#1F6FB2\", label=", f);
        dot_label(f, label);
        fputs("];\n", f);
    }
    fputs("}\n", f);
    return ferror(f) ? TSCOPE_EIO : 0;
}

int tscope__global_write(const struct tscope__profile *g, const char *dir, FILE *say, unsigned rows)
{
    if (say) {
        tscope__global_summary(g, say, rows);
        fflush(say);
    }
    if (!dir)
        return 0;
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "taskscope: error: cannot create %s: %s; no global outputs\n", dir,
                strerror(errno));
        return TSCOPE_EIO;
    }
    static const struct {
        const char *name;
        tscope__writer_fn fn;
    } files[] = {{"profile.json", tscope__export_json},
                 {"summary.txt", summary_file},
                 {"ranks.csv", ranks_csv},
                 {"messages.csv", messages_csv},
                 {"messages.gp", messages_gp},
                 {"ranks_busy.csv", busy_csv},
                 {"ranks.gp", busy_gp},
                 {"taskgraph.dot", taskgraph_dot}};
    int first = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        int rc = tscope__output_write_file(dir, files[i].name, files[i].fn, g);
        first = first ? first : rc;
    }
    if (say)
        fprintf(say, "taskscope: global view in %s/\n", dir);
    return first;
}
