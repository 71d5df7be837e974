/* tree.c - the path-level task tree as indented text: every distinct path
 * of task types from the root, children ordered by inclusive time. */
#include <stdlib.h>

#include "export.h"

struct ctx {
    const struct tscope__profile *p;
    uint32_t *start, *list; /* children of node i: list[start[i] .. start[i+1]) */
    FILE *f;
    char prefix[512];
};

static int by_incl(const void *a, const void *b, void *arg)
{
    const struct tscope__profile *p = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (p->nodes[x].incl != p->nodes[y].incl)
        return p->nodes[x].incl < p->nodes[y].incl ? 1 : -1;
    return x < y ? -1 : 1;
}

static void walk(struct ctx *c, uint32_t node, size_t depth)
{
    char buf[32];
    for (uint32_t k = c->start[node]; k < c->start[node + 1]; k++) {
        uint32_t child = c->list[k];
        const struct tscope__pnode *n = &c->p->nodes[child];
        int last = k + 1 == c->start[node + 1];
        fprintf(c->f, "%.*s%s %s  calls %llu  excl %.3f ms  incl %.3f ms\n", (int)depth * 3,
                c->prefix, last ? "`-" : "|-",
                tscope__profile_type_name(c->p, n->type, buf, sizeof buf),
                (unsigned long long)n->calls, n->excl / 1e6, n->incl / 1e6);
        if ((depth + 1) * 3 + 3 < sizeof c->prefix) {
            c->prefix[depth * 3] = last ? ' ' : '|';
            c->prefix[depth * 3 + 1] = ' ';
            c->prefix[depth * 3 + 2] = ' ';
            walk(c, child, depth + 1);
        }
    }
}

int tscope__export_tree(const struct tscope__profile *p, FILE *f)
{
    struct ctx c = {.p = p, .f = f};
    uint32_t n = p->nnodes;
    c.start = calloc(n + 2, sizeof *c.start);
    c.list = malloc((n ? n : 1) * sizeof *c.list);
    if (!c.start || !c.list) {
        free(c.start);
        free(c.list);
        return TSCOPE_ENOMEM;
    }
    for (uint32_t i = 1; i < n; i++)
        if (p->nodes[i].parent < n)
            c.start[p->nodes[i].parent + 2]++;
    for (uint32_t i = 2; i < n + 2; i++)
        c.start[i] += c.start[i - 1];
    for (uint32_t i = 1; i < n; i++)
        if (p->nodes[i].parent < n)
            c.list[c.start[p->nodes[i].parent + 1]++] = i;
    for (uint32_t i = 0; i < n; i++)
        qsort_r(c.list + c.start[i], c.start[i + 1] - c.start[i], sizeof *c.list, by_incl,
                (void *)p);
    fprintf(f, "task tree of %s (paths of task types; times summed over calls)\n", p->program);
    tscope__fmt_loss_note(p, f, "");
    fputs("<root>\n", f);
    if (n)
        walk(&c, 0, 0);
    free(c.start);
    free(c.list);
    return ferror(f) ? TSCOPE_EIO : 0;
}
