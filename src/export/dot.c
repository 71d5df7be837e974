/* dot.c - type-level task graph in Graphviz DOT.
 *
 * One box per task type that ran, filled from yellow (#FFFF00, little
 * self time) to red (#FF0000, the type with the most), white text on
 * the darker half; edges parent type -> child type labelled with counts.
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
    tscope__fmt_json_string(f, text); /* DOT strings escape like JSON's */
    free(text);
    return 0;
}

int tscope__export_dot(const struct tscope__profile *p, FILE *f)
{
    double max = 0, total = tscope__profile_total_excl(p);
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].excl.sum > max)
            max = p->types[i].excl.sum;
    const char *program = p->program ? p->program : "?";
    fputs("digraph taskscope {\n  graph [rankdir=TB, labelloc=t, label=", f);
    int rc = p->totals.events_dropped
                 ? dot_string(f,
                              "task graph of %s (fill: self time, yellow = least, red = "
                              "most)\nWARNING: %llu events dropped, counts incomplete",
                              program, (unsigned long long)p->totals.events_dropped)
                 : dot_string(f,
                              "task graph of %s (fill: self time, yellow = least, red = "
                              "most)",
                              program);
    if (rc)
        return rc;
    fputs("];\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n", f);
    fputs("  \"root\" [label=\"<root>\", shape=ellipse, fillcolor=\"#FFFFFF\"];\n", f);
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        if (!t->calls && !t->created && !t->cancelled && !t->unfinished)
            continue;
        int green = fill_green(share_of(t->excl.sum, max, 1.0));
        fputs("  ", f);
        node_name(f, t->id);
        fputs(" [label=", f);
        if ((rc = dot_string(f, "%s\ncalls %llu\nself %.3f ms (%.1f%%)\nelapsed %.3f ms",
                             t->name ? t->name : "?", (unsigned long long)t->calls,
                             t->excl.sum / 1e6, share_of(t->excl.sum, total, 100.0),
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
    fputs("}\n", f);
    return ferror(f) ? TSCOPE_EIO : 0;
}
