/* shard_events.c - the events of the id-based API (taskscope.h) that a
 * thread aggregates itself (in naive mode under one lock of the whole
 * process, also here): task events by
 * id (ids.c), counter samples, custom events, messages and dependencies go
 * to the calling thread's shard (entries by counter, event and peer id and
 * by type pair; the dependency list in its log; in the mapping under
 * `taskscope run`), not through the ring to the consumer, so they are in
 * the mapping the moment the call returns and a SIGKILL loses none of
 * them.  The ring gets them only as shadows (record.h), for the trace,
 * tools and triggered policies.
 *
 * Concurrency: as shard.c's entries: written by the owner between two
 * increments of the entry's version, read by the fold under the store lock
 * (tscope__sh_fold_events), which makes the store's th_* arrays again from
 * every shard; readers merge those with what the consumer applied
 * (store.c's tscope__store_counter, _custom, _peer).  The core calls
 * tscope__shard_take through its `take` hook (hooks.h): it knows nothing
 * of shards.
 */
#include <stdlib.h>
#include <string.h>

#include "acc.h"
#include "core/clock.h"
#include "core/filter.h"
#include "grow.h"
#include "producer.h"
#include "shard.h"
#include "shard_int.h"
#include "u64map.h"
#include "taskscope/taskscope.h"

static inline double dbl(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline uint64_t bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static inline void *entry(struct schunks *c, uint32_t *hi, uint32_t i, size_t elem)
{
    void *e = dir_at(c->dir, SDIR_MAX, c->kind, c->owner, i, elem);
    if (e && i >= LD(*hi))
        ST(*hi, i + 1);
    return e;
}

static int counter(struct tscope__shard *s, uint16_t id, uint64_t value, uint64_t ts)
{
    struct scounter *e = entry(&s->counters, &s->hi_counter, id, sizeof *e);
    if (!e)
        return -1;
    double v = dbl(value), mean = dbl(LD(e->mean));
    uint64_t n = LD(e->n) + 1;
    w_begin(&e->ver);
    if (n == 1 || v < dbl(LD(e->min)))
        ST(e->min, value);
    if (n == 1 || v > dbl(LD(e->max)))
        ST(e->max, value);
    double d = v - mean;
    mean += d / (double)n;
    ST(e->m2, bits(dbl(LD(e->m2)) + d * (v - mean)));
    ST(e->mean, bits(mean));
    ST(e->n, n);
    ST(e->last, value);
    ST(e->last_ts, ts);
    w_end(&e->ver);
    return 0;
}

static int custom(struct tscope__shard *s, uint16_t id, uint64_t payload, uint64_t ts)
{
    struct scustom *e = entry(&s->customs, &s->hi_custom, id, sizeof *e);
    if (!e)
        return -1;
    w_begin(&e->ver);
    ST(e->count, LD(e->count) + 1);
    ST(e->payload, payload);
    ST(e->ts, ts);
    w_end(&e->ver);
    return 0;
}

static int message(struct tscope__shard *s, uint16_t peer, uint64_t bytes, uint8_t flags)
{
    struct speer *e = entry(&s->peers, &s->hi_peer, peer, sizeof *e);
    if (!e)
        return -1;
    int coll = (flags & TSCOPE_MSG_COLLECTIVE) != 0;
    w_begin(&e->ver);
    if (flags & TSCOPE_MSG_SEND) {
        ADD(*(coll ? &e->coll_sent : &e->sent), 1);
        ADD(*(coll ? &e->coll_sent_bytes : &e->sent_bytes), bytes);
    } else {
        ADD(*(coll ? &e->coll_recv : &e->recv), 1);
        ADD(*(coll ? &e->coll_recv_bytes : &e->recv_bytes), bytes);
    }
    w_end(&e->ver);
    return 0;
}

/* ---- dependencies -------------------------------------------------------- */

/* Per thread slot: type pair key -> index of its entry (the owner's). */
static struct tscope__u64map dmaps[TSCOPE__THREADS_MAX];
/* Dependencies logged for the instance graph's list, against its cap. */
static _Atomic uint64_t deps_logged;

/* 1 + the highest slot whose map was made: the frees look no further (the
 * whole array is 1.5 MB that an init would otherwise fault in, ~2 ms). */
static _Atomic uint32_t dmaps_n;

void tscope__sh_events_free(void)
{
    uint32_t n = atomic_load_explicit(&dmaps_n, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < TSCOPE__THREADS_MAX; i++)
        if (dmaps[i].e)
            tscope__u64map_free(&dmaps[i]);
    atomic_store_explicit(&dmaps_n, 0, memory_order_relaxed);
    atomic_store_explicit(&deps_logged, 0, memory_order_relaxed);
}

/* A dependency: counted by type pair (the types the runtime gave, else
 * those of the tasks this thread can see: running here or alive in the id
 * map, as the consumer's task table), and logged for the list while the
 * list has room. */
static int dependency(struct tscope__shard *s, uint32_t thread, const struct tscope__rec *r,
                      uint64_t addr)
{
    int remote = r->kind == TSCOPE__REC_DEP_REMOTE;
    uint16_t from = remote ? 0 : r->type, to = remote ? 0 : r->depth;
    if (!from)
        from = tscope__ids_type(thread, r->id);
    if (!to)
        to = tscope__ids_type(thread, r->arg);
    if (__builtin_expect(tscope__excluded(from) || tscope__excluded(to), 0)) {
        ST(s->totals.deps_filtered, LD(s->totals.deps_filtered) + 1);
        return 2; /* dropped, counted: neither recorded nor shadowed */
    }
    uint64_t key = ((uint64_t)from << 16 | to) + 1;
    struct tscope__u64map *m = &dmaps[thread];
    uint32_t idx = LD(s->hi_deptype);
    int found = 0;
    if (!m->e) {
        if (tscope__u64map_init(m, 64))
            return -1;
        uint32_t n = atomic_load_explicit(&dmaps_n, memory_order_relaxed);
        while (n < thread + 1 &&
               !atomic_compare_exchange_weak_explicit(&dmaps_n, &n, thread + 1,
                                                      memory_order_release, memory_order_relaxed))
            ;
    }
    uint32_t *at = tscope__u64map_upsert(m, key, idx, &found);
    struct sdeptype *e = at ? entry(&s->deptypes, &s->hi_deptype, *at, sizeof *e) : NULL;
    if (!e) {
        if (at && !found)
            tscope__u64map_del(m, key);
        return -1;
    }
    w_begin(&e->ver);
    ST(e->key, key);
    ADD(e->count, 1);
    if (remote) {
        ADD(e->remote, 1);
    } else {
        if (r->flags & TSCOPE_HAZARD_RAW)
            ADD(e->raw, 1);
        if (r->flags & TSCOPE_HAZARD_WAR)
            ADD(e->war, 1);
        if (r->flags & TSCOPE_HAZARD_WAW)
            ADD(e->waw, 1);
        if (r->flags & TSCOPE_HAZARD_MUTEX)
            ADD(e->mutex, 1);
    }
    w_end(&e->ver);
    uint64_t cap = tscope__g.cfg.instance_cap;
    int listed = atomic_load_explicit(&deps_logged, memory_order_relaxed) < cap &&
                 atomic_fetch_add_explicit(&deps_logged, 1, memory_order_relaxed) < cap;
    struct tscope__rec pair[2] = {*r, {.kind = TSCOPE__REC_EXT, .ts = r->ts, .id = addr}};
    if (listed && tscope__sh_log(s, pair, 2))
        listed = 0;
    w_begin(&s->deps.ver);
    ADD(s->deps.count, 1);
    if (!listed)
        ADD(s->deps.cut, 1);
    w_end(&s->deps.ver);
    return 0;
}

static pthread_mutex_t naive;
static pthread_once_t naive_once = PTHREAD_ONCE_INIT;

static void naive_init(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&naive, &a);
    pthread_mutexattr_destroy(&a);
}

void tscope__naive_lock(void)
{
    pthread_once(&naive_once, naive_init);
    pthread_mutex_lock(&naive);
}

void tscope__naive_unlock(void)
{
    pthread_mutex_unlock(&naive);
}

int tscope__shard_take(const struct tscope__rec *r, uint64_t ext)
{
    uint32_t bit = r->kind < 32 ? 1u << r->kind : 0;
    if (!(bit & TSCOPE__REC_SHADOW_KINDS))
        return 1;                       /* the consumer's */
    uint64_t now = tscope__clock_now(); /* before a thread's first event registers it */
    struct tscope__thread *th = enter();
    if (!th)
        return 1; /* measurement off, or no thread slot: the core's path says what */
    struct tscope__shard *s = tscope__sh_of(th->index);
    int rc = -1;
    if (s) {
        struct tscope__rec at = *r;
        at.ts = now;
        rc = bit & TSCOPE__REC_TASK_KINDS     ? tscope__ids_event(th->index, now, r)
             : r->kind == TSCOPE__REC_COUNTER ? counter(s, r->type, r->arg, now)
             : r->kind == TSCOPE__REC_CUSTOM  ? custom(s, r->type, r->arg, now)
             : r->kind == TSCOPE__REC_MESSAGE ? message(s, r->depth, r->arg, r->flags)
                                              : dependency(s, th->index, &at, ext);
        if (rc == 0 && !(bit & TSCOPE__REC_TASK_KINDS))
            ST(s->totals.events, LD(s->totals.events) + 1);
    }
    if (rc == 2) { /* a dependency the filter file drops */
        leave(th);
        return 0;
    }
    if (rc == 0)
        shadow_ext(th, r->kind, now, r->id, r->arg, r->type, r->prio, r->depth, r->flags,
                   tscope__rec_exts(r) ? &ext : NULL);
    leave(th);
    return rc == 0 ? 0 : 1; /* no memory for an entry: the ring takes it */
}

void tscope__shard_filtered(uint32_t thread)
{
    struct tscope__shard *s = tscope__sh_of(thread);
    if (s)
        ST(s->totals.filtered, LD(s->totals.filtered) + 1);
}

/* ---- the fold -------------------------------------------------------------- */

/* The dependencies: th_deptypes with each type pair once, the totals. */
static void fold_deps(struct tscope__store *st, struct tscope__shard *const *shards, uint32_t n)
{
    struct tscope__u64map idx = {0};
    st->nth_deptypes = 0;
    st->th_dependencies = st->th_deps_cut_off = 0;
    st->th_tasks_filtered = st->th_deps_filtered = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&shards[i], __ATOMIC_ACQUIRE);
        if (!s)
            continue;
        st->th_tasks_filtered += LD(s->totals.filtered);
        st->th_deps_filtered += LD(s->totals.deps_filtered);
        struct sdeps d;
        if (tscope__sh_read_entry((const uint64_t *)&s->deps, (uint64_t *)&d, WORDS(d))) {
            st->th_dependencies += d.count;
            st->th_deps_cut_off += d.cut;
        }
        for (uint32_t c = 0, hi = LD(s->hi_deptype); c < hi; c++) {
            struct sdeptype *e = dir_peek(s->deptypes.dir, SDIR_MAX, c, sizeof *e), now;
            if (!e || !tscope__sh_read_entry((const uint64_t *)e, (uint64_t *)&now, WORDS(now)) ||
                !now.key || !now.count)
                continue;
            int found = 0;
            uint32_t *at = (idx.e || tscope__u64map_init(&idx, 64) == 0)
                               ? tscope__u64map_upsert(&idx, now.key, st->nth_deptypes, &found)
                               : NULL;
            if (!at || (!found && tscope__grow(&st->th_deptypes, &st->cap_th_deptypes,
                                               st->nth_deptypes, sizeof *st->th_deptypes)))
                break; /* no memory: fewer pairs this time */
            if (!found)
                st->th_deptypes[st->nth_deptypes++] = (struct tscope__deptype){
                    .from = (uint16_t)((now.key - 1) >> 16), .to = (uint16_t)(now.key - 1)};
            struct tscope__deptype *m = &st->th_deptypes[*at];
            m->count += now.count;
            m->raw += now.raw;
            m->war += now.war;
            m->waw += now.waw;
            m->mutex += now.mutex;
            m->remote += now.remote;
        }
    }
    tscope__u64map_free(&idx);
}

/* Makes the store's th_* arrays again from every shard's entries. */
void tscope__sh_fold_events(struct tscope__store *st, struct tscope__shard *const *shards,
                            uint32_t n)
{
    uint32_t hc = 0, he = 0, hp = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&shards[i], __ATOMIC_ACQUIRE);
        if (!s)
            continue;
        hc = LD(s->hi_counter) > hc ? LD(s->hi_counter) : hc;
        he = LD(s->hi_custom) > he ? LD(s->hi_custom) : he;
        hp = LD(s->hi_peer) > hp ? LD(s->hi_peer) : hp;
    }
    if ((hc &&
         tscope__grow(&st->th_counters, &st->nth_counters, hc - 1, sizeof *st->th_counters)) ||
        (he && tscope__grow(&st->th_customs, &st->nth_customs, he - 1, sizeof *st->th_customs)) ||
        (hp && tscope__grow(&st->th_peers, &st->nth_peers, hp - 1, sizeof *st->th_peers)))
        return; /* no memory: the figures of the last fold stay */
    if (st->th_counters)
        memset(st->th_counters, 0, (size_t)st->nth_counters * sizeof *st->th_counters);
    if (st->th_customs)
        memset(st->th_customs, 0, (size_t)st->nth_customs * sizeof *st->th_customs);
    if (st->th_peers)
        memset(st->th_peers, 0, (size_t)st->nth_peers * sizeof *st->th_peers);
    /* the latest sample's time per counter and event, for `last` */
    uint64_t *cts = hc ? calloc(hc, sizeof *cts) : NULL, *ets = he ? calloc(he, sizeof *ets) : NULL;
    if ((hc && !cts) || (he && !ets)) {
        free(cts);
        free(ets);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__shard *s = __atomic_load_n(&shards[i], __ATOMIC_ACQUIRE);
        if (!s)
            continue;
        for (uint32_t c = 0, hi = LD(s->hi_counter); c < hi && c < hc; c++) {
            struct scounter *e = dir_peek(s->counters.dir, SDIR_MAX, c, sizeof *e), now;
            if (!e || !tscope__sh_read_entry((const uint64_t *)e, (uint64_t *)&now, WORDS(now)) ||
                !now.n)
                continue;
            struct tscope__welford w = {now.n,        dbl(now.mean), dbl(now.m2),
                                        dbl(now.min), dbl(now.max),  dbl(now.last)};
            struct tscope__welford *m = &st->th_counters[c];
            /* the merge's `last` is its second's: the later one */
            *m = m->n && cts[c] > now.last_ts ? tscope__welford_merge(w, *m)
                                              : tscope__welford_merge(*m, w);
            cts[c] = cts[c] > now.last_ts ? cts[c] : now.last_ts;
        }
        for (uint32_t c = 0, hi = LD(s->hi_custom); c < hi && c < he; c++) {
            struct scustom *e = dir_peek(s->customs.dir, SDIR_MAX, c, sizeof *e), now;
            if (!e || !tscope__sh_read_entry((const uint64_t *)e, (uint64_t *)&now, WORDS(now)) ||
                !now.count)
                continue;
            struct tscope__custom *m = &st->th_customs[c];
            m->count += now.count;
            if (now.ts >= ets[c]) {
                m->last_payload = now.payload;
                ets[c] = now.ts;
            }
        }
        for (uint32_t c = 0, hi = LD(s->hi_peer); c < hi && c < hp; c++) {
            struct speer *e = dir_peek(s->peers.dir, SDIR_MAX, c, sizeof *e), now;
            if (!e || !tscope__sh_read_entry((const uint64_t *)e, (uint64_t *)&now, WORDS(now)))
                continue;
            tscope_peer_stats_t *m = &st->th_peers[c];
            m->peer = c;
            m->sent += now.sent;
            m->sent_bytes += now.sent_bytes;
            m->recv += now.recv;
            m->recv_bytes += now.recv_bytes;
            m->coll_sent += now.coll_sent;
            m->coll_sent_bytes += now.coll_sent_bytes;
            m->coll_recv += now.coll_recv;
            m->coll_recv_bytes += now.coll_recv_bytes;
        }
    }
    free(cts);
    free(ets);
    fold_deps(st, shards, n);
}
