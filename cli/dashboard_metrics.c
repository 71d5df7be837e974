/* dashboard_metrics.c - GET /metrics: what the processes last said, in the
 * Prometheus text exposition format 0.0.4.
 *
 * Families (each one "# HELP" and "# TYPE" line, then all its samples, so
 * the samples of one family are never split):
 *   taskscope_series{process,rank,program,series}    gauge, the latest
 *       snapshot's "series" values
 *   taskscope_type_calls_total{process,rank,type}    counter, "types"
 *   taskscope_type_self_seconds_total{process,rank,type} counter
 *   taskscope_process_connected{process,rank,program,pid,host} gauge 0/1
 *   taskscope_process_drops_total{process,rank,program} counter, the
 *       snapshots the process dropped (its latest "drops")
 *   taskscope_dashboard_history_bytes, _budget_bytes   gauges: what the
 *       kept histories hold, and --memory
 * One pass over the store (locked once) writes each family into its own
 * buffer; the buffers are joined after.  Label values are escaped as the
 * format says (backslash, double quote, line feed); a value that is not a
 * number (null, text) is left out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard.h"

enum { SERIES, CALLS, SELF, CONNECTED, DROPS, FAMILIES };

static const struct {
    const char *name, *type, *help;
} family[FAMILIES] = {
    {"taskscope_series", "gauge", "A sampler series' latest value in a process's last snapshot."},
    {"taskscope_type_calls_total", "counter", "Calls of a task type in a process."},
    {"taskscope_type_self_seconds_total", "counter",
     "Self time of a task type in a process, seconds."},
    {"taskscope_process_connected", "gauge", "1 while the process is connected to the dashboard."},
    {"taskscope_process_drops_total", "counter",
     "Snapshots the process dropped because its queue was full."},
};

/* A double as the shortest text that reads back equal ("NaN", "+Inf",
 * "-Inf" for those: Prometheus' words). */
static void put_double(struct tscope__text *b, double v)
{
    if (isnan(v)) {
        tscope__text_str(b, "NaN");
        return;
    }
    if (isinf(v)) {
        tscope__text_str(b, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char text[40];
    snprintf(text, sizeof text, "%.15g", v);
    if (strtod(text, NULL) != v)
        snprintf(text, sizeof text, "%.17g", v);
    tscope__text_str(b, text);
}

static void label_value(struct tscope__text *b, const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == '\\')
            tscope__text_add(b, "\\\\", 2);
        else if (*p == '"')
            tscope__text_add(b, "\\\"", 2);
        else if (*p == '\n')
            tscope__text_add(b, "\\n", 2);
        else
            tscope__text_add(b, p, 1);
    }
}

/* name{process="ID",rank="R"[,KEY="VALUE"]...} - the labels every family
 * starts with; the caller adds its own and closes with "} value\n". */
static void sample_start(struct tscope__text *b, int fam, const struct tscope__dash_proc_view *v)
{
    tscope__text_printf(b, "%s{process=\"%ld\",rank=\"%ld\"", family[fam].name, v->id, v->rank);
}

static void label(struct tscope__text *b, const char *key, const char *value)
{
    tscope__text_printf(b, ",%s=\"", key);
    label_value(b, value);
    tscope__text_add(b, "\"", 1);
}

static void sample_end(struct tscope__text *b, double value)
{
    tscope__text_add(b, "} ", 2);
    put_double(b, value);
    tscope__text_add(b, "\n", 1);
}

static void one_process(void *ctx, const struct tscope__dash_proc_view *v)
{
    struct tscope__text *f = ctx;
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", v->pid);

    sample_start(&f[CONNECTED], CONNECTED, v);
    label(&f[CONNECTED], "program", v->program);
    label(&f[CONNECTED], "pid", pid);
    label(&f[CONNECTED], "host", v->host);
    sample_end(&f[CONNECTED], v->connected);

    sample_start(&f[DROPS], DROPS, v);
    label(&f[DROPS], "program", v->program);
    sample_end(&f[DROPS], v->drops);

    if (!v->latest)
        return;
    const json_t *series = json_object_get(v->latest, "series");
    const char *name;
    const json_t *x;
    json_object_foreach((json_t *)series, name, x)
    {
        if (!json_is_number(x))
            continue;
        sample_start(&f[SERIES], SERIES, v);
        label(&f[SERIES], "program", v->program);
        label(&f[SERIES], "series", name);
        sample_end(&f[SERIES], json_number_value(x));
    }
    const json_t *types = json_object_get(v->latest, "types");
    size_t i;
    const json_t *t;
    json_array_foreach(types, i, t)
    {
        const char *type = json_string_value(json_object_get(t, "name"));
        const json_t *calls = json_object_get(t, "calls"), *self = json_object_get(t, "self_s");
        if (!type)
            continue;
        if (json_is_number(calls)) {
            sample_start(&f[CALLS], CALLS, v);
            label(&f[CALLS], "type", type);
            sample_end(&f[CALLS], json_number_value(calls));
        }
        if (json_is_number(self)) {
            sample_start(&f[SELF], SELF, v);
            label(&f[SELF], "type", type);
            sample_end(&f[SELF], json_number_value(self));
        }
    }
}

void tscope__dash_metrics(struct tscope__dash_store *s, struct tscope__text *b)
{
    struct tscope__text f[FAMILIES] = {{0}};
    tscope__dash_store_each(s, one_process, f);
    for (int i = 0; i < FAMILIES; i++) {
        tscope__text_printf(b, "# HELP %s %s\n# TYPE %s %s\n", family[i].name, family[i].help,
                            family[i].name, family[i].type);
        if (f[i].failed)
            b->failed = 1;
        else if (f[i].len)
            tscope__text_add(b, f[i].p, f[i].len);
        tscope__text_free(&f[i]);
    }
    size_t held, budget;
    tscope__dash_store_bytes(s, &held, &budget);
    tscope__text_printf(
        b,
        "# HELP taskscope_dashboard_history_bytes Bytes the kept snapshots of all processes hold.\n"
        "# TYPE taskscope_dashboard_history_bytes gauge\n"
        "taskscope_dashboard_history_bytes %zu\n"
        "# HELP taskscope_dashboard_history_budget_bytes What they may hold (--memory).\n"
        "# TYPE taskscope_dashboard_history_budget_bytes gauge\n"
        "taskscope_dashboard_history_budget_bytes %zu\n",
        held, budget);
}
