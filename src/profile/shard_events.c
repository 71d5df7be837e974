/* shard_events.c - the events other than tasks that a thread aggregates
 * itself with TASKSCOPE_AGGREGATE=thread: counter samples, custom events
 * and messages go to the calling thread's shard (its entries by counter,
 * event and peer id, in the mapping under `taskscope run`), not through
 * the ring to the consumer, so they are in the mapping the moment the call
 * returns and a SIGKILL loses none of them.  The ring gets them only as
 * shadows (record.h), for the trace, tools and triggered policies.
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
#include "grow.h"
#include "producer.h"
#include "shard.h"
#include "shard_int.h"
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

int tscope__shard_take(uint8_t kind, uint64_t id, uint64_t arg, uint16_t type, uint16_t depth,
                       uint8_t flags)
{
    struct tscope__thread *th = enter();
    if (!th)
        return 1; /* measurement off, or no thread slot: the core's path says what */
    struct tscope__shard *s = tscope__sh_of(th->index);
    uint64_t now = tscope__clock_now();
    int rc = -1;
    if (s) {
        rc = kind == TSCOPE__REC_COUNTER   ? counter(s, type, arg, now)
             : kind == TSCOPE__REC_CUSTOM  ? custom(s, type, arg, now)
             : kind == TSCOPE__REC_MESSAGE ? message(s, depth, arg, flags)
                                           : -1;
    }
    if (rc == 0) {
        ST(s->totals.events, LD(s->totals.events) + 1);
        shadow(th, kind, now, id, arg, type, 0, depth, flags);
    }
    leave(th);
    return rc == 0 ? 0 : 1; /* no memory for an entry: the ring takes it */
}

/* ---- the fold -------------------------------------------------------------- */

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
    memset(st->th_counters, 0, (size_t)st->nth_counters * sizeof *st->th_counters);
    memset(st->th_customs, 0, (size_t)st->nth_customs * sizeof *st->th_customs);
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
}
