/* tau.c - a TAU profile (tau/profile.RANK.0.0, read by pprof and ParaProf;
 * FORMATS.md has the layout): times in µs, one entry per task type (flat,
 * GROUP="TAU_USER": calls, child calls, self time, running time with
 * recursion counted once), one per task-tree path (".TAU application =>
 * a => b", GROUP="TAU_CALLPATH": the node's calls, its children's calls,
 * self and running time), the ".TAU application" entry above them all, no
 * aggregates, and the counters as user events (count, max, min, mean, sum
 * of squares).  A '"' in a name becomes '\''.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "output.h"

#define APP ".TAU application"

static void put_name(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
}

struct tau {
    const struct tscope__profile *p;
    FILE *f;
    const double *child_calls;
    struct tscope__node_path path;
};

static int tau_visit(void *ctx, uint32_t node, uint32_t depth, int enter)
{
    struct tau *c = ctx;
    if (node == 0)
        return 0;
    if (!enter) {
        tscope__node_path_pop(&c->path, depth);
        return 0;
    }
    char buf[64];
    const char *name = tscope__profile_type_name(c->p, c->p->nodes[node].type, buf, sizeof buf);
    if (tscope__node_path_push(&c->path, depth, " => ", name, "\"", "'"))
        return TSCOPE_ENOMEM;
    const struct tscope__pnode *nd = &c->p->nodes[node];
    fprintf(c->f, "\"" APP "%.*s\" %llu %.0f %.6g %.6g 0 GROUP=\"TAU_CALLPATH\"\n",
            (int)c->path.len, c->path.buf, (unsigned long long)nd->calls, c->child_calls[node],
            nd->self * 1e-3, nd->running * 1e-3);
    return 0;
}

int tscope__export_tau(const struct tscope__profile *p, FILE *f)
{
    uint32_t nn = p->nnodes;
    double *child_calls = calloc(nn ? nn : 1, sizeof *child_calls);
    double *sub = tscope__nodes_subtree_self(p);
    struct tau c = {.p = p, .f = f, .child_calls = child_calls};
    if (!child_calls || !sub) {
        free(child_calls);
        free(sub);
        return TSCOPE_ENOMEM;
    }
    for (uint32_t i = 1; i < nn; i++)
        if (p->nodes[i].parent < nn)
            child_calls[p->nodes[i].parent] += (double)p->nodes[i].calls;
    unsigned ntypes = 0;
    for (uint32_t t = 0; t < p->ntypes; t++)
        ntypes += p->types[t].calls > 0;
    fprintf(f, "%u templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls #\n",
            1 + ntypes + (nn ? nn - 1 : 0));
    fprintf(f, "\"" APP "\" 1 %.0f 0 %.6g 0 GROUP=\"TAU_DEFAULT\"\n", nn ? child_calls[0] : 0.0,
            nn ? sub[0] * 1e-3 : 0.0);
    for (uint32_t t = 0; t < p->ntypes; t++) {
        const struct tscope__ptype *ty = &p->types[t];
        if (!ty->calls)
            continue;
        double subrs = 0;
        for (uint32_t i = 1; i < nn; i++)
            if (p->nodes[i].type == ty->id)
                subrs += child_calls[i];
        fputc('"', f);
        put_name(f, ty->name);
        fprintf(f, "\" %llu %.0f %.6g %.6g 0 GROUP=\"TAU_USER\"\n", (unsigned long long)ty->calls,
                subrs, ty->self_total * 1e-3, ty->running_total * 1e-3);
    }
    int rc = tscope__nodes_walk(p, tau_visit, &c);
    fprintf(f, "0 aggregates\n");
    unsigned ncounters = 0;
    for (uint32_t i = 0; i < p->ncounters; i++)
        ncounters += p->counters[i].stats.count > 0;
    fprintf(f, "%u userevents\n# eventname numevents max min mean sumsqr\n", ncounters);
    for (uint32_t i = 0; i < p->ncounters; i++) {
        const tscope_counter_stats_t *s = &p->counters[i].stats;
        if (!s->count)
            continue;
        double sumsqr = (double)s->count * (s->stddev * s->stddev + s->mean * s->mean);
        fputc('"', f);
        put_name(f, p->counters[i].name);
        fprintf(f, "\" %llu %.17g %.17g %.17g %.17g\n", (unsigned long long)s->count, s->max,
                s->min, s->mean, sumsqr);
    }
    free(child_calls);
    free(sub);
    tscope__node_path_free(&c.path);
    if (rc)
        return rc;
    return ferror(f) ? TSCOPE_EIO : 0;
}

/* TAU's file names: a folder of its own, a file per rank */
const struct tscope__output_format tscope__output_tau = {
    "a TAU profile for pprof and ParaProf",
    TSCOPE__OUTPUT_FROM_PROFILE,
    {{"tau/profile.RANK.0.0", tscope__export_tau, 0, NULL}}};
