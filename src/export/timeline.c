/* timeline.c - the pictures of the run over time, computed from the exact
 * begin and end times of the tasks (profile/timeline.h), as data files and
 * the gnuplot scripts that draw them (`taskscope run` and `taskscope report
 * FOLDER` render them to PNG when gnuplot is installed):
 *   concurrency.csv / .gp  threads running each task type, per time bin
 *                          (self time / bin width), stacked, with the thread
 *                          cap (threads, left axis) and the power (right
 *                          axis) from samples.csv when the sampler ran
 *   threads.csv / heatmap.gp  per thread, the fraction of each bin it was
 *                          busy with tasks (one rank: threads x time)
 *   durations.csv / scatter.gp  a sample of task durations over time, per
 *                          type, as APEX's scatter plot
 */
#include <stdio.h>
#include <string.h>

#include "export.h"
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

int tscope__export_concurrency_gp(const struct tscope__profile *p, FILE *f)
{
    uint32_t ids[256];
    unsigned n = types_that_ran(p, ids, 256);
    unsigned cap = tscope__sampler_column("rt.active_threads");
    unsigned power = tscope__sampler_column("power.package_w");
    const char *power_label = "power (W)";
    if (!power && (power = tscope__sampler_column("power.estimate_w")))
        power_label = "power, estimated (W)";
    fprintf(f,
            "# concurrency.gp - written by taskscope: gnuplot concurrency.gp -> concurrency.png\n"
            "# threads running each task type (self time per bin / bin width), from the exact\n"
            "# begin and end times of the tasks, stacked; bins of %.6g s\n"
            "set datafile separator ','\n"
            "set terminal pngcairo size 1200,600 noenhanced\n"
            "set output 'concurrency.png'\n"
            "set title 'threads running each task type'\n"
            "set xlabel 'time (s)'\nset ylabel 'threads'\nset key outside right\n"
            "set style fill solid 0.8 noborder\n"
            "set yrange [0:*]\n"
            "set xrange [0:*]\n",
            p->tl.bin_ns * 1e-9);
    if (power)
        fprintf(f,
                "stats 'samples.csv' using %u nooutput\n"
                "set y2tics\nset ytics nomirror\n"
                "set y2range [0:(STATS_max > 0 ? STATS_max * 1.15 : 1)]\n"
                "set y2label '%s'\n",
                power, power_label);
    fprintf(f, "plot ");
    int first = 1;
    /* stacked: the sum of the first k+1 types, tallest first so that the
     * shorter ones are drawn over it; a box spans its bin exactly */
    for (unsigned k = n; k-- > 0;) {
        fprintf(f, "%s'concurrency.csv' using ($1+$2/2):(", first ? "" : ", \\\n     ");
        for (unsigned j = 0; j <= k; j++)
            fprintf(f, "%scolumn(%u)", j ? "+" : "", j + 3);
        fprintf(f, "):2 with boxes title columnhead(%u)", k + 3);
        first = 0;
    }
    if (cap)
        fprintf(f, "%s'samples.csv' using 1:%u with steps lw 2 lc rgb 'black' title 'thread cap'",
                first ? "" : ", \\\n     ", cap),
            first = 0;
    if (power)
        fprintf(f, "%s'samples.csv' using 1:%u axes x1y2 with lines lw 2 lc rgb 'red' title '%s'",
                first ? "" : ", \\\n     ", power, power_label),
            first = 0;
    if (first)
        fprintf(f, "'concurrency.csv' using 1:(0) with lines title 'no task ran'");
    fprintf(f, "\n");
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

int tscope__export_threads_csv(const struct tscope__profile *p, FILE *f)
{
    const struct tscope__ptimeline *tl = &p->tl;
    uint32_t ids[1024];
    unsigned n = threads_that_ran(p, ids, 1024);
    fprintf(f, "time_s,bin_s");
    for (unsigned k = 0; k < n; k++) {
        fputc(',', f);
        put_name(f, thread_name(p, ids[k]));
    }
    fputc('\n', f);
    for (uint32_t b = 0; b < tl->nbins && tl->bin_ns > 0; b++) {
        fprintf(f, "%.9g,%.9g", b * tl->bin_ns * 1e-9, tl->bin_ns * 1e-9);
        for (unsigned k = 0; k < n; k++)
            fprintf(f, ",%.4g", tl->thread[ids[k]][b] / tl->bin_ns);
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
            "# heatmap.gp - written by taskscope: gnuplot heatmap.gp -> heatmap.png\n"
            "# threads x time: the fraction of each bin (%.6g s) a thread was busy with tasks\n"
            "set datafile separator ','\n"
            "set terminal pngcairo size 1200,%u noenhanced\n"
            "set output 'heatmap.png'\n"
            "set title 'rank %d: threads x time, fraction of each bin busy with tasks'\n"
            "set xlabel 'time (s)'\nset xrange [0:*]\n"
            "set yrange [-0.5:%g]\nset cbrange [0:1]\nset cblabel 'busy'\n"
            "set palette defined (0 'white', 0.5 'orange', 1 'dark-red')\n"
            "set style fill solid noborder\nunset key\n",
            tl->bin_ns * 1e-9, 160 + 30 * (n ? n : 1), p->rank, n ? n - 0.5 : 0.5);
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
    uint32_t ids[64];
    unsigned n = 0;
    for (uint32_t i = 0; i < p->tl.npoints && n < 64; i++) {
        unsigned k = 0;
        while (k < n && ids[k] != p->tl.points[i].type)
            k++;
        if (k == n)
            ids[n++] = p->tl.points[i].type;
    }
    /* gnuplot draws ~16 us of CPU per point here: beyond SCATTER_DRAWN points
     * one line in `every` is drawn (the file keeps them all) */
    uint32_t every = (p->tl.npoints + SCATTER_DRAWN - 1) / SCATTER_DRAWN;
    if (every < 1)
        every = 1;
    char drawn[64] = "";
    if (every > 1)
        snprintf(drawn, sizeof drawn, "; one in %u drawn", every);
    fprintf(f,
            "# scatter.gp - written by taskscope: gnuplot scatter.gp -> scatter.png\n"
            "set datafile separator ','\n"
            "set terminal pngcairo size 1200,600 noenhanced\n"
            "set output 'scatter.png'\n"
            "set title 'task durations over time (%.3g%% of the tasks, chosen by id%s)'\n"
            "set xlabel 'end time (s)'\nset ylabel 'duration (ms)'\nset logscale y\n"
            "set key outside right\nset xrange [0:*]\n",
            p->tl.sampled * 100, drawn);
    if (!n) { /* gnuplot refuses a plot with no valid point: an empty frame, said */
        fprintf(f, "set xrange [0:1]\nset yrange [0.001:1]\nset key off\n"
                   "set label 'no task in the sample' at graph 0.5,0.5 center\n"
                   "plot NaN notitle\n");
        return ferror(f) ? TSCOPE_EIO : 0;
    }
    /* one pass over the file, the type's index as the point's line type
     * (lc variable, the colour a plot per type would get), then one empty
     * plot per type for the key: gnuplot evaluates the using expression
     * once per point (and pays signal system calls for each), so n plots
     * filtering the file by type cost n times as much */
    char buf[64];
    fprintf(f, "plot 'durations.csv' every %u using 1:2:(", every);
    for (unsigned k = 0; k < n; k++) {
        fprintf(f, "strcol(3) eq \"");
        put_plain(f, tscope__profile_type_name(p, ids[k], buf, sizeof buf), "\"\\'");
        fprintf(f, "\" ? %u : ", k + 1);
    }
    fprintf(f, "NaN) with points pt 7 ps 0.8 lc variable notitle");
    for (unsigned k = 0; k < n; k++) {
        fprintf(f, ", \\\n     NaN with points pt 7 ps 0.8 lt %u title '", k + 1);
        put_plain(f, tscope__profile_type_name(p, ids[k], buf, sizeof buf), "'");
        fprintf(f, "'");
    }
    fprintf(f, "\n");
    return ferror(f) ? TSCOPE_EIO : 0;
}
