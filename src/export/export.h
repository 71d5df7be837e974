/* export.h - renderers of a tscope__profile, one file each.
 *
 * Each takes an immutable profile (profile.h) and a stream and returns 0 or
 * TSCOPE_EIO (the stream reported an error).  None of them touches the live
 * store or the hot path.
 */
#ifndef TSCOPE_EXPORT_EXPORT_H
#define TSCOPE_EXPORT_EXPORT_H

#include <stdio.h>

#include "profile/profile.h"

/* Screen summary table.  sort: self, running, elapsed, calls, mean or name
 * (excl and incl: self and running); rows: 0 for all types. */
int tscope__export_summary(const struct tscope__profile *p, FILE *f, const char *sort,
                           unsigned rows);
/* The per-thread tables (threads.c; report --threads): for each of the
 * program's threads its types, sorted and limited as the summary's. */
int tscope__export_threads(const struct tscope__profile *p, FILE *f, const char *sort,
                           unsigned rows);
/* types.csv and counters.csv. */
int tscope__export_csv_types(const struct tscope__profile *p, FILE *f);
int tscope__export_csv_counters(const struct tscope__profile *p, FILE *f);
/* The canonical JSON profile (docs/output-formats.md). */
int tscope__export_json(const struct tscope__profile *p, FILE *f);
/* Graphviz DOT type-level task graph, yellow -> red by self time. */
int tscope__export_dot(const struct tscope__profile *p, FILE *f);
/* Path-level task tree as indented text. */
int tscope__export_tree(const struct tscope__profile *p, FILE *f);
/* The run over time (timeline.c): concurrency.csv and .gp, threads.csv and
 * heatmap.gp, durations.csv and scatter.gp. */
int tscope__export_concurrency_csv(const struct tscope__profile *p, FILE *f);
int tscope__export_concurrency_gp(const struct tscope__profile *p, FILE *f);
int tscope__export_threads_csv(const struct tscope__profile *p, FILE *f);
int tscope__export_heatmap_gp(const struct tscope__profile *p, FILE *f);
int tscope__export_durations_csv(const struct tscope__profile *p, FILE *f);
int tscope__export_scatter_gp(const struct tscope__profile *p, FILE *f);
/* The task tree for other tools (one file each): folded stacks
 * (stacks.folded: flamegraph.pl, speedscope), Hatchet's literal JSON
 * (hatchet.json), a TAU profile (tau/profile.RANK.0.0: call paths, pprof and
 * ParaProf), the tree as Graphviz DOT (tasktree.dot). */
int tscope__export_folded(const struct tscope__profile *p, FILE *f);
int tscope__export_hatchet(const struct tscope__profile *p, FILE *f);
int tscope__export_tau(const struct tscope__profile *p, FILE *f);
int tscope__export_treedot(const struct tscope__profile *p, FILE *f);

/* Depth-first walk of the task tree's nodes (nodes.c): visit(ctx, node,
 * depth, 1) before a node's children, (.., 0) after; a nonzero return stops
 * the walk and is returned.  Node 0 is the root (depth 0). */
typedef int (*tscope__node_visit)(void *ctx, uint32_t node, uint32_t depth, int enter);
int tscope__nodes_walk(const struct tscope__profile *p, tscope__node_visit visit, void *ctx);
/* Per node, its self time plus its descendants' (free it); NULL: no memory. */
double *tscope__nodes_subtree_self(const struct tscope__profile *p);
/* A node's path of type names, grown and cut along the walk: push appends
 * sep and name (the characters of `from` in it replaced by those at the
 * same place in `to`, control characters by spaces) at depth; pop cuts the
 * path back to before depth's name.  buf[0 .. len) is the path (no NUL). */
struct tscope__node_path {
    char *buf;
    size_t len, cap;
    size_t *mark;
    uint32_t nmark;
};
int tscope__node_path_push(struct tscope__node_path *np, uint32_t depth, const char *sep,
                           const char *name, const char *from, const char *to);
void tscope__node_path_pop(struct tscope__node_path *np, uint32_t depth);
void tscope__node_path_free(struct tscope__node_path *np);

/* Shared helpers (format.c). */
/* Writes s as a JSON string literal (quotes included). */
void tscope__fmt_json_string(FILE *f, const char *s);
/* Writes s as a CSV field (quoted when needed). */
void tscope__fmt_csv_field(FILE *f, const char *s);
/* Writes s inside a Graphviz DOT string (quotes not included): a quote and
 * a backslash get a backslash, a newline is DOT's \n (a line break), other
 * control characters are spaces, valid UTF-8 stays, and a byte that is no
 * part of it (a Latin-1 name) is that Latin-1 character in UTF-8, so that
 * Graphviz, which wants UTF-8, draws the name as it reads. */
void tscope__fmt_dot_text(FILE *f, const char *s);
/* Writes a double that JSON accepts and that reads back exactly. */
void tscope__fmt_json_number(FILE *f, double v);
/* Total self time over all types, ns. */
double tscope__profile_total_self(const struct tscope__profile *p);
/* ns rounded to whole ns (negative, not finite or beyond int64: 0). */
int64_t tscope__ns_whole(double ns);
/* The threads' busy time in timeline bin b, in whole ns (profile.json's
 * "timeline"; the global view's heat map). */
int64_t tscope__profile_busy_bin(const struct tscope__profile *p, uint32_t b);
/* The part of it the threads waited (a waiting type on top: taskwait,
 * barriers, MPI waits), in whole ns ("wait_ns" beside "busy_ns"). */
int64_t tscope__profile_wait_bin(const struct tscope__profile *p, uint32_t b);
/* One line noting dropped events/cut-offs, prefixed by `prefix`, or nothing. */
void tscope__fmt_loss_note(const struct tscope__profile *p, FILE *f, const char *prefix);
/* What ended the run (p->ended_by != 0): "SIGSEGV", "_exit", ... */
const char *tscope__fmt_ended_by(const struct tscope__profile *p, char *buf, size_t len);

#endif
