/* timeline.h - the run over time, from the exact begin and end times the
 * store replays (not from samples): per task type, the self time its tasks
 * ran in each time bin (so ticks / bin width = the threads running that
 * type, on average over the bin: the concurrency view), per thread the time
 * it was busy in each bin and the part of it a waiting type
 * (TSCOPE_TYPE_WAIT: taskwait, barriers, MPI waits) had its top (the heat
 * map draws the rest: work), and a sample of task durations with their end
 * times (the scatter plot).
 *
 * Memory is bounded whatever the run's length: TSCOPE__TL_BINS bins whose
 * width (a power of two of clock ticks) doubles when the run outgrows them,
 * adjacent bins merged; the duration sample keeps the tasks whose id hash is
 * below a threshold that halves when the sample is full.  Under the store
 * lock, like everything in the store.
 */
#ifndef TSCOPE_PROFILE_TIMELINE_H
#define TSCOPE_PROFILE_TIMELINE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/names.h"

#define TSCOPE__TL_BINS 512u
#define TSCOPE__TL_SHIFT0 18u   /* first bin width: 2^18 ticks (~0.1 ms) */
#define TSCOPE__TL_POINTS 8192u /* durations kept at most */

struct tscope__tl_point {
    uint64_t id;
    uint64_t end;      /* ticks */
    uint64_t duration; /* elapsed ticks */
    uint32_t type;
};

struct tscope__timeline {
    uint64_t origin;
    uint32_t shift; /* bin width: 1 << shift ticks */
    uint32_t used;  /* 1 + the highest bin that holds time */
    uint64_t **type;
    uint32_t ntype;
    uint64_t **thread;
    uint32_t nthread;
    uint64_t **wait; /* per thread slot: the part of its busy time a waiting type had its top */
    uint32_t nwait;
    uint8_t *waits; /* per type id: 0 not known yet, 1 works, 2 waits (tscope__tl_waits) */
    uint32_t nwaits;
    uint32_t waits_gen; /* tscope__names_attrs_gen when waits[] was filled */
    struct tscope__tl_point *pts;
    uint32_t npts;
    uint64_t threshold; /* ids with tscope__mix64(id) < threshold are sampled */
    uint64_t failed;    /* bins or points lost to memory exhaustion */
};

void tscope__tl_init(struct tscope__timeline *tl, uint64_t origin, double fraction);
void tscope__tl_free(struct tscope__timeline *tl);
/* The slow paths of the adds below: a new array, bins to widen, a span
 * over several bins. */
void tscope__tl_add_slow(struct tscope__timeline *tl, uint64_t ***arrays, uint32_t *n,
                         uint32_t index, uint64_t from, uint64_t to);
void tscope__tl_point_slow(struct tscope__timeline *tl, uint64_t id, uint64_t end,
                           uint64_t duration, uint32_t type);

static inline void tscope__tl_add(struct tscope__timeline *tl, uint64_t ***arrays, uint32_t *n,
                                  uint32_t index, uint64_t from, uint64_t to)
{
    if (to <= from)
        return;
    uint64_t b0 = (from - tl->origin) >> tl->shift, b1 = (to - 1 - tl->origin) >> tl->shift;
    uint64_t *bins = index < *n ? (*arrays)[index] : 0;
    if (b0 == b1 && b1 < TSCOPE__TL_BINS && bins && from >= tl->origin) {
        bins[b0] += to - from;
        if (b0 >= tl->used)
            tl->used = (uint32_t)b0 + 1;
        return;
    }
    tscope__tl_add_slow(tl, arrays, n, index, from, to);
}

/* ticks added to bin `bin` (< TSCOPE__TL_BINS, in the current width) of
 * array index. */
static inline void tscope__tl_add_at(struct tscope__timeline *tl, uint64_t ***arrays, uint32_t *n,
                                     uint32_t index, uint32_t bin, uint64_t ticks)
{
    uint64_t *bins = index < *n ? (*arrays)[index] : 0;
    if (!bins) { /* made by a one-tick add in that bin, then the rest */
        uint64_t at = tl->origin + ((uint64_t)bin << tl->shift);
        tscope__tl_add_slow(tl, arrays, n, index, at, at + 1);
        if (!(bins = index < *n ? (*arrays)[index] : 0))
            return;
        ticks--;
    }
    bins[bin] += ticks;
    if (bin >= tl->used)
        tl->used = bin + 1;
}

/* ticks of array index that another timeline has in its bin `bin` of width
 * 1 << shift (the same origin): tl is widened to at least that width first
 * (per-thread shards fold their bins this way, shard.c). */
void tscope__tl_add_bin(struct tscope__timeline *tl, uint64_t ***arrays, uint32_t *n,
                        uint32_t index, uint32_t shift, uint32_t bin, uint64_t ticks);

/* Self time of a task of `type` ran in [from, to). */
static inline void tscope__tl_self(struct tscope__timeline *tl, uint32_t type, uint64_t from,
                                   uint64_t to)
{
    tscope__tl_add(tl, &tl->type, &tl->ntype, type, from, to);
}

/* Thread was busy (some task on its stack) in [from, to). */
static inline void tscope__tl_busy(struct tscope__timeline *tl, uint32_t thread, uint64_t from,
                                   uint64_t to)
{
    tscope__tl_add(tl, &tl->thread, &tl->nthread, thread, from, to);
}

/* 1 when type waits (TSCOPE_TYPE_WAIT), from the type table's attributes,
 * remembered per type until an attribute changes anywhere. */
int tscope__tl_waits_slow(struct tscope__timeline *tl, uint32_t type);
static inline int tscope__tl_waits(struct tscope__timeline *tl, uint32_t type)
{
    if (__builtin_expect(type < tl->nwaits && tl->waits[type] &&
                             tl->waits_gen == atomic_load_explicit(&tscope__names_attrs_gen,
                                                                   memory_order_relaxed),
                         1))
        return tl->waits[type] == 2;
    return tscope__tl_waits_slow(tl, type);
}

/* A task of `type` had the top of thread `thread` in [from, to): its self
 * time, and the thread's waiting time when the type waits. */
static inline void tscope__tl_self_on(struct tscope__timeline *tl, uint32_t type, uint32_t thread,
                                      uint64_t from, uint64_t to)
{
    tscope__tl_self(tl, type, from, to);
    if (to > from && tscope__tl_waits(tl, type))
        tscope__tl_add(tl, &tl->wait, &tl->nwait, thread, from, to);
}

/* A task ended: kept in the duration sample if its id hash is chosen. */
static inline void tscope__tl_point(struct tscope__timeline *tl, uint64_t id, uint64_t end,
                                    uint64_t duration, uint32_t type)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ull;
    if (h < tl->threshold)
        tscope__tl_point_slow(tl, id, end, duration, type);
}

#endif
