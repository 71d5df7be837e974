/* recover.c - a dead process's measurement rebuilt from its crash journal,
 * beside journal.c, which writes it.
 *
 * A program killed by SIGKILL (the OOM killer, a batch system's last word)
 * runs no handler, and one that leaves by a path taskscope does not see
 * (an _exit inside a privately loaded tool) runs none either.  Under
 * `taskscope run` its library kept everything it measured in the process's
 * file-backed mapping (journal.h says what is where); this reads the
 * threads' shards back into a store with the library's own functions,
 * applies what the rings still held that no shard took, and ends the run
 * as tscope_finalize does (ending.c: the tasks still open closed at the
 * moment the program died, the usual outputs written, marked with how it
 * ended).
 *
 * The rebuilt run is this process's measurement state (the store, the name
 * tables, the thread registry: what the profile's functions read), as
 * tscope_init makes it for a live run; this file and tscope_init are the
 * only writers of that state besides the run itself.  Offline code calls
 * it through src/offline (offline.h), which finds the journal.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/names.h"
#include "profile/shard.h"
#include "profile/store.h"
#include "ending.h"
#include "journal.h"
#include "recover.h"

/* Applies n records of thread `slot` (contiguous) as the consumer did.
 * Returns 0, or -1 (nothing applied) when a record is not one a producer
 * writes: a corrupt ring, whose replay stops there. */
static int apply(uint32_t slot, struct tscope__rec *recs, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint8_t k = recs[i].kind;
        int task = k <= TSCOPE__REC_RESUME || k == TSCOPE__REC_START;
        if (k < TSCOPE__REC_CREATE || k > TSCOPE__REC_LAST || recs[i].type > TSCOPE__MAX_IDS ||
            (task && recs[i].id == 0)) /* the API refuses task id 0 */
            return -1;
    }
    uint64_t size = 1;
    while (size < n)
        size *= 2;
    struct tscope__ring r = {.buf = recs, .size = size, .mask = size - 1, .external = 1};
    tscope__store_apply_ring(slot, &r, 0, n, n);
    return 0;
}

/* The rings: what they still held that no shard took (a shard without
 * memory for an entry leaves the event to the ring; shadows are skipped),
 * and the thread slots themselves (names, drop counts) for the profile:
 * the mapping's SLOT blocks (journal.h). */
struct rings {
    struct tscope__rec *buf;
    uint64_t cap;
    uint32_t nslots;     /* highest slot + 1 met */
    uint64_t last_ticks; /* the newest record's time */
};

static void replay_slot(const struct tscope__shblock *b, void *payload, void *arg)
{
    struct rings *g = arg;
    struct tscope__thread *t = payload;
    uint64_t off = TSCOPE__SLOT_RING_OFFSET;
    if (b->owner >= TSCOPE__THREADS_MAX || b->bytes < off || t->index != b->owner ||
        tscope__g.threads[b->owner])
        return; /* not a slot this build wrote, or one met already */
    uint64_t ring_records = t->slot_records;
    if (ring_records == 0 || (ring_records & (ring_records - 1)) ||
        ring_records > (b->bytes - off) / sizeof(struct tscope__rec))
        return;
    tscope__g.threads[b->owner] = t; /* its name and counts, read by the profile */
    if (b->owner + 1 > g->nslots)
        g->nslots = b->owner + 1;
    if (atomic_load(&t->ring_freed) || t->slot_backed != 1)
        return; /* released, never written, or in ordinary memory (no room in the file) */
    uint64_t head = atomic_load(&t->ring.head), from = atomic_load(&t->ring.tail);
    if (head <= from || head - from > ring_records)
        return;
    uint64_t n = head - from;
    if (n > g->cap) {
        free(g->buf);
        g->buf = malloc(n * sizeof *g->buf);
        g->cap = g->buf ? n : 0;
        if (!g->buf)
            return;
    }
    const struct tscope__rec *ring = (const struct tscope__rec *)((char *)t + off);
    for (uint64_t c = 0; c < n; c++) {
        g->buf[c] = ring[(from + c) & (ring_records - 1)];
        if (g->buf[c].ts > g->last_ticks)
            g->last_ticks = g->buf[c].ts;
    }
    apply(b->owner, g->buf, n);
}

static int fail(char *why, size_t len, const char *fmt, const char *a, const char *b)
{
    snprintf(why, len, fmt, a, b);
    return -1;
}

/* The end of every recovery: placeholders for the threads, then the run
 * ended as tscope_finalize ends one (ending.c) at `end`. */
static int finish(const char *outdir, const char *base, struct tscope__store *s, uint32_t nthreads,
                  uint64_t end, int sig, const char *program, FILE *summary, double *as_of_s,
                  char *why, size_t whylen)
{
    if (end < s->origin)
        end = s->origin;
    if (nthreads > TSCOPE__THREADS_MAX)
        nthreads = TSCOPE__THREADS_MAX;
    for (uint32_t i = 0; i < nthreads; i++) {
        if (tscope__g.threads[i])
            continue;
        struct tscope__thread *t = calloc(1, sizeof *t);
        if (!t) {
            nthreads = i;
            break;
        }
        t->index = i;
        snprintf(t->name, sizeof t->name, "thread-%u", i);
        tscope__g.threads[i] = t;
    }
    atomic_store(&tscope__g.nthreads, nthreads);
    /* no signal: it exited by a way that ran no taskscope code (an _exit
     * in a privately loaded tool), which the outputs call "_exit" */
    atomic_store(&tscope__g.ended_by, sig ? sig : TSCOPE__ENDED_BY_EXIT);
    tscope__store_round_done(); /* what waited a round, as finalize's drain does */
    tscope__store_round_done();
    /* what the program would have written itself (its configuration is in
     * the store); the sampler's time series lived only in the process */
    struct tscope__ending e = {.end = end,
                               .from_journal = 1,
                               .journal = base,
                               .write = 1,
                               .summary = summary,
                               .outdir = outdir,
                               .program = program};
    int rc = tscope__settle_snapshot_write(s, &e, as_of_s);
    if (rc == TSCOPE_ENOMEM)
        return fail(why, whylen, "cannot recover %s: %s", base, "out of memory");
    if (rc) {
        fail(why, whylen, "cannot write the recovered outputs to %s%s", outdir, "");
        return -2; /* what the journal holds is whole: kept for another try */
    }
    return 0;
}

/* The recovery from the mapping: the configuration, names, clock, the
 * threads' shards and their rings. */
int tscope__recover_journal(const char *outdir, const char *base, int sig, uint64_t death_mono_ns,
                            FILE *summary, double *as_of_s, char *why, size_t whylen)
{
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s.map", base);
    const char *bad = NULL;
    int r = tscope__shards_open(path, &bad);
    if (r == 3) /* its header's copy is read */
        fprintf(stderr, "taskscope: warning: %s: %s\n", path, bad);
    else if (r != 1)
        return fail(why, whylen, "cannot read %s: %s", path,
                    r ? bad : "it is gone too (/dev/shm was emptied?)");
    const struct tscope__shfile *h = tscope__shards_header();
    uint64_t written = tscope__shards_written();
    struct stat sb;
    if (written && stat(path, &sb) == 0)
        fprintf(stderr,
                "taskscope: warning: %s is truncated (%llu of its %llu bytes): what the rest held "
                "is lost, the rest is recovered\n",
                path, (unsigned long long)sb.st_size, (unsigned long long)written);
    if (!(h->ns_per_tick > 0 && h->ns_per_tick < 1e6) || h->clock_kind < TSCOPE__CLOCK_TSC ||
        h->clock_kind > TSCOPE__CLOCK_MANUAL || h->nranks < 1 || h->rank < 0 ||
        h->rank >= h->nranks)
        return fail(why, whylen, "cannot read %s: %s", path, "its clock or rank is damaged");
    struct tscope__config cfg;
    if (tscope__shards_recover_config(&cfg)) {
        tscope__config_load(&cfg, NULL);
        fprintf(stderr,
                "taskscope: warning: %s: the program's configuration in it is damaged; the "
                "outputs are the default ones\n",
                path);
    }
    uint32_t damaged = tscope__shards_recover_names();
    if (damaged)
        fprintf(stderr,
                "taskscope: warning: %s: %u names in it are damaged; their types are called "
                "\"(damaged name N)\"\n",
                path, damaged);
    tscope__clock_restore(h->clock_kind, h->ns_per_tick);
    struct tscope__store *s = tscope__store_new(&cfg, h->origin);
    if (!s)
        return fail(why, whylen, "cannot recover %s: %s", base, "out of memory");
    tscope__g.store = s;
    tscope__g.origin = s->origin;
    tscope__g.rank = h->rank;
    tscope__g.nranks = h->nranks;
    tscope__shards_recover_paths(s);
    struct rings g = {0};
    tscope__shards_each(TSCOPE__SHB_SLOT, replay_slot, &g);
    free(g.buf); /* the mapping stays: tscope__g.threads points into it until the release */
    uint64_t end = g.last_ticks, at = tscope__shfile_ticks_at(h, death_mono_ns);
    if (at > end)
        end = at;
    char program[sizeof h->program];
    memcpy(program, h->program, sizeof program);
    program[sizeof program - 1] = 0;
    uint32_t slots = tscope__shards_slots();
    return finish(outdir, base, s, slots > g.nslots ? slots : g.nslots, end, sig, program, summary,
                  as_of_s, why, whylen);
}

const struct tscope__config *tscope__recovered_config(void)
{
    return tscope__g.store ? &tscope__g.store->cfg : NULL;
}

void tscope__recover_release(void)
{
    uint32_t n = atomic_load(&tscope__g.nthreads);
    for (uint32_t i = 0; i < TSCOPE__THREADS_MAX && (i < n || tscope__g.threads[i]); i++) {
        char *t = (char *)tscope__g.threads[i];
        if (t && !tscope__shards_owns(t))
            free(t); /* a placeholder of a slot without a region */
        tscope__g.threads[i] = NULL;
    }
    atomic_store(&tscope__g.nthreads, 0);
    tscope__shards_recover_release();
    tscope__store_free(tscope__g.store);
    tscope__g.store = NULL;
    tscope__g.finalised = 0;
    tscope__g.end_ticks = 0;
    atomic_store(&tscope__g.ended_by, 0);
    tscope__names_clear(&tscope__types);
    tscope__names_clear(&tscope__counters);
    tscope__names_clear(&tscope__events);
}
