/* persist.c - the profile store as bytes: saved by the crash journal at each
 * checkpoint (src/lifecycle/journal.c), loaded by `taskscope run` to
 * recover a program killed by SIGKILL (cli/recover.c).
 *
 * The store is a handful of flat arrays that refer to each other by index,
 * never by pointer, so the bytes are the struct followed by each array;
 * loading reallocates the arrays with the capacities the struct names and
 * re-creates the lock.  Writer and reader are the same build (the launcher
 * and the library it preloads); a layout stamp of the struct sizes turns any
 * other pairing into a clear error instead of a wrong profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "persist.h"
#include "store.h"

static uint64_t layout_stamp(void)
{
    return (uint64_t)sizeof(struct tscope__store) * 1000003u ^
           (uint64_t)sizeof(struct tscope__task) * 10007u ^
           (uint64_t)sizeof(struct tscope__instance) * 101u ^ sizeof(struct tscope__node) ^
           (uint64_t)sizeof(struct tscope__segment) << 40 ^
           (uint64_t)sizeof(struct tscope__config) << 20;
}

static int put(FILE *f, const void *p, size_t bytes)
{
    return bytes && fwrite(p, 1, bytes, f) != bytes ? -1 : 0;
}

static int put_map(FILE *f, const struct tscope__u64map *m)
{
    return put(f, m->e, (size_t)(m->mask + 1) * sizeof *m->e);
}

int tscope__store_save(struct tscope__store *s, FILE *f)
{
    uint64_t stamp = layout_stamp();
    int rc = put(f, &stamp, sizeof stamp) || put(f, s, sizeof *s) ||
             put(f, s->tasks, (size_t)s->ntasks_cap * sizeof *s->tasks) ||
             put_map(f, &s->task_map) ||
             put(f, s->implicit_list, (size_t)s->n_implicit * sizeof *s->implicit_list) ||
             put(f, s->terminal_list, (size_t)s->n_terminal * sizeof *s->terminal_list) ||
             put(f, s->stacks, (size_t)s->nstacks * sizeof *s->stacks);
    for (uint32_t i = 0; !rc && i < s->nstacks; i++)
        rc = put(f, s->stacks[i].seg, (size_t)s->stacks[i].n * sizeof *s->stacks[i].seg);
    rc = rc || put(f, s->types, (size_t)s->ntypes * sizeof *s->types);
    for (uint32_t i = 0; !rc && i < s->ntypes; i++)
        rc = put(f, s->types[i].seen, s->types[i].seen_bytes);
    rc = rc || put(f, s->counters, (size_t)s->ncounters * sizeof *s->counters) ||
         put(f, s->customs, (size_t)s->ncustoms * sizeof *s->customs) ||
         put(f, s->nodes, (size_t)s->nnodes * sizeof *s->nodes) || put_map(f, &s->node_map) ||
         put(f, s->edges, (size_t)s->nedges * sizeof *s->edges) || put_map(f, &s->edge_map) ||
         put(f, s->inst, (size_t)s->ninst * sizeof *s->inst) ||
         put(f, s->deps, (size_t)s->ndeps * sizeof *s->deps);
    return rc ? -1 : 0;
}

/* Allocates cap items of elem bytes in *p (zeroed) and reads the first n. */
static int get(FILE *f, void *p, uint64_t cap, uint64_t n, size_t elem)
{
    void **out = p;
    *out = NULL;
    if (n > cap || cap > UINT32_MAX)
        return -1;
    if (!cap)
        return 0;
    *out = calloc((size_t)cap, elem);
    if (!*out)
        return -1;
    return n && fread(*out, elem, (size_t)n, f) != (size_t)n ? -1 : 0;
}

/* m->e is NULL; mask and count are the saved ones. */
static int get_map(FILE *f, struct tscope__u64map *m)
{
    uint64_t cap = m->mask + 1;
    if (cap == 0 || (cap & (cap - 1)) || m->count >= cap)
        return -1;
    return get(f, &m->e, cap, cap, sizeof *m->e);
}

struct tscope__store *tscope__store_load(FILE *f, const char **why)
{
    uint64_t stamp;
    struct tscope__store *s = calloc(1, sizeof *s);
    *why = "truncated";
    if (!s || fread(&stamp, sizeof stamp, 1, f) != 1 || fread(s, sizeof *s, 1, f) != 1) {
        free(s);
        return NULL;
    }
    if (stamp != layout_stamp()) {
        *why = "written by another build of taskscope";
        free(s);
        return NULL;
    }
    /* every pointer read is meaningless here: clear them all first, so that
     * tscope__store_free can run whatever fails below */
    struct tscope__tstack *stacks = NULL;
    struct tscope__type_acc *types = NULL;
    uint32_t nstacks = s->nstacks, ntypes = s->ntypes;
    s->tasks = NULL;
    s->implicit_list = s->terminal_list = NULL;
    s->stacks = NULL;
    s->types = NULL;
    s->counters = NULL;
    s->customs = NULL;
    s->nodes = NULL;
    s->edges = NULL;
    s->inst = NULL;
    s->deps = NULL;
    s->nstacks = s->ntypes = 0;
    s->task_map.e = s->node_map.e = s->edge_map.e = s->inst_map.e = NULL;
    pthread_mutex_init(&s->lock, NULL);
    int bad = get(f, &s->tasks, s->ntasks_cap, s->ntasks_cap, sizeof *s->tasks);
    bad = bad || get_map(f, &s->task_map);
    bad = bad || get(f, &s->implicit_list, s->cap_implicit, s->n_implicit, sizeof(uint32_t)) ||
          get(f, &s->terminal_list, s->cap_terminal, s->n_terminal, sizeof(uint32_t));
    if (!bad && get(f, &stacks, nstacks, nstacks, sizeof *stacks)) {
        free(stacks);
        bad = 1;
    }
    if (!bad) {
        s->stacks = stacks;
        s->nstacks = nstacks;
        for (uint32_t i = 0; i < nstacks; i++)
            s->stacks[i].seg = NULL;
        for (uint32_t i = 0; !bad && i < nstacks; i++)
            bad = get(f, &s->stacks[i].seg, s->stacks[i].cap, s->stacks[i].n,
                      sizeof *s->stacks[i].seg);
    }
    if (!bad && get(f, &types, ntypes, ntypes, sizeof *types)) {
        free(types);
        bad = 1;
    }
    if (!bad) {
        s->types = types;
        s->ntypes = ntypes;
        for (uint32_t i = 0; i < ntypes; i++)
            s->types[i].seen = NULL;
        for (uint32_t i = 0; !bad && i < ntypes; i++)
            bad = get(f, &s->types[i].seen, s->types[i].seen_bytes, s->types[i].seen_bytes, 1);
    }
    bad = bad || get(f, &s->counters, s->ncounters, s->ncounters, sizeof *s->counters) ||
          get(f, &s->customs, s->ncustoms, s->ncustoms, sizeof *s->customs) ||
          get(f, &s->nodes, s->cap_nodes, s->nnodes, sizeof *s->nodes);
    bad = bad || get_map(f, &s->node_map);
    bad = bad || get(f, &s->edges, s->cap_edges, s->nedges, sizeof *s->edges);
    bad = bad || get_map(f, &s->edge_map);
    bad = bad || get(f, &s->inst, s->cap_inst, s->ninst, sizeof *s->inst) ||
          get(f, &s->deps, s->cap_deps, s->ndeps, sizeof *s->deps);
    if (!bad) { /* the instance index is rebuilt by the queries that need it */
        s->inst_indexed = 0;
        bad = tscope__u64map_init(&s->inst_map, 1024) != 0;
    }
    if (bad) {
        *why = errno == ENOMEM ? "out of memory" : "truncated or corrupt";
        tscope__store_free(s);
        return NULL;
    }
    return s;
}
