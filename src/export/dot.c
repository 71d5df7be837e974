/* dot.c - type-level task graph in Graphviz DOT.
 *
 * One box per task type that ran, filled from yellow (#FFFF00, little
 * exclusive time) to red (#FF0000, the type with the most), white text on
 * the darker half; edges parent type -> child type labelled with counts.
 */
#include "export.h"

static void node_name(FILE *f, uint32_t id)
{
    if (id == TSCOPE__PROFILE_ROOT)
        fputs("\"root\"", f);
    else
        fprintf(f, "\"t%u\"", id);
}

int tscope__export_dot(const struct tscope__profile *p, FILE *f)
{
    double max = 0, total = tscope__profile_total_excl(p);
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].excl.sum > max)
            max = p->types[i].excl.sum;
    fputs("digraph taskscope {\n", f);
    fprintf(f,
            "  graph [rankdir=TB, labelloc=t, label=\"task graph of %s (fill: exclusive "
            "time, yellow = least, red = most)",
            p->program);
    if (p->totals.events_dropped)
        fprintf(f, "\\nWARNING: %llu events dropped, counts incomplete",
                (unsigned long long)p->totals.events_dropped);
    fputs("\"];\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n", f);
    fputs("  \"root\" [label=\"<root>\", shape=ellipse, fillcolor=\"#FFFFFF\"];\n", f);
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        if (!t->calls && !t->created && !t->cancelled && !t->unfinished)
            continue;
        double share = max > 0 ? t->excl.sum / max : 0;
        int green = (int)(255.0 * (1.0 - share) + 0.5);
        fputs("  ", f);
        node_name(f, t->id);
        fputs(" [label=", f);
        char label[512];
        snprintf(label, sizeof label, "%s\ncalls %llu\nexcl %.3f ms (%.1f%%)", t->name,
                 (unsigned long long)t->calls, t->excl.sum / 1e6,
                 total > 0 ? 100.0 * t->excl.sum / total : 0.0);
        tscope__fmt_json_string(f, label); /* DOT strings escape like JSON's */
        fprintf(f, ", fillcolor=\"#FF%02X00\", fontcolor=\"%s\"];\n", green,
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
