/* picture.c - the trace as a picture taskscope draws itself: a timeline of
 * the threads (one band each), every stay of a task a box coloured by its
 * type, nested stays in lanes below their parent, as a trace viewer shows
 * it.  Writes timeline.csv (one line per stay) and timeline.gp; gnuplot
 * renders timeline.svg (taskscope convert does when gnuplot is there).
 *
 * Stays shorter than 1/20000 of the run would be thinner than a pixel:
 * they are counted and left out, so the data stays small for any trace.
 * The data and the script are whole or absent, both (core/outfile.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "core/outfile.h"
#include "export/palette.h"
#include "export/pictures.h"

#define LANES 4 /* nesting levels drawn; deeper ones share the last */

struct open_stay {
    uint64_t begin;
    uint64_t nested; /* ns of the stays nested in it: not its self time */
};

struct thread_state {
    struct open_stay *s;
    uint32_t n, cap;
    int drawn; /* a stay of it is in the picture */
};

struct pic {
    FILE *f;
    struct tscope__outfile *file; /* f's, for the reason of a failed write */
    const struct tscope__trace *t;
    struct thread_state *th;
    uint32_t nth;
    uint64_t min_ns; /* shorter stays are not drawn */
    uint64_t drawn, hidden;
    uint32_t deepest;
    uint8_t *type_used; /* by type id */
    double *self;       /* by type id: the types' self time, for their colours */
    uint32_t ntype_used;
    int oom;
};

static struct thread_state *state(struct pic *p, uint32_t thread)
{
    if (thread >= p->nth) {
        uint32_t n = p->nth ? p->nth * 2 : 16;
        while (n <= thread)
            n *= 2;
        struct thread_state *g = realloc(p->th, n * sizeof *g);
        if (!g) {
            p->oom = 1;
            return NULL;
        }
        memset(g + p->nth, 0, (n - p->nth) * sizeof *g);
        p->th = g;
        p->nth = n;
    }
    return &p->th[thread];
}

static int slice_begin(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    (void)type;
    struct pic *p = ctx;
    struct thread_state *s = state(p, thread);
    if (!s)
        return -1;
    if (s->n == s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        struct open_stay *g = realloc(s->s, cap * sizeof *g);
        if (!g) {
            p->oom = 1;
            return -1;
        }
        s->s = g;
        s->cap = cap;
    }
    s->s[s->n++] = (struct open_stay){ns, 0};
    return 0;
}

static int slice_end(void *ctx, uint32_t thread, uint64_t ns, uint64_t task, uint32_t type)
{
    (void)task;
    struct pic *p = ctx;
    struct thread_state *s = state(p, thread);
    if (!s || !s->n)
        return s ? 0 : -1;
    struct open_stay stay = s->s[--s->n];
    uint32_t depth = s->n;
    if (depth)
        s->s[depth - 1].nested += ns - stay.begin;
    if (type >= p->ntype_used) {
        uint32_t n = p->ntype_used ? p->ntype_used * 2 : 64;
        while (n <= type)
            n *= 2;
        uint8_t *g = realloc(p->type_used, n);
        if (g)
            p->type_used = g;
        double *h = g ? realloc(p->self, n * sizeof *h) : NULL;
        if (!h) {
            p->oom = 1;
            return -1;
        }
        p->self = h;
        memset(g + p->ntype_used, 0, n - p->ntype_used);
        for (uint32_t k = p->ntype_used; k < n; k++)
            h[k] = -1;
        p->ntype_used = n;
    }
    /* the self time of every stay, drawn or not: the colours' ranks */
    uint64_t span = ns - stay.begin;
    p->self[type] = (p->self[type] < 0 ? 0 : p->self[type]) +
                    (double)(span > stay.nested ? span - stay.nested : 0);
    uint64_t begin = stay.begin;
    if (ns - begin < p->min_ns) {
        p->hidden++;
        return 0;
    }
    p->type_used[type] = 1;
    s->drawn = 1;
    if (depth > p->deepest)
        p->deepest = depth;
    p->drawn++;
    fprintf(p->f, "%u,%u,%.9g,%.9g,%u\n", thread, depth < LANES ? depth : LANES - 1,
            (double)begin * 1e-6, (double)ns * 1e-6, type);
    if (!ferror(p->f))
        return 0;
    tscope__outfile_fail(p->file);
    return -1;
}

static int flow(void *ctx, int kind, uint32_t hazard, uint32_t from_thread, uint64_t from_ns,
                uint32_t to_thread, uint64_t to_ns, uint64_t from_task, uint64_t to_task)
{
    (void)ctx, (void)kind, (void)hazard, (void)from_thread, (void)from_ns;
    (void)to_thread, (void)to_ns, (void)from_task, (void)to_task;
    return 0;
}

static int counter(void *ctx, uint32_t thread, uint64_t ns, uint32_t id, double value)
{
    (void)ctx, (void)thread, (void)ns, (void)id, (void)value;
    return 0;
}

static int instant(void *ctx, uint32_t thread, uint64_t ns, uint32_t event, uint64_t payload)
{
    (void)ctx, (void)thread, (void)ns, (void)event, (void)payload;
    return 0;
}

/* A name for a gnuplot string in single quotes. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s != '\'' && *s != '\n')
            fputc(*s, f);
    fputc('\'', f);
}

/* The name of a type of the trace. */
static const char *type_name(const struct pic *p, uint32_t type, char *buf, size_t len)
{
    const char *name = type ? tscope__trace_name(p->t, TSCOPE__TABLE_TYPES, type) : NULL;
    if (!name) {
        snprintf(buf, len, type ? "type %u" : "(untyped)", type);
        name = buf;
    }
    return name;
}

static void write_script(const struct pic *p, FILE *g, const char *data,
                         const struct tscope__replay_stats *st)
{
    const struct tscope__trace_info *i = tscope__trace_info(p->t);
    /* one band per thread that ran a task drawn, in slot order */
    uint32_t threads = 0;
    for (uint32_t th = 0; th < p->nth; th++)
        threads += p->th[th].drawn;
    uint32_t lanes = p->deepest + 1 < LANES ? p->deepest + 1 : LANES;
    /* the colours of the run's other pictures (export/palette.h), ranked by
     * the self time of the stays; a trace carries no wait marks, so a
     * waiting type has the work colour of its rank here */
    struct tscope__colour *col = malloc((p->ntype_used ? p->ntype_used : 1) * sizeof *col);
    if (col && tscope__palette_assign(p->self, NULL, p->ntype_used, col)) {
        free(col);
        col = NULL;
    }
    char buf[64];
    unsigned own = 0, other = 0;
    size_t longest = 0;
    for (uint32_t type = 0; col && type < p->ntype_used; type++) {
        if (!p->type_used[type])
            continue;
        if (col[type].group != TSCOPE__COLOUR_OWN) {
            other++;
            continue;
        }
        own++;
        size_t len = strlen(type_name(p, type, buf, sizeof buf));
        longest = len > longest ? len : longest;
    }
    char other_title[64];
    snprintf(other_title, sizeof other_title, "other (%u types)", other);
    if (other && strlen(other_title) > longest)
        longest = strlen(other_title);
    fprintf(g,
            "# timeline.gp - written by taskscope convert: gnuplot timeline.gp -> timeline.%s\n"
            "# every stay of a task on a thread, coloured by type; nested stays in lanes\n"
            "# below their parent (%u lanes drawn); %llu stays shorter than %.3g ms left out;\n"
            "# colours: docs/output-formats.md, \"Colours\"\n",
            tscope__pictures_ext(), lanes, (unsigned long long)p->hidden, (double)p->min_ns * 1e-6);
    unsigned height = tscope__palette_key(g, own + (other != 0), longest, 1400,
                                          200 + 60 * (threads ? threads : 1));
    fputs("set datafile separator ','\n", g);
    tscope__pictures_terminal(g, "timeline", 1400, height);
    fprintf(g,
            "set title 'rank %u: %llu task stays on %u threads (%s)'\n"
            "set xlabel 'time (ms)'\nset yrange [%g:-0.6]\n"
            "set style fill solid 0.9 noborder\nset grid x\n",
            i->rank, (unsigned long long)st->slices, threads,
            tscope__trace_status_text(i->status, i->cut), threads ? threads - 0.4 : 0.6);
    /* row[slot + 1]: the band of a thread slot */
    fprintf(g, "array row[%u]\n", p->nth ? p->nth : 1);
    fprintf(g, "set ytics (");
    uint32_t r = 0;
    for (uint32_t th = 0; th < p->nth; th++) {
        if (!p->th[th].drawn)
            continue;
        const char *name = tscope__trace_name(p->t, TSCOPE__TABLE_THREADS, th);
        char label[300];
        snprintf(label, sizeof label, "%s", name ? name : "thread");
        fprintf(g, "%s", r ? ", " : "");
        put_quoted(g, label);
        fprintf(g, " %u", r++);
    }
    fprintf(g, ")\n");
    r = 0;
    for (uint32_t th = 0; th < p->nth; th++)
        if (p->th[th].drawn)
            fprintf(g, "row[%u] = %u\n", th + 1, r++);
    /* lane l of thread t: a band of height 0.8/lanes from t-0.4 down */
    double h = 0.8 / lanes;
    fprintf(g, "lane(t,d) = row[t + 1] - 0.4 + %g * (d + 0.5)\n", h);
    fprintf(g, "plot ");
    int first = 1;
    /* the own colours by rank, then the rest in one plot as "other" */
    for (uint32_t rank = 0; col && rank < TSCOPE__PALETTE_OWN; rank++)
        for (uint32_t type = 0; type < p->ntype_used; type++) {
            if (!p->type_used[type] || col[type].rank != rank ||
                col[type].group != TSCOPE__COLOUR_OWN)
                continue;
            fprintf(g,
                    "%s'%s' using (($3+$4)/2):($5 == %u ? lane($1,$2) : NaN):(($4-$3)/2):(%g) "
                    "with boxxyerror lc rgb '%s' title ",
                    first ? "" : ", \\\n     ", data, type, h * 0.45, col[type].rgb);
            tscope__palette_put_title(g, type_name(p, type, buf, sizeof buf));
            first = 0;
        }
    if (other) {
        fprintf(g, "%s'%s' using (($3+$4)/2):((0", first ? "" : ", \\\n     ", data);
        for (uint32_t type = 0; type < p->ntype_used; type++)
            if (p->type_used[type] && col[type].group != TSCOPE__COLOUR_OWN)
                fprintf(g, " || $5 == %u", type);
        fprintf(g,
                ") ? lane($1,$2) : NaN):(($4-$3)/2):(%g) with boxxyerror lc rgb '%s' "
                "title '%s'",
                h * 0.45, TSCOPE__PALETTE_OTHER, other_title);
        first = 0;
    }
    if (first)
        fprintf(g, "'%s' using 1:(0) with points title '%s'", data,
                col ? "no task stays" : "out of memory for the colours");
    fprintf(g, "\n");
    free(col);
}

int tscope__trace_to_timeline(struct tscope__trace *t, const char *out,
                              struct tscope__replay_stats *st, char *err, size_t errlen)
{
    /* out: the script; the data and the picture next to it */
    char data[1100], dir[1024] = ".";
    const char *slash = strrchr(out, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - out), out);
    snprintf(data, sizeof data, "%s/timeline.csv", dir);
    struct pic p = {.t = t};
    const struct tscope__trace_info *i = tscope__trace_info(t);
    double span = (double)(i->last_ts - i->first_ts) * i->ns_per_tick;
    p.min_ns = span > 0 ? (uint64_t)(span / 20000) : 0;
    struct tscope__outfile csv, gp;
    if (tscope__outfile_open(&csv, data, err, errlen))
        return -1;
    p.f = csv.f;
    p.file = &csv;
    struct tscope__trace_sink sink = {&p,      slice_begin, slice_end, flow,
                                      counter, instant,     NULL,      NULL};
    int rc = tscope__trace_replay(t, &sink, st, err, errlen);
    if (p.oom && rc == 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    /* a failed write: the file and the reason, not the replay's "the
     * output failed" */
    if (tscope__outfile_close(&csv, rc == 0, err, errlen))
        rc = -1;
    if (rc == 0 && tscope__outfile_open(&gp, out, err, errlen))
        rc = -1;
    if (rc == 0) {
        write_script(&p, gp.f, "timeline.csv", st);
        if (ferror(gp.f))
            tscope__outfile_fail(&gp);
        rc = tscope__outfile_close(&gp, 1, err, errlen);
        /* both whole: both in place, or neither */
        if (rc == 0 && tscope__outfile_commit(&csv, err, errlen)) {
            tscope__outfile_discard(&gp);
            rc = -1;
        } else if (rc == 0 && tscope__outfile_commit(&gp, err, errlen)) {
            remove(data);
            rc = -1;
        }
    }
    if (rc)
        tscope__outfile_discard(&csv);
    for (uint32_t k = 0; k < p.nth; k++)
        free(p.th[k].s);
    free(p.th);
    free(p.type_used);
    free(p.self);
    return rc;
}

/* The descriptor: a picture has no compressed form, and a job's is drawn
 * rank by rank. */
static int write_trace(struct tscope__trace *t, const char *out, int gzip,
                       struct tscope__replay_stats *st, char *err, size_t errlen)
{
    (void)gzip;
    return tscope__trace_to_timeline(t, out, st, err, errlen);
}

const struct tscope__trace_format tscope__trace_timeline = {
    "a picture of the threads over time",
    "timeline.gp",
    NULL,
    "timeline.csv, timeline.svg (or .png) when gnuplot is installed",
    NULL,
    TSCOPE__TRACE_FORMAT_DRAWN,
    write_trace,
    NULL};
