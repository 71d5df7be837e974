/* folded.c - the task tree as folded stacks (stacks.folded), the input of
 * flamegraph.pl and speedscope: one line per tree path with self time,
 * "root;child;leaf WEIGHT", the weight the path's self time in whole ns
 * (integers, as both readers want; ns so that short tasks are not lost).
 * A ';' in a type name becomes ':', control characters a space.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"

struct folded {
    const struct tscope__profile *p;
    FILE *f;
    char *path;
    size_t len, cap;
    size_t *mark; /* the path's length before each depth's name */
    uint32_t nmark;
};

static int folded_visit(void *ctx, uint32_t node, uint32_t depth, int enter)
{
    struct folded *c = ctx;
    if (node == 0)
        return 0;
    if (!enter) {
        c->len = c->mark[depth];
        return 0;
    }
    char buf[64];
    const char *name = tscope__profile_type_name(c->p, c->p->nodes[node].type, buf, sizeof buf);
    size_t n = strlen(name);
    if (c->len + n + 2 > c->cap) {
        size_t cap = (c->len + n + 2) * 2;
        char *g = realloc(c->path, cap);
        if (!g)
            return TSCOPE_ENOMEM;
        c->path = g;
        c->cap = cap;
    }
    c->mark[depth] = c->len;
    if (depth > 1)
        c->path[c->len++] = ';';
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        c->path[c->len++] = ch == ';' ? ':' : (unsigned char)ch < 0x20 ? ' ' : ch;
    }
    double self = c->p->nodes[node].excl;
    if (self >= 0.5)
        fprintf(c->f, "%.*s %.0f\n", (int)c->len, c->path, self);
    return 0;
}

int tscope__export_folded(const struct tscope__profile *p, FILE *f)
{
    struct folded c = {.p = p, .f = f};
    c.mark = malloc((p->nnodes ? p->nnodes : 1) * sizeof *c.mark);
    int rc = c.mark ? tscope__nodes_walk(p, folded_visit, &c) : TSCOPE_ENOMEM;
    free(c.mark);
    free(c.path);
    if (rc)
        return rc;
    return ferror(f) ? TSCOPE_EIO : 0;
}
