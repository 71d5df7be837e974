/* drain.c - the profile store as the consumer's subscriber (core/hooks.h):
 * a batch of ring records applied under the store lock (what a shard did
 * not take), the end of a round, and a retired thread's stack closed before
 * its slot is reused.
 *
 * A batch holds the store lock for at most TASKSCOPE_BATCH records, so a
 * query from another thread waits for one batch at most.  Leaves (a start
 * followed by its end in the same ring) take the slot-free path of leaf.c;
 * their pending batch is folded in before the lock is released.
 */
#include "core/clock.h"
#include "core/core.h"
#include "shard.h"
#include "store.h"

uint64_t tscope__store_apply_ring(uint32_t thread, struct tscope__ring *r, uint64_t tail,
                                  uint64_t stop, uint64_t head)
{
    struct tscope__store *s = tscope__g.store;
    /* locals: the loop calls out, so the compiler would reload them from
     * the ring for every record */
    const struct tscope__rec *buf = r->buf;
    const uint64_t mask = r->mask;
    pthread_mutex_lock(&s->lock);
    while (tail < stop) {
        if (tail + 8 < head) /* hide the latency of large task tables */
            tscope__store_prefetch(s, &buf[(tail + 8) & mask]);
        const struct tscope__rec *rec = &buf[tail & mask];
        const struct tscope__rec *next = &buf[(tail + 1) & mask];
        if (tscope__rec_shadow(rec)) { /* the shard has it (record.h), EXT included */
            unsigned exts = tscope__rec_exts(rec);
            tail += tail + exts < head ? 1 + exts : 1;
            continue;
        }
        if (tail + 1 < head && tscope__rec_is_leaf_pair(rec, next) &&
            tscope__store_apply_leaf(s, thread, rec, next) == 0) {
            tail += 2;
            continue;
        }
        const struct tscope__rec *ext = NULL;
        unsigned exts = tscope__rec_exts(rec);
        struct tscope__rec copy[2];
        if (exts == 1 && tail + 1 < head) {
            ext = next; /* published together with rec */
            tail++;
        } else if (exts == 2 && tail + 2 < head) { /* contiguous, whatever the wrap */
            copy[0] = *next;
            copy[1] = buf[(tail + 2) & mask];
            ext = copy;
            tail += 2;
        }
        tscope__store_apply(s, thread, rec, ext);
        tail++;
    }
    tscope__store_flush_leaves(s);
    tscope__shards_set_limit(s); /* the cap may have lowered it */
    pthread_mutex_unlock(&s->lock);
    return tail;
}

void tscope__store_thread_gone(uint32_t thread)
{
    uint64_t end = tscope__clock_now();
    struct tscope__store *s = tscope__g.store;
    pthread_mutex_lock(&s->lock);
    tscope__store_flush_leaves(s);
    tscope__stack_close_thread(s, thread, end);
    tscope__shards_retire(s, thread, end);
    /* the slot's next thread is another one: each type counts it anew
     * (a type's "threads" are threads, not slots) */
    uint8_t bit = (uint8_t)(1u << (thread % 8));
    for (uint32_t t = 0; t < s->ntypes; t++)
        if (thread / 8 < s->types[t].seen_bytes)
            s->types[t].seen[thread / 8] &= (uint8_t)~bit;
    pthread_mutex_unlock(&s->lock);
}

void tscope__store_round_done(void)
{
    struct tscope__store *s = tscope__g.store;
    pthread_mutex_lock(&s->lock);
    tscope__shards_fold_logs(s); /* the instance graph's records of the threads */
    tscope__store_end_round(s);
    pthread_mutex_unlock(&s->lock);
}
