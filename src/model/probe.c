/* probe.c - the synthetic co-runners of a contention calibration
 * (contention.c): threads that stand for what a component's neighbours
 * share with it, run until stopped, and count their work so that a
 * calibration sees how much a component slows them.
 *
 *   stream  sequential read-modify-write of a 128 MiB buffer per copy
 *           (memory bandwidth); progress in integers
 *   cache   random read-modify-writes in a 16 MiB buffer per copy (past a
 *           core's own L2, the shared cache and its traffic); progress in
 *           accesses
 *   spin    integer arithmetic in registers and a poll of a flag, as a
 *           worker waiting for its queue does (the core's execution
 *           resources: on this project's VM two vCPUs share a core, and a
 *           loop of dependent multiplies ran 2x slower next to a poller);
 *           progress in steps
 *
 * Each copy touches its whole buffer before tscope_probe_start returns, so
 * no page fault falls in a measured window.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "taskscope/model.h"

enum { STREAM_INTS = 32u << 20, CACHE_INTS = 4u << 20, CHUNK = 4096 };

struct copy {
    pthread_t th;
    struct tscope_probe *p;
    int *buf;
    size_t n;
    _Atomic uint64_t done;
    uint64_t seed;
};

struct tscope_probe {
    int kind;
    unsigned ncopies, started;
    _Atomic int stop;
    _Atomic unsigned ready;
    struct copy *copies;
};

static void *run(void *arg)
{
    struct copy *c = arg;
    volatile int *b = c->buf;
    for (size_t i = 0; i < c->n; i += 1024) /* every page, before the window */
        b[i] = (int)i;
    atomic_fetch_add(&c->p->ready, 1);
    uint64_t r = c->seed | 1;
    size_t pos = 0;
    while (!atomic_load_explicit(&c->p->stop, memory_order_relaxed)) {
        if (c->p->kind == TSCOPE_PROBE_STREAM) {
            for (size_t i = 0; i < CHUNK; i++)
                c->buf[pos + i]++;
            pos = pos + CHUNK >= c->n ? 0 : pos + CHUNK;
        } else if (c->p->kind == TSCOPE_PROBE_SPIN) {
            for (size_t i = 0; i < CHUNK; i++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                if (atomic_load_explicit(&c->p->stop, memory_order_relaxed))
                    break;
            }
            c->buf[0] = (int)r;
        } else {
            for (size_t i = 0; i < CHUNK; i++) {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                c->buf[r & (c->n - 1)]++;
            }
        }
        atomic_fetch_add_explicit(&c->done, CHUNK, memory_order_relaxed);
    }
    return NULL;
}

const char *tscope_probe_name(int kind)
{
    static const char *const names[TSCOPE_NPROBES] = {"stream", "cache", "spin"};
    return kind >= 0 && kind < TSCOPE_NPROBES ? names[kind] : NULL;
}

int tscope_probe_start(int kind, unsigned copies, tscope_probe_t **out)
{
    *out = NULL;
    if (kind < 0 || kind >= TSCOPE_NPROBES || copies < 1 || copies > TSCOPE_CONTENTION_MAX_COPIES)
        return TSCOPE_EINVAL;
    struct tscope_probe *p = calloc(1, sizeof *p);
    if (!p || !(p->copies = calloc(copies, sizeof *p->copies))) {
        free(p);
        return TSCOPE_ENOMEM;
    }
    p->kind = kind;
    p->ncopies = copies;
    int rc = 0;
    for (unsigned i = 0; i < copies && !rc; i++) {
        struct copy *c = &p->copies[i];
        c->p = p;
        c->n = kind == TSCOPE_PROBE_STREAM  ? STREAM_INTS
               : kind == TSCOPE_PROBE_CACHE ? CACHE_INTS
                                            : 1024;
        c->seed = 0x9e3779b97f4a7c15ull * (i + 1);
        if (!(c->buf = malloc(c->n * sizeof *c->buf)))
            rc = TSCOPE_ENOMEM;
        else if (pthread_create(&c->th, NULL, run, c))
            rc = TSCOPE_ENOMEM;
        else
            p->started++;
    }
    if (rc) {
        tscope_probe_stop(p);
        return rc;
    }
    while (atomic_load(&p->ready) < copies)
        sched_yield();
    *out = p;
    return 0;
}

double tscope_probe_progress(const tscope_probe_t *p)
{
    double sum = 0;
    for (unsigned i = 0; i < p->ncopies; i++)
        sum += (double)atomic_load_explicit(&p->copies[i].done, memory_order_relaxed);
    return sum;
}

void tscope_probe_stop(tscope_probe_t *p)
{
    if (!p)
        return;
    atomic_store(&p->stop, 1);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->copies[i].th, NULL);
    for (unsigned i = 0; i < p->ncopies; i++)
        free(p->copies[i].buf);
    free(p->copies);
    free(p);
}

double tscope_probe_rate(int kind, unsigned copies, double secs)
{
    tscope_probe_t *p;
    if (tscope_probe_start(kind, copies, &p))
        return -1;
    struct timespec t0, t1, ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double p0 = tscope_probe_progress(p);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
    double done = tscope_probe_progress(p) - p0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tscope_probe_stop(p);
    double elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return elapsed > 0 ? done / elapsed / copies : -1;
}
