/* timeline.c - the slow paths of the timeline (timeline.h): arrays made on
 * first use, the bins widened when the run outgrows them, spans over
 * several bins, the duration sample thinned when full. */
#include "timeline.h"

#include "core/names.h"
#include "taskscope/taskscope.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tscope__tl_init(struct tscope__timeline *tl, uint64_t origin, double fraction)
{
    memset(tl, 0, sizeof *tl);
    tl->origin = origin;
    tl->shift = TSCOPE__TL_SHIFT0;
    if (fraction >= 1)
        tl->threshold = UINT64_MAX;
    else if (fraction > 0)
        tl->threshold = (uint64_t)ldexp(fraction, 64);
}

static void free_arrays(uint64_t **a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(a[i]);
    free(a);
}

void tscope__tl_free(struct tscope__timeline *tl)
{
    free_arrays(tl->type, tl->ntype);
    free_arrays(tl->thread, tl->nthread);
    free_arrays(tl->wait, tl->nwait);
    free(tl->waits);
    free(tl->pts);
    memset(tl, 0, sizeof *tl);
}

/* Bins twice as wide: each new bin holds two old ones. */
static void widen(uint64_t **a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t *b = a[i];
        if (!b)
            continue;
        for (uint32_t k = 0; k < TSCOPE__TL_BINS / 2; k++)
            b[k] = b[2 * k] + b[2 * k + 1];
        memset(b + TSCOPE__TL_BINS / 2, 0, TSCOPE__TL_BINS / 2 * sizeof *b);
    }
}

static void widen_all(struct tscope__timeline *tl)
{
    widen(tl->type, tl->ntype);
    widen(tl->thread, tl->nthread);
    widen(tl->wait, tl->nwait);
    tl->shift++;
    tl->used = (tl->used + 1) / 2;
}

void tscope__tl_add_slow(struct tscope__timeline *tl, uint64_t ***arrays, uint32_t *n,
                         uint32_t index, uint64_t from, uint64_t to)
{
    if (from < tl->origin)
        from = tl->origin;
    if (to <= from)
        return;
    while (((to - 1 - tl->origin) >> tl->shift) >= TSCOPE__TL_BINS)
        widen_all(tl);
    if (index >= *n) {
        uint32_t cap = *n ? *n : 16;
        while (cap <= index)
            cap *= 2;
        uint64_t **g = realloc(*arrays, cap * sizeof *g);
        if (!g) {
            tl->failed++;
            return;
        }
        memset(g + *n, 0, (cap - *n) * sizeof *g);
        *arrays = g;
        *n = cap;
    }
    uint64_t *bins = (*arrays)[index];
    if (!bins && !(bins = (*arrays)[index] = calloc(TSCOPE__TL_BINS, sizeof *bins))) {
        tl->failed++;
        return;
    }
    uint64_t width = 1ull << tl->shift;
    for (uint64_t t = from; t < to;) {
        uint64_t b = (t - tl->origin) >> tl->shift;
        uint64_t end = tl->origin + (b + 1) * width;
        if (end > to)
            end = to;
        bins[b] += end - t;
        if (b >= tl->used)
            tl->used = (uint32_t)b + 1;
        t = end;
    }
}

void tscope__tl_point_slow(struct tscope__timeline *tl, uint64_t id, uint64_t end,
                           uint64_t duration, uint32_t type)
{
    if (!tl->pts && !(tl->pts = malloc(TSCOPE__TL_POINTS * sizeof *tl->pts))) {
        tl->failed++;
        return;
    }
    while (tl->npts == TSCOPE__TL_POINTS) {
        /* full: keep the half of the ids below half the threshold */
        tl->threshold /= 2;
        uint32_t k = 0;
        for (uint32_t i = 0; i < tl->npts; i++)
            if (tl->pts[i].id * 0x9E3779B97F4A7C15ull < tl->threshold)
                tl->pts[k++] = tl->pts[i];
        tl->npts = k;
        if (id * 0x9E3779B97F4A7C15ull >= tl->threshold)
            return;
    }
    tl->pts[tl->npts++] = (struct tscope__tl_point){id, end, duration, type};
}

void tscope__tl_add_bin(struct tscope__timeline *tl, uint64_t ***arrays, uint32_t *n,
                        uint32_t index, uint32_t shift, uint32_t bin, uint64_t ticks)
{
    if (!ticks)
        return;
    while (tl->shift < shift)
        widen_all(tl);
    tscope__tl_add_at(tl, arrays, n, index, (uint32_t)(((uint64_t)bin << shift) >> tl->shift),
                      ticks);
}

int tscope__tl_waits_slow(struct tscope__timeline *tl, uint32_t type)
{
    uint32_t gen = atomic_load_explicit(&tscope__names_attrs_gen, memory_order_acquire);
    if (gen != tl->waits_gen) { /* an attribute changed: ask again */
        if (tl->waits)
            memset(tl->waits, 0, tl->nwaits);
        tl->waits_gen = gen;
    }
    int waits = (tscope__names_attrs(&tscope__types, type) & TSCOPE_TYPE_WAIT) != 0;
    if (type >= tl->nwaits && type < (1u << 16)) {
        uint32_t cap = tl->nwaits ? tl->nwaits : 64;
        while (cap <= type)
            cap *= 2;
        uint8_t *w = realloc(tl->waits, cap);
        if (!w)
            return waits; /* asked again next time */
        memset(w + tl->nwaits, 0, cap - tl->nwaits);
        tl->waits = w;
        tl->nwaits = cap;
    }
    if (type < tl->nwaits)
        tl->waits[type] = waits ? 2 : 1;
    return waits;
}
