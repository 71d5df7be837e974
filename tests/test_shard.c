/* test_shard.c - per-thread shards (src/profile/shard.c) against the
 * reference replay (the store, replay.c and settle.c): random event
 * streams - tasks created on one thread and begun on another, yields and
 * resumes across threads, recursion, cancels, START tasks, tasks left
 * running - applied both ways give the same profile exactly: every type's
 * counts and statistics, every tree node (compared by its path of types),
 * every type-level edge and the totals.  Then the same through the public
 * handle API with real threads while another thread folds (TSan). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/core.h"
#include "profile/query.h"
#include "profile/shard.h"
#include "profile/store.h"
#include "taskscope/taskscope.h"
#include "test.h"

#define THREADS 4
#define MAXT 4096

/* The shards' instance records applied to their store at once (no ring). */
static uint64_t instance_cap = 100000;

static struct tscope__store *new_store(int fold)
{
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    cfg.instance_cap = instance_cap;
    cfg.tree_fold = fold;
    cfg.duration_sample = 1; /* every task's duration: the samples compare whole */
    struct tscope__store *s = tscope__store_new(&cfg, 0);
    ASSERT(s != NULL);
    return s;
}

/* A task of the model: where it is and its two representations. */
struct mtask {
    int parent; /* index of its parent task, -1: none */
    uint64_t id;
    uint16_t type;
    int state; /* 0 ready, 1 running, 2 yielded, 3 done */
    int thread;
    struct tscope_task *h;
};

struct model {
    struct mtask t[MAXT];
    int n;
    int stack[THREADS][MAXT]; /* running tasks per thread (indexes into t) */
    int depth[THREADS];
    uint64_t ts;
    struct tscope__store *ref;
    uint32_t since_round;
    unsigned seed;
    uint16_t ntypes;
    unsigned tick_shift;
};

static unsigned rnd(struct model *m, unsigned n)
{
    m->seed = m->seed * 1103515245u + 12345u;
    return (m->seed >> 8) % n;
}

static void ref_apply(struct model *m, int thread, uint8_t kind, uint64_t id, uint64_t arg,
                      uint16_t type)
{
    struct tscope__rec r = {.ts = m->ts, .id = id, .arg = arg, .type = type, .kind = kind};
    tscope__store_apply(m->ref, (uint32_t)thread, &r, NULL);
    if (++m->since_round >= 7) { /* rounds at arbitrary points */
        m->since_round = 0;
        tscope__store_end_round(m->ref);
    }
}

static int top(struct model *m, int th)
{
    return m->depth[th] ? m->stack[th][m->depth[th] - 1] : -1;
}

/* A type for a new task: a few types, often the parent's (recursion); with
 * many types, some 64 apart (the same bit of the store's ancestor set). */
static uint16_t pick_type(struct model *m, int parent)
{
    if (parent >= 0 && rnd(m, 3) == 0)
        return m->t[parent].type;
    uint16_t t = (uint16_t)(1 + rnd(m, 5));
    if (m->ntypes > 64 && rnd(m, 2))
        t = (uint16_t)(t + 64 * (1 + rnd(m, 2)));
    return t;
}

static void step(struct model *m)
{
    int th = (int)rnd(m, THREADS);
    m->ts += (1 + rnd(m, 50)) << m->tick_shift; /* some streams outgrow the timeline's bins */
    int cur = top(m, th);
    unsigned what = rnd(m, 9);
    if (m->n >= MAXT - 1)
        what = 3 + rnd(m, 6);       /* no more tasks: only run what exists */
    if (what <= 1 && m->n < MAXT) { /* create (a child of what runs here) */
        struct mtask *t = &m->t[m->n];
        t->id = (uint64_t)m->n + 1;
        t->parent = cur;
        t->type = pick_type(m, cur);
        t->state = 0;
        t->h = tscope__shard_create((uint32_t)th, m->ts, t->id, cur >= 0 ? m->t[cur].h : NULL,
                                    t->type, 0, 0, 0);
        ASSERT(t->h != NULL);
        ref_apply(m, th, TSCOPE__REC_CREATE, t->id, cur >= 0 ? m->t[cur].id : 0, t->type);
        m->n++;
    } else if (what == 2 && m->n < MAXT) { /* start */
        struct mtask *t = &m->t[m->n];
        t->id = (uint64_t)m->n + 1;
        t->parent = cur;
        t->type = pick_type(m, cur);
        t->state = 1;
        t->thread = th;
        t->h = tscope__shard_start((uint32_t)th, m->ts, t->id, t->type);
        ASSERT(t->h != NULL);
        ref_apply(m, th, TSCOPE__REC_START, t->id, 0, t->type);
        m->stack[th][m->depth[th]++] = m->n;
        m->n++;
    } else if (what <= 4 && m->n) { /* begin a ready task */
        for (int k = 0, i = (int)rnd(m, (unsigned)m->n); k < m->n; k++, i = (i + 1) % m->n)
            if (m->t[i].state == 0) {
                m->t[i].state = 1;
                m->t[i].thread = th;
                ASSERT_OK(tscope__shard_begin((uint32_t)th, m->ts, m->t[i].h));
                ref_apply(m, th, TSCOPE__REC_BEGIN, m->t[i].id, 0, 0);
                m->stack[th][m->depth[th]++] = i;
                break;
            }
    } else if (what <= 6 && cur >= 0) { /* end what runs on top */
        m->t[cur].state = 3;
        m->depth[th]--;
        ASSERT_OK(tscope__shard_end((uint32_t)th, m->ts, m->t[cur].h));
        ref_apply(m, th, TSCOPE__REC_END, m->t[cur].id, 0, 0);
    } else if (what == 7 && cur >= 0) { /* yield */
        m->t[cur].state = 2;
        m->depth[th]--;
        ASSERT_OK(tscope__shard_yield((uint32_t)th, m->ts, m->t[cur].h));
        ref_apply(m, th, TSCOPE__REC_YIELD, m->t[cur].id, 0, 0);
    } else if (what == 8) { /* resume a yielded task here, or cancel a ready one */
        int want = rnd(m, 4) ? 2 : 0;
        for (int i = 0; i < m->n; i++)
            if (m->t[i].state == want) {
                if (want == 2) {
                    m->t[i].state = 1;
                    ASSERT_OK(tscope__shard_resume((uint32_t)th, m->ts, m->t[i].h));
                    ref_apply(m, th, TSCOPE__REC_RESUME, m->t[i].id, 0, 0);
                    m->stack[th][m->depth[th]++] = i;
                } else {
                    m->t[i].state = 3;
                    ASSERT_OK(tscope__shard_cancel((uint32_t)th, m->ts, m->t[i].h));
                    ref_apply(m, th, TSCOPE__REC_CANCEL, m->t[i].id, 0, 0);
                }
                break;
            }
    }
}

/* The path of types from node i up to the root (types[0] is i's); its
 * length. */
static int path_of(const struct tscope__store *s, uint32_t i, uint16_t *types, int max)
{
    int n = 0;
    for (; i != 0 && i != TSCOPE__NONE && n < max; i = s->nodes[i].parent)
        types[n++] = s->nodes[i].type;
    return n;
}

static void same_acc(const struct tscope__acc *a, const struct tscope__acc *b)
{
    ASSERT_U64_EQ(a->n, b->n);
    ASSERT_U64_EQ(a->sum, b->sum);
    if (a->n) {
        ASSERT_U64_EQ(a->min, b->min);
        ASSERT_U64_EQ(a->max, b->max);
    }
    ASSERT(a->sumsq == b->sumsq);
}

/* Every type, node (by path), edge and total of a equals b's. */
static void same_profile(const struct tscope__store *a, const struct tscope__store *b)
{
    uint32_t nt = a->ntypes > b->ntypes ? a->ntypes : b->ntypes;
    for (uint32_t i = 0; i < nt; i++) {
        static const struct tscope__type_acc zero;
        const struct tscope__type_acc *x = i < a->ntypes ? &a->types[i] : &zero;
        const struct tscope__type_acc *y = i < b->ntypes ? &b->types[i] : &zero;
        ASSERT_U64_EQ(x->created, y->created);
        ASSERT_U64_EQ(x->calls, y->calls);
        ASSERT_U64_EQ(x->yields, y->yields);
        ASSERT_U64_EQ(x->cancelled, y->cancelled);
        ASSERT_U64_EQ(x->unfinished, y->unfinished);
        ASSERT_U64_EQ(x->running_total, y->running_total);
        ASSERT_U64_EQ(x->elapsed_total, y->elapsed_total);
        ASSERT_EQ(x->threads, y->threads);
        same_acc(&x->self, &y->self);
        same_acc(&x->running, &y->running);
        same_acc(&x->elapsed, &y->elapsed);
    }
    /* nodes: each of a's with calls or time has b's twin with the same path */
    for (int pass = 0; pass < 2; pass++) {
        const struct tscope__store *p = pass ? b : a, *q = pass ? a : b;
        for (uint32_t i = 1; i < p->nnodes; i++) {
            uint16_t pp[512], qp[512];
            int np = path_of(p, i, pp, 512);
            uint32_t j = 1;
            for (; j < q->nnodes; j++)
                if (path_of(q, j, qp, 512) == np && memcmp(pp, qp, (size_t)np * 2) == 0)
                    break;
            if (j == q->nnodes) { /* a node only one side made must be empty */
                ASSERT_U64_EQ(p->nodes[i].calls, 0);
                continue;
            }
            ASSERT_U64_EQ(p->nodes[i].calls, q->nodes[j].calls);
            ASSERT_U64_EQ(p->nodes[i].self, q->nodes[j].self);
            ASSERT_U64_EQ(p->nodes[i].running, q->nodes[j].running);
            ASSERT_U64_EQ(p->nodes[i].elapsed, q->nodes[j].elapsed);
        }
        for (uint32_t i = 0; i < p->nedges; i++) {
            uint64_t other = 0;
            for (uint32_t j = 0; j < q->nedges; j++)
                if (q->edges[j].from == p->edges[i].from && q->edges[j].to == p->edges[i].to)
                    other = q->edges[j].count;
            ASSERT_U64_EQ(p->edges[i].count, other);
        }
    }
    ASSERT_U64_EQ(a->created, b->created);
    ASSERT_U64_EQ(a->completed, b->completed);
    ASSERT_U64_EQ(a->cancelled, b->cancelled);
    ASSERT_U64_EQ(a->unfinished, b->unfinished);
    ASSERT_U64_EQ(a->never_ran, b->never_ran);
    ASSERT_U64_EQ(a->anomalies, b->anomalies);
    /* the timeline: the same bin width, the same ticks in every bin of
     * every type and thread, the same duration sample */
    const struct tscope__timeline *x = &a->tl, *y = &b->tl;
    ASSERT_EQ(x->shift, y->shift);
    for (int pass = 0; pass < 2; pass++) {
        uint64_t **xa = pass ? x->thread : x->type, **ya = pass ? y->thread : y->type;
        uint32_t xn = pass ? x->nthread : x->ntype, yn = pass ? y->nthread : y->ntype;
        for (uint32_t i = 0; i < (xn > yn ? xn : yn); i++)
            for (uint32_t k = 0; k < TSCOPE__TL_BINS; k++) {
                uint64_t u = i < xn && xa[i] ? xa[i][k] : 0, v = i < yn && ya[i] ? ya[i][k] : 0;
                ASSERT_U64_EQ(u, v);
            }
    }
    if (a->cut_off == 0 && b->cut_off == 0) { /* every task an instance: the same ones */
        ASSERT_EQ(a->ninst, b->ninst);
        for (uint32_t i = 0; i < a->ninst; i++) {
            const struct tscope__instance *p = &a->inst[i], *q = NULL;
            for (uint32_t j = 0; j < b->ninst && !q; j++)
                if (b->inst[j].id == p->id)
                    q = &b->inst[j];
            ASSERT(q != NULL);
            ASSERT_U64_EQ(p->parent, q->parent);
            ASSERT_U64_EQ(p->create_ts, q->create_ts);
            ASSERT_U64_EQ(p->begin_ts, q->begin_ts);
            ASSERT_U64_EQ(p->end_ts, q->end_ts);
            ASSERT_U64_EQ(p->self, q->self);
            ASSERT_U64_EQ(p->running, q->running);
            ASSERT_EQ(p->thread, q->thread);
            ASSERT_EQ(p->yields, q->yields);
            ASSERT_EQ(p->type, q->type);
            ASSERT_EQ(p->state, q->state);
            ASSERT_EQ(p->tdepth, q->tdepth);
        }
    }
    ASSERT_EQ(x->npts, y->npts);
    for (uint32_t i = 0; i < x->npts; i++) {
        uint32_t j = 0;
        while (j < y->npts && y->pts[j].id != x->pts[i].id)
            j++;
        ASSERT(j < y->npts);
        ASSERT_U64_EQ(x->pts[i].end, y->pts[j].end);
        ASSERT_U64_EQ(x->pts[i].duration, y->pts[j].duration);
        ASSERT_EQ(x->pts[i].type, y->pts[j].type);
    }
}

static uint32_t widest; /* the widest timeline bins of all streams */

/* Every kept instance's subtree counts exactly the tasks below it in the
 * model (the ones the cap left out included), through the public query. */
static void subtrees_exact(struct tscope__store *s, const struct model *m)
{
    struct tscope__store *was = tscope__g.store;
    tscope__g.store = s; /* the queries read the process's store */
    for (uint32_t i = 0; i < s->ninst; i++) {
        int root = (int)s->inst[i].id - 1, n = 0;
        for (int k = 0; k < m->n; k++) { /* k is in root's subtree */
            int a = k;
            while (a >= 0 && a != root)
                a = m->t[a].parent;
            n += a == root;
        }
        tscope_subtree_t st;
        ASSERT_OK(tscope_query_subtree(s->inst[i].id, &st));
        ASSERT_U64_EQ(st.tasks, (uint64_t)n);
    }
    tscope__query_reset();
    tscope__g.store = was;
}

static void one_stream(unsigned seed, int steps, uint16_t ntypes, int fold)
{
    static struct model m;
    memset(&m, 0, sizeof m);
    m.seed = seed;
    m.ntypes = ntypes;
    m.tick_shift = seed % 4 == 0 ? 12 : 0;
    instance_cap = seed % 7 == 0 ? 64 : 100000; /* some streams overflow the instance graph */
    m.ref = new_store(fold);
    struct tscope__store *sh = new_store(fold);
    tscope__shards_reset(sh);
    for (int i = 0; i < steps; i++) {
        step(&m);
        /* the instance graph's records at once, in the model's order, as
         * the reference store gets them (the cap drops by arrival) */
        pthread_mutex_lock(&sh->lock);
        tscope__shards_fold_logs(sh);
        pthread_mutex_unlock(&sh->lock);
        if (i % 97 == 0) { /* folds in the middle change nothing */
            pthread_mutex_lock(&sh->lock);
            tscope__shards_fold(sh);
            pthread_mutex_unlock(&sh->lock);
        }
    }
    m.ts += 10;
    tscope__store_end_round(m.ref);
    tscope__store_complete(m.ref, m.ts);
    pthread_mutex_lock(&sh->lock); /* as tscope_finalize calls it */
    tscope__shards_complete(sh, m.ts);
    tscope__store_complete(sh, m.ts);
    pthread_mutex_unlock(&sh->lock);
    if (sh->tl.shift > widest)
        widest = sh->tl.shift;
    ASSERT_GT(sh->completed, 0);
    ASSERT_GT(sh->types[1].calls, 0);
    ASSERT_GT(sh->tl.npts, 0);
    same_profile(sh, m.ref);
    if (instance_cap < 100000) {
        ASSERT_GT(sh->cut_off, 0);
        subtrees_exact(sh, &m);
    }
    tscope__shards_free();
    tscope__store_free(sh);
    tscope__store_free(m.ref);
}

/* 84 random streams of 2,500 events on 4 threads, some with more than 64
 * types (the store's ancestor set is ambiguous there), some without
 * recursion folding, some with long ticks (the timeline widens), some with
 * an instance cap of 64 (every seventh). */
static void shards_equal_the_reference_replay(void)
{
    for (unsigned seed = 1; seed <= 84; seed++)
        one_stream(seed, 2500, seed % 3 == 0 ? 200 : 6, seed % 5 != 0);
    ASSERT_GT(widest, TSCOPE__TL_SHIFT0); /* some widened their bins on the way */
}

/* A task created on one thread, begun on another, yielded there and
 * resumed on a third: each number where it belongs. */
static void a_task_that_moves(void)
{
    struct tscope__store *s = new_store(1);
    tscope__shards_reset(s);
    struct tscope_task *p = tscope__shard_start(0, 0, 1, 1);
    struct tscope_task *c = tscope__shard_create(0, 10, 2, p, 2, 0, 0, 0);
    ASSERT_OK(tscope__shard_begin(1, 20, c));
    ASSERT_OK(tscope__shard_yield(1, 50, c));
    ASSERT_OK(tscope__shard_resume(2, 70, c));
    ASSERT_OK(tscope__shard_end(2, 100, c));
    ASSERT_OK(tscope__shard_end(0, 200, p));
    pthread_mutex_lock(&s->lock);
    tscope__shards_fold(s);
    ASSERT_U64_EQ(s->types[2].calls, 1);
    ASSERT_U64_EQ(s->types[2].yields, 1);
    ASSERT_U64_EQ(s->types[2].self.sum, 60);    /* 20..50 and 70..100 */
    ASSERT_U64_EQ(s->types[2].elapsed.sum, 80); /* 20..100 */
    ASSERT_EQ(s->types[2].threads, 2);
    ASSERT_U64_EQ(s->types[1].self.sum, 200); /* 2 ran on other threads */
    ASSERT_U64_EQ(s->completed, 2);
    pthread_mutex_unlock(&s->lock);
    tscope__shards_free();
    tscope__store_free(s);
}

/* More types, tree nodes and edges than the shard's directories hold
 * themselves (DIR_NEAR chunks of 256), and a log longer than their 16
 * chunks of 4096 records: the entries past them go through the far part
 * of each directory, made when first needed, and fold exactly. */
static void directories_past_their_near_part(void)
{
    struct tscope__store *s = new_store(1);
    tscope__shards_reset(s);
    enum { TYPES = 5000, TASKS = 25000 }; /* 3 log records a kept task: 75,000 */
    struct tscope_task *root = tscope__shard_start(0, 0, 1, 1);
    uint64_t ts = 1;
    for (uint32_t i = 0; i < TASKS; i++) {
        uint16_t type = (uint16_t)(2 + i % TYPES);
        struct tscope_task *c = tscope__shard_create(0, ts, 2 + i, root, type, 0, 0, 0);
        ASSERT(c != NULL);
        ASSERT_OK(tscope__shard_begin(0, ts + 1, c));
        ASSERT_OK(tscope__shard_end(0, ts + 1 + type, c));
        ts += 2 + type;
    }
    ASSERT_OK(tscope__shard_end(0, ts, root));
    pthread_mutex_lock(&s->lock);
    tscope__shards_complete(s, ts);
    tscope__store_complete(s, ts);
    ASSERT_U64_EQ(s->completed, TASKS + 1);
    ASSERT_U64_EQ(s->ninst, TASKS + 1);
    ASSERT_GT(s->ntypes, TYPES + 1);
    for (uint32_t t = 2; t < 2 + TYPES; t += 997) {
        ASSERT_U64_EQ(s->types[t].calls, TASKS / TYPES);
        ASSERT_U64_EQ(s->types[t].self.sum, (uint64_t)(TASKS / TYPES) * t);
    }
    ASSERT_U64_EQ(s->types[1 + TYPES].calls, TASKS / TYPES); /* the last chunk's */
    ASSERT_U64_EQ(s->nnodes, TYPES + 2);                     /* the root's, 1's, 5000 below */
    pthread_mutex_unlock(&s->lock);
    tscope__shards_free();
    tscope__store_free(s);
}

/* A task ended on one thread while a segment of it is still open on
 * another (a runtime's mistake): counted as an anomaly, and its record is
 * not reused before that segment closes, so no later task inherits it. */
static void ended_while_open_elsewhere(void)
{
    struct tscope__store *s = new_store(1);
    tscope__shards_reset(s);
    struct tscope_task *t = tscope__shard_start(0, 0, 1, 1);
    ASSERT_OK(tscope__shard_end(1, 10, t)); /* thread 0 still has it open */
    struct tscope_task *u = tscope__shard_create(1, 20, 2, NULL, 2, 0, 0, 0);
    ASSERT(u != t);
    ASSERT_OK(tscope__shard_begin(1, 20, u));
    ASSERT_EQ(tscope__shard_end(1, 30, t), TSCOPE_EINVAL);      /* ended already */
    struct tscope_task *v = tscope__shard_start(0, 1000, 3, 3); /* on top of the stale one */
    ASSERT_OK(tscope__shard_end(0, 1010, v));
    ASSERT_OK(tscope__shard_end(1, 1040, u));
    pthread_mutex_lock(&s->lock);
    tscope__shards_complete(s, 2000);
    ASSERT_U64_EQ(s->types[2].self.sum, 1020); /* nothing of thread 0's time */
    ASSERT_U64_EQ(s->types[3].self.sum, 10);
    ASSERT_GT(s->anomalies, 0);
    pthread_mutex_unlock(&s->lock);
    tscope__shards_free();
    tscope__store_free(s);
}

/* ---- the public handle API, real threads, concurrent folds ---------------- */

#define WORKERS 3
#define PER_WORKER 4000

static tscope_type_t ty_outer, ty_inner;
static _Atomic int done_workers;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_WORKER; i++) {
        tscope_task_t *o = tscope_task_start_h(tscope_task_id_next(), ty_outer);
        ASSERT(o != NULL);
        tscope_task_t *in = tscope_task_create_h(tscope_task_id_next(), o, ty_inner, 0, 1, 0);
        ASSERT(in != NULL);
        ASSERT_OK(tscope_task_begin_h(in));
        ASSERT_OK(tscope_task_end_h(in));
        ASSERT_OK(tscope_task_end_h(o));
    }
    atomic_fetch_add(&done_workers, 1);
    return NULL;
}

static void handles_on_threads_while_folding(void)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_OK(tscope_type_register("outer", &ty_outer));
    ASSERT_OK(tscope_type_register("inner", &ty_inner));
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, worker, NULL), 0);
    uint64_t last = 0;
    while (atomic_load(&done_workers) < WORKERS) { /* the numbers only grow */
        tscope_type_stats_t st;
        ASSERT_OK(tscope_query_type(ty_inner, &st));
        ASSERT_GE(st.calls, last);
        ASSERT_EQ(st.self_ns.count, st.calls); /* never a torn entry */
        last = st.calls;
    }
    for (int i = 0; i < WORKERS; i++)
        ASSERT_EQ(pthread_join(th[i], NULL), 0);
    tscope_type_stats_t in, out;
    ASSERT_OK(tscope_query_type(ty_inner, &in));
    ASSERT_OK(tscope_query_type(ty_outer, &out));
    ASSERT_U64_EQ(in.calls, (uint64_t)WORKERS * PER_WORKER);
    ASSERT_U64_EQ(out.calls, (uint64_t)WORKERS * PER_WORKER);
    ASSERT_EQ(in.threads, WORKERS);
    ASSERT(out.running_ns.sum >= in.running_ns.sum); /* the inner ones ran inside */
    /* a handle alive is a live task; cancelled, it is not */
    tscope_totals_t tot;
    tscope_task_t *alive = tscope_task_create_h(tscope_task_id_next(), NULL, ty_inner, 0, 0, 0);
    ASSERT(alive != NULL);
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_live, 1);
    ASSERT_OK(tscope_task_cancel_h(alive));
    ASSERT_OK(tscope_query_totals(&tot));
    ASSERT_EQ(tot.tasks_live, 0);
    ASSERT_U64_EQ(tot.tasks_cancelled, 1);
    /* ended twice: refused, and the pool hands out distinct records after */
    tscope_task_t *once = tscope_task_start_h(tscope_task_id_next(), ty_inner);
    ASSERT_OK(tscope_task_end_h(once));
    ASSERT_EQ(tscope_task_end_h(once), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_task_cancel_h(once), TSCOPE_EINVAL);
    tscope_task_t *a = tscope_task_start_h(tscope_task_id_next(), ty_inner);
    tscope_task_t *b = tscope_task_start_h(tscope_task_id_next(), ty_inner);
    ASSERT(a != NULL && b != NULL && a != b);
    ASSERT_OK(tscope_task_end_h(b));
    ASSERT_OK(tscope_task_end_h(a));
    tscope_task_t *held = tscope_task_start_h(tscope_task_id_next(), ty_inner);
    ASSERT_OK(tscope_finalize());
    /* a handle of the last tscope_init is refused by the next one */
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_EQ(tscope_task_end_h(held), TSCOPE_EINVAL);
    ASSERT_U64_EQ(tscope_task_handle_id(held), 0);
    tscope_task_t *fresh = tscope_task_start_h(tscope_task_id_next(), ty_inner);
    ASSERT(fresh != NULL && fresh != held);
    ASSERT_OK(tscope_task_end_h(fresh));
    ASSERT_OK(tscope_finalize());
}

int main(void)
{
    RUN(a_task_that_moves);
    RUN(ended_while_open_elsewhere);
    RUN(directories_past_their_near_part);
    RUN(shards_equal_the_reference_replay);
    RUN(handles_on_threads_while_folding);
    return 0;
}
