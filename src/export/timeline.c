/* timeline.c - the pictures of the run over time, computed from the exact
 * begin and end times of the tasks (profile/timeline.h), as data files and
 * the gnuplot scripts that draw them (`taskscope run` and `taskscope report
 * FOLDER` render them when gnuplot is installed; SVG or PNG, pictures.h):
 *   concurrency.csv / .gp  threads running each task type, per time bin
 *                          (self time / bin width), stacked, with the thread
 *                          cap (threads, left axis) and the power (right
 *                          axis) from samples.csv when the sampler ran
 *   threads.csv / heatmap.gp  per thread, the fraction of each bin it was
 *                          working (a task on it, waiting types - taskwait,
 *                          barriers, MPI waits - excluded; one rank:
 *                          threads x time), then the fraction it waited
 *   durations.csv / scatter.gp  a sample of task durations over time, per
 *                          type, as APEX's scatter plot
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "palette.h"
#include "pictures.h"
#include "sampler/sampler.h"

#define SCATTER_DRAWN 2000u /* points the scatter draws at most */

/* Types that ran at all, in id order: their row index in p->tl.type. */
static unsigned types_that_ran(const struct tscope__profile *p, uint32_t *ids, unsigned max)
{
    unsigned n = 0;
    for (uint32_t t = 0; t < p->tl.ntype && n < max; t++) {
        const double *row = p->tl.type[t];
        if (!row)
            continue;
        double sum = 0;
        for (uint32_t b = 0; b < p->tl.nbins; b++)
            sum += row[b];
        if (sum > 0)
            ids[n++] = t;
    }
    return n;
}

/* A CSV header field that gnuplot's columnhead shows as is. */
static void put_name(FILE *f, const char *name)
{
    tscope__fmt_csv_field(f, name);
}

int tscope__export_concurrency_csv(const struct tscope__profile *p, FILE *f)
{
    uint32_t ids[256];
    unsigned n = types_that_ran(p, ids, 256);
    char buf[64];
    fprintf(f, "time_s,bin_s");
    for (unsigned k = 0; k < n; k++) {
        fputc(',', f);
        put_name(f, tscope__profile_type_name(p, ids[k], buf, sizeof buf));
    }
    fprintf(f, ",threads_busy\n");
    const struct tscope__ptimeline *tl = &p->tl;
    for (uint32_t b = 0; b < tl->nbins && tl->bin_ns > 0; b++) {
        fprintf(f, "%.9g,%.9g", b * tl->bin_ns * 1e-9, tl->bin_ns * 1e-9);
        for (unsigned k = 0; k < n; k++)
            fprintf(f, ",%.6g", tl->type[ids[k]][b] / tl->bin_ns);
        double busy = 0;
        for (uint32_t t = 0; t < tl->nthread; t++)
            busy += tl->thread[t] ? tl->thread[t][b] : 0;
        fprintf(f, ",%.6g\n", busy / tl->bin_ns);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* The series of the concurrency picture, bottom to top: the types with
 * their own colour doing work (largest first), "other", the waiting types
 * with their own grey, "other waiting" - work stacked below, waiting
 * drawn apart above it. */
struct series {
    const char *rgb;
    char title[300];
    size_t len;
};

/* Series index of csv column k (a type that ran), -1 for none. */
static int series_of(const struct tscope__colour *c, unsigned own_work, unsigned own_wait,
                     unsigned *work_rank, unsigned *wait_rank, unsigned other_at,
                     unsigned other_wait_at)
{
    if (c->group == TSCOPE__COLOUR_OTHER)
        return (int)other_at;
    if (c->group == TSCOPE__COLOUR_OTHER_WAIT)
        return (int)other_wait_at;
    if (c->group != TSCOPE__COLOUR_OWN)
        return -1;
    for (unsigned j = 0; j < (c->wait ? own_wait : own_work); j++)
        if ((c->wait ? wait_rank : work_rank)[j] == c->rank)
            return (int)(c->wait ? other_at + 1 + j : j);
    return -1;
}

int tscope__export_concurrency_gp(const struct tscope__profile *p, FILE *f)
{
    uint32_t ids[256];
    unsigned n = types_that_ran(p, ids, 256);
    uint32_t ncol = 0;
    struct tscope__colour *col = tscope__palette_of_profile(p, &ncol);
    if (!col)
        return TSCOPE_ENOMEM;
    /* the own-colour types that ran, by rank; how many are grouped */
    unsigned work_rank[TSCOPE__PALETTE_OWN], wait_rank[TSCOPE__PALETTE_OWN];
    uint32_t work_id[TSCOPE__PALETTE_OWN], wait_id[TSCOPE__PALETTE_OWN];
    unsigned own_work = 0, own_wait = 0, other = 0, other_wait = 0;
    for (uint32_t r = 0; r < TSCOPE__PALETTE_OWN; r++)
        for (unsigned k = 0; k < n; k++) {
            const struct tscope__colour *c = &col[ids[k]];
            if (c->rank != r || c->group != TSCOPE__COLOUR_OWN)
                continue;
            if (c->wait)
                wait_rank[own_wait] = r, wait_id[own_wait++] = ids[k];
            else
                work_rank[own_work] = r, work_id[own_work++] = ids[k];
        }
    for (unsigned k = 0; k < n; k++) {
        other += col[ids[k]].group == TSCOPE__COLOUR_OTHER;
        other_wait += col[ids[k]].group == TSCOPE__COLOUR_OTHER_WAIT;
    }
    struct series s[2 * TSCOPE__PALETTE_OWN + 2];
    unsigned ns = 0;
    char buf[64];
    for (unsigned j = 0; j < own_work; j++) {
        s[ns].rgb = col[work_id[j]].rgb;
        snprintf(s[ns].title, sizeof s[ns].title, "%s",
                 tscope__profile_type_name(p, work_id[j], buf, sizeof buf));
        ns++;
    }
    unsigned other_at = ns;
    s[ns].rgb = TSCOPE__PALETTE_OTHER;
    snprintf(s[ns++].title, sizeof s[0].title, "other (%u types)", other);
    for (unsigned j = 0; j < own_wait; j++) {
        s[ns].rgb = col[wait_id[j]].rgb;
        snprintf(s[ns].title, sizeof s[ns].title, "%s",
                 tscope__profile_type_name(p, wait_id[j], buf, sizeof buf));
        ns++;
    }
    unsigned other_wait_at = ns;
    s[ns].rgb = TSCOPE__PALETTE_OTHER_WAIT;
    snprintf(s[ns++].title, sizeof s[0].title, "other waiting (%u types)", other_wait);
    int series[256];
    for (unsigned k = 0; k < n; k++)
        series[k] = series_of(&col[ids[k]], own_work, own_wait, work_rank, wait_rank, other_at,
                              other_wait_at);
    /* the legend: every series with a type in it, and the lines */
    unsigned cap = 0, power = 0;
    const char *power_label = "power (W)";
    if (tscope__sampler_rows() >= 2) { /* one sample draws no line */
        cap = tscope__sampler_column("rt.active_threads");
        power = tscope__sampler_column("power.package_w");
        if (!power && (power = tscope__sampler_column("power.estimate_w")))
            power_label = "power, estimated (W)";
    }
    unsigned entries = (cap != 0) + (power != 0);
    size_t longest = power ? strlen(power_label) : cap ? 10 : 0;
    for (unsigned j = 0; j < ns; j++) {
        int used = 0;
        for (unsigned k = 0; k < n && !used; k++)
            used = series[k] == (int)j;
        s[j].len = used ? strlen(s[j].title) : 0;
        entries += used;
        if (s[j].len > longest)
            longest = s[j].len;
    }
    fprintf(f,
            "# concurrency.gp - written by taskscope: gnuplot concurrency.gp -> concurrency.%s\n"
            "# threads running each task type (self time per bin / bin width), from the exact\n"
            "# begin and end times of the tasks, stacked: work in colours, waiting in greys\n"
            "# above it; bins of %.6g s; colours: docs/output-formats.md, \"Colours\"\n",
            tscope__pictures_ext(), p->tl.bin_ns * 1e-9);
    unsigned height = tscope__palette_key(f, entries, longest, 1200, 600);
    fputs("set datafile separator ','\n", f);
    tscope__pictures_terminal(f, "concurrency", 1200, height);
    fprintf(f, "set title 'threads running each task type: work in colours, waiting in greys'\n"
               "set xlabel 'time (s)'\nset ylabel 'threads (self time / bin width)'\n"
               "set style fill solid 0.8 noborder\n"
               "set yrange [0:*]\n"
               "set xrange [0:*]\n");
    if (power)
        fprintf(f,
                "stats 'samples.csv' using %u nooutput\n"
                "set y2tics\nset ytics nomirror\n"
                "set y2range [0:(STATS_max > 0 ? STATS_max * 1.15 : 1)]\n"
                "set y2label '%s'\n",
                power, power_label);
    fprintf(f, "plot ");
    int first = 1;
    /* stacked: the sum of the series up to j, the tallest first so that the
     * lower ones are drawn over it; a box spans its bin exactly */
    for (unsigned j = ns; j-- > 0;) {
        if (!s[j].len)
            continue;
        fprintf(f, "%s'concurrency.csv' using ($1+$2/2):(0", first ? "" : ", \\\n     ");
        for (unsigned k = 0; k < n; k++)
            if (series[k] >= 0 && series[k] <= (int)j)
                fprintf(f, "+column(%u)", k + 3);
        fprintf(f, "):2 with boxes lc rgb '%s' title ", s[j].rgb);
        tscope__palette_put_title(f, s[j].title);
        first = 0;
    }
    if (cap)
        fprintf(f, "%s'samples.csv' using 1:%u with steps lw 2 lc rgb 'black' title 'thread cap'",
                first ? "" : ", \\\n     ", cap),
            first = 0;
    if (power)
        fprintf(
            f,
            "%s'samples.csv' using 1:%u axes x1y2 with lines lw 2 dt 2 lc rgb 'black' title '%s'",
            first ? "" : ", \\\n     ", power, power_label),
            first = 0;
    if (first)
        fprintf(f, "'concurrency.csv' using 1:(0) with lines title 'no task ran'");
    fprintf(f, "\n");
    free(col);
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* Thread slots that ran tasks, in slot order. */
static unsigned threads_that_ran(const struct tscope__profile *p, uint32_t *ids, unsigned max)
{
    unsigned n = 0;
    for (uint32_t t = 0; t < p->tl.nthread && n < max; t++) {
        const double *row = p->tl.thread[t];
        double sum = 0;
        for (uint32_t b = 0; row && b < p->tl.nbins; b++)
            sum += row[b];
        if (sum > 0)
            ids[n++] = t;
    }
    return n;
}

static const char *thread_name(const struct tscope__profile *p, uint32_t t)
{
    return t < p->nthreads && p->threads[t].name && p->threads[t].name[0] ? p->threads[t].name
                                                                          : "thread";
}

/* The ns thread slot t waited in bin b (a waiting type on its top). */
static double waited(const struct tscope__ptimeline *tl, uint32_t t, uint32_t b)
{
    return t < tl->nwait && tl->wait[t] ? tl->wait[t][b] : 0;
}

int tscope__export_threads_csv(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__ptimeline *tl = &p->tl;
    uint32_t ids[1024];
    unsigned n = threads_that_ran(p, ids, 1024);
    char name[300];
    fprintf(f, "time_s,bin_s");
    for (unsigned k = 0; k < n; k++) {
        fputc(',', f);
        put_name(f, thread_name(p, ids[k]));
    }
    for (unsigned k = 0; k < n; k++) {
        fputc(',', f);
        snprintf(name, sizeof name, "%s (waiting)", thread_name(p, ids[k]));
        put_name(f, name);
    }
    fputc('\n', f);
    for (uint32_t b = 0; b < tl->nbins && tl->bin_ns > 0; b++) {
        fprintf(f, "%.9g,%.9g", b * tl->bin_ns * 1e-9, tl->bin_ns * 1e-9);
        for (unsigned k = 0; k < n; k++) { /* working: busy less waiting */
            double work = tl->thread[ids[k]][b] - waited(tl, ids[k], b);
            fprintf(f, ",%.4g", (work > 0 ? work : 0) / tl->bin_ns);
        }
        for (unsigned k = 0; k < n; k++)
            fprintf(f, ",%.4g", waited(tl, ids[k], b) / tl->bin_ns);
        fputc('\n', f);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

int tscope__export_heatmap_gp(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__ptimeline *tl = &p->tl;
    uint32_t ids[1024];
    unsigned n = threads_that_ran(p, ids, 1024);
    fprintf(f,
            "# heatmap.gp - written by taskscope: gnuplot heatmap.gp -> heatmap.%s\n"
            "# threads x time: the fraction of each bin (%.6g s) a thread was working: a task on\n"
            "# it, waiting in one (taskwait, barriers, MPI waits) excluded (threads.csv has the\n"
            "# waiting fractions after the working ones)\n"
            "set datafile separator ','\n",
            tscope__pictures_ext(), tl->bin_ns * 1e-9);
    tscope__pictures_terminal(f, "heatmap", 1200, 160 + 30 * (n ? n : 1));
    fprintf(f,
            "set title 'rank %d: threads x time, the fraction of each bin a thread was working "
            "(waits excluded)'\n"
            "set xlabel 'time (s)'\nset ylabel 'thread'\nset xrange [0:*]\n"
            "set yrange [-0.5:%g]\nset cbrange [0:1]\nset cblabel 'working'\n"
            "set palette defined (0 'white', 0.5 'orange', 1 'dark-red')\n"
            "set style fill solid noborder\nunset key\n",
            p->rank, n ? n - 0.5 : 0.5);
    fprintf(f, "set ytics (");
    for (unsigned t = 0; t < n; t++) {
        const char *name = thread_name(p, ids[t]);
        fprintf(f, "%s\"", t ? ", " : "");
        for (const char *c = name; *c; c++)
            if (*c != '"' && *c != '\\')
                fputc(*c, f);
        fprintf(f, "\" %u", t);
    }
    fprintf(f, ")\n");
    if (!n)
        fprintf(f, "plot 'threads.csv' using 1:(0) with lines title 'no task ran'\n");
    else
        fprintf(f,
                "plot for [k=3:%u] 'threads.csv' using ($1+$2/2):(k-3):($2/2):(0.45):(column(k)) "
                "with boxxyerror fc palette\n",
                n + 2);
    return ferror(f) ? TSCOPE_EIO : 0;
}

int tscope__export_durations_csv(const struct tscope__profile *p, FILE *f)
{
    char buf[64];
    fprintf(f, "# %.6g of the tasks (chosen by id); end time and duration (begin to end)\n",
            p->tl.sampled);
    fprintf(f, "end_s,duration_ms,type\n");
    for (uint32_t i = 0; i < p->tl.npoints; i++) {
        const struct tscope__ppoint *pt = &p->tl.points[i];
        fprintf(f, "%.9g,%.6g,", pt->end * 1e-9, pt->duration * 1e-6);
        put_name(f, tscope__profile_type_name(p, pt->type, buf, sizeof buf));
        fputc('\n', f);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* name without the characters in drop (the quotes of the gnuplot string
 * it goes into). */
static void put_plain(FILE *f, const char *name, const char *drop)
{
    for (const char *c = name; *c; c++)
        if (!strchr(drop, *c))
            fputc(*c, f);
}

int tscope__export_scatter_gp(const struct tscope__profile *p, FILE *f)
{
    uint32_t ncol = 0;
    struct tscope__colour *col = tscope__palette_of_profile(p, &ncol);
    if (!col)
        return TSCOPE_ENOMEM;
    /* the types in the sample with a colour of their own, by rank; how many
     * are grouped */
    uint8_t *seen = calloc(ncol ? ncol : 1, 1);
    if (!seen) {
        free(col);
        return TSCOPE_ENOMEM;
    }
    for (uint32_t i = 0; i < p->tl.npoints; i++)
        seen[p->tl.points[i].type] = 1;
    uint32_t own[TSCOPE__PALETTE_OWN];
    unsigned n = 0, other = 0, other_wait = 0;
    for (uint32_t r = 0; r < TSCOPE__PALETTE_OWN; r++)
        for (uint32_t id = 0; id < ncol; id++)
            if (seen[id] && col[id].rank == r && col[id].group == TSCOPE__COLOUR_OWN)
                own[n++] = id;
    for (uint32_t id = 0; id < ncol; id++) {
        other += seen[id] && col[id].group == TSCOPE__COLOUR_OTHER;
        other_wait += seen[id] && col[id].group == TSCOPE__COLOUR_OTHER_WAIT;
    }
    /* gnuplot draws ~16 us of CPU per point here: beyond SCATTER_DRAWN points
     * one line in `every` is drawn (the file keeps them all) */
    uint32_t every = (p->tl.npoints + SCATTER_DRAWN - 1) / SCATTER_DRAWN;
    if (every < 1)
        every = 1;
    char drawn[64] = "";
    if (every > 1)
        snprintf(drawn, sizeof drawn, "; one in %u drawn", every);
    char buf[64], other_title[64], other_wait_title[64];
    snprintf(other_title, sizeof other_title, "other (%u types)", other);
    snprintf(other_wait_title, sizeof other_wait_title, "other waiting (%u types)", other_wait);
    size_t longest = 0;
    for (unsigned k = 0; k < n; k++) {
        size_t len = strlen(tscope__profile_type_name(p, own[k], buf, sizeof buf));
        longest = len > longest ? len : longest;
    }
    if (other && strlen(other_title) > longest)
        longest = strlen(other_title);
    if (other_wait && strlen(other_wait_title) > longest)
        longest = strlen(other_wait_title);
    fprintf(f,
            "# scatter.gp - written by taskscope: gnuplot scatter.gp -> scatter.%s\n"
            "# the elapsed time of each sampled task (its begin to its end, waiting\n"
            "# included) at its end; colours: docs/output-formats.md, \"Colours\"\n",
            tscope__pictures_ext());
    unsigned height =
        tscope__palette_key(f, n + (other != 0) + (other_wait != 0), longest, 1200, 600);
    fputs("set datafile separator ','\n", f);
    tscope__pictures_terminal(f, "scatter", 1200, height);
    fprintf(f,
            "set title 'elapsed time of each task, begin to end (%u tasks: %.3g%% of them, chosen "
            "by id%s)'\n"
            "set xlabel 'end time (s)'\nset ylabel 'elapsed time, begin to end (ms)'\n"
            "set logscale y\nset xrange [0:*]\n",
            p->tl.npoints, p->tl.sampled * 100, drawn);
    if (!p->tl.npoints) { /* gnuplot refuses a plot with no valid point: an empty frame, said */
        fprintf(f, "set xrange [0:1]\nset yrange [0.001:1]\nset key off\n"
                   "set label 'no task in the sample' at graph 0.5,0.5 center\n"
                   "plot NaN notitle\n");
        free(seen);
        free(col);
        return ferror(f) ? TSCOPE_EIO : 0;
    }
    /* one pass over the file, the type's colour computed per point (lc rgb
     * variable), then one empty plot per colour for the key: gnuplot
     * evaluates the using expression once per point (and pays signal system
     * calls for each), so a plot per type filtering the file costs as many
     * times as much */
    fprintf(f, "plot 'durations.csv' every %u using 1:2:(", every);
    for (unsigned k = 0; k < n; k++) {
        fprintf(f, "strcol(3) eq \"");
        put_plain(f, tscope__profile_type_name(p, own[k], buf, sizeof buf), "\"\\'");
        fprintf(f, "\" ? 0x%s : ", col[own[k]].rgb + 1);
    }
    /* the rest: a waiting type's name, else other */
    for (uint32_t id = 0; id < ncol; id++)
        if (seen[id] && col[id].group == TSCOPE__COLOUR_OTHER_WAIT) {
            fprintf(f, "strcol(3) eq \"");
            put_plain(f, tscope__profile_type_name(p, id, buf, sizeof buf), "\"\\'");
            fprintf(f, "\" ? 0x%s : ", &TSCOPE__PALETTE_OTHER_WAIT[1]);
        }
    fprintf(f, "0x%s) with points pt 7 ps 0.8 lc rgb variable notitle", &TSCOPE__PALETTE_OTHER[1]);
    for (unsigned k = 0; k < n + 2; k++) {
        const char *rgb = k < n    ? col[own[k]].rgb
                          : k == n ? TSCOPE__PALETTE_OTHER
                                   : TSCOPE__PALETTE_OTHER_WAIT;
        const char *title = k < n    ? tscope__profile_type_name(p, own[k], buf, sizeof buf)
                            : k == n ? other_title
                                     : other_wait_title;
        if ((k == n && !other) || (k == n + 1 && !other_wait))
            continue;
        fprintf(f, ", \\\n     NaN with points pt 7 ps 0.8 lc rgb '%s' title ", rgb);
        tscope__palette_put_title(f, title);
    }
    fprintf(f, "\n");
    free(seen);
    free(col);
    return ferror(f) ? TSCOPE_EIO : 0;
}
