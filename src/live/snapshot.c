/* snapshot.c - what the live stream says (docs/dashboard.md): HELLO, who
 * the process is, and each snapshot of what taskscope knows - the sampler's
 * latest series, the task types (the top ones by self time), the
 * type-level graph, counters, parameters and the debugger's state - read
 * through the same introspection API a policy reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/names.h"
#include "export/palette.h"
#include "debug.h"
#include "live_int.h"
#include "policy/params.h"
#include "profile/query.h"
#include "sampler/sampler.h"
#include "taskscope/policy.h"
#include "taskscope/taskscope.h"

#define TOP_TYPES 32

void tscope__live_hello(struct tscope__text *t, time_t started, uint32_t period_ms)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char prog[256] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(prog, sizeof prog, f))
            prog[strcspn(prog, "\n")] = 0;
        fclose(f);
    }
    tscope__live_put(t, "{\"pid\":%ld,\"rank\":%d,\"nranks\":%d,\"host\":", (long)getpid(),
                     tscope__g.rank, tscope__g.nranks);
    tscope__text_json_str(t, host);
    tscope__live_put(t, ",\"program\":");
    tscope__text_json_str(t, prog);
    tscope__live_put(t, ",\"started\":%lld,\"period_ms\":%u}", (long long)started, period_ms);
}

struct series_ctx {
    struct tscope__text *t;
    int n;
};

static void one_series(void *ctx, const char *name, double value)
{
    struct series_ctx *c = ctx;
    tscope__live_put(c->t, c->n++ ? "," : "");
    tscope__text_json_str(c->t, name);
    tscope__live_put(c->t, ":");
    tscope__live_put_num(c->t, value);
}

static int by_self(const void *a, const void *b)
{
    const tscope_type_stats_t *x = a, *y = b;
    return (x->self_ns.sum < y->self_ns.sum) - (x->self_ns.sum > y->self_ns.sum);
}

/* The colours of the queried types (st, got of them) by the pictures' rule
 * (export/palette.h: ranked by self time, the largest 12 with their own
 * colour, waits in greys), so that a type has on the dashboard the colour
 * the pictures of the run give it when its ranks stay as they are now.
 * NULL on memory exhaustion; *wait_of[i] says whether st[i] waits. */
static struct tscope__colour *colours(const tscope_type_stats_t *st, size_t got,
                                      unsigned char **wait_of)
{
    uint32_t n = 1;
    for (size_t i = 0; i < got; i++)
        if (st[i].type + 1 > n)
            n = st[i].type + 1;
    double *self = malloc(n * sizeof *self);
    unsigned char *wait = calloc(n, 1);
    struct tscope__colour *out = malloc(n * sizeof *out);
    if (!self || !wait || !out) {
        free(self), free(wait), free(out);
        return NULL;
    }
    for (uint32_t id = 0; id < n; id++)
        self[id] = -1;
    for (size_t i = 0; i < got; i++) {
        self[st[i].type] = st[i].self_ns.sum;
        wait[st[i].type] =
            (tscope__names_attrs(&tscope__types, st[i].type) & TSCOPE_TYPE_WAIT) != 0;
    }
    int rc = tscope__palette_assign(self, wait, n, out);
    free(self);
    if (rc) {
        free(wait), free(out);
        return NULL;
    }
    *wait_of = wait;
    return out;
}

static void put_types(struct tscope__text *t)
{
    size_t n = 0;
    tscope__live_put(t, ",\"types\":[");
    if (tscope_query_types(NULL, 0, &n) == 0 && n > 0) {
        tscope_type_stats_t *st = calloc(n, sizeof *st);
        size_t got = 0;
        if (st && tscope_query_types(st, n, &got) == 0) {
            got = got < n ? got : n;
            qsort(st, got, sizeof *st, by_self);
            unsigned char *wait = NULL;
            struct tscope__colour *col = colours(st, got, &wait);
            /* types registered and never used (an adapter registers every
             * MPI call's type up front) are left out, unless running now */
            uint16_t run[64];
            uint32_t nrun = tscope__query_running(run, 64);
            nrun = nrun < 64 ? nrun : 64;
            for (size_t i = 0, k = 0; i < got && k < TOP_TYPES; i++) {
                int used = st[i].created || st[i].calls || st[i].cancelled;
                for (uint32_t r = 0; r < nrun && !used; r++)
                    used = run[r] == st[i].type;
                if (!used)
                    continue;
                char name[256];
                if (tscope_type_name(st[i].type, name, sizeof name))
                    snprintf(name, sizeof name, "type %u", st[i].type);
                tscope__live_put(t, k++ ? ",{\"name\":" : "{\"name\":");
                tscope__text_json_str(t, name);
                tscope__live_put(t, ",\"calls\":%llu,\"created\":%llu,\"self_s\":",
                                 (unsigned long long)st[i].calls,
                                 (unsigned long long)st[i].created);
                tscope__live_put_num(t, st[i].self_ns.sum * 1e-9);
                tscope__live_put(t, ",\"total_s\":");
                tscope__live_put_num(t, st[i].running_ns.sum * 1e-9);
                if (col && col[st[i].type].rgb)
                    tscope__live_put(t, ",\"color\":\"%s\"", col[st[i].type].rgb);
                if (wait && wait[st[i].type])
                    tscope__live_put(t, ",\"wait\":true");
                tscope__live_put(t, "}");
            }
            free(col);
            free(wait);
        }
        free(st);
    }
    tscope__live_put(t, "]");
}

/* The type-level task graph: [parent, child, tasks] by name ("<root>" for
 * tasks without a parent), at most MAX_EDGES; self times are in "types". */
#define MAX_EDGES 256
static void put_graph(struct tscope__text *t)
{
    static uint32_t from[MAX_EDGES], to[MAX_EDGES];
    static uint64_t count[MAX_EDGES];
    uint32_t n = tscope__query_type_edges(from, to, count, MAX_EDGES);
    n = n < MAX_EDGES ? n : MAX_EDGES;
    tscope__live_put(t, ",\"graph\":[");
    for (uint32_t i = 0; i < n; i++) {
        char a[256] = "<root>", b[256];
        if (from[i] != UINT32_MAX && tscope_type_name(from[i], a, sizeof a))
            snprintf(a, sizeof a, "%s", from[i] ? "type ?" : "(untyped)");
        if (tscope_type_name(to[i], b, sizeof b))
            snprintf(b, sizeof b, "%s", to[i] ? "type ?" : "(untyped)");
        tscope__live_put(t, i ? ",[" : "[");
        tscope__text_json_str(t, a);
        tscope__live_put(t, ",");
        tscope__text_json_str(t, b);
        tscope__live_put(t, ",%llu]", (unsigned long long)count[i]);
    }
    tscope__live_put(t, "]");
}

static void put_counters(struct tscope__text *t)
{
    tscope__live_put(t, ",\"counters\":{");
    int n = 0;
    for (tscope_counter_t c = 1; c < 65535; c++) {
        char name[256];
        if (tscope_counter_name(c, name, sizeof name))
            break;
        tscope_counter_stats_t st;
        if (tscope_query_counter(c, &st) || st.count == 0)
            continue;
        tscope__live_put(t, n++ ? "," : "");
        tscope__text_json_str(t, name);
        tscope__live_put(t, ":");
        tscope__live_put_num(t, st.last);
    }
    tscope__live_put(t, "}");
}

struct params_ctx {
    struct tscope__text *t;
    int n;
};

static void one_param(void *ctx, const tscope_param_desc_t *d, double v)
{
    struct params_ctx *c = ctx;
    struct tscope__text *t = c->t;
    tscope__live_put(t, c->n++ ? ",{\"name\":" : "{\"name\":");
    tscope__text_json_str(t, d->name);
    tscope__live_put(t, ",\"kind\":\"%s\",\"value\":",
                     d->kind == TSCOPE_PARAM_INT    ? "int"
                     : d->kind == TSCOPE_PARAM_REAL ? "real"
                                                    : "choice");
    tscope__live_put_num(t, v);
    if (d->kind == TSCOPE_PARAM_CHOICE) {
        tscope__live_put(t, ",\"choices\":[");
        for (unsigned k = 0; k < d->nchoices; k++) {
            tscope__live_put(t, k ? "," : "");
            tscope__text_json_str(t, d->choices[k]);
        }
        tscope__live_put(t, "]");
    } else {
        tscope__live_put(t, ",\"min\":");
        tscope__live_put_num(t, d->min);
        tscope__live_put(t, ",\"max\":");
        tscope__live_put_num(t, d->max);
    }
    tscope__live_put(t, "}");
}

/* Every parameter, through the registry's tscope__param_each: the program
 * may unregister one meanwhile (tscope_rt_finalize does), which then waits
 * until this is done with it. */
static void put_params(struct tscope__text *t)
{
    tscope__live_put(t, ",\"params\":[");
    struct params_ctx c = {t, 0};
    tscope__param_each(one_param, &c);
    tscope__live_put(t, "]");
}

void tscope__live_snapshot(struct tscope__text *t, uint64_t seq, uint64_t drops,
                           struct tscope__live_rate *rate)
{
    double secs = tscope__clock_ns(tscope__clock_now() - tscope__g.origin) * 1e-9;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    tscope__live_put(t, "{\"seq\":%llu,\"t\":", (unsigned long long)seq);
    tscope__live_put_num(t, secs);
    tscope__live_put(t, ",\"wall\":%lld.%03ld", (long long)wall.tv_sec, wall.tv_nsec / 1000000);
    struct timespec cpu; /* what streaming costs the process: this thread's CPU */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    tscope__live_put(t, ",\"live_cpu_s\":");
    tscope__live_put_num(t, (double)cpu.tv_sec + (double)cpu.tv_nsec * 1e-9);
    tscope__live_put(t, ",\"pid\":%ld,\"rank\":%d,\"nranks\":%d,\"drops\":%llu,\"series\":{",
                     (long)getpid(), tscope__g.rank, tscope__g.nranks, (unsigned long long)drops);
    struct series_ctx sc = {t, 0};
    tscope__sampler_each_latest(one_series, &sc);
    /* tasks ended per second since the last snapshot, whatever the runtime
     * (the bundled one also has rt.throughput_tasks_per_s; OpenMP has not) */
    tscope_totals_t tot;
    if (tscope_query_totals(&tot) == 0) {
        if (rate->ended_t > 0 && secs > rate->ended_t && tot.tasks_completed >= rate->ended)
            one_series(&sc, "tasks.ended_per_s",
                       (double)(tot.tasks_completed - rate->ended) / (secs - rate->ended_t));
        rate->ended = tot.tasks_completed;
        rate->ended_t = secs;
    }
    tscope__live_put(t, "}");
    put_types(t);
    put_graph(t);
    put_counters(t);
    put_params(t);
    struct tscope__live_debug_state d;
    tscope__live_debug_state(&d);
    tscope__live_put(
        t, ",\"debug\":{\"paused\":%s,\"held\":%u,\"break\":", d.paused ? "true" : "false", d.held);
    if (d.break_name[0])
        tscope__text_json_str(t, d.break_name);
    else
        tscope__live_put(t, "null");
    tscope__live_put(t, ",\"hit\":");
    if (d.hit[0])
        tscope__text_json_str(t, d.hit);
    else
        tscope__live_put(t, "null");
    tscope__live_put(t, "}}");
}
