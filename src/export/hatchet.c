/* hatchet.c - the task tree as Hatchet's literal JSON (hatchet.json,
 * GraphFrame.from_literal): a list of the root's children, each
 * {"frame": {"name", "type": "task", "node"}, "metrics": {...}, "children":
 * [...]}.  The frame carries the node's index: Hatchet's literal reader
 * takes two nodes with equal frames anywhere in the tree for one, and one
 * type has a node under each path it appears in.  Every node has the same
 * metrics: "time" (self, s), "time (inc)" (its self time plus its
 * descendants', s: Hatchet does not derive inclusive values, they are
 * written), "calls", "running (inc)" and "elapsed (inc)" (s, as in
 * docs/output-formats.md: times that include what ran below, so marked
 * inclusive, which Hatchet never sums).  One node per line, no
 * indentation: a deep tree stays small (but JSON readers limit nesting:
 * jansson to 2048 levels, Python's json module to about 1000).
 */
#include <stdlib.h>

#include "export.h"
#include "output.h"

struct hatchet {
    const struct tscope__profile *p;
    FILE *f;
    const double *sub;
    uint8_t *more; /* per depth: a sibling was written before */
};

static int hatchet_visit(void *ctx, uint32_t node, uint32_t depth, int enter)
{
    struct hatchet *c = ctx;
    FILE *f = c->f;
    if (node == 0) {
        fputs(enter ? "[" : "\n]\n", f);
        c->more[1] = 0;
        return 0;
    }
    if (!enter) {
        fputs("]}", f);
        return 0;
    }
    const struct tscope__pnode *n = &c->p->nodes[node];
    char buf[64];
    fputs(c->more[depth] ? ",\n" : "\n", f);
    c->more[depth] = 1;
    c->more[depth + 1] = 0;
    fputs("{\"frame\":{\"name\":", f);
    tscope__fmt_json_string(f, tscope__profile_type_name(c->p, n->type, buf, sizeof buf));
    fprintf(f, ",\"type\":\"task\",\"node\":%u},\"metrics\":{\"time\":", node);
    tscope__fmt_json_number(f, n->self * 1e-9);
    fputs(",\"time (inc)\":", f);
    tscope__fmt_json_number(f, c->sub[node] * 1e-9);
    fprintf(f, ",\"calls\":%llu,\"running (inc)\":", (unsigned long long)n->calls);
    tscope__fmt_json_number(f, n->running * 1e-9);
    fputs(",\"elapsed (inc)\":", f);
    tscope__fmt_json_number(f, n->elapsed * 1e-9);
    fputs("},\"children\":[", f);
    return 0;
}

int tscope__export_hatchet(const struct tscope__profile *p, FILE *f)
{
    struct hatchet c = {.p = p, .f = f};
    double *sub = tscope__nodes_subtree_self(p);
    c.sub = sub;
    c.more = calloc((size_t)p->nnodes + 2, 1);
    int rc = sub && c.more ? tscope__nodes_walk(p, hatchet_visit, &c) : TSCOPE_ENOMEM;
    if (!p->nnodes && rc == 0)
        fputs("[]\n", f);
    free(sub);
    free(c.more);
    if (rc)
        return rc;
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_hatchet = {
    "Hatchet's literal JSON tree",
    TSCOPE__OUTPUT_FROM_PROFILE,
    {{"hatchet.json", tscope__export_hatchet, 0, NULL}}};
