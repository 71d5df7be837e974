/* treedot.c - the task tree (the paths of task types, as tasktree.txt) as
 * Graphviz DOT (tasktree.dot): one box per path node labelled with its
 * type, calls, self and elapsed time, filled from yellow (least self time)
 * to red (the most) as taskgraph.dot; an edge from each node to the paths
 * below it, labelled with their calls.  `dot -Tsvg tasktree.dot` draws it.
 */
#include <math.h>

#include "export.h"
#include "output.h"

struct treedot {
    const struct tscope__profile *p;
    FILE *f;
    double max, total;
};

static int treedot_visit(void *ctx, uint32_t node, uint32_t depth, int enter)
{
    (void)depth;
    struct treedot *c = ctx;
    if (!enter || node == 0)
        return 0;
    const struct tscope__pnode *n = &c->p->nodes[node];
    char buf[64];
    double share = c->max > 0 && n->self >= 0 ? n->self / c->max : 0;
    if (!(share <= 1))
        share = 1;
    int green = (int)(255.0 * (1.0 - share) + 0.5);
    fprintf(c->f, "  n%u [label=\"", node);
    tscope__fmt_dot_text(c->f, tscope__profile_type_name(c->p, n->type, buf, sizeof buf));
    fprintf(c->f,
            "\\ncalls %llu\\nself %.3f ms (%.1f%%)\\nelapsed %.3f ms\", fillcolor=\"#FF%02X00\"",
            (unsigned long long)n->calls, n->self * 1e-6,
            c->total > 0 ? 100.0 * n->self / c->total : 0.0, n->elapsed * 1e-6, (unsigned)green);
    fprintf(c->f, "%s];\n", green < 128 ? ", fontcolor=\"white\"" : "");
    uint32_t parent = n->parent < c->p->nnodes ? n->parent : 0;
    fprintf(c->f, "  n%u -> n%u [label=\"%llu\"];\n", parent, node, (unsigned long long)n->calls);
    return 0;
}

int tscope__export_treedot(const struct tscope__profile *p, FILE *f)
{
    struct treedot c = {.p = p, .f = f};
    for (uint32_t i = 1; i < p->nnodes; i++) {
        if (p->nodes[i].self > c.max)
            c.max = p->nodes[i].self;
        if (p->nodes[i].self > 0)
            c.total += p->nodes[i].self;
    }
    fputs("digraph tasktree {\n  graph [label=\"task tree of ", f);
    tscope__fmt_dot_text(f, p->program ? p->program : "?");
    fputs(" (paths of task types; fill: self time, yellow = least, red = most)\", "
          "labelloc=t, rankdir=TB];\n"
          "  node [shape=box, style=filled, fontname=\"Helvetica\"];\n"
          "  n0 [label=\"<root>\", shape=ellipse, fillcolor=\"#FFFFFF\"];\n",
          f);
    int rc = tscope__nodes_walk(p, treedot_visit, &c);
    fputs("}\n", f);
    if (rc)
        return rc;
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_treedot = {
    "the task tree as Graphviz DOT",
    TSCOPE__OUTPUT_FROM_PROFILE,
    {{"tasktree.dot", tscope__export_treedot, 0, NULL}}};
