/* tree.c - the path-level task tree as indented text: every distinct path
 * of task types from the root, children ordered by elapsed time.
 *
 * The nodes come as an array with parent indices; the children of each node
 * are gathered into one list (counting sort by parent), each node's run of
 * it sorted, and the tree printed depth-first with an explicit stack, so any
 * depth prints completely (a path can be as deep as there are nodes: with
 * TASKSCOPE_TREE_FOLD=0 and no TASKSCOPE_TREE_DEPTH, one per nesting level).
 * The line prefix ("|  " or "   " per open ancestor) grows with the stack.
 * Memory: O(nodes) for the lists, O(depth) for the stack and the prefix.
 */
#include <math.h>
#include <stdlib.h>

#include "export.h"
#include "output.h"

struct frame {
    uint32_t node; /* whose children are being printed */
    uint32_t next; /* index into list of the next child to print */
};

struct walk {
    struct frame *stack;
    size_t depth, cap; /* frames in use; frames (and prefix triples) allocated */
    char *prefix;      /* 3 characters per frame below the root's */
};

/* A node's weight in the order: its elapsed time, or its running time
 * where that is larger (version 1 profiles have no elapsed time). */
static double weight(const struct tscope__pnode *n)
{
    return n->elapsed > n->running ? n->elapsed : n->running;
}

/* Orders children by elapsed time, largest first, then by index; a NaN
 * time sorts last, so the order is total whatever the input. */
static int by_running(const void *a, const void *b, void *arg)
{
    const struct tscope__profile *p = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double ix = weight(&p->nodes[x]), iy = weight(&p->nodes[y]);
    int nx = isnan(ix), ny = isnan(iy);
    if (nx != ny)
        return nx ? 1 : -1;
    if (!nx && ix != iy)
        return ix < iy ? 1 : -1;
    return x < y ? -1 : x > y;
}

/* Makes room for one more frame (and its 3 prefix characters).  Returns 0
 * or TSCOPE_ENOMEM (the walk is unchanged). */
static int walk_reserve(struct walk *w)
{
    if (w->depth < w->cap)
        return 0;
    size_t cap = w->cap ? 2 * w->cap : 64;
    struct frame *stack = realloc(w->stack, cap * sizeof *stack);
    if (!stack)
        return TSCOPE_ENOMEM;
    w->stack = stack;
    char *prefix = realloc(w->prefix, cap * 3);
    if (!prefix)
        return TSCOPE_ENOMEM;
    w->prefix = prefix;
    w->cap = cap;
    return 0;
}

/* Prints the subtrees below node 0.  Returns 0 or TSCOPE_ENOMEM (the output
 * then stops at a line boundary). */
static int print_children(const struct tscope__profile *p, const uint32_t *start,
                          const uint32_t *list, FILE *f)
{
    struct walk w = {0};
    int rc = walk_reserve(&w);
    if (rc == 0)
        w.stack[w.depth++] = (struct frame){0, start[0]};
    while (rc == 0 && w.depth > 0) {
        struct frame *top = &w.stack[w.depth - 1];
        if (top->next == start[top->node + 1]) {
            w.depth--;
            continue;
        }
        uint32_t k = top->next++;
        uint32_t child = list[k];
        const struct tscope__pnode *n = &p->nodes[child];
        int last = k + 1 == start[top->node + 1];
        char buf[32];
        const char *name = tscope__profile_type_name(p, n->type, buf, sizeof buf);
        size_t indent = (w.depth - 1) * 3;
        fwrite(w.prefix, 1, indent, f);
        fprintf(f, "%s %s  calls %llu  self %.3f ms  running %.3f ms  elapsed %.3f ms\n",
                last ? "`-" : "|-", name ? name : "?", (unsigned long long)n->calls, n->self / 1e6,
                n->running / 1e6, n->elapsed / 1e6);
        if (start[child] == start[child + 1])
            continue; /* a leaf: nothing to open */
        if ((rc = walk_reserve(&w)) != 0)
            break;
        /* the column below the child just printed: a bar while siblings follow */
        w.prefix[indent] = last ? ' ' : '|';
        w.prefix[indent + 1] = ' ';
        w.prefix[indent + 2] = ' ';
        w.stack[w.depth++] = (struct frame){child, start[child]};
    }
    free(w.stack);
    free(w.prefix);
    return rc;
}

int tscope__export_tree(const struct tscope__profile *p, FILE *f)
{
    uint32_t n = p->nnodes;
    /* children of node i: list[start[i] .. start[i+1]) */
    uint32_t *start = calloc((size_t)n + 2, sizeof *start);
    uint32_t *list = malloc((n ? n : 1) * sizeof *list);
    if (!start || !list) {
        free(start);
        free(list);
        return TSCOPE_ENOMEM;
    }
    for (uint32_t i = 1; i < n; i++)
        if (p->nodes[i].parent < n)
            start[p->nodes[i].parent + 2]++;
    for (size_t i = 2; i < (size_t)n + 2; i++)
        start[i] += start[i - 1];
    for (uint32_t i = 1; i < n; i++)
        if (p->nodes[i].parent < n)
            list[start[p->nodes[i].parent + 1]++] = i;
    for (uint32_t i = 0; i < n; i++)
        qsort_r(list + start[i], start[i + 1] - start[i], sizeof *list, by_running, (void *)p);
    fprintf(f, "task tree of %s (paths of task types; times summed over calls)\n", p->program);
    tscope__fmt_loss_note(p, f, "");
    fputs("<root>\n", f);
    int rc = n ? print_children(p, start, list, f) : 0;
    free(start);
    free(list);
    if (rc)
        return rc;
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_tree = {
    "the path-level task tree as text", 0, {{"tasktree.txt", tscope__export_tree, 0, NULL}}};
