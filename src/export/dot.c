/* dot.c - type-level task graph in Graphviz DOT.
 *
 * One box per task type that ran, filled from yellow (#FFFF00, little
 * self time) to red (#FF0000, the type with the most), white text on
 * the darker half; edges parent type -> child type labelled with counts.
 * Dependencies between types (p->deptypes) are dashed blue edges from the
 * type waited for to the type that waited, labelled with their counts by
 * hazard ("RAW 2, WAR 1", "remote 3"; "3 edges: RAW 3, WAW 2" when edges
 * carry several hazards), dotted without arrow when every edge of the pair
 * is a mutual exclusion (mutexinoutset: "mutex 2"); an end that has no box (type 0: not
 * known or on another rank, or a type that never ran) is the ellipse
 * "unknown", drawn only when an edge needs it.  The legend names the dashed
 * edges only when there are some: a profile without dependencies is drawn
 * as before them.
 *
 * Times come from a live store or from a profile.json read back, so any
 * double may arrive (negative, huge, infinite, NaN): each ratio is clamped
 * to [0, 1] before it becomes a colour (a double outside int's range
 * converted to int is undefined behaviour), and every string is written
 * whole and escaped (labels are sized for their contents, never cut).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "export.h"
#include "output.h"

static void node_name(FILE *f, uint32_t id)
{
    if (id == TSCOPE__PROFILE_ROOT)
        fputs("\"root\"", f);
    else
        fprintf(f, "\"t%u\"", id);
}

/* scale * part / whole, clamped to [0, scale]: 0 when whole is not
 * positive or the ratio is NaN or negative, scale for an infinite part of an
 * infinite whole (the type that has all of it). */
static double share_of(double part, double whole, double scale)
{
    if (!(whole > 0))
        return 0;
    if (isinf(part) && isinf(whole))
        return part > 0 ? scale : 0;
    double r = scale * part / whole;
    if (!(r >= 0)) /* NaN or negative */
        return 0;
    return r > scale ? scale : r;
}

/* The green channel of a fill for `share` in [0, 1]: 255 (yellow) at 0, 0
 * (red) at 1. */
static int fill_green(double share)
{
    return (int)(255.0 * (1.0 - share) + 0.5);
}

/* Writes the printf-formatted text as one escaped DOT string.  Returns 0 or
 * TSCOPE_ENOMEM (nothing written). */
__attribute__((format(printf, 2, 3))) static int dot_string(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TSCOPE_ENOMEM;
    fputc('"', f);
    tscope__fmt_dot_text(f, text);
    fputc('"', f);
    free(text);
    return 0;
}

/* The colour of the dependency edges: apart from the black parent edges. */
#define DEP_COLOR "#1f77b4"

/* t has a box: it ran (or was at least created). */
static int type_drawn(const struct tscope__ptype *t)
{
    return t->calls || t->created || t->cancelled || t->unfinished;
}

/* 1 if type id has a box in the graph (types are sorted by id). */
static int has_node(const struct tscope__profile *p, uint32_t id)
{
    uint32_t lo = 0, hi = p->ntypes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->types[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return id != 0 && lo < p->ntypes && p->types[lo].id == id && type_drawn(&p->types[lo]);
}

static void dep_node_name(const struct tscope__profile *p, FILE *f, uint32_t id)
{
    if (has_node(p, id))
        node_name(f, id);
    else
        fputs("\"unknown\"", f);
}

/* The label of a dependency edge: the non-zero counts by hazard, then
 * remote ones, then those of no known hazard; "N edges: " first when an
 * edge may carry several hazards (the counts then sum to more than N). */
static void dep_label(FILE *f, const struct tscope__pdeptype *d)
{
    const char *names[] = {"RAW", "WAR", "WAW", "mutex", "remote", "other"};
    uint64_t sum = 0, counts[6] = {d->raw, d->war, d->waw, d->mutex, d->remote, 0};
    for (int i = 0; i < 5; i++) {
        sum = sum > UINT64_MAX - counts[i] ? UINT64_MAX : sum + counts[i];
    }
    /* edges of no known hazard: only where every edge has one at most */
    counts[5] = d->count > sum ? d->count - sum : 0;
    fputc('"', f);
    if (sum > d->count)
        fprintf(f, "%llu edges: ", (unsigned long long)d->count);
    const char *sep = "";
    for (int i = 0; i < 6; i++)
        if (counts[i]) {
            fprintf(f, "%s%s %llu", sep, names[i], (unsigned long long)counts[i]);
            sep = ", ";
        }
    if (!*sep)
        fputc('0', f);
    fputc('"', f);
}

/* The dashed dependency edges, after the "unknown" node if one needs it;
 * a type pair whose every edge is a mutual exclusion (mutexinoutset) is a
 * dotted line without arrow: exclusion, no order. */
static void dep_edges(const struct tscope__profile *p, FILE *f)
{
    for (uint32_t i = 0; i < p->ndeptypes; i++)
        if (!has_node(p, p->deptypes[i].from) || !has_node(p, p->deptypes[i].to)) {
            fputs("  \"unknown\" [label=\"unknown\", shape=ellipse, fillcolor=\"#FFFFFF\"];\n", f);
            break;
        }
    for (uint32_t i = 0; i < p->ndeptypes; i++) {
        const struct tscope__pdeptype *d = &p->deptypes[i];
        int exclusive = d->mutex && d->mutex == d->count && !d->raw && !d->war && !d->waw;
        fputs("  ", f);
        dep_node_name(p, f, d->from);
        fputs(" -> ", f);
        dep_node_name(p, f, d->to);
        fputs(exclusive ? " [style=dotted, dir=none, color=\"" DEP_COLOR
                          "\", fontcolor=\"" DEP_COLOR "\", label="
                        : " [style=dashed, color=\"" DEP_COLOR "\", fontcolor=\"" DEP_COLOR
                          "\", label=",
              f);
        dep_label(f, d);
        fputs("];\n", f);
    }
}

int tscope__export_dot(const struct tscope__profile *p, FILE *f)
{
    double max = 0, total = tscope__profile_total_self(p);
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].self_total > max)
            max = p->types[i].self_total;
    const char *program = p->program ? p->program : "?";
    fputs("digraph taskscope {\n  graph [rankdir=TB, labelloc=t, label=", f);
    const char *legend = p->ndeptypes ? "\ndashed: dependencies" : "";
    int rc = p->totals.events_dropped
                 ? dot_string(f,
                              "task graph of %s (fill: self time, yellow = least, red = "
                              "most)%s\nWARNING: %llu events dropped, counts incomplete",
                              program, legend, (unsigned long long)p->totals.events_dropped)
                 : dot_string(f,
                              "task graph of %s (fill: self time, yellow = least, red = "
                              "most)%s",
                              program, legend);
    if (rc)
        return rc;
    fputs("];\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n", f);
    fputs("  \"root\" [label=\"<root>\", shape=ellipse, fillcolor=\"#FFFFFF\"];\n", f);
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        if (!type_drawn(t))
            continue;
        int green = fill_green(share_of(t->self_total, max, 1.0));
        fputs("  ", f);
        node_name(f, t->id);
        fputs(" [label=", f);
        if ((rc = dot_string(f, "%s\ncalls %llu\nself %.3f ms (%.1f%%)\nelapsed %.3f ms",
                             t->name ? t->name : "?", (unsigned long long)t->calls,
                             t->self_total / 1e6, share_of(t->self_total, total, 100.0),
                             t->elapsed_total / 1e6)) != 0)
            return rc;
        fprintf(f, ", fillcolor=\"#FF%02X00\", fontcolor=\"%s\"];\n", (unsigned)green,
                green < 128 ? "white" : "black");
    }
    for (uint32_t i = 0; i < p->nedges; i++) {
        const struct tscope__pedge *e = &p->edges[i];
        fputs("  ", f);
        node_name(f, e->from);
        fputs(" -> ", f);
        node_name(f, e->to);
        fprintf(f, " [label=\"%llu\"];\n", (unsigned long long)e->count);
    }
    dep_edges(p, f);
    fputs("}\n", f);
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_dot = {
    "the type-level task graph for Graphviz, yellow to red by self time",
    0,
    {{"taskgraph.dot", tscope__export_dot, 0, NULL}}};
