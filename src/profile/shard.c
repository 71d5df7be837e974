/* shard.c - per-thread shards of the profile (shard.h says what and why).
 *
 * The task state machine is replay.c's, run on the thread where the events
 * happen and in their real order, so none of the store's waiting applies:
 * a record is created before it is begun (the runtime hands it over), a
 * yield happens before its resume.  Per thread: a stack of running segments
 * (self time goes to the top one, running time to each), open segments per
 * type (the recursion rule of the running totals).  Per task, the record:
 * its tree node and edge are decided at create from its parent's (the
 * store's registry of paths, behind a per-thread cache), and so is whether
 * an ancestor has its type (a registry of ancestor type sets, behind a
 * per-thread cache: exact for any number of types, where the store's 64-bit
 * set walks the parent slots).
 *
 * Concurrency: a shard's stack, caches and pool are its owner's only.  Its
 * type, node, edge and total entries are written by the owner and read by
 * tscope__shards_fold (under the store lock) with relaxed atomics; a type,
 * node or total entry is written between two increments of its version
 * (odd while writing), and the fold copies an entry until it reads the same
 * even version before and after.  Entries live in chunks that never move:
 * a directory of chunk pointers, each published with a release store.  The
 * registries of ancestor sets and of record chunks have a mutex each, taken
 * only on a cache miss or when a pool is empty or overfull.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/hooks.h"
#include "core/names.h"
#include "core/thread_local.h"
#include "grow.h"
#include "idmap.h"
#include "shard.h"
#include "shard_int.h"
#include "u64map.h"
#include "taskscope/taskscope.h"

static inline void sacc_add(struct sacc *a, uint64_t v)
{
    uint64_t n = LD(a->n);
    if (n == 0 || v < LD(a->min))
        ST(a->min, v);
    if (v > LD(a->max))
        ST(a->max, v);
    ST(a->n, n + 1);
    ADD(a->sum, v);
    unsigned __int128 sq =
        ((unsigned __int128)LD(a->sq_hi) << 64 | LD(a->sq_lo)) + (unsigned __int128)v * v;
    ST(a->sq_lo, (uint64_t)sq);
    ST(a->sq_hi, (uint64_t)(sq >> 64));
}

/* Set by tscope__shards_recover until tscope__shards_recover_release: an
 * entry its dead owner was writing is taken as it is (one event may be
 * half in it). */
static int recovering;

/* Copies n words of an entry written under *ver; 1 when the copy is whole. */
int tscope__sh_read_entry(const uint64_t *src, uint64_t *dst, size_t words)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint64_t v1 = __atomic_load_n(&src[0], __ATOMIC_ACQUIRE);
        if (v1 & 1)
            continue;
        for (size_t i = 1; i < words; i++)
            dst[i] = LD_ACQ(src[i]);
        if (LD(src[0]) == v1) {
            dst[0] = v1;
            return 1;
        }
    }
    if (recovering) {
        for (size_t i = 0; i < words; i++)
            dst[i] = src[i];
        return 1;
    }
    return 0; /* the owner writes it all the time: taken at the next fold */
}

/* ---- durable memory -------------------------------------------------------

 * Under the crash journal (taskscope run), everything a
 * shard holds - the shard itself, its entry chunks, timeline bins, running
 * stack, the task records - comes from the journal's mapping
 * (hooks.durable), so a SIGKILL loses none of it (tscope__shards_recover
 * reads it back).  Elsewhere, or when that file cannot grow, calloc. */
void *tscope__sh_dalloc(uint32_t kind, uint32_t owner, uint32_t index, size_t n, size_t size)
{
    if (tscope__hooks.durable && tscope__g.cfg.aggregate) {
        void *p = tscope__hooks.durable(kind, owner, index, n * size);
        if (p)
            return p;
    }
    return calloc(n, size);
}

/* The recovery's mapping of a dead process's mapping. */
static struct {
    char *map;
    size_t len;
    uint64_t base;
    uint64_t last;    /* the latest begin of a segment still open */
    uint64_t damaged; /* bytes the last walk skipped: not whole blocks */
    int header_ok;    /* else only the blocks can be read (no base to rebase from) */
    int walked;       /* the damaged stretches are known (the first walk found them) */
    const struct tscope__shfile *head; /* the header, or its copy when it is damaged */
} rec;

static void dfree(void *p)
{
    if (!p || (tscope__hooks.durable_owns && tscope__hooks.durable_owns(p)) ||
        ((char *)p >= rec.map && (char *)p < rec.map + rec.len))
        return; /* the mapping's (the hook stays until the next tscope_init's
                   wiring, after its shards_reset has freed the shards) */
    free(p);
}

/* tscope__grow for durable arrays: a new block, the old one left behind. */
static int dgrow(void *arr, uint32_t *cap, uint64_t need, size_t elem, uint32_t kind,
                 uint32_t owner)
{
    if (need < *cap)
        return 0;
    uint64_t n = tscope__grow_count(*cap, need);
    void **p = (void **)arr;
    char *a = n ? tscope__sh_dalloc(kind, owner, (uint32_t)n, (size_t)n, elem) : NULL;
    if (!a)
        return -1;
    if (*p)
        memcpy(a, *p, (size_t)*cap * elem);
    dfree(*p);
    *p = a;
    *cap = (uint32_t)n;
    return 0;
}

/* ---- chunked arrays: entries that never move ----------------------------- */

static void dir_free(void **dir, uint32_t ndir)
{
    for (uint32_t i = 0; i < ndir; i++) {
        dfree(dir[i]);
        dir[i] = NULL;
    }
}

void *tscope__sh_chunks_make_slow(struct chunks *d, uint64_t k, size_t n, size_t elem)
{
    void **slot;
    if (k < DIR_NEAR) {
        slot = &d->near[k];
    } else {
        if (k >= DIR_MAX)
            return NULL;
        if (d->far == NULL) {
            void **far =
                tscope__sh_dalloc(TSCOPE__SHB_DIR, d->owner, d->kind, DIR_FAR, sizeof *far);
            if (!far)
                return NULL;
            __atomic_store_n(&d->far, far, __ATOMIC_RELEASE);
        }
        slot = &d->far[k - DIR_NEAR];
    }
    void *p = *slot;
    if (p == NULL) {
        p = tscope__sh_dalloc(d->kind, d->owner, (uint32_t)k, n, elem);
        if (p)
            __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}

static void chunks_free(struct chunks *d)
{
    dir_free(d->near, DIR_NEAR);
    if (d->far) {
        dir_free(d->far, DIR_FAR);
        dfree(d->far);
        d->far = NULL;
    }
}

/* ---- the shard ----------------------------------------------------------- */

/* What the fold last took from a shard (the fold's own, under the store
 * lock): deltas are taken against it. */
struct folded {
    struct stype *types;
    uint32_t ntypes;
    struct snode *nodes;
    uint32_t nnodes;
    uint64_t *edges;
    uint32_t nedges;
    struct stotals totals;
    uint64_t **tl_type; /* bins of each type's self time, and the adds they had */
    uint64_t *tl_count;
    uint32_t tl_ntype;
    uint64_t *tl_busy;
    uint64_t busy_count;
    uint64_t log_taken;        /* the log's records applied to the store */
    struct sbelow below_taken; /* what the fold took of the shard's pending BELOW */
};

/* What the fold took from each shard, by thread slot: in ordinary memory,
 * apart from the shards (which may live in the mapping), so that the
 * leak checker sees the arrays it points to. */
static struct folded folds[TSCOPE__THREADS_MAX];
#define FOLD(s) (&folds[(s)->index])

uint32_t tscope__shards_gen;

static struct {
    /* the fields every tscope_init and thread start touch, together: each
     * page of this struct a process touches is a fault (~10 us on a VM) */
    pthread_mutex_t lock; /* shards[] creation, record chunks, spare records, sets */
    struct tscope__store *store;
    uint64_t origin;    /* the store's timeline origin */
    int cpu;            /* TASKSCOPE_CPU_TIME: each task's CPU time (cpu_switch) */
    int32_t inst_limit; /* the deepest tree depth the instance graph can take, -1 none (relaxed) */
    int instances;      /* an instance graph at all (TASKSCOPE_INSTANCE_CAP > 0) */
    int filtered;       /* an instance filter is set (tscope__inst_filtered) */
    _Atomic uint8_t verdicts; /* 1 once any verdict was set (take_store clears them) */
    uint64_t pt_threshold;    /* the store's duration sample threshold (relaxed atomics) */
    uint32_t nshards;         /* 1 + the highest index made */
    /* record chunks (for the finalize's walk) and records traded between pools */
    struct tscope_task **rchunks; /* kept across tscope_init's: old handles stay readable */
    uint32_t nrchunks, cap_rchunks;
    uint32_t rchunks_now; /* the first chunk of this tscope_init */
    struct tscope_task *spare;
    uint32_t nspare;
    /* ancestor type sets: set 0 is empty */
    struct aset {
        uint64_t *bits;
        uint32_t words;
    } * sets;
    uint32_t nsets, cap_sets;
    struct tscope__u64map set_map; /* (set << 16 | type) + 1 -> set with that type added */
    /* the log of tree paths registered (durable only: tscope__shards_log_path) */
    struct plog *log;
    uint32_t nlog, log_used;
    /* the large ones */
    struct tscope__shard *shards[TSCOPE__THREADS_MAX];
    _Atomic uint8_t verdict[TSCOPE__MAX_IDS + 1]; /* per type: 0 unknown, 1 wanted, 2 not */
    struct tscope__config cfg_found;              /* tscope__shards_recover_config's */
} sh = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct tscope__shard *tscope__sh_of(uint32_t thread)
{
    struct tscope__shard *s = __atomic_load_n(&sh.shards[thread], __ATOMIC_ACQUIRE);
    if (__builtin_expect(s != NULL, 1))
        return s;
    if (thread >= TSCOPE__THREADS_MAX)
        return NULL;
    pthread_mutex_lock(&sh.lock);
    s = sh.shards[thread];
    if (!s && (s = tscope__sh_dalloc(TSCOPE__SHB_SHARD, thread, 0, 1, sizeof *s)) != NULL) {
        /* s is zeroed (calloc, or a new block of the mapping): only the
         * fields that are not zero are set */
        s->index = thread;
        struct chunks *c[3] = {&s->types, &s->nodes, &s->edges};
        const uint32_t ckind[3] = {TSCOPE__SHB_TYPES, TSCOPE__SHB_NODES, TSCOPE__SHB_EDGES};
        for (int k = 0; k < 3; k++)
            c[k]->kind = ckind[k], c[k]->owner = thread;
        struct schunks *sc[4] = {&s->counters, &s->customs, &s->peers, &s->deptypes};
        const uint32_t skind[4] = {TSCOPE__SHB_COUNTERS, TSCOPE__SHB_CUSTOMS, TSCOPE__SHB_PEERS,
                                   TSCOPE__SHB_DEPTYPES};
        for (int k = 0; k < 4; k++)
            sc[k]->kind = skind[k], sc[k]->owner = thread;
        s->log.kind = TSCOPE__SHB_LOG;
        s->log.owner = thread;
        s->tl_shift = TSCOPE__TL_SHIFT0;
        __atomic_store_n(&sh.shards[thread], s, __ATOMIC_RELEASE);
        if (thread + 1 > sh.nshards)
            __atomic_store_n(&sh.nshards, thread + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sh.lock);
    return s;
}

static inline struct stype *type_entry(struct tscope__shard *s, uint16_t type)
{
    struct stype *e = chunk_at(&s->types, type, sizeof *e);
    if (e && type >= LD(s->hi_type))
        ST(s->hi_type, (uint32_t)type + 1);
    return e;
}

static inline struct snode *node_entry(struct tscope__shard *s, uint32_t node)
{
    struct snode *e = chunk_at(&s->nodes, node, sizeof *e);
    if (e && node >= LD(s->hi_node))
        ST(s->hi_node, node + 1);
    return e;
}

/* ---- records ------------------------------------------------------------- */

#define RCHUNK 256

/* Records for a shard whose free list is empty: a batch another pool gave
 * back, else a new chunk, whose records are handed out in order from
 * `fresh` (its pages touched as they are needed). */
static void rec_refill(struct tscope__shard *s)
{
    pthread_mutex_lock(&sh.lock);
    if (sh.spare) {
        uint32_t k = 0;
        while (sh.spare && k < RCHUNK) {
            struct tscope_task *t = sh.spare;
            sh.spare = t->next;
            t->next = s->free;
            s->free = t;
            k++;
        }
        sh.nspare -= k;
        s->nfree += k;
    } else if (!tscope__grow(&sh.rchunks, &sh.cap_rchunks, sh.nrchunks, sizeof *sh.rchunks)) {
        struct tscope_task *c =
            tscope__sh_dalloc(TSCOPE__SHB_RECORDS, s->index, sh.nrchunks, RCHUNK, sizeof *c);
        if (c) {
            sh.rchunks[sh.nrchunks++] = c;
            s->fresh = c;
            s->nfresh = RCHUNK;
        }
    }
    pthread_mutex_unlock(&sh.lock);
}

static struct tscope_task *rec_alloc(struct tscope__shard *s)
{
    if (__builtin_expect(s->free == NULL, 0)) {
        if (!s->nfresh)
            rec_refill(s);
        if (!s->free) { /* the next fresh record, through the free list */
            if (!s->nfresh)
                return NULL;
            s->free = s->fresh++;
            s->free->next = NULL;
            s->nfresh--;
            s->nfree++;
        }
    }
    struct tscope_task *t = s->free;
    s->free = t->next;
    s->nfree--;
    ST(t->gen, LD(tscope__shards_gen));
    return t;
}

/* How many of chunk c's records were ever handed out: the records of a
 * shard's latest chunk past `fresh` never were (zero, free), and their
 * pages are left untouched. */
static uint32_t rchunk_used(uint32_t c)
{
    for (uint32_t k = 0; k < sh.nshards; k++) {
        const struct tscope__shard *o = sh.shards[k];
        if (o && o->nfresh && o->fresh - (RCHUNK - o->nfresh) == sh.rchunks[c])
            return RCHUNK - o->nfresh;
    }
    return RCHUNK;
}

static void rec_release(struct tscope__shard *s, struct tscope_task *t)
{
    ST(t->state, TSCOPE__TR_FREE);
    t->next = s->free;
    s->free = t;
    if (__builtin_expect(++s->nfree > 4 * RCHUNK, 0)) { /* ends what others create */
        pthread_mutex_lock(&sh.lock);
        for (uint32_t k = 0; k < 2 * RCHUNK; k++) {
            struct tscope_task *r = s->free;
            s->free = r->next;
            r->next = sh.spare;
            sh.spare = r;
        }
        s->nfree -= 2 * RCHUNK;
        sh.nspare += 2 * RCHUNK;
        pthread_mutex_unlock(&sh.lock);
    }
}

/* ---- ancestor type sets -------------------------------------------------- */

static int set_has(uint32_t set, uint16_t type)
{
    const struct aset *a = &sh.sets[set];
    return (uint32_t)(type / 64) < a->words && (a->bits[type / 64] >> (type % 64) & 1);
}

/* The set `set` with `type` added (lock held); 0 without memory. */
static uint32_t set_with(uint32_t set, uint16_t type)
{
    if (set_has(set, type))
        return set;
    uint64_t key = ((uint64_t)set << 16 | type) + 1;
    uint32_t id;
    if (tscope__u64map_get(&sh.set_map, key, &id))
        return id;
    uint32_t words =
        sh.sets[set].words > (uint32_t)type / 64 + 1 ? sh.sets[set].words : (uint32_t)type / 64 + 1;
    uint64_t *bits = calloc(words, sizeof *bits);
    if (!bits || tscope__grow(&sh.sets, &sh.cap_sets, sh.nsets, sizeof *sh.sets)) {
        free(bits);
        return 0;
    }
    if (sh.sets[set].words) /* set 0 has none */
        memcpy(bits, sh.sets[set].bits, sh.sets[set].words * sizeof *bits);
    bits[type / 64] |= 1ull << (type % 64);
    id = sh.nsets;
    if (tscope__u64map_put(&sh.set_map, key, id)) {
        free(bits);
        return 0;
    }
    sh.sets[sh.nsets++] = (struct aset){bits, words};
    return id;
}

/* A child of a task of ptype with ancestor set pset, of type `type`: its
 * ancestor set and whether it holds `type` (the recursion rule). */
static void child_set(struct tscope__shard *s, uint32_t pset, uint16_t ptype, uint16_t type,
                      uint32_t *set, uint8_t *nested)
{
    uint64_t key = ((uint64_t)pset << 32 | (uint64_t)ptype << 16 | type) + 1;
    struct set_cache *c = &s->sets_cache[tscope__mix64(key) % SET_CACHE];
    if (__builtin_expect(c->key == key, 1)) {
        *set = c->set;
        *nested = c->nested;
        return;
    }
    pthread_mutex_lock(&sh.lock);
    *set = set_with(pset, ptype);
    *nested = (uint8_t)set_has(*set, type);
    pthread_mutex_unlock(&sh.lock);
    *c = (struct set_cache){key, *set, *nested};
}

/* ---- tree paths ---------------------------------------------------------- */

/* The node, edge and step of a task of `type` whose parent is at pnode
 * (settle.c's rule, on the store's registry). */
static void path_step(struct tscope__shard *s, uint32_t pnode, uint16_t ptype, uint16_t type,
                      uint32_t *node, uint32_t *edge, uint8_t *step)
{
    uint64_t key = ((uint64_t)pnode << 16 | type) + 1;
    struct node_cache *c = &s->nodes_cache[tscope__mix64(key) % NODE_CACHE];
    if (__builtin_expect(c->key == key, 1)) {
        *node = c->node;
        *edge = c->edge;
        *step = c->step;
        return;
    }
    struct tscope__store *st = sh.store;
    pthread_mutex_lock(&st->lock);
    *node = tscope__settle_node(st, pnode, ptype, type, edge, step);
    pthread_mutex_unlock(&st->lock);
    *c = (struct node_cache){key, *node, *edge, *step};
}

/* ---- the timeline -------------------------------------------------------- */

static void fold_timeline(struct tscope__store *st, struct tscope__shard *s);

/* Set while this thread holds the store lock around shard work (a retired
 * thread's shard, finalize): the slow paths below then do not take it. */
static _Thread_local int store_locked;

static void store_lock(void)
{
    if (!store_locked)
        pthread_mutex_lock(&sh.store->lock);
}

static void store_unlock(void)
{
    if (!store_locked)
        pthread_mutex_unlock(&sh.store->lock);
}

/* The slow path of a timeline add: the arrays made, the bins widened when
 * the run outgrew them (after the fold took what they hold, so that the
 * fold's copy widens alike), a span over several bins. */
static void tl_slow(struct tscope__shard *s, int busy, uint16_t type, uint64_t from, uint64_t to)
{
    uint64_t o = sh.origin;
    if (from < o)
        from = o;
    if (to <= from)
        return;
    uint64_t *bins = busy ? s->tl_busy : type < s->tl_ntype ? s->tl_type[type] : NULL;
    if (bins && ((to - 1 - o) >> s->tl_shift) < TSCOPE__TL_BINS)
        goto add; /* a span over several bins: no lock */
    struct tscope__store *st = sh.store;
    store_lock();
    while (((to - 1 - o) >> s->tl_shift) >= TSCOPE__TL_BINS) {
        fold_timeline(st, s);
        for (uint32_t i = 0; i <= s->tl_ntype; i++) {
            uint64_t *b = i < s->tl_ntype ? s->tl_type[i] : s->tl_busy;
            uint64_t *f = i < s->tl_ntype ? (i < FOLD(s)->tl_ntype ? FOLD(s)->tl_type[i] : NULL)
                                          : FOLD(s)->tl_busy;
            if (!b)
                continue;
            for (uint32_t k = 0; k < TSCOPE__TL_BINS; k++) {
                uint64_t v = k < TSCOPE__TL_BINS / 2 ? LD(b[2 * k]) + LD(b[2 * k + 1]) : 0;
                ST(b[k], v);
                if (f)
                    f[k] = v; /* the fold took everything just now */
            }
        }
        ST(s->tl_shift, s->tl_shift + 1);
        ST(s->tl_used, (s->tl_used + 1) / 2);
    }
    if (busy) {
        if (!s->tl_busy)
            s->tl_busy = tscope__sh_dalloc(TSCOPE__SHB_BUSY, s->index, 0, TSCOPE__TL_BINS,
                                           sizeof *s->tl_busy);
        bins = s->tl_busy;
    } else {
        if (type >= s->tl_ntype) {
            uint32_t n = s->tl_ntype, cap = n ? n : 16;
            while (cap <= type)
                cap *= 2;
            uint64_t **t = tscope__sh_dalloc(TSCOPE__SHB_TL_ARRAY, s->index, cap, cap, sizeof *t);
            uint64_t *c =
                t ? tscope__sh_dalloc(TSCOPE__SHB_TL_COUNT, s->index, cap, cap * TL_NBLK, sizeof *c)
                  : NULL;
            if (c) {
                if (n) {
                    memcpy(t, s->tl_type, n * sizeof *t);
                    for (uint32_t k = 0; k < TL_NBLK; k++)
                        memcpy(&TLC(c, cap, 0, k), &TLC(s->tl_count, n, 0, k), n * sizeof *c);
                }
                dfree(s->tl_type);
                dfree(s->tl_count);
                s->tl_type = t;
                s->tl_count = c;
                s->tl_ntype = cap;
            } else {
                dfree(t);
            }
        }
        if (type < s->tl_ntype && !s->tl_type[type])
            s->tl_type[type] = tscope__sh_dalloc(TSCOPE__SHB_TL, s->index, type, TSCOPE__TL_BINS,
                                                 sizeof **s->tl_type);
        bins = type < s->tl_ntype ? s->tl_type[type] : NULL;
    }
    store_unlock();
    if (!bins)
        return; /* out of memory: the pictures lack it */
add:;
    uint32_t sf = s->tl_shift;
    uint64_t first = (from - o) >> sf;
    for (uint64_t t = from; t < to;) {
        uint64_t b = (t - o) >> sf;
        uint64_t end = o + ((b + 1) << sf);
        if (end > to)
            end = to;
        ST(bins[b], LD(bins[b]) + (end - t));
        if (b >= s->tl_used)
            ST(s->tl_used, (uint32_t)b + 1);
        t = end;
    }
    if (busy) {
        ST(s->busy_count, LD(s->busy_count) + 1);
        return;
    }
    for (uint64_t k = first / TL_BLK; k <= ((to - 1 - o) >> sf) / TL_BLK && k < TL_NBLK; k++) {
        uint64_t *c = &TLC(s->tl_count, s->tl_ntype, type, k);
        ST(*c, LD(*c) + 1);
    }
}

/* A task of `type` had the top of this thread in [from, to). */
static inline void tl_self(struct tscope__shard *s, uint16_t type, uint64_t from, uint64_t to)
{
    uint64_t o = sh.origin;
    uint32_t sf = s->tl_shift;
    uint64_t b0 = (from - o) >> sf, b1 = (to - 1 - o) >> sf;
    if (__builtin_expect(to > from && from >= o && b0 == b1 && b1 < TSCOPE__TL_BINS &&
                             type < s->tl_ntype && s->tl_type[type],
                         1)) {
        ST(s->tl_type[type][b0], LD(s->tl_type[type][b0]) + (to - from));
        if (__builtin_expect(b0 >= s->tl_used, 0))
            ST(s->tl_used, (uint32_t)b0 + 1);
        uint64_t *c = &TLC(s->tl_count, s->tl_ntype, type, b0 / TL_BLK);
        ST(*c, LD(*c) + 1);
        return;
    }
    if (to > from)
        tl_slow(s, 0, type, from, to);
}

/* This thread was busy in [from, to). */
static inline void tl_busy(struct tscope__shard *s, uint64_t from, uint64_t to)
{
    uint64_t o = sh.origin;
    uint32_t sf = s->tl_shift;
    uint64_t b0 = (from - o) >> sf, b1 = (to - 1 - o) >> sf;
    if (__builtin_expect(to > from && from >= o && b0 == b1 && b1 < TSCOPE__TL_BINS && s->tl_busy,
                         1)) {
        ST(s->tl_busy[b0], LD(s->tl_busy[b0]) + (to - from));
        if (__builtin_expect(b0 >= s->tl_used, 0))
            ST(s->tl_used, (uint32_t)b0 + 1);
        ST(s->busy_count, LD(s->busy_count) + 1);
        return;
    }
    if (to > from)
        tl_slow(s, 1, 0, from, to);
}

/* A task ended: into the duration sample if the store would keep its id
 * (the shard's log carries it to the store, and to a recovery). */
static inline void tl_point(struct tscope__shard *s, const struct tscope_task *t, uint64_t end,
                            uint64_t elapsed)
{
    if (t->id * 0x9E3779B97F4A7C15ull >= LD(sh.pt_threshold))
        return;
    struct tscope__rec r = {
        .ts = end, .id = t->id, .arg = elapsed, .type = t->type, .kind = TSCOPE__REC_POINT};
    tscope__sh_log(s, &r, 1);
}

/* ---- the replay stack ---------------------------------------------------- */

/* The functions of the stack and the task events take `cpu`, a constant at
 * each call (the event functions test sh.cpu once and call their body with
 * 1 or 0, always inlined): without TASKSCOPE_CPU_TIME an event has that one
 * branch and none of the rest. */
#define INLINE static inline __attribute__((always_inline))

/* The thread CPU clock, ns.  CLOCK_THREAD_CPUTIME_ID is the only clock of a
 * thread's own CPU time that counts what the kernel does for it too
 * (getrusage(RUSAGE_THREAD) is another system call, in us; no vDSO has it). */
static inline uint64_t cpu_now(void)
{
    struct timespec c;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    return (uint64_t)c.tv_sec * 1000000000u + (uint64_t)c.tv_nsec;
}

/* A switch on this thread (a segment opens or the top one closes): the CPU
 * time since the last one goes to the task on top, as its self time does
 * (on the thread that ran it: an untied task that moves sums its segments'
 * CPU time wherever they ran).  The owner's only: a fold or a recovery
 * closes segments without it (they are unfinished tasks, not counted). */
static inline void cpu_switch(struct tscope__shard *s)
{
    uint64_t now = cpu_now();
    if (s->n)
        s->seg[s->n - 1].t->cpu += now - s->cpu_since;
    s->cpu_since = now;
}

INLINE int push(struct tscope__shard *s, struct tscope_task *t, uint64_t ts, int cpu)
{
    uint16_t type = t->type;
    if (__builtin_expect(s->n == s->cap || type >= s->nopen, 0)) {
        if (dgrow(&s->seg, &s->cap, s->n, sizeof *s->seg, TSCOPE__SHB_SEG, s->index) ||
            dgrow(&s->open, &s->nopen, type, sizeof *s->open, TSCOPE__SHB_OPEN, s->index))
            return TSCOPE_ENOMEM;
    }
    if (cpu)
        cpu_switch(s);
    if (s->n) {
        struct segment *top = &s->seg[s->n - 1];
        top->self_acc += ts - top->self_since;
        tl_self(s, top->type, top->self_since, ts);
    } else {
        s->busy_since = ts;
    }
    s->seg[s->n++] = (struct segment){t, type, s->open[type]++ != 0, ts, ts, 0};
    t->open++;
    ST(s->top, (uint32_t)type + 1);
    return 0;
}

/* Closes segment i at ts (replay.c's stack_close). */
INLINE void close_segment(struct tscope__shard *s, uint32_t i, uint64_t ts, int cpu)
{
    int was_top = i == s->n - 1;
    if (cpu && was_top)
        cpu_switch(s);
    struct segment g = s->seg[i];
    if (was_top) {
        g.self_acc += ts - g.self_since;
        tl_self(s, g.type, g.self_since, ts);
    }
    struct tscope_task *t = g.t;
    t->self += g.self_acc;
    t->running += ts - g.start;
    if (!g.nested)
        t->running_top += ts - g.start;
    t->open--;
    s->open[g.type]--;
    if (!t->open && (LD(t->state) & TSCOPE__TR_ENDED))
        rec_release(s, t); /* it ended on another thread meanwhile */
    memmove(&s->seg[i], &s->seg[i + 1], (s->n - i - 1) * sizeof g);
    s->n--;
    if (!s->n)
        tl_busy(s, s->busy_since, ts);
    ST(s->top, s->n ? (uint32_t)s->seg[s->n - 1].type + 1 : 0);
    if (was_top && s->n)
        s->seg[s->n - 1].self_since = ts;
    else if (!was_top)
        count_total(s, &s->totals.anomalies); /* improper nesting */
}

/* Closes t's segment here; 0, or -1 when t does not run here. */
INLINE int close_here(struct tscope__shard *s, struct tscope_task *t, uint64_t ts, int cpu)
{
    for (uint32_t i = s->n; i-- > 0;)
        if (s->seg[i].t == t) {
            close_segment(s, i, ts, cpu);
            return 0;
        }
    return -1;
}

static void saw(struct tscope__shard *s, uint16_t type)
{
    struct stype *e = type_entry(s, type);
    if (e && !LD(e->seen)) {
        w_begin(&e->ver);
        ST(e->seen, 1);
        w_end(&e->ver);
    }
}

/* ---- the instance graph ---------------------------------------------------- */

void tscope__shards_set_limit(const struct tscope__store *s)
{
    /* full: only what is above its deepest kept level can make room (settle.c) */
    int32_t limit =
        s->ninst >= s->cfg.instance_cap ? (int32_t)s->inst_deepest - 1 : (int32_t)s->inst_limit;
    if (limit != LD(sh.inst_limit))
        ST(sh.inst_limit, limit);
}

/* Appends records to the log of shard s (the owner: shard_int.h) - the
 * instance graph's, dependencies, duration points - which the fold applies
 * to the store and a recovery reads back. */
int tscope__sh_log(struct tscope__shard *s, const struct tscope__rec *recs, unsigned n)
{
    uint64_t at = LD(s->log_n);
    for (unsigned i = 0; i < n;) {
        uint64_t c = (at + i) >> LOG_BITS, off = (at + i) & (LOG_CHUNK - 1);
        struct tscope__rec *chunk = chunks_make(&s->log, c, LOG_CHUNK, sizeof *chunk);
        if (!chunk) { /* no memory, or 64 M records: counted, as an unusable record */
            count_total(s, &s->totals.anomalies);
            return -1;
        }
        unsigned k = (unsigned)(LOG_CHUNK - off) < n - i ? (unsigned)(LOG_CHUNK - off) : n - i;
        memcpy(&chunk[off], &recs[i], k * sizeof *chunk);
        i += k;
    }
    ST(s->log_n, at + n);
    return 0;
}

static void below_flush(struct tscope__shard *s)
{
    if (!s->below.n)
        return;
    struct tscope__rec r = {.ts = s->below.self,
                            .id = s->below.anc,
                            .arg = s->below.n,
                            .flags = (uint8_t)s->below.cut,
                            .kind = TSCOPE__REC_BELOW};
    tscope__sh_log(s, &r, 1);
    w_begin(&s->below.ver);
    ST(s->below.n, 0);
    ST(s->below.self, 0);
    w_end(&s->below.ver);
}

/* 1 if the instance filters want t (settle.c's instance_wanted): a task
 * they want that the cap leaves out is cut off, one they do not is not. */
static int wanted(const struct tscope_task *t)
{
    if (!sh.filtered)
        return 1;
    const struct tscope__config *c = &sh.store->cfg;
    if (c->filter_ntypes) {
        uint8_t v = atomic_load_explicit(&sh.verdict[t->type], memory_order_relaxed);
        if (!v) {
            v = tscope__inst_type_wanted(c, t->type) ? 1 : 2;
            atomic_store_explicit(&sh.verdict[t->type], v, memory_order_relaxed);
            if (!atomic_load_explicit(&sh.verdicts, memory_order_relaxed))
                atomic_store_explicit(&sh.verdicts, 1, memory_order_relaxed);
        }
        if (v != 1)
            return 0;
    }
    return tscope__inst_rest_wanted(c, t->id, t->flags, t->depth);
}

/* A task that will not enter the instance graph: counted in its nearest
 * ancestor that may (consecutive ones with the same ancestor, and the same
 * verdict of the filters, in one BELOW record). */
static void below(struct tscope__shard *s, const struct tscope_task *t)
{
    uint32_t cut = (uint32_t)wanted(t);
    if (s->below.anc != t->keep_anc || s->below.cut != cut) {
        below_flush(s);
        w_begin(&s->below.ver);
        ST(s->below.anc, t->keep_anc);
        ST(s->below.cut, cut);
        w_end(&s->below.ver);
    }
    w_begin(&s->below.ver);
    ST(s->below.n, s->below.n + 1);
    ST(s->below.self, s->below.self + t->self);
    w_end(&s->below.ver);
}

/* A task that ended or was cancelled at `end`, for the instance graph: an
 * INSTANCE record when it was shallow enough when created (the store keeps
 * it, or links it to its ancestor: its descendants may count in it), else
 * counted below its nearest ancestor that may be kept. */
static void instance_out(struct tscope__shard *s, const struct tscope_task *t, uint64_t end,
                         int state)
{
    uint16_t st = LD(t->state);
    if (!(st & TSCOPE__TR_KEEP) ||
        ((int32_t)t->tdepth > LD(sh.inst_limit) && !(st & TSCOPE__TR_ANC))) {
        /* never shallow enough, or no longer and nothing counts below it */
        if (sh.instances)
            below(s, t);
        return;
    }
    struct tscope__rec r[3] = {
        {.ts = end,
         .id = t->id,
         .arg = t->parent_id,
         .type = t->type,
         .prio = t->prio,
         .depth = t->depth,
         .flags = t->flags,
         .kind = TSCOPE__REC_INSTANCE},
        {.ts = t->create_ts,
         .id = t->begin_ts,
         .arg = t->self,
         .type = t->tdepth,
         .prio = (int16_t)state,
         .flags = (LD(t->state) & TSCOPE__TR_ANC) ? 1 : 0,
         .kind = TSCOPE__REC_EXT},
        {.ts = t->running,
         .id = t->keep_anc,
         .arg = (uint64_t)t->thread << 32 | t->yields,
         .kind = TSCOPE__REC_EXT},
    };
    tscope__sh_log(s, r, 3);
}

/* The store's task for an instance of t (settle.c's fields). */
static struct tscope__task task_of(const struct tscope_task *t, uint64_t end)
{
    return (struct tscope__task){.id = t->id,
                                 .parent_id = t->parent_id,
                                 .create_ts = t->create_ts,
                                 .begin_ts = t->begin_ts,
                                 .end_ts = end,
                                 .self = t->self,
                                 .running = t->running,
                                 .thread = t->thread,
                                 .yields = t->yields,
                                 .type = t->type,
                                 .prio = t->prio,
                                 .depth = t->depth,
                                 .flags = t->flags,
                                 .tdepth = t->tdepth};
}

int tscope__shards_live_task(uint64_t id, struct tscope__task *out)
{
    struct tscope_task *t = tscope__idmap_get(id);
    if (!t || !tscope__shard_live(t))
        return 0;
    *out = task_of(t, 0);
    return 1;
}

/* ---- events -------------------------------------------------------------- */

/* What a journal_* saved is complete: the version goes odd after it. */
static inline void journal_open(struct send *j)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    j->ver++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* An end or a cancel of t changes entries e and n (NULL: none), the below
 * count, the log and t's state: their counts are kept as they were, and
 * ending.ver made odd, until journal_done; a recovery puts them back
 * (undo_ending).  The owner alone writes and reads these (plain accesses:
 * nobody else writes the entries, nobody else reads the journal but a
 * recovery, later); only the order of its stores matters (a SIGKILL keeps
 * every store made, in the page cache), hence the compiler fences.  About
 * 30 loads and stores an end. */
static inline void journal_end(struct tscope__shard *s, const struct tscope_task *t,
                               const struct stype *e, const struct snode *n, uint32_t node, int cpu)
{
    struct send *j = &s->ending;
    j->rec = (struct tscope_task *)t;
    j->state = LD(t->state);
    j->create = 0;
    j->log_n = s->log_n;
    j->type = e ? t->type : TSCOPE__NONE;
    if (e) {
        j->type_ver = e->ver;
        j->calls = e->calls;
        j->yields = e->yields;
        j->cancelled = e->cancelled;
        j->n_self = e->self.n;
        j->n_running = e->running.n;
        j->n_elapsed = e->elapsed.n;
        if (cpu) /* else 0, as the entry's count */
            j->n_cpu = e->cpu.n;
    }
    j->node = n ? node : TSCOPE__NONE;
    if (n) {
        j->node_ver = n->ver;
        j->node_calls = n->calls;
    }
    j->edge = TSCOPE__NONE;
    j->below_was = s->below;
    journal_open(j);
}

/* A create publishes t's record (its state) and counts it in entry e and
 * edge count c (NULL: none), likewise kept until journal_done. */
static inline void journal_create(struct tscope__shard *s, const struct tscope_task *t,
                                  const struct stype *e, const uint64_t *c)
{
    struct send *j = &s->ending;
    j->rec = (struct tscope_task *)t;
    j->state = LD(t->state);
    j->create = 1; /* (the below count and the log stay as they are) */
    j->type = e ? t->type : TSCOPE__NONE;
    if (e) {
        j->type_ver = e->ver;
        j->created = e->created;
    }
    j->node = TSCOPE__NONE;
    j->edge = c ? t->edge : TSCOPE__NONE;
    if (c)
        j->edge_was = *c;
    journal_open(j);
}

static inline void journal_done(struct tscope__shard *s)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->ending.ver++;
}

static struct tscope_task *make(struct tscope__shard *s, uint64_t ts, uint64_t id,
                                struct tscope_task *parent, uint16_t type)
{
    struct tscope_task *t = rec_alloc(s);
    if (!t) {
        count_total(s, &s->totals.anomalies);
        return NULL;
    }
    t->id = id;
    t->create_ts = ts;
    t->begin_ts = 0;
    t->self = t->running = t->running_top = t->cpu = 0;
    t->thread = 0; /* until its first begin (settle.c's instance of a task never run) */
    t->yields = t->resumes = 0;
    t->type = type;
    t->depth = 0;
    t->prio = 0;
    t->flags = 0;
    t->open = 0;
    uint32_t pnode = 0, set = 0;
    uint16_t ptype = TSCOPE__ROOT_TYPE;
    uint8_t nested = 0;
    if (parent) {
        pnode = parent->node;
        if (pnode != 0)
            ptype = parent->type;
        t->parent_id = parent->id;
        uint16_t ps = LD(parent->state);
        t->keep_anc = (ps & TSCOPE__TR_KEEP) ? parent->id : parent->keep_anc;
        if ((ps & (TSCOPE__TR_KEEP | TSCOPE__TR_ANC)) == TSCOPE__TR_KEEP)
            ST(parent->state, (uint16_t)(ps | TSCOPE__TR_ANC));
        t->tdepth = parent->tdepth < 0xFFFE ? (uint16_t)(parent->tdepth + 1) : 0xFFFE;
        child_set(s, parent->anc, parent->type, type, &set, &nested);
    } else {
        t->parent_id = 0;
        t->keep_anc = 0;
        t->tdepth = 0;
    }
    uint16_t keep = sh.instances && (int32_t)t->tdepth <= LD(sh.inst_limit) ? TSCOPE__TR_KEEP : 0;
    t->anc = set;
    path_step(s, pnode, ptype, type, &t->node, &t->edge, &t->step);
    struct stype *e = type_entry(s, type);
    uint64_t *c = t->edge != TSCOPE__NONE ? chunk_at(&s->edges, t->edge, sizeof *c) : NULL;
    journal_create(s, t, e, c);
    ST(t->state, (uint16_t)(TSCOPE__TR_CREATED | (nested ? TSCOPE__TR_NESTED : 0) | keep));
    if (e) {
        w_begin(&e->ver);
        ADD(e->created, 1);
        w_end(&e->ver);
    }
    if (c) {
        ADD(*c, 1);
        if (t->edge >= LD(s->hi_edge))
            ST(s->hi_edge, t->edge + 1);
    }
    journal_done(s);
    return t;
}

struct tscope_task *tscope__shard_create(uint32_t thread, uint64_t ts, uint64_t id,
                                         struct tscope_task *parent, uint16_t type, uint8_t flags,
                                         uint16_t depth, int16_t prio)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (parent && !tscope__shard_live(parent))
        parent = NULL; /* ended, or of an earlier tscope_init: no parent to read */
    struct tscope_task *t = s ? make(s, ts, id, parent, type) : NULL;
    if (s)
        count_event(s);
    if (t) {
        t->flags = flags;
        t->depth = depth;
        t->prio = prio;
    }
    return t;
}

INLINE int begin_here(struct tscope__shard *s, struct tscope_task *t, uint64_t ts, int cpu)
{
    if (LD(t->state) & TSCOPE__TR_BEGUN) {
        count_total(s, &s->totals.anomalies); /* begun twice: a resume was meant */
        return TSCOPE_EINVAL;
    }
    ST(t->state, (uint16_t)(LD(t->state) | TSCOPE__TR_BEGUN));
    t->begin_ts = ts;
    t->thread = s->index;
    if (push(s, t, ts, cpu)) {
        count_total(s, &s->totals.anomalies);
        return TSCOPE_ENOMEM;
    }
    saw(s, t->type);
    return 0;
}

struct tscope_task *tscope__shard_start(uint32_t thread, uint64_t ts, uint64_t id, uint16_t type)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s)
        return NULL;
    count_event(s);
    struct tscope_task *t = make(s, ts, id, s->n ? s->seg[s->n - 1].t : NULL, type);
    if (t) {
        if (__builtin_expect(sh.cpu, 0))
            begin_here(s, t, ts, 1);
        else
            begin_here(s, t, ts, 0);
    }
    return t;
}

struct tscope_task *tscope__shard_ring_record(uint32_t thread, uint64_t id, uint16_t type)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    struct tscope_task *t = s ? rec_alloc(s) : NULL;
    if (t) {
        t->id = id;
        t->type = type;
        ST(t->state, (uint16_t)TSCOPE__TR_RING);
    }
    return t;
}

void tscope__shard_release(uint32_t thread, struct tscope_task *t)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (s && t)
        rec_release(s, t);
}

int tscope__shard_begin(uint32_t thread, uint64_t ts, struct tscope_task *t)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s || !tscope__shard_live(t)) /* ended already, or of an earlier tscope_init */
        return TSCOPE_EINVAL;
    count_event(s);
    return __builtin_expect(sh.cpu, 0) ? begin_here(s, t, ts, 1) : begin_here(s, t, ts, 0);
}

/* A task's numbers into this shard's statistics (settle.c's count_done). */
INLINE void count_done(struct tscope__shard *s, const struct tscope_task *t, uint64_t end,
                       struct stype *e, struct snode *n, int cpu)
{
    uint64_t elapsed = end > t->begin_ts ? end - t->begin_ts : 0;
    if (e) {
        w_begin(&e->ver);
        ADD(e->calls, 1);
        ADD(e->yields, t->yields);
        sacc_add(&e->self, t->self);
        sacc_add(&e->running, t->running);
        sacc_add(&e->elapsed, elapsed);
        if (cpu)
            sacc_add(&e->cpu, t->cpu);
        ADD(e->running_total, t->running_top);
        if (!(LD(t->state) & TSCOPE__TR_NESTED))
            ADD(e->elapsed_total, elapsed);
        w_end(&e->ver);
    }
    if (n) {
        w_begin(&n->ver);
        ADD(n->calls, 1);
        ADD(n->self, t->self);
        if (t->step & TSCOPE__STEP_FOLDED) {
            ADD(n->running, t->running_top); /* the node's outer task holds the rest */
        } else {
            ADD(n->running, t->running);
            ADD(n->elapsed, elapsed);
        }
        w_end(&n->ver);
    }
    tl_point(s, t, end, elapsed);
}

/* A task that ended or was cancelled: its record back to the pool, or, while
 * a segment of it is still open on another thread (a runtime's mistake),
 * when that one closes (close_segment). */
static void release_ended(struct tscope__shard *s, struct tscope_task *t)
{
    if (t->open)
        ST(t->state, (uint16_t)(LD(t->state) | TSCOPE__TR_ENDED));
    else
        rec_release(s, t);
}

INLINE void end_here(struct tscope__shard *s, uint64_t ts, struct tscope_task *t, int cpu)
{
    if (__builtin_expect(s->n && s->seg[s->n - 1].t == t, 1))
        close_segment(s, s->n - 1, ts, cpu);
    else if (close_here(s, t, ts, cpu))
        count_total(s, &s->totals.anomalies); /* not running here */
    if (t->open || t->yields != t->resumes)
        count_total(s, &s->totals.anomalies); /* still open elsewhere: ended all the same */
    struct stype *e = type_entry(s, t->type);
    uint32_t node = t->node == TSCOPE__NONE ? 0 : t->node;
    struct snode *n = node_entry(s, node);
    journal_end(s, t, e, n, node, cpu);
    count_done(s, t, ts, e, n, cpu);
    instance_out(s, t, ts, TSCOPE_TASK_DONE);
    release_ended(s, t);
    journal_done(s);
}

int tscope__shard_end(uint32_t thread, uint64_t ts, struct tscope_task *t)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s || !tscope__shard_live(t)) /* ended already, or of an earlier tscope_init */
        return TSCOPE_EINVAL;
    count_event(s);
    if (__builtin_expect(sh.cpu, 0))
        end_here(s, ts, t, 1);
    else
        end_here(s, ts, t, 0);
    return 0;
}

int tscope__shard_yield(uint32_t thread, uint64_t ts, struct tscope_task *t)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s || !tscope__shard_live(t)) /* ended already, or of an earlier tscope_init */
        return TSCOPE_EINVAL;
    count_event(s);
    if (__builtin_expect(sh.cpu, 0) ? close_here(s, t, ts, 1) : close_here(s, t, ts, 0)) {
        count_total(s, &s->totals.anomalies);
        return TSCOPE_EINVAL;
    }
    t->yields++;
    return 0;
}

int tscope__shard_resume(uint32_t thread, uint64_t ts, struct tscope_task *t)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s || !tscope__shard_live(t)) /* ended already, or of an earlier tscope_init */
        return TSCOPE_EINVAL;
    count_event(s);
    if (__builtin_expect(sh.cpu, 0) ? push(s, t, ts, 1) : push(s, t, ts, 0)) {
        count_total(s, &s->totals.anomalies);
        return TSCOPE_ENOMEM;
    }
    t->resumes++;
    saw(s, t->type);
    return 0;
}

void tscope__shard_queued(uint32_t thread)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (s)
        count_event(s);
}

int tscope__shard_cancel(uint32_t thread, uint64_t ts, struct tscope_task *t)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (!s || !tscope__shard_live(t)) /* ended already, or of an earlier tscope_init */
        return TSCOPE_EINVAL;
    count_event(s);
    int cpu = sh.cpu;          /* (off the hot path: one body) */
    close_here(s, t, ts, cpu); /* running here: cancelling ends it */
    struct stype *e = type_entry(s, t->type);
    journal_end(s, t, e, NULL, 0, cpu);
    if (e) {
        w_begin(&e->ver);
        ADD(e->cancelled, 1);
        w_end(&e->ver);
    }
    instance_out(s, t, ts, TSCOPE_TASK_CANCELLED);
    release_ended(s, t);
    journal_done(s);
    return 0;
}

/* ---- fold ---------------------------------------------------------------- */

static void sacc_fold(struct tscope__acc *to, const struct sacc *now, const struct sacc *was)
{
    uint64_t dn = now->n - was->n;
    if (!dn)
        return;
    if (to->n == 0 || now->min < to->min)
        to->min = now->min;
    if (now->max > to->max)
        to->max = now->max;
    to->n += dn;
    to->sum += now->sum - was->sum;
    unsigned __int128 a = (unsigned __int128)now->sq_hi << 64 | now->sq_lo;
    unsigned __int128 b = (unsigned __int128)was->sq_hi << 64 | was->sq_lo;
    to->sumsq += a - b;
}

/* What a shard's bins gained since the fold's copy: into the store's
 * timeline (store lock held; bins only grow, and widen only under it). */
static void fold_bins(struct tscope__store *st, uint32_t shift, uint32_t lo, uint32_t used,
                      const uint64_t *bins, uint64_t *f, uint64_t ***arrays, uint32_t *n,
                      uint32_t index, int64_t wait_thread)
{
    for (uint32_t b = lo; b < used && b < TSCOPE__TL_BINS; b++) {
        uint64_t now = LD(bins[b]);
        if (now != f[b]) {
            tscope__tl_add_bin(&st->tl, arrays, n, index, shift, b, now - f[b]);
            if (wait_thread >= 0) /* a waiting type's self time: the thread waited */
                tscope__tl_add_bin(&st->tl, &st->tl.wait, &st->tl.nwait, (uint32_t)wait_thread,
                                   shift, b, now - f[b]);
            f[b] = now;
        }
    }
}

static void fold_timeline(struct tscope__store *st, struct tscope__shard *s)
{
    struct folded *f = FOLD(s);
    uint32_t shift = s->tl_shift;
    /* Read before the counts: the blocks below it are the ones read, and
     * their copies the only ones updated, so an add that raised it meanwhile
     * is in a block whose count the next fold sees changed. */
    uint32_t used = LD_ACQ(s->tl_used);
    uint32_t nb = (used + TL_BLK - 1) / TL_BLK;
    if (nb > TL_NBLK)
        nb = TL_NBLK;
    for (uint32_t t = 0; t < s->tl_ntype && nb; t++) {
        if (!s->tl_type[t])
            continue;
        uint32_t cap = s->tl_ntype;
        uint64_t c[TL_NBLK]; /* then the bins: as new as the adds counted */
        int changed = t >= f->tl_ntype || !f->tl_type[t];
        for (uint32_t k = 0; k < nb; k++) {
            c[k] = LD_ACQ(TLC(s->tl_count, cap, t, k));
            changed |= !changed && TLC(f->tl_count, f->tl_ntype, t, k) != c[k];
        }
        if (!changed)
            continue;           /* no add since the last fold */
        if (t >= f->tl_ntype) { /* the copy grows to the shard's capacity */
            uint64_t **a = realloc(f->tl_type, cap * sizeof *a);
            uint64_t *k = a ? calloc((size_t)cap * TL_NBLK, sizeof *k) : NULL;
            if (a)
                f->tl_type = a;
            if (!k)
                return;
            for (uint32_t b = 0; f->tl_count && b < TL_NBLK; b++)
                memcpy(&TLC(k, cap, 0, b), &TLC(f->tl_count, f->tl_ntype, 0, b),
                       f->tl_ntype * sizeof *k);
            free(f->tl_count);
            f->tl_count = k;
            memset(a + f->tl_ntype, 0, (cap - f->tl_ntype) * sizeof *a);
            f->tl_ntype = cap;
        }
        uint32_t fcap = f->tl_ntype;
        if (!f->tl_type[t]) {
            if (!(f->tl_type[t] = calloc(TSCOPE__TL_BINS, sizeof **f->tl_type)))
                return;
            for (uint32_t k = 0; k < TL_NBLK; k++) /* every block: the copy is new */
                TLC(f->tl_count, fcap, t, k) = ~LD(TLC(s->tl_count, cap, t, k));
        }
        for (uint32_t k = 0; k < nb; k++) {
            if (TLC(f->tl_count, fcap, t, k) == c[k])
                continue;
            uint32_t hi = (k + 1) * TL_BLK < used ? (k + 1) * TL_BLK : used;
            fold_bins(st, shift, k * TL_BLK, hi, s->tl_type[t], f->tl_type[t], &st->tl.type,
                      &st->tl.ntype, t, tscope__tl_waits(&st->tl, t) ? (int64_t)s->index : -1);
            TLC(f->tl_count, fcap, t, k) = c[k];
        }
    }
    uint64_t c = LD_ACQ(s->busy_count);
    if (s->tl_busy && (c != f->busy_count || !f->tl_busy)) {
        if (!f->tl_busy && !(f->tl_busy = calloc(TSCOPE__TL_BINS, sizeof *f->tl_busy)))
            return;
        used = LD_ACQ(s->tl_used);
        fold_bins(st, shift, 0, used, s->tl_busy, f->tl_busy, &st->tl.thread, &st->tl.nthread,
                  s->index, -1);
        f->busy_count = c;
    }
}

/* The duration sample's points not folded yet (store lock held). */

#define PREFETCH_AHEAD 8 /* entries */

/* Starts loading a shard's entry (and the fold's copy of it) into the cache. */
static inline void prefetch_entry(const void *e, size_t size, const void *copy)
{
    for (size_t off = 0; e && off < size; off += 64)
        __builtin_prefetch((const char *)e + off);
    for (size_t off = 0; off < size; off += 64)
        __builtin_prefetch((const char *)copy + off, 1);
}

/* Counts n tasks (self ticks) below anc: what a shard's BELOW record
 * carries, less what the fold took of it while it was pending. */
static void below_add(struct tscope__store *st, struct folded *f, uint64_t anc, uint64_t n,
                      uint64_t self, uint64_t cut)
{
    struct sbelow *tk = &f->below_taken;
    if (tk->n && tk->anc == anc && tk->cut == cut) {
        n = n > tk->n ? n - tk->n : 0;
        self = self > tk->self ? self - tk->self : 0;
        tk->n = tk->self = 0;
    }
    if (n)
        tscope__store_below_cut(st, anc, n, self, (int)cut);
}

/* Takes what a shard's pending BELOW gained since the fold last took it
 * (after its log: a BELOW record the log has settles what was taken).
 * `all`: the owner makes no more events, take it all and empty it. */
static void below_take(struct tscope__store *st, struct tscope__shard *s, int all)
{
    struct folded *f = FOLD(s);
    struct sbelow b, *tk = &f->below_taken;
    if (!tscope__sh_read_entry((const uint64_t *)&s->below, (uint64_t *)&b, WORDS(b)) || !b.n)
        return;
    if (tk->n && (tk->anc != b.anc || tk->cut != b.cut)) {
        if (!all)
            return;           /* its BELOW record is not in the log yet: the next fold */
        tk->n = tk->self = 0; /* recovery of a torn pair: taken is what it had */
    }
    if (b.n > tk->n)
        tscope__store_below_cut(st, b.anc, b.n - tk->n, b.self > tk->self ? b.self - tk->self : 0,
                                (int)b.cut);
    *tk = b;
    if (all) {
        w_begin(&s->below.ver);
        ST(s->below.n, 0);
        ST(s->below.self, 0);
        w_end(&s->below.ver);
        tk->n = tk->self = 0;
    }
}

/* Record i of a shard's log (a reader: below log_n), or NULL. */
static const struct tscope__rec *log_peek(struct tscope__shard *s, uint64_t i)
{
    const struct tscope__rec *c = chunks_get(&s->log, i >> LOG_BITS);
    return c ? &c[i & (LOG_CHUNK - 1)] : NULL;
}

/* Applies the records of a shard's log the store has not had (lock held). */
static void fold_log(struct tscope__store *st, struct tscope__shard *s)
{
    struct folded *f = FOLD(s);
    uint64_t n = LD_ACQ(s->log_n);
    while (f->log_taken < n) {
        const struct tscope__rec *r = log_peek(s, f->log_taken);
        if (!r) { /* no chunk there (a damaged count or directory): on to the next one */
            st->anomalies++;
            f->log_taken = (f->log_taken | (LOG_CHUNK - 1)) + 1;
            continue;
        }
        unsigned exts = tscope__rec_exts(r);
        struct tscope__rec ext[2];
        for (unsigned k = 0; r && k < exts && k < 2; k++) {
            const struct tscope__rec *x =
                f->log_taken + 1 + k < n ? log_peek(s, f->log_taken + 1 + k) : NULL;
            if (!x) {
                r = NULL;
                break;
            }
            ext[k] = *x;
        }
        if (r && r->kind == TSCOPE__REC_POINT)
            tscope__tl_point(&st->tl, r->id, r->ts, r->arg, r->type);
        else if (r && r->kind == TSCOPE__REC_BELOW)
            below_add(st, f, r->id, r->arg, r->ts, r->flags & 1);
        else if (r && r->kind == TSCOPE__REC_INSTANCE)
            tscope__store_apply(st, s->index, r, exts ? ext : NULL);
        else if (r && exts &&
                 (r->kind == TSCOPE__REC_DEP_LOCAL || r->kind == TSCOPE__REC_DEP_REMOTE))
            tscope__store_dep_list(st, r, ext); /* its counts are the shard's (shard_events.c) */
        else
            st->anomalies++; /* not what a shard writes: a damaged log */
        f->log_taken += 1 + exts;
    }
    if (f->log_taken > n) /* damaged: a record's EXTs past its end */
        f->log_taken = n;
    ST(sh.pt_threshold, st->tl.threshold); /* the duration sample may have halved */
}

void tscope__shards_fold_logs(struct tscope__store *st)
{
    if (st != sh.store)
        return;
    uint32_t n = __atomic_load_n(&sh.nshards, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&sh.shards[i], __ATOMIC_ACQUIRE);
        if (s && LD_ACQ(s->log_n) != FOLD(s)->log_taken)
            fold_log(st, s);
        if (s)
            below_take(st, s, 0);
    }
    tscope__shards_set_limit(st); /* the cap may have lowered it */
}

static void fold_one(struct tscope__store *st, struct tscope__shard *s)
{
    struct folded *f = FOLD(s);
    fold_log(st, s);
    below_take(st, s, 0);
    uint32_t hi = LD(s->hi_type);
    if (hi && tscope__grow(&f->types, &f->ntypes, hi - 1, sizeof *f->types))
        return;
    for (uint32_t i = 0; i < hi; i++) {
        struct stype *e = chunk_peek(&s->types, i, sizeof *e), now;
        if (i + PREFETCH_AHEAD < hi) /* the entries are read once each: start the misses early */
            prefetch_entry(chunk_peek(&s->types, i + PREFETCH_AHEAD, sizeof *e), sizeof *e,
                           &f->types[i + PREFETCH_AHEAD]);
        if (!e || !tscope__sh_read_entry((const uint64_t *)e, (uint64_t *)&now, WORDS(now)) ||
            now.ver == f->types[i].ver || tscope__store_grow_types(st, i))
            continue;
        struct stype *was = &f->types[i];
        struct tscope__type_acc *ta = &st->types[i];
        ta->created += now.created - was->created;
        ta->calls += now.calls - was->calls;
        st->created += now.created - was->created;
        st->completed += now.calls - was->calls;
        st->cancelled += now.cancelled - was->cancelled;
        f->totals.live += (now.created - was->created) - (now.calls - was->calls) -
                          (now.cancelled - was->cancelled);
        ta->yields += now.yields - was->yields;
        ta->cancelled += now.cancelled - was->cancelled;
        ta->unfinished += now.unfinished - was->unfinished;
        ta->running_total += now.running_total - was->running_total;
        ta->elapsed_total += now.elapsed_total - was->elapsed_total;
        sacc_fold(&ta->self, &now.self, &was->self);
        sacc_fold(&ta->running, &now.running, &was->running);
        sacc_fold(&ta->elapsed, &now.elapsed, &was->elapsed);
        if (now.calls != was->calls) /* the slot's share: what its threads ended */
            tscope__stack_count(
                st, s->index, 1, (uint16_t)i, now.calls - was->calls, now.self.sum - was->self.sum,
                now.running_total - was->running_total, now.elapsed_total - was->elapsed_total);
        sacc_fold(&ta->cpu, &now.cpu, &was->cpu);
        if (now.seen && !was->seen)
            tscope__type_saw_thread(st, i, s->index);
        *was = now;
    }
    hi = LD(s->hi_node);
    if (hi && tscope__grow(&f->nodes, &f->nnodes, hi - 1, sizeof *f->nodes))
        return;
    for (uint32_t i = 0; i < hi && i < st->nnodes; i++) {
        struct snode *e = chunk_peek(&s->nodes, i, sizeof *e), now;
        if (i + PREFETCH_AHEAD < hi && i + PREFETCH_AHEAD < f->nnodes)
            prefetch_entry(chunk_peek(&s->nodes, i + PREFETCH_AHEAD, sizeof *e), sizeof *e,
                           &f->nodes[i + PREFETCH_AHEAD]);
        if (!e || !tscope__sh_read_entry((const uint64_t *)e, (uint64_t *)&now, WORDS(now)) ||
            now.ver == f->nodes[i].ver)
            continue;
        struct snode *was = &f->nodes[i];
        struct tscope__node *n = &st->nodes[i];
        n->calls += now.calls - was->calls;
        n->self += now.self - was->self;
        n->running += now.running - was->running;
        n->elapsed += now.elapsed - was->elapsed;
        *was = now;
    }
    hi = LD(s->hi_edge);
    if (hi && tscope__grow(&f->edges, &f->nedges, hi - 1, sizeof *f->edges))
        return;
    for (uint32_t i = 0; i < hi && i < st->nedges; i++) {
        uint64_t *e = chunk_peek(&s->edges, i, sizeof *e);
        if (!e)
            continue;
        uint64_t now = LD(*e);
        st->edges[i].count += now - f->edges[i];
        f->edges[i] = now;
    }
    struct stotals now;
    if (tscope__sh_read_entry((const uint64_t *)&s->totals, (uint64_t *)&now, WORDS(now))) {
        struct stotals *was = &f->totals;
        st->anomalies += now.anomalies - was->anomalies;
        if (now.events != was->events) {
            st->events += now.events - was->events;
            struct tscope__tstack *k = tscope__stack_of(st, s->index);
            if (k)
                k->events += now.events - was->events;
        }
        was->ver = now.ver;
        was->anomalies = now.anomalies;
        was->events = now.events;
    }
    fold_timeline(st, s);
}

void tscope__shards_fold(struct tscope__store *st)
{
    if (st != sh.store)
        return;
    uint32_t n = __atomic_load_n(&sh.nshards, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&sh.shards[i], __ATOMIC_ACQUIRE);
        if (s)
            fold_one(st, s);
    }
    tscope__sh_fold_events(st, sh.shards, n);
}

/* Empties a shard whose owner makes no event now (the entries and what the
 * fold took from them, together: nothing is taken twice). */
static void shard_clear(struct tscope__shard *s)
{
    struct chunks *cs[3] = {&s->types, &s->nodes, &s->edges};
    const size_t elem[3] = {sizeof(struct stype), sizeof(struct snode), sizeof(uint64_t)};
    for (int k = 0; k < 3; k++)
        for (uint32_t i = 0, n = chunks_n(cs[k]); i < n; i++) {
            void *p = chunks_get(cs[k], i);
            if (p)
                memset(p, 0, CHUNK * elem[k]);
        }
    for (uint32_t i = 0; i < SDIR_MAX; i++) {
        if (s->counters.dir[i])
            memset(s->counters.dir[i], 0, CHUNK * sizeof(struct scounter));
        if (s->customs.dir[i])
            memset(s->customs.dir[i], 0, CHUNK * sizeof(struct scustom));
        if (s->peers.dir[i])
            memset(s->peers.dir[i], 0, CHUNK * sizeof(struct speer));
        if (s->deptypes.dir[i])
            memset(s->deptypes.dir[i], 0, CHUNK * sizeof(struct sdeptype));
    }
    ST(s->hi_deptype, 0);
    memset(&s->deps, 0, sizeof s->deps);
    ST(s->hi_type, 0);
    ST(s->hi_node, 0);
    ST(s->hi_edge, 0);
    ST(s->hi_counter, 0);
    ST(s->hi_custom, 0);
    ST(s->hi_peer, 0);
    ST(s->log_n, 0);
    memset(&s->totals, 0, sizeof s->totals);
    for (uint32_t t = 0; t < s->tl_ntype; t++)
        dfree(s->tl_type[t]);
    dfree(s->tl_type);
    dfree(s->tl_count);
    dfree(s->tl_busy);
    s->tl_type = NULL;
    s->tl_count = s->tl_busy = NULL;
    s->tl_ntype = 0;
    s->busy_since = 0;
    ST(s->busy_count, 0);
    ST(s->tl_shift, TSCOPE__TL_SHIFT0);
    ST(s->tl_used, 0);
    ST(s->top, 0); /* read by tscope__shards_running without a lock */
    free(FOLD(s)->types);
    free(FOLD(s)->nodes);
    free(FOLD(s)->edges);
    for (uint32_t t = 0; t < FOLD(s)->tl_ntype; t++)
        free(FOLD(s)->tl_type[t]);
    free(FOLD(s)->tl_type);
    free(FOLD(s)->tl_count);
    free(FOLD(s)->tl_busy);
    memset(FOLD(s), 0, sizeof *FOLD(s));
    memset(s->nodes_cache, 0, sizeof s->nodes_cache);
    memset(s->sets_cache, 0, sizeof s->sets_cache);
    for (uint32_t i = 0; i < s->nopen; i++)
        s->open[i] = 0;
}

void tscope__shards_retire(struct tscope__store *st, uint32_t thread, uint64_t end)
{
    struct tscope__shard *s =
        thread < TSCOPE__THREADS_MAX ? __atomic_load_n(&sh.shards[thread], __ATOMIC_ACQUIRE) : NULL;
    if (!s || st != sh.store)
        return;
    store_locked = 1;
    while (s->n) /* what it left running is unfinished (the store's thread_gone) */
        close_segment(s, s->n - 1, end, 0);
    store_locked = 0;
    fold_log(st, s);
    below_take(st, s, 1); /* the owner is gone: its pending count goes in here */
    fold_one(st, s);
    /* the slot's next thread goes on in this shard (so that the mapping
     * holds every retired thread's tasks too); only "this thread ran the
     * type" starts again, as the store's does (a type's threads are
     * threads, not slots) */
    uint32_t hi = LD(s->hi_type);
    for (uint32_t i = 0; i < hi; i++) {
        struct stype *e = chunk_peek(&s->types, i, sizeof *e);
        if (e && LD(e->seen)) {
            w_begin(&e->ver);
            ST(e->seen, 0);
            w_end(&e->ver);
            if (i < FOLD(s)->ntypes) {
                FOLD(s)->types[i].seen = 0;
                FOLD(s)->types[i].ver = LD(e->ver);
            }
        }
    }
}

void tscope__shards_complete(struct tscope__store *st, uint64_t end)
{
    if (st != sh.store)
        return;
    st->completed_at = end;
    store_locked = 1;
    for (uint32_t i = 0; i < sh.nshards; i++) {
        struct tscope__shard *s = sh.shards[i];
        while (s && s->n) { /* what still runs ends here (its time in the timeline) */
            struct tscope_task *t = s->seg[s->n - 1].t;
            ST(t->state, (uint16_t)(LD(t->state) | TSCOPE__TR_RAN_TO_END));
            close_segment(s, s->n - 1, end, 0);
        }
        if (s) {
            fold_log(st, s);
            below_take(st, s, 1);
        }
    }
    store_locked = 0;
    tscope__shards_fold(st);
    /* what is alive: begun (running or yielded) is unfinished, created only
     * never ran (settle.c's finalize) */
    for (uint32_t c = sh.rchunks_now; c < sh.nrchunks; c++)
        for (uint32_t i = 0, used = rchunk_used(c); i < used; i++) {
            struct tscope_task *t = &sh.rchunks[c][i];
            uint16_t state = LD(t->state);
            if (state == TSCOPE__TR_FREE || (state & TSCOPE__TR_RING) ||
                (state & TSCOPE__TR_ENDED) || /* counted at its end (a segment left open) */
                tscope__store_grow_types(st, t->type))
                continue;
            int begun = state & TSCOPE__TR_BEGUN;
            if (begun) { /* what it ran until the end goes into the type's totals */
                /* (a recovered record's thread may be anything: a shard's or none) */
                tscope__settle_count_unfinished(
                    st, t->thread < sh.nshards ? t->thread : TSCOPE__NONE, t->type, t->self,
                    t->running_top, end > t->begin_ts ? end - t->begin_ts : 0,
                    (state & TSCOPE__TR_NESTED) != 0);
            } else {
                st->never_ran++;
            }
            if (state & TSCOPE__TR_KEEP) {
                struct tscope__task k = task_of(t, (state & TSCOPE__TR_RAN_TO_END) ? end : 0);
                tscope__store_instance(st, &k, begun ? TSCOPE_TASK_UNFINISHED : TSCOPE_TASK_LIVE,
                                       t->keep_anc, (state & TSCOPE__TR_ANC) != 0);
            } else if (sh.instances) { /* cut off when the filters want it, as below() */
                tscope__store_below_cut(st, t->keep_anc, 1, t->self, wanted(t));
            }
            ST(t->state, TSCOPE__TR_FREE); /* counted once */
        }
}

void tscope__shards_free(void)
{
    pthread_mutex_lock(&sh.lock);
    for (uint32_t i = 0; i < sh.nshards; i++) {
        struct tscope__shard *s = sh.shards[i];
        if (!s)
            continue;
        shard_clear(s);
        chunks_free(&s->types);
        chunks_free(&s->nodes);
        chunks_free(&s->edges);
        dir_free(s->counters.dir, SDIR_MAX);
        dir_free(s->customs.dir, SDIR_MAX);
        dir_free(s->peers.dir, SDIR_MAX);
        chunks_free(&s->log);
        dir_free(s->deptypes.dir, SDIR_MAX);
        dfree(s->seg);
        dfree(s->open);
        dfree(s);
        __atomic_store_n(&sh.shards[i], NULL, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&sh.nshards, 0, __ATOMIC_RELEASE);
    tscope__idmap_clear(); /* what it maps is gone */
    tscope__sh_events_free();
    /* the record chunks stay (a runtime may still hold a handle of this
     * tscope_init), never to be reused: the next one takes fresh chunks */
    sh.rchunks_now = sh.nrchunks;
    sh.spare = NULL;
    sh.nspare = 0;
    for (uint32_t i = 0; i < sh.nsets; i++)
        free(sh.sets[i].bits);
    free(sh.sets);
    sh.sets = NULL;
    sh.nsets = sh.cap_sets = 0;
    tscope__u64map_free(&sh.set_map);
    sh.store = NULL;
    sh.nlog = sh.log_used = 0;
    sh.log = NULL;
    pthread_mutex_unlock(&sh.lock);
}

/* What the shards take from their store: its timeline's origin and sample
 * threshold, the instance graph's limit, cap and filters. */
static void take_store(struct tscope__store *st)
{
    sh.store = st;
    sh.origin = st->tl.origin;
    ST(sh.pt_threshold, st->tl.threshold);
    tscope__shards_set_limit(st);
    sh.instances = st->cfg.instance_cap > 0;
    sh.cpu = st->cfg.cpu_time;
    sh.filtered = tscope__inst_filtered(st);
    if (atomic_load_explicit(&sh.verdicts, memory_order_relaxed)) /* 64 KiB: not at every init */
        for (uint32_t i = 0; i <= TSCOPE__MAX_IDS; i++)
            atomic_store_explicit(&sh.verdict[i], 0, memory_order_relaxed);
    atomic_store_explicit(&sh.verdicts, 0, memory_order_relaxed);
}

void tscope__shards_reset(struct tscope__store *st)
{
    tscope__shards_free();
    pthread_mutex_lock(&sh.lock);
    /* set 0: no ancestor */
    if (!tscope__u64map_init(&sh.set_map, 64) &&
        !tscope__grow(&sh.sets, &sh.cap_sets, 0, sizeof *sh.sets))
        sh.nsets = 1;
    ST(tscope__shards_gen, LD(tscope__shards_gen) + 1);
    take_store(st);
    pthread_mutex_unlock(&sh.lock);
}

uint64_t tscope__shards_live(const struct tscope__store *st)
{
    if (st != sh.store)
        return 0;
    int64_t live = 0;
    uint32_t n = __atomic_load_n(&sh.nshards, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&sh.shards[i], __ATOMIC_ACQUIRE);
        if (s) {
            const struct stotals *t = &FOLD(s)->totals;
            live += (int64_t)t->live;
        }
    }
    return live > 0 ? (uint64_t)live : 0;
}

uint32_t tscope__shards_running(uint16_t *types, uint32_t max, uint32_t have)
{
    uint32_t n = __atomic_load_n(&sh.nshards, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&sh.shards[i], __ATOMIC_ACQUIRE);
        uint32_t top = s ? LD(s->top) : 0;
        if (!top)
            continue;
        if (have < max)
            types[have] = (uint16_t)(top - 1);
        have++;
    }
    return have;
}

/* ---- the mapping: paths, the fold's copies, recovery ------------------ */

void tscope__shards_log_path(uint32_t parent, uint16_t ptype, uint16_t type)
{
    if (!tscope__hooks.durable || !tscope__g.cfg.aggregate)
        return;
    if (!sh.log || sh.log_used == LOG_N) {
        struct plog *b = tscope__hooks.durable(TSCOPE__SHB_PATHS, 0, sh.nlog, sizeof *b);
        if (!b)
            return; /* said by the journal: a recovery then lacks the paths from here */
        sh.log = b;
        sh.nlog++;
        sh.log_used = 0;
    }
    sh.log->e[sh.log_used].parent = parent;
    sh.log->e[sh.log_used].ptype = ptype;
    sh.log->e[sh.log_used].type = type;
    sh.log_used++;
    __atomic_store_n(&sh.log->n, sh.log_used, __ATOMIC_RELEASE);
}

/* A pointer of the dead process, into the mapping; NULL when it pointed
 * elsewhere (ordinary memory: lost with the process). */
static void *rb(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    return a >= rec.base && a - rec.base < rec.len ? rec.map + (a - rec.base) : NULL;
}

/* The stretches of the mapping the last walk found damaged (not whole
 * blocks), in file order: what pointed into them is lost, not read. */
static struct stretch {
    uint64_t from, to;
} * dmg;
static size_t ndmg;
static uint32_t cap_dmg;

static void damaged_at(uint64_t off, uint64_t n)
{
    rec.damaged += n;
    if (ndmg && dmg[ndmg - 1].to == off)
        dmg[ndmg - 1].to = off + n;
    else if (!tscope__grow(&dmg, &cap_dmg, ndmg, sizeof *dmg))
        dmg[ndmg++] = (struct stretch){off, off + n};
}

/* The first of the n stretches s (in file order) that ends after off. */
static size_t first_ending_after(const struct stretch *s, size_t n, uint64_t off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].to <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 when bytes [off, off + n) of the mapping overlap a damaged stretch. */
static int in_damage(uint64_t off, uint64_t n)
{
    size_t lo = first_ending_after(dmg, ndmg, off);
    return lo < ndmg && dmg[lo].from < off + n;
}

/* The whole blocks' payloads the first walk met, in file order: every
 * pointer of the dead process into the file leads into one of them (a
 * flipped bit in a pointer, or in a block's size that made the walk jump
 * over blocks, leads elsewhere).  whole_failed: no memory for the list,
 * every place is taken as whole. */
static struct stretch *whole;
static size_t nwhole;
static uint32_t cap_whole;
static int whole_failed;

static void whole_at(uint64_t from, uint64_t to)
{
    if (!tscope__grow(&whole, &cap_whole, nwhole, sizeof *whole))
        whole[nwhole++] = (struct stretch){from, to};
    else
        whole_failed = 1;
}

/* 1 when bytes [off, off + n) of the mapping lie in one whole block's payload. */
static int in_whole(uint64_t off, uint64_t n)
{
    size_t lo = first_ending_after(whole, nwhole, off);
    return whole_failed || (lo < nwhole && whole[lo].from <= off && off + n <= whole[lo].to);
}

/* What part of a shard rbn is reading (its bit in the owner's lost parts). */
enum {
    PART_TYPES = 1 << 0,
    PART_NODES = 1 << 1,
    PART_EDGES = 1 << 2,
    PART_COUNTERS = 1 << 3,
    PART_CUSTOMS = 1 << 4,
    PART_PEERS = 1 << 5,
    PART_DEPTYPES = 1 << 6,
    PART_LOG = 1 << 7,
    PART_RUNNING = 1 << 8,
    PART_TIMELINE = 1 << 9,
    PART_SECOND = 1 << 10, /* a second shard block of the same thread: not read */
    PART_N = 11
};
static const char *const part_names[PART_N] = {"task types",
                                               "call tree",
                                               "call tree's edges",
                                               "counter samples",
                                               "custom events",
                                               "messages",
                                               "dependencies",
                                               "instance graph",
                                               "running tasks",
                                               "timeline",
                                               "a second shard block (its header is damaged)"};
/* Per thread slot, PART_* bits: lost to damage (a pointer into no whole
 * block, counts that disagree), lost outside the file (a pointer out of
 * it: memory taken when the file could not grow, or a damaged pointer),
 * and a damaged count set again (entries found past it, a call count
 * outvoted by the others). */
static uint16_t *lost_parts, *outside_parts, *fixed_parts;

static void lose(uint16_t **parts, uint32_t owner, unsigned part)
{
    if (!*parts)
        *parts = calloc(TSCOPE__THREADS_MAX, sizeof **parts);
    if (*parts && owner < TSCOPE__THREADS_MAX)
        (*parts)[owner] |= (uint16_t)part;
}

/* rb for n items of size bytes: NULL unless all of them lie in the mapping
 * (a damaged shard's counts never lead a read past it) outside the damaged
 * stretches; one that lies in one marks part lost for thread slot owner. */
static void *rbn_part(const void *p, uint64_t n, size_t size, uint32_t owner, unsigned part)
{
    char *q = rb(p);
    uint64_t off = q ? (uint64_t)(q - rec.map) : 0;
    /* every array in the file is a block's payload or in one, 8-byte aligned:
     * a pointer that is not is damaged (and would be a misaligned load) */
    if (q && !((uintptr_t)q & 7) && n <= (rec.len - off) / (size ? size : 1) &&
        !in_damage(off, n * size) && in_whole(off, n * size))
        return q;
    /* past the last whole block of a file cut short: said apart */
    uint64_t a = (uint64_t)(uintptr_t)p, written = tscope__shards_written();
    uint64_t cut = nwhole ? whole[nwhole - 1].to : TSCOPE__SHFILE_HEAD;
    if (p && !(written && a >= rec.base + cut && a < rec.base + written))
        lose(q ? &lost_parts : &outside_parts, owner, part);
    return NULL;
}

/* Calls fn for every whole block of the mapping, in the order they were made. */
static void each_block(void (*fn)(const struct tscope__shblock *b, void *payload, void *arg),
                       void *arg)
{
    const struct tscope__shfile *h = (const struct tscope__shfile *)rec.map;
    size_t end =
        rec.header_ok && rec.head == h && h->used >= TSCOPE__SHFILE_HEAD && h->used <= rec.len
            ? h->used
            : rec.len;       /* a copy's end is the start's: every block is read */
    int first = !rec.walked; /* every walk meets the same blocks */
    for (size_t off = TSCOPE__SHFILE_HEAD; off + sizeof(struct tscope__shblock) <= end;) {
        struct tscope__shblock *b = (struct tscope__shblock *)(rec.map + off);
        if (b->magic == TSCOPE__SHBLOCK_MAGIC && end == rec.len && rec.header_ok &&
            rec.head->used > rec.len && b->bytes > end - off - sizeof(struct tscope__shblock))
            break; /* the block the file's end cut: truncated, not damaged (the caller says it) */
        if (b->magic != TSCOPE__SHBLOCK_MAGIC || b->kind == 0 || b->kind > TSCOPE__SHB_LAST ||
            b->bytes > end - off - sizeof(struct tscope__shblock)) {
            /* not a whole block (garbage, a torn header): the next one may be */
            if (first)
                damaged_at(off, 64);
            off += 64;
            continue;
        }
        if (first)
            whole_at(off + sizeof *b, off + sizeof *b + b->bytes);
        fn(b, b + 1, arg);
        off += (sizeof *b + b->bytes + 63) & ~(size_t)63;
    }
    rec.walked = 1;
}

static void no_block(const struct tscope__shblock *b, void *payload, void *arg)
{
    (void)b, (void)payload, (void)arg;
}

/* each_block: the first whole copy of the header (rec.head). */
static void find_head(const struct tscope__shblock *b, void *payload, void *arg)
{
    (void)arg;
    const struct tscope__shfile *c = payload;
    if (b->kind == TSCOPE__SHB_HEAD && b->bytes >= sizeof *c &&
        rec.head == (const struct tscope__shfile *)rec.map &&
        memcmp(c->magic, TSCOPE__SHFILE_MAGIC, sizeof TSCOPE__SHFILE_MAGIC) == 0 &&
        c->version == TSCOPE__SHFILE_VERSION && c->sum == tscope__shfile_sum(c))
        rec.head = c;
}

int tscope__shards_open(const char *path, const char **bad)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *bad = errno == ENOENT ? NULL : strerror(errno);
        return errno == ENOENT ? 0 : -1;
    }
    struct stat stt;
    const struct tscope__shfile *h;
    void *m = MAP_FAILED;
    if (fstat(fd, &stt) == 0 && (size_t)stt.st_size >= TSCOPE__SHFILE_HEAD)
        m = mmap(NULL, (size_t)stt.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        *bad = "it is truncated";
        return -1;
    }
    h = m;
    rec.map = m;
    rec.len = (size_t)stt.st_size;
    rec.base = h->base;
    rec.header_ok = memcmp(h->magic, TSCOPE__SHFILE_MAGIC, sizeof TSCOPE__SHFILE_MAGIC) == 0 &&
                    h->version == TSCOPE__SHFILE_VERSION && h->sum == tscope__shfile_sum(h);
    rec.head = h;
    rec.walked = 0;
    rec.damaged = 0;
    ndmg = 0;
    nwhole = 0;
    whole_failed = 0;
    if (rec.header_ok) {
        each_block(no_block, NULL); /* the damaged stretches, before any block is read */
        return 1;
    }
    each_block(find_head, NULL); /* the copy, after the first page */
    if (rec.head != h) {
        rec.base = rec.head->base;
        rec.header_ok = 1;
        *bad = "its header is damaged (magic, version or checksum); its copy was read";
        return 3;
    }
    /* the blocks describe themselves: rings and names stay readable */
    *bad = "its header is damaged (magic, version or checksum)";
    return 2;
}

const struct tscope__shfile *tscope__shards_header(void)
{
    return rec.map && rec.header_ok ? rec.head : NULL;
}

struct kind_walk {
    uint16_t kind;
    void (*fn)(const struct tscope__shblock *b, void *payload, void *arg);
    void *arg;
};

static void of_kind(const struct tscope__shblock *b, void *payload, void *arg)
{
    struct kind_walk *w = arg;
    if (b->kind == w->kind)
        w->fn(b, payload, w->arg);
}

void tscope__shards_each(uint16_t kind,
                         void (*fn)(const struct tscope__shblock *b, void *payload, void *arg),
                         void *arg)
{
    struct kind_walk w = {kind, fn, arg};
    if (rec.map)
        each_block(of_kind, &w);
}

int tscope__shards_owns(const void *p)
{
    return rec.map && (const char *)p >= rec.map && (const char *)p < rec.map + rec.len;
}

static void count_slot(const struct tscope__shblock *b, void *payload, void *arg)
{
    (void)payload;
    uint32_t *n = arg;
    if (b->kind == TSCOPE__SHB_SHARD && b->owner < TSCOPE__THREADS_MAX && b->owner + 1 > *n)
        *n = b->owner + 1;
}

uint64_t tscope__shards_damaged(void)
{
    return rec.damaged;
}

/* each_block: the thread slots' blocks (their names) by owner. */
static void slot_names(const struct tscope__shblock *b, void *payload, void *arg)
{
    const char **names = arg;
    const struct tscope__thread *t = payload;
    if (b->kind == TSCOPE__SHB_SLOT && b->owner < TSCOPE__THREADS_MAX && b->bytes >= sizeof *t &&
        t->index == b->owner && !names[b->owner])
        names[b->owner] = memchr(t->name, 0, sizeof t->name) && t->name[0] ? t->name : "";
}

/* Appends to buf (at *at of len), cut where it does not fit. */
__attribute__((format(printf, 4, 5))) static void put(char *buf, size_t len, size_t *at,
                                                      const char *fmt, ...)
{
    if (*at + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (w > 0)
        *at = *at + (size_t)w < len ? *at + (size_t)w : len - 1;
}

/* each_block: the threads whose shard is not there but blocks only a
 * shard makes are (its chunks, timeline, stacks, log, directory): the
 * shard's block is damaged (its header), not absent. */
static void shard_blocks(const struct tscope__shblock *b, void *payload, void *arg)
{
    (void)payload;
    uint8_t *orphan = arg;
    switch (b->kind) {
    case TSCOPE__SHB_SHARD:
    case TSCOPE__SHB_RECORDS:
    case TSCOPE__SHB_PATHS:
    case TSCOPE__SHB_SLOT:
    case TSCOPE__SHB_CONFIG:
    case TSCOPE__SHB_NAME:
    case TSCOPE__SHB_ATTRS:
    case TSCOPE__SHB_HEAD:
        return;
    default:
        if (b->owner < TSCOPE__THREADS_MAX && !(b->owner < sh.nshards && sh.shards[b->owner]))
            orphan[b->owner] = 1;
    }
}

size_t tscope__shards_damage_parts(char *buf, size_t len)
{
    size_t at = 0, parts = 0;
    if (len)
        buf[0] = 0;
    const char **names = rec.map && len ? calloc(TSCOPE__THREADS_MAX, sizeof *names) : NULL;
    uint8_t *orphan = names ? calloc(TSCOPE__THREADS_MAX, 1) : NULL;
    if (!orphan) {
        free(names);
        return 0;
    }
    each_block(slot_names, names);
    if (rec.header_ok)
        each_block(shard_blocks, orphan);
    for (uint32_t i = 0; i < TSCOPE__THREADS_MAX; i++) {
        int shard = i < sh.nshards && sh.shards[i];
        unsigned lost = lost_parts ? lost_parts[i] : 0, out = outside_parts ? outside_parts[i] : 0,
                 fixed = fixed_parts ? fixed_parts[i] : 0;
        if (shard ? names[i] && !lost && !out && !fixed
                  : !orphan[i] && !(names[i] && ndmg)) /* (a thread that made no event has a
                                                          slot and no shard) */
            continue;                                  /* whole, or never there */
        put(buf, len, &at, "%sthread %u", parts++ ? "; " : "", i);
        char plain[32]; /* a name of its own, not the placeholder */
        snprintf(plain, sizeof plain, "thread-%u", i);
        if (names[i] && names[i][0] && strcmp(names[i], plain) != 0)
            put(buf, len, &at, " (%s)", names[i]);
        if (!shard) { /* its slot, or blocks of its shard, say it was there */
            put(buf, len, &at, ": its shard (%s, no shard of it does)",
                names[i] ? "its slot remains" : "blocks of it remain");
            continue;
        }
        const char *sep = ": ";
        if (!names[i]) {
            put(buf, len, &at, "%sits name and ring", sep);
            sep = ", ";
        }
        static const char *const how[3] = {
            "", " (it pointed out of the file)",
            " (a damaged count, set again from what agrees with it)"};
        for (unsigned b = 0; b < PART_N; b++)
            for (int k = 0; k < 3; k++)
                if ((k == 0 ? lost : k == 1 ? out : fixed) & (1u << b)) {
                    put(buf, len, &at, "%s%s%s", sep, part_names[b], how[k]);
                    sep = ", ";
                }
    }
    free(orphan);
    free(names);
    return parts;
}

uint64_t tscope__shards_written(void)
{
    return rec.map && rec.header_ok && rec.head->used > rec.len ? rec.head->used : 0;
}

uint32_t tscope__shards_slots(void)
{
    uint32_t n = 0;
    if (rec.map)
        each_block(count_slot, &n);
    return n;
}

static void find_config(const struct tscope__shblock *b, void *payload, void *arg)
{
    const struct tscope__shconfig *c = payload;
    int *found = arg;
    if (b->kind != TSCOPE__SHB_CONFIG || b->bytes != sizeof *c || *found == 1)
        return;
    *found = c->sum == tscope__sum64(TSCOPE__SUM64_START, &c->cfg, sizeof c->cfg) ? 1 : -1;
    if (*found == 1)
        sh.cfg_found = c->cfg;
}

int tscope__shards_recover_config(struct tscope__config *cfg)
{
    int found = 0;
    if (rec.map)
        each_block(find_config, &found);
    if (found == 1)
        *cfg = sh.cfg_found;
    return found == 1 ? 0 : -1;
}

/* Name blocks of one table, interned in id order (a gap: a placeholder). */
struct names_walk {
    uint32_t table, next, damaged, last; /* damaged: a name twice; last: the highest id named */
    uint32_t missing;                    /* ids no whole block named: placeholders */
    struct tscope__names *t;
};

static void take_name(const struct tscope__shblock *b, void *payload, void *arg)
{
    struct names_walk *w = arg;
    const struct tscope__shname *n = payload;
    if (b->kind != TSCOPE__SHB_NAME || b->owner != w->table)
        return;
    if (b->index < w->next)
        return; /* a name the table has already (the journal's) */
    if (b->index <= TSCOPE__MAX_IDS && b->index > w->last)
        w->last = b->index;
    if (!tscope__shname_whole(b))
        return; /* a placeholder unless another block names it (missing) */
    uint32_t len = n->len, got;
    char buf[TSCOPE__NAME_MAX + 1];
    for (; w->next < b->index; w->next++) { /* names whose blocks were damaged */
        snprintf(buf, sizeof buf, "(damaged name %u)", w->next);
        tscope__names_intern(w->t, buf, &got);
        w->missing++;
    }
    memcpy(buf, n->name, len);
    buf[len] = 0;
    if (tscope__names_intern(w->t, buf, &got) == 0 && got == b->index)
        w->next = b->index + 1;
    else
        w->damaged++; /* the same name twice: not what the process wrote */
}

/* each_block: the highest id of each table (task types, counters, custom
 * events) that a shard's entry was written for: its name was made first,
 * so a name missing past the last one found is a damaged block too. */
static void ids_used(const struct tscope__shblock *b, void *payload, void *arg)
{
    uint32_t *last = arg;
    int table = b->kind == TSCOPE__SHB_TYPES      ? 0
                : b->kind == TSCOPE__SHB_COUNTERS ? 1
                : b->kind == TSCOPE__SHB_CUSTOMS  ? 2
                                                  : -1;
    size_t elem = table == 0   ? sizeof(struct stype)
                  : table == 1 ? sizeof(struct scounter)
                               : sizeof(struct scustom);
    if (table < 0 || b->bytes < CHUNK * elem || b->index > TSCOPE__MAX_IDS / CHUNK)
        return;
    for (uint32_t i = 0; i < CHUNK; i++) {
        uint64_t w, id = (uint64_t)b->index * CHUNK + i;
        memcpy(&w, (const char *)payload + i * elem, sizeof w);
        if (w && id <= TSCOPE__MAX_IDS && id > last[table])
            last[table] = (uint32_t)id;
    }
}

/* each_block: a whole attributes block adds to its name's (the names are
 * interned by then; an id not named is ignored). */
static void take_attrs(const struct tscope__shblock *b, void *payload, void *arg)
{
    struct tscope__names **tables = arg;
    const struct tscope__shattrs *a = payload;
    if (b->kind == TSCOPE__SHB_ATTRS && b->owner < 3 && b->bytes >= sizeof *a &&
        a->sum == tscope__shattrs_sum(b->owner, b->index, a->attrs))
        tscope__names_add_attrs(tables[b->owner], b->index, a->attrs);
}

uint32_t tscope__shards_recover_names(void)
{
    struct tscope__names *tables[3] = {&tscope__types, &tscope__counters, &tscope__events};
    uint32_t damaged = 0, used[3] = {0, 0, 0};
    if (rec.map && rec.header_ok)
        each_block(ids_used, used);
    for (uint32_t t = 0; rec.map && t < 3; t++) {
        /* ids the table has (a journal's names) are taken as they are */
        struct names_walk w = {t, tscope__names_count(tables[t]) + 1, 0, 0, 0, tables[t]};
        each_block(take_name, &w);
        char buf[64];
        uint32_t named = w.last; /* past it, in a file cut short: the cut's (said apart) */
        if (used[t] > w.last)
            w.last = used[t];
        for (uint32_t got; w.next <= w.last; w.next++) { /* the last ones were damaged */
            snprintf(buf, sizeof buf, "(damaged name %u)", w.next);
            tscope__names_intern(w.t, buf, &got);
            w.missing += w.next <= named || !tscope__shards_written();
        }
        damaged += w.missing + w.damaged;
    }
    if (rec.map)
        each_block(take_attrs, tables);
    return damaged;
}

static void replay_paths(const struct tscope__shblock *b, void *payload, void *arg)
{
    struct tscope__store *st = arg;
    const struct plog *l = payload;
    if (b->kind != TSCOPE__SHB_PATHS || b->bytes != sizeof *l)
        return;
    for (uint32_t i = 0; i < l->n && i < LOG_N; i++) {
        uint32_t edge;
        uint8_t step;
        if (l->e[i].parent < st->nnodes || l->e[i].parent == 0)
            tscope__settle_node(st, l->e[i].parent, l->e[i].ptype, l->e[i].type, &edge, &step);
    }
}

void tscope__shards_recover_paths(struct tscope__store *st)
{
    if (rec.map && rec.header_ok)
        each_block(replay_paths, st);
}

/* A chunk of a shard's directory, rebased (rbn_part) and checked to be
 * the whole block the directory names: a chunk is always a block of its
 * own (tscope__sh_dalloc: kind, the shard's owner, its index in the
 * directory), so a pointer that leads anywhere else - a flipped bit that
 * lands in another thread's chunk - is damage, not entries. */
static void *rbn_chunk(const void *p, uint64_t n, size_t elem, uint32_t owner, unsigned part,
                       uint32_t kind, uint32_t index)
{
    char *q = rbn_part(p, n, elem, owner, part);
    if (!q)
        return NULL;
    const struct tscope__shblock *b = (const struct tscope__shblock *)q - 1; /* in the file:
                                                                             q is in a payload */
    if (b->magic == TSCOPE__SHBLOCK_MAGIC && b->kind == kind && b->owner == owner &&
        b->index == index)
        return q;
    lose(&lost_parts, owner, part);
    return NULL;
}

/* A directory of a dead process's shard, its pointers rebased: the near
 * ones in place (the shard is a copy), the far ones into an array of our
 * own (the file's may be shared by damage). */
static void rebase_chunks(struct chunks *d, uint64_t n, size_t elem, uint32_t owner, unsigned part,
                          uint32_t kind)
{
    for (uint32_t i = 0; i < DIR_NEAR; i++)
        d->near[i] = d->near[i] ? rbn_chunk(d->near[i], n, elem, owner, part, kind, i) : NULL;
    void **far = d->far ? rbn_part(d->far, DIR_FAR, sizeof *far, owner, part) : NULL;
    d->far = far ? malloc(DIR_FAR * sizeof *far) : NULL;
    for (uint32_t i = 0; d->far && i < DIR_FAR; i++)
        d->far[i] = far[i] ? rbn_chunk(far[i], n, elem, owner, part, kind, DIR_NEAR + i) : NULL;
}

/* The owner died in the middle of a create, end or cancel (journal_*):
 * what it had changed goes back (the entries, the below count, the log's
 * length, the record's state), so the task is not created, or unfinished,
 * once, and the tree, the types and the totals agree. */
static void undo_ending(struct tscope__shard *s, uint32_t owner)
{
    struct send *j = &s->ending;
    if (!(j->ver & 1))
        return;
    struct stype *e = j->type != TSCOPE__NONE ? chunk_peek(&s->types, j->type, sizeof *e) : NULL;
    if (e && !(j->type_ver & 1)) {
        if (j->create) {
            e->created = j->created;
        } else {
            e->calls = j->calls;
            e->yields = j->yields;
            e->cancelled = j->cancelled;
            e->self.n = j->n_self;
            e->running.n = j->n_running;
            e->elapsed.n = j->n_elapsed;
            e->cpu.n = j->n_cpu;
        }
        e->ver = j->type_ver;
    }
    struct snode *n = j->node != TSCOPE__NONE ? chunk_peek(&s->nodes, j->node, sizeof *n) : NULL;
    if (n && !(j->node_ver & 1)) {
        n->calls = j->node_calls;
        n->ver = j->node_ver;
    }
    uint64_t *c = j->edge != TSCOPE__NONE ? chunk_peek(&s->edges, j->edge, sizeof *c) : NULL;
    if (c)
        *c = j->edge_was;
    if (!j->create && !(j->below_was.ver & 1))
        s->below = j->below_was;
    if (!j->create && j->log_n < s->log_n)
        s->log_n = j->log_n;
    struct tscope_task *t = rbn_part(j->rec, 1, sizeof *t, owner, PART_RUNNING);
    if (t)
        ST(t->state, j->state);
    j->ver++;
}

/* 1 + the last entry at or past `hi` of the chunks that get(d, k) gives
 * (entries of elem bytes, a version or a count first) that was written (its
 * first word is not 0), or hi: entries past a shard's count of them are
 * written only by damage to the count (the owner counts an entry before it
 * writes it; an edge's count is put back by undo_ending when the owner died
 * in between). */
static uint32_t written_past(const void *d, const void *(*get)(const void *d, uint64_t k),
                             uint64_t nchunks, uint32_t hi, size_t elem)
{
    uint32_t last = hi;
    for (uint64_t k = hi >> CHUNK_BITS; k < nchunks; k++) {
        const char *c = get(d, k);
        for (uint32_t i = k == hi >> CHUNK_BITS ? hi & (CHUNK - 1) : 0; c && i < CHUNK; i++) {
            uint64_t w;
            memcpy(&w, c + (size_t)i * elem, sizeof w);
            if (w)
                last = (uint32_t)(k * CHUNK + i + 1);
        }
    }
    return last;
}

static const void *get_chunk(const void *d, uint64_t k)
{
    return chunks_get((struct chunks *)d, k);
}

static const void *get_schunk(const void *d, uint64_t k)
{
    return ((const struct schunks *)d)->dir[k];
}

/* A shard's counts of its entries against the entries found past them: a
 * count lowered by damage would hide what they hold.  They are taken all
 * the same, and said; so is a type entry whose counts of calls disagree. */
static void counts_check(struct tscope__shard *s, uint32_t owner)
{
    struct {
        const void *d;
        int far; /* a struct chunks (else schunks) */
        uint32_t *hi;
        size_t elem;
        uint32_t most;
        unsigned part;
    } c[7] = {
        {&s->types, 1, &s->hi_type, sizeof(struct stype), TSCOPE__MAX_IDS + 1, PART_TYPES},
        {&s->nodes, 1, &s->hi_node, sizeof(struct snode), DIR_MAX * CHUNK, PART_NODES},
        {&s->edges, 1, &s->hi_edge, sizeof(uint64_t), DIR_MAX * CHUNK, PART_EDGES},
        {&s->counters, 0, &s->hi_counter, sizeof(struct scounter), SDIR_MAX * CHUNK, PART_COUNTERS},
        {&s->customs, 0, &s->hi_custom, sizeof(struct scustom), SDIR_MAX * CHUNK, PART_CUSTOMS},
        {&s->peers, 0, &s->hi_peer, sizeof(struct speer), SDIR_MAX * CHUNK, PART_PEERS},
        {&s->deptypes, 0, &s->hi_deptype, sizeof(struct sdeptype), SDIR_MAX * CHUNK, PART_DEPTYPES},
    };
    for (int k = 0; k < 7; k++) {
        uint32_t got = c[k].far ? written_past(c[k].d, get_chunk, DIR_MAX, *c[k].hi, c[k].elem)
                                : written_past(c[k].d, get_schunk, SDIR_MAX, *c[k].hi, c[k].elem);
        if (got > c[k].most)
            got = c[k].most;
        if (got > *c[k].hi) {
            *c[k].hi = got;
            lose(&fixed_parts, owner, c[k].part);
        }
    }
    /* a type entry counts each task it ended four times in one end (calls
     * and its statistics' three sample counts): one of them damaged is
     * outvoted by the three others */
    for (uint32_t t = 0; t < s->hi_type; t++) {
        struct stype *e = chunk_peek(&s->types, t, sizeof *e);
        uint64_t *v[4] = {e ? &e->calls : NULL, e ? &e->self.n : NULL, e ? &e->running.n : NULL,
                          e ? &e->elapsed.n : NULL};
        if (!e || (*v[0] == *v[1] && *v[1] == *v[2] && *v[2] == *v[3]))
            continue;
        int fixed = 0;
        for (int a = 0; a < 2 && !fixed; a++) { /* three of four include v[0] or v[1] */
            int same = 0;
            for (int b = 0; b < 4; b++)
                same += *v[b] == *v[a];
            if (same == 3) {
                uint64_t n = *v[a];
                for (int b = 0; b < 4; b++)
                    *v[b] = n;
                fixed = 1;
            }
        }
        lose(fixed ? &fixed_parts : &lost_parts, owner, PART_TYPES);
    }
}

/* Whether a shard block's directories lead to its owner's own chunks: of
 * the block headers its first chunk pointers lead to, no more name another
 * thread than name the shard's.  A shard block whose owner was damaged into
 * another thread's number disagrees with its chunks, which still name the
 * thread that made them. */
static int shard_agrees(const struct tscope__shard *s, uint32_t owner)
{
    const struct chunks *cs[4] = {&s->types, &s->nodes, &s->edges, &s->log};
    int own = 0, other = 0;
    for (int k = 0; k < 4; k++)
        for (uint32_t i = 0; i < DIR_NEAR; i++) {
            const char *q = cs[k]->near[i] ? rb(cs[k]->near[i]) : NULL;
            if (!q || ((uintptr_t)q & 7) ||
                (uintptr_t)(q - rec.map) < TSCOPE__SHFILE_HEAD + sizeof(struct tscope__shblock))
                continue;
            const struct tscope__shblock *c = (const struct tscope__shblock *)q - 1;
            if (c->magic == TSCOPE__SHBLOCK_MAGIC)
                *(c->owner == owner ? &own : &other) += 1;
        }
    return other <= own;
}

/* A shard of the dead process, copied out of the mapping with its pointers
 * rebased, and the fold's copy of it as the state saved it.  Two walks
 * (*arg 1, then 2): the first takes the shard blocks that agree with their
 * chunks (shard_agrees) and the record chunks, the second a block that does
 * not only for a thread left without a shard; any other block claiming a
 * thread that has one is a second shard block, its header damaged. */
static void take_shard(const struct tscope__shblock *b, void *payload, void *arg)
{
    const int walk = *(const int *)arg;
    if (b->kind == TSCOPE__SHB_RECORDS && b->bytes == RCHUNK * sizeof(struct tscope_task)) {
        if (walk == 1 &&
            !tscope__grow(&sh.rchunks, &sh.cap_rchunks, sh.nrchunks, sizeof *sh.rchunks))
            sh.rchunks[sh.nrchunks++] = payload;
        return;
    }
    if (b->kind != TSCOPE__SHB_SHARD || b->bytes != sizeof(struct tscope__shard) ||
        b->owner >= TSCOPE__THREADS_MAX)
        return;
    const int agrees = shard_agrees(payload, b->owner);
    if ((walk == 1 && !agrees) || (walk == 2 && agrees))
        return;                /* the other walk's */
    if (sh.shards[b->owner]) { /* a thread has one: a block header's owner is damaged */
        lose(&lost_parts, b->owner, PART_SECOND);
        return;
    }
    struct tscope__shard *s = malloc(sizeof *s);
    if (!s)
        return;
    memcpy(s, payload, sizeof *s);
    s->index = b->owner;
    struct chunks *cs[4] = {&s->types, &s->nodes, &s->edges, &s->log};
    const size_t elem[4] = {sizeof(struct stype), sizeof(struct snode), sizeof(uint64_t),
                            sizeof(struct tscope__rec)};
    const uint64_t n[4] = {CHUNK, CHUNK, CHUNK, LOG_CHUNK};
    const unsigned cpart[4] = {PART_TYPES, PART_NODES, PART_EDGES, PART_LOG};
    const uint32_t ckind[4] = {TSCOPE__SHB_TYPES, TSCOPE__SHB_NODES, TSCOPE__SHB_EDGES,
                               TSCOPE__SHB_LOG};
    for (int k = 0; k < 4; k++)
        rebase_chunks(cs[k], n[k], elem[k], b->owner, cpart[k], ckind[k]);
    struct schunks *ss[4] = {&s->counters, &s->customs, &s->peers, &s->deptypes};
    const size_t selem[4] = {sizeof(struct scounter), sizeof(struct scustom), sizeof(struct speer),
                             sizeof(struct sdeptype)};
    const unsigned spart[4] = {PART_COUNTERS, PART_CUSTOMS, PART_PEERS, PART_DEPTYPES};
    const uint32_t skind[4] = {TSCOPE__SHB_COUNTERS, TSCOPE__SHB_CUSTOMS, TSCOPE__SHB_PEERS,
                               TSCOPE__SHB_DEPTYPES};
    for (int k = 0; k < 4; k++)
        for (uint32_t i = 0; i < SDIR_MAX; i++)
            ss[k]->dir[i] = ss[k]->dir[i] ? rbn_chunk(ss[k]->dir[i], CHUNK, selem[k], b->owner,
                                                      spart[k], skind[k], i)
                                          : NULL;
    /* the counts of entries written, as far as the directories reach (a
     * damaged one would make the fold grow its arrays without end) */
    if (s->log_n > (uint64_t)LOG_DIR * LOG_CHUNK) /* so is the log's */
        s->log_n = (uint64_t)LOG_DIR * LOG_CHUNK;
    uint32_t *hi[7] = {&s->hi_type,   &s->hi_node, &s->hi_edge,   &s->hi_counter,
                       &s->hi_custom, &s->hi_peer, &s->hi_deptype};
    for (int k = 0; k < 7; k++) {
        uint64_t most = k == 0  ? (uint64_t)TSCOPE__MAX_IDS + 1
                        : k < 3 ? (uint64_t)DIR_MAX * CHUNK
                                : (uint64_t)SDIR_MAX * CHUNK;
        if (*hi[k] > most)
            *hi[k] = (uint32_t)most;
    }
    undo_ending(s, b->owner);
    counts_check(s, b->owner);
    s->free = NULL;
    s->nfree = 0;
    s->fresh = NULL;
    s->nfresh = 0;
    s->seg = rbn_part(s->seg, s->cap, sizeof *s->seg, b->owner, PART_RUNNING);
    s->open = rbn_part(s->open, s->nopen, sizeof *s->open, b->owner, PART_RUNNING);
    if (!s->seg || !s->open || s->n > s->cap)
        s->n = 0, s->cap = 0, s->seg = NULL;
    if (!s->open)
        s->nopen = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++) { /* records in ordinary memory are lost */
        struct tscope_task *t = rbn_part(s->seg[i].t, 1, sizeof *t, b->owner, PART_RUNNING);
        if (t && s->seg[i].type < s->nopen) {
            s->seg[k] = s->seg[i];
            s->seg[k++].t = t;
            if (s->seg[i].start > rec.last)
                rec.last = s->seg[i].start; /* it was alive then */
        }
    }
    s->n = k;
    uint64_t **arr = rbn_part(s->tl_type, s->tl_ntype, sizeof *arr, b->owner, PART_TIMELINE);
    uint64_t *cnt =
        rbn_part(s->tl_count, (size_t)s->tl_ntype * TL_NBLK, sizeof *cnt, b->owner, PART_TIMELINE);
    s->tl_type = NULL;
    s->tl_count = NULL;
    uint32_t nt = arr && cnt ? s->tl_ntype : 0;
    s->tl_ntype = 0;
    if (nt && (s->tl_type = calloc(nt, sizeof *s->tl_type)) != NULL &&
        (s->tl_count = calloc((size_t)nt * TL_NBLK, sizeof *s->tl_count)) != NULL) {
        for (uint32_t t = 0; t < nt; t++)
            s->tl_type[t] =
                rbn_part(arr[t], TSCOPE__TL_BINS, sizeof **s->tl_type, b->owner, PART_TIMELINE);
        memcpy(s->tl_count, cnt, (size_t)nt * TL_NBLK * sizeof *s->tl_count);
        s->tl_ntype = nt;
    }
    s->tl_busy = rbn_part(s->tl_busy, TSCOPE__TL_BINS, sizeof *s->tl_busy, b->owner, PART_TIMELINE);
    if (s->tl_used > TSCOPE__TL_BINS || s->tl_shift > 63)
        s->tl_used = 0, s->tl_shift = TSCOPE__TL_SHIFT0; /* damaged: no bins */
    memset(FOLD(s), 0, sizeof *FOLD(s));                 /* the store has nothing of it yet */
    sh.shards[b->owner] = s;
    if (b->owner + 1 > sh.nshards)
        sh.nshards = b->owner + 1;
}

uint32_t tscope__shards_recover(struct tscope__store *st, uint64_t *endp)
{
    if (!rec.map || !rec.header_ok)
        return 0;
    take_store(st);
    recovering = 1;
    sh.rchunks_now = sh.nrchunks;
    for (int walk = 1; walk <= 2; walk++)
        each_block(take_shard, &walk);
    for (uint32_t i = 0; i < sh.nshards; i++) { /* a thread's last bin: it was alive then */
        const struct tscope__shard *s = sh.shards[i];
        if (s && s->tl_used && s->tl_shift < 64) {
            uint64_t at = sh.origin + ((uint64_t)(s->tl_used - 1) << s->tl_shift);
            if (at > rec.last)
                rec.last = at;
        }
    }
    if (*endp < rec.last)
        *endp = rec.last; /* nothing closes before it began */
    uint64_t end = *endp;
    uint32_t n = sh.nshards;
    tscope__shards_complete(st, end);
    /* recovering stays set: every later fold (the snapshot's) reads the
     * same dead owners' entries, and the ones made again at each fold
     * (shard_events.c) must take a torn one each time too */
    return n;
}

void tscope__shards_recover_release(void)
{
    recovering = 0;
    tscope__shards_free();
    if (rec.map) {
        munmap(rec.map, rec.len);
        free(sh.rchunks); /* they pointed into it */
        sh.rchunks = NULL;
        sh.nrchunks = sh.cap_rchunks = sh.rchunks_now = 0;
    }
    rec.map = NULL;
    rec.head = NULL;
    rec.len = 0;
    rec.last = 0;
    rec.header_ok = 0;
    rec.walked = 0;
    rec.damaged = 0;
    free(dmg);
    dmg = NULL;
    ndmg = 0;
    cap_dmg = 0;
    free(whole);
    whole = NULL;
    nwhole = 0;
    cap_whole = 0;
    whole_failed = 0;
    free(lost_parts);
    free(outside_parts);
    free(fixed_parts);
    lost_parts = outside_parts = fixed_parts = NULL;
}
