/* concurrency.c - the concurrency view (APEX's): at every sample, how many
 * threads run each task type, and at finalize a gnuplot script that draws
 * it as stacked bars over time with the thread cap and the power on a
 * second axis (concurrency.gp, over samples.csv; `taskscope run` renders it
 * to concurrency.png when gnuplot is installed).
 *
 * What a thread runs is read from the profile store: the innermost task on
 * its replay stack, as of the consumer's last round (at most
 * TASKSCOPE_PERIOD_MS behind the program), which each round publishes
 * without a lock for this view (store.h, running).  Tasks that began and ended
 * between two rounds are not seen: the view samples long tasks well and
 * short ones statistically, like any sampling profiler.  Series:
 * concurrency.TYPE (threads), for every type seen running at least once
 * (0 in later samples when none runs), and concurrency.threads_busy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/query.h"
#include "sampler.h"

enum { MAX_TYPES = 4096 };

static uint16_t running[TSCOPE__RUNNING_MAX];
static uint32_t counts[MAX_TYPES];
static char *series[MAX_TYPES]; /* "concurrency.TYPE" of each type seen: built once */
static uint32_t nseen;          /* 1 + the highest type seen: the loops stop there */

void tscope__concurrency_reset(void)
{
    for (uint32_t t = 0; t < nseen; t++) {
        free(series[t]);
        series[t] = NULL;
    }
    nseen = 0;
}

/* Per sample this touches the busy threads' types and the types seen, no
 * more: at 200 Hz the program's threads evict it between samples. */
void tscope__concurrency_sample(tscope_sample_emit_fn emit, void *ctx)
{
    uint32_t busy = tscope__query_running(running, TSCOPE__RUNNING_MAX);
    emit(ctx, "concurrency.threads_busy", busy);
    for (uint32_t t = 0; t < nseen; t++)
        counts[t] = 0;
    for (uint32_t i = 0; i < busy && i < TSCOPE__RUNNING_MAX; i++) {
        uint32_t t = running[i];
        if (t >= MAX_TYPES)
            continue;
        if (!series[t]) {
            char name[200], full[256];
            if (t == 0 || tscope_type_name(t, name, sizeof name))
                snprintf(name, sizeof name, "untyped");
            snprintf(full, sizeof full, "concurrency.%s", name);
            if (!(series[t] = strdup(full)))
                continue;
            for (uint32_t k = nseen; k <= t; k++)
                counts[k] = 0;
            nseen = t + 1 > nseen ? t + 1 : nseen;
        }
        counts[t]++;
    }
    for (uint32_t t = 0; t < nseen; t++)
        if (series[t])
            emit(ctx, series[t], counts[t]);
}

/* samples.csv's header: the 1-based column of each series. */
int tscope__concurrency_write_gp(const char *const *names, unsigned n, FILE *f)
{
    unsigned conc[256], nconc = 0, cap = 0, power = 0;
    for (unsigned i = 0; i < n; i++) {
        if (strncmp(names[i], "concurrency.", 12) == 0 &&
            strcmp(names[i], "concurrency.threads_busy") && nconc < 256)
            conc[nconc++] = i + 2; /* column 1 is time_s */
        else if (strcmp(names[i], "rt.active_threads") == 0)
            cap = i + 2;
        else if (!power && (strcmp(names[i], "power.package_w") == 0 ||
                            strcmp(names[i], "power.estimate_w") == 0))
            power = i + 2;
    }
    fprintf(f,
            "# concurrency.gp - written by taskscope: gnuplot concurrency.gp -> concurrency.png\n"
            "set datafile separator ','\n"
            "set terminal pngcairo size 1200,600 noenhanced\n"
            "set output 'concurrency.png'\n"
            "set title 'threads running each task type'\n"
            "set xlabel 'time (s)'\nset ylabel 'threads'\nset key outside right\n"
            "set style fill solid 0.8 noborder\n"
            "set yrange [0:*]\n"
            "v(c) = valid(c) ? column(c) : 0\n");
    if (cap || power) {
        fprintf(f, "set y2tics\nset ytics nomirror\nset y2range [0:*]\nset y2label '%s'\n",
                cap && power ? "thread cap / power (W)"
                : cap        ? "thread cap"
                             : "power (W)");
    }
    fprintf(f, "plot ");
    int first = 1;
    /* stacked bars: the sum of the first k+1 series, tallest first so the
     * shorter ones are drawn over it; a bar spans from one sample to the
     * next (gnuplot widens boxes until they touch) */
    for (unsigned k = nconc; k-- > 0;) {
        fprintf(f, "%s'samples.csv' using 1:(", first ? "" : ", \\\n     ");
        for (unsigned j = 0; j <= k; j++)
            fprintf(f, "%sv(%u)", j ? "+" : "", conc[j]);
        fprintf(f, ") with boxes title columnhead(%u)", conc[k]);
        first = 0;
    }
    if (cap)
        fprintf(f, "%s'samples.csv' using 1:%u axes x1y2 with steps lw 2 title 'thread cap'",
                first ? "" : ", \\\n     ", cap),
            first = 0;
    if (power)
        fprintf(f, "%s'samples.csv' using 1:%u axes x1y2 with lines lw 2 title columnhead(%u)",
                first ? "" : ", \\\n     ", power, power),
            first = 0;
    if (first)
        fprintf(f, "'samples.csv' using 1:(0) with lines title 'no task ran while sampling'");
    fprintf(f, "\n");
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* heatmap.gp: ranks x samples for idle rate, throughput and power, one row
 * per rank (one rank until MPI support: a strip per metric). */
int tscope__heatmap_write_gp(const char *const *names, unsigned n, int rank, FILE *f)
{
    static const char *const want[][2] = {{"rt.idle_rate", "idle rate"},
                                          {"rt.throughput_tasks_per_s", "throughput (tasks/s)"},
                                          {"power.package_w", "power (W)"},
                                          {"power.estimate_w", "power, estimated (W)"}};
    unsigned cols[4], labels[4], m = 0;
    for (unsigned k = 0; k < 4; k++)
        for (unsigned i = 0; i < n; i++)
            if (strcmp(names[i], want[k][0]) == 0 && !(k == 3 && m && labels[m - 1] == 2)) {
                cols[m] = i + 2;
                labels[m++] = k;
            }
    fprintf(f,
            "# heatmap.gp - written by taskscope: gnuplot heatmap.gp -> heatmap.png\n"
            "set datafile separator ','\n"
            "set terminal pngcairo size 1200,%u noenhanced\n"
            "set output 'heatmap.png'\n"
            "set palette rgbformulae 22,13,-31\n"
            "set xlabel 'time (s)'\nset ylabel 'rank'\nset yrange [%g:%g]\n"
            "set ytics 1\nunset key\n",
            m ? 250 * m : 250, rank - 0.5, rank + 0.5);
    if (m > 1)
        fprintf(f, "set multiplot layout %u,1\n", m);
    for (unsigned k = 0; k < m; k++)
        fprintf(f,
                "set title '%s'\n"
                "plot 'samples.csv' using 1:(%d):(valid(%u) ? column(%u) : NaN) "
                "with points pt 5 ps 4 palette\n",
                want[labels[k]][1], rank, cols[k], cols[k]);
    if (!m)
        fprintf(f,
                "set title 'no idle rate, throughput or power was sampled'\n"
                "plot 'samples.csv' using 1:(%d) with points\n",
                rank);
    if (m > 1)
        fprintf(f, "unset multiplot\n");
    return ferror(f) ? TSCOPE_EIO : 0;
}
