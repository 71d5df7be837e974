/* folded.c - the task tree as folded stacks (stacks.folded), the input of
 * flamegraph.pl and speedscope: one line per tree path with self time,
 * "root;child;leaf WEIGHT", the weight the path's self time in whole ns
 * (integers, as both readers want; ns so that short tasks are not lost).
 * A ';' in a type name becomes ':', control characters a space.
 */
#include "export.h"
#include "output.h"

struct folded {
    const struct tscope__profile *p;
    FILE *f;
    struct tscope__node_path path;
};

static int folded_visit(void *ctx, uint32_t node, uint32_t depth, int enter)
{
    struct folded *c = ctx;
    if (node == 0)
        return 0;
    if (!enter) {
        tscope__node_path_pop(&c->path, depth);
        return 0;
    }
    char buf[64];
    const char *name = tscope__profile_type_name(c->p, c->p->nodes[node].type, buf, sizeof buf);
    if (tscope__node_path_push(&c->path, depth, depth > 1 ? ";" : "", name, ";", ":"))
        return TSCOPE_ENOMEM;
    double self = c->p->nodes[node].self;
    if (self >= 0.5)
        fprintf(c->f, "%.*s %.0f\n", (int)c->path.len, c->path.buf, self);
    return 0;
}

int tscope__export_folded(const struct tscope__profile *p, FILE *f)
{
    struct folded c = {.p = p, .f = f};
    int rc = tscope__nodes_walk(p, folded_visit, &c);
    tscope__node_path_free(&c.path);
    if (rc)
        return rc;
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_folded = {
    "folded stacks for flamegraph.pl and speedscope",
    TSCOPE__OUTPUT_FROM_PROFILE,
    {{"stacks.folded", tscope__export_folded, 0, NULL}}};
