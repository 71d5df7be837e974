/* csv.c - types.csv and counters.csv (one header row, one row per item;
 * a leading '#' comment line only when events were dropped). */
#include "export.h"
#include "output.h"
#include "sampler/sampler.h"

static void stats_cols(FILE *f, const tscope_stats_t *s)
{
    fprintf(f, ",%.17g,%.17g,%.17g,%.17g,%.17g", s->sum, s->min, s->max, s->mean, s->stddev);
}

int tscope__export_csv_types(const struct tscope__profile *p, FILE *f)
{
    tscope__fmt_loss_note(p, f, "# ");
    fputs("type_id,type,created,calls,yields,cancelled,unfinished,threads,self_sum_ns,self_min_ns,"
          "self_max_ns,self_mean_ns,self_stddev_ns,running_sum_ns,running_min_ns,running_max_ns,"
          "running_mean_ns,running_stddev_ns,running_total_ns,elapsed_sum_ns,elapsed_min_ns,"
          "elapsed_max_ns,elapsed_mean_ns,elapsed_stddev_ns,elapsed_total_ns,self_total_ns",
          f);
    if (p->cpu_time) /* --cpu-time: its columns last, the others where they were */
        fputs(",cpu_sum_ns,cpu_min_ns,cpu_max_ns,cpu_mean_ns,cpu_stddev_ns", f);
    fputc('\n', f);
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        fprintf(f, "%u,", t->id);
        tscope__fmt_csv_field(f, t->name);
        fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%u", (unsigned long long)t->created,
                (unsigned long long)t->calls, (unsigned long long)t->yields,
                (unsigned long long)t->cancelled, (unsigned long long)t->unfinished, t->threads);
        stats_cols(f, &t->self);
        stats_cols(f, &t->running);
        fprintf(f, ",%.17g", t->running_total);
        stats_cols(f, &t->elapsed);
        fprintf(f, ",%.17g,%.17g", t->elapsed_total, t->self_total);
        if (p->cpu_time)
            stats_cols(f, &t->cpu);
        fputc('\n', f);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

int tscope__export_csv_counters(const struct tscope__profile *p, FILE *f)
{
    tscope__fmt_loss_note(p, f, "# ");
    fputs("counter_id,counter,count,min,max,mean,stddev,last\n", f);
    for (uint32_t i = 0; i < p->ncounters; i++) {
        const struct tscope__pcounter *c = &p->counters[i];
        fprintf(f, "%u,", c->id);
        tscope__fmt_csv_field(f, c->name);
        fprintf(f, ",%llu,%.17g,%.17g,%.17g,%.17g,%.17g\n", (unsigned long long)c->stats.count,
                c->stats.min, c->stats.max, c->stats.mean, c->stats.stddev, c->stats.last);
    }
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* The run's tables and its course over time (timeline.c, the sampler's
 * samples.csv), the pictures' data beside their gnuplot scripts. */
const struct tscope__output_format tscope__output_csv = {
    "per-type and per-counter tables; the run over time: concurrency, threads, durations, "
    "samples (data and gnuplot scripts)",
    TSCOPE__OUTPUT_DRAWN,
    {{"types.csv", tscope__export_csv_types, 0, NULL},
     {"counters.csv", tscope__export_csv_counters, 0, NULL},
     {"samples.csv", tscope__sampler_write_csv, 1, NULL},
     {"concurrency.csv", tscope__export_concurrency_csv, 0, NULL},
     {"concurrency.gp", tscope__export_concurrency_gp, 0, "concurrency.csv"},
     {"threads.csv", tscope__export_threads_csv, 0, NULL},
     {"heatmap.gp", tscope__export_heatmap_gp, 0, "threads.csv"},
     {"durations.csv", tscope__export_durations_csv, 0, NULL},
     {"scatter.gp", tscope__export_scatter_gp, 0, "durations.csv"}}};
