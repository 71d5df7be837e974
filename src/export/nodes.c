/* nodes.c - a depth-first walk of the task tree's path nodes (profile.h:
 * tscope__pnode, node 0 the root), shared by the exporters that write the
 * tree for other tools (folded stacks, Hatchet, TAU call paths, the tree
 * as DOT).  Children are visited in index order (the order their paths were
 * first met); the walk keeps an explicit stack, so any depth is walked, and
 * calls visit(node, depth, 1) before a node's children and visit(node,
 * depth, 0) after them.  Memory: O(nodes) for the child lists.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"

int tscope__nodes_walk(const struct tscope__profile *p, tscope__node_visit visit, void *ctx)
{
    uint32_t n = p->nnodes;
    if (!n)
        return 0;
    /* children lists by counting sort on the parent */
    uint32_t *first = calloc((size_t)n + 1, sizeof *first), *list = malloc(n * sizeof *list);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    struct {
        uint32_t node, next;
    } *stack = malloc(n * sizeof *stack);
    int rc = 0;
    if (!first || !list || !fill || !stack) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    for (uint32_t i = 1; i < n; i++)
        if (p->nodes[i].parent < n && p->nodes[i].parent != i)
            first[p->nodes[i].parent + 1]++;
    for (uint32_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (uint32_t i = 0; i <= n; i++)
        fill[i] = first[i];
    for (uint32_t i = 1; i < n; i++)
        if (p->nodes[i].parent < n && p->nodes[i].parent != i)
            list[fill[p->nodes[i].parent]++] = i;
    /* a node is walked once: a corrupt parent cycle is cut where it closes */
    uint8_t *seen = calloc(n, 1);
    if (!seen) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    size_t depth = 0;
    stack[depth++].node = 0;
    stack[0].next = first[0];
    seen[0] = 1;
    if ((rc = visit(ctx, 0, 0, 1)) != 0)
        goto done;
    while (depth) {
        uint32_t node = stack[depth - 1].node;
        if (stack[depth - 1].next < first[node + 1]) {
            uint32_t child = list[stack[depth - 1].next++];
            if (seen[child] || depth >= n)
                continue;
            seen[child] = 1;
            stack[depth].node = child;
            stack[depth].next = first[child];
            if ((rc = visit(ctx, child, (uint32_t)depth, 1)) != 0)
                goto done;
            depth++;
        } else {
            depth--;
            if ((rc = visit(ctx, node, (uint32_t)depth, 0)) != 0)
                goto done;
        }
    }
done:
    free(seen);
out:
    free(first);
    free(list);
    free(fill);
    free(stack);
    return rc;
}

/* Post-order sums of self time: sub[i] = node i's self time plus its
 * descendants'. */
static int sum_visit(void *ctx, uint32_t node, uint32_t depth, int enter)
{
    (void)depth;
    struct {
        const struct tscope__profile *p;
        double *sub;
    } *c = ctx;
    if (enter) {
        c->sub[node] = c->p->nodes[node].self;
        return 0;
    }
    uint32_t parent = c->p->nodes[node].parent;
    if (node != 0 && parent < c->p->nnodes)
        c->sub[parent] += c->sub[node];
    return 0;
}

double *tscope__nodes_subtree_self(const struct tscope__profile *p)
{
    double *sub = calloc(p->nnodes ? p->nnodes : 1, sizeof *sub);
    struct {
        const struct tscope__profile *p;
        double *sub;
    } c = {p, sub};
    if (sub && tscope__nodes_walk(p, sum_visit, &c)) {
        free(sub);
        return NULL;
    }
    return sub;
}

int tscope__node_path_push(struct tscope__node_path *np, uint32_t depth, const char *sep,
                           const char *name, const char *from, const char *to)
{
    size_t n = strlen(name), ns = strlen(sep);
    if (np->len + n + ns + 1 > np->cap) {
        size_t cap = (np->len + n + ns + 1) * 2;
        char *g = realloc(np->buf, cap);
        if (!g)
            return TSCOPE_ENOMEM;
        np->buf = g;
        np->cap = cap;
    }
    if (depth >= np->nmark) {
        uint32_t nm = np->nmark ? np->nmark * 2 : 64;
        while (nm <= depth)
            nm *= 2;
        size_t *g = realloc(np->mark, nm * sizeof *g);
        if (!g)
            return TSCOPE_ENOMEM;
        np->mark = g;
        np->nmark = nm;
    }
    np->mark[depth] = np->len;
    memcpy(np->buf + np->len, sep, ns);
    np->len += ns;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        const char *hit = (unsigned char)c < 0x20 ? NULL : strchr(from, c);
        np->buf[np->len++] = (unsigned char)c < 0x20 ? ' ' : hit && *hit ? to[hit - from] : c;
    }
    return 0;
}

void tscope__node_path_pop(struct tscope__node_path *np, uint32_t depth)
{
    if (depth < np->nmark)
        np->len = np->mark[depth];
}

void tscope__node_path_free(struct tscope__node_path *np)
{
    free(np->buf);
    free(np->mark);
}
