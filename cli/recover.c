/* recover.c - the outputs of a program that could not write them itself.
 *
 * A program killed by SIGKILL (the OOM killer, a batch system's last word)
 * runs no handler, and one that leaves by a path taskscope does not see
 * (an _exit inside a privately loaded tool) runs none either.  Under
 * `taskscope run` its library kept a crash journal (src/lifecycle/journal.h
 * says what is where); this rebuilds the store from it with the library's
 * own store functions, in the order the consumer applied them, adds what
 * the rings still held, closes the tasks still open at the moment the
 * program died, and writes the usual outputs, marked with how it ended.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/clock.h"
#include "core/core.h"
#include "core/names.h"
#include "export/export.h"
#include "export/output.h"
#include "lifecycle/journal.h"
#include "profile/persist.h"
#include "profile/profile.h"
#include "profile/shard.h"
#include "profile/store.h"

#define MAX_BATCH (1u << 26) /* records in one journal entry: more is corruption */

/* Recovery state: per thread slot, where the journal left its ring. */
struct replay {
    uint64_t *applied; /* ring counter after the last journaled batch */
    uint8_t *seen;     /* a batch of the slot's current ring is in the journal */
    uint32_t nslots;   /* highest slot + 1 met */
    uint64_t last_ticks;
};

static int get_names(FILE *f, struct tscope__names *t)
{
    uint32_t n;
    if (fread(&n, sizeof n, 1, f) != 1 || n > TSCOPE__MAX_IDS)
        return -1;
    char buf[TSCOPE__NAME_MAX + 1];
    for (uint32_t id = 1; id <= n; id++) {
        uint16_t len;
        uint32_t got;
        if (fread(&len, sizeof len, 1, f) != 1 || len == 0 || len > TSCOPE__NAME_MAX ||
            fread(buf, 1, len, f) != len)
            return -1;
        buf[len] = 0;
        if (tscope__names_intern(t, buf, &got) || got != id)
            return -1; /* a name twice: not a table this library wrote */
    }
    return 0;
}

/* One entry of the state's table of ring positions (journal.c). */
struct position {
    uint32_t slot, pad;
    uint64_t pos;
};

/* The state's ring positions: how far it covers each slot's ring. */
static int get_positions(FILE *f, uint32_t *n, struct position **out)
{
    *out = NULL;
    if (fread(n, sizeof *n, 1, f) != 1 || *n > TSCOPE__THREADS_MAX)
        return -1;
    if (!*n)
        return 0;
    *out = malloc(*n * sizeof **out);
    if (!*out || fread(*out, sizeof **out, *n, f) != *n)
        return -1;
    for (uint32_t i = 0; i < *n; i++)
        if ((*out)[i].slot >= TSCOPE__THREADS_MAX)
            return -1;
    return 0;
}

static struct tscope__names *table_of(uint16_t t)
{
    return t == 0 ? &tscope__types : t == 1 ? &tscope__counters : &tscope__events;
}

/* Applies n records of thread `slot` (contiguous) as the consumer did.
 * Returns 0, or -1 (nothing applied) when a record is not one a producer
 * writes: a corrupt journal or ring, whose replay stops there. */
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

static void note_slot(struct replay *rp, uint32_t slot)
{
    if (slot + 1 > rp->nslots)
        rp->nslots = slot + 1;
}

/* Replays one journal file; a torn last entry (the write SIGKILL cut) ends
 * it, as those records are still in the ring. */
static void replay_journal(const char *path, uint64_t generation, struct replay *rp)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return; /* killed before its first entry was created: nothing in it */
    struct tscope__rec *buf = NULL;
    uint64_t cap = 0;
    struct tscope__jchunk h;
    struct stat sb;
    uint64_t size = fstat(fileno(f), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    uint32_t magic = TSCOPE__JOURNAL_MAGIC ^ (uint32_t)generation;
    const char *damaged = NULL;
    long at_entry = 0;
    while ((at_entry = ftell(f)) >= 0 && fread(&h, sizeof h, 1, f) == 1) {
        /* another magic: what an older generation left there (the file is
         * overwritten in place, so this may be the middle of its records),
         * never written, or the header a SIGKILL cut short - the end */
        if (h.magic != magic)
            break;
        if (h.kind != TSCOPE__J_RECORDS && h.kind != TSCOPE__J_NAME &&
            h.sum != tscope__jchunk_sum(&h, NULL, 0, NULL, 0)) {
            damaged = "an entry's checksum";
            break;
        }
        if (h.ticks > rp->last_ticks)
            rp->last_ticks = h.ticks;
        if (h.kind == TSCOPE__J_RECORDS) {
            long at = ftell(f);
            if (h.n == 0 || h.n > MAX_BATCH || h.slot >= TSCOPE__THREADS_MAX || at < 0 ||
                (uint64_t)h.n * sizeof *buf > size - (uint64_t)at)
                break; /* more than the file holds: a torn or corrupt entry */
            if (h.n > cap) {
                free(buf);
                cap = h.n;
                buf = malloc(cap * sizeof *buf);
                if (!buf)
                    break;
            }
            if (fread(buf, sizeof *buf, h.n, f) != h.n)
                break;
            if (h.sum != tscope__jchunk_sum(&h, buf, h.n * sizeof *buf, NULL, 0)) {
                damaged = "an entry's checksum";
                break;
            }
            if (apply(h.slot, buf, h.n))
                break;
            rp->applied[h.slot] = h.start + h.n;
            rp->seen[h.slot] = 1;
            note_slot(rp, h.slot);
        } else if (h.kind == TSCOPE__J_ROUND) {
            tscope__store_round_done();
        } else if (h.kind == TSCOPE__J_GONE && h.slot < TSCOPE__THREADS_MAX) {
            tscope__store_thread_gone_at(h.slot, h.ticks);
            rp->seen[h.slot] = 0; /* a new ring starts from 0 */
            note_slot(rp, h.slot);
        } else if (h.kind == TSCOPE__J_NAME && h.table <= 2 && h.n <= TSCOPE__NAME_MAX) {
            char name[TSCOPE__NAME_MAX + 1];
            if (fread(name, 1, h.n, f) != h.n)
                break;
            name[h.n] = 0;
            if (h.sum != tscope__jchunk_sum(&h, name, h.n, NULL, 0)) {
                damaged = "an entry's checksum";
                break;
            }
            struct tscope__names *t = table_of(h.table);
            uint32_t got;
            while (tscope__names_count(t) + 1 < h.slot) { /* keep the ids */
                char fill[32];
                snprintf(fill, sizeof fill, "name-%u", tscope__names_count(t) + 1);
                if (tscope__names_intern(t, fill, &got))
                    break;
            }
            if (tscope__names_count(t) + 1 == h.slot)
                tscope__names_intern(t, name, &got);
        } else {
            damaged = "an entry's kind";
            break;
        }
        /* the next entry: each is padded to 32 bytes (journal.c) */
        uint64_t payload = h.kind == TSCOPE__J_RECORDS ? (uint64_t)h.n * sizeof *buf
                           : h.kind == TSCOPE__J_NAME  ? h.n
                                                       : 0;
        if (fseek(f, at_entry + (long)((sizeof h + payload + 31) / 32 * 32), SEEK_SET))
            break;
    }
    if (damaged)
        fprintf(stderr,
                "taskscope: warning: %s is damaged at byte %ld (%s): what it held from there on "
                "is lost, the rest is recovered\n",
                path, at_entry, damaged);
    free(buf);
    fclose(f);
}

/* The rings: records past what the journal holds, and the thread slots
 * themselves (names, drop counts) for the profile: the mapping's SLOT
 * blocks (journal.h). */
struct rings {
    const struct tscope__jstate *st;
    struct replay *rp;
    struct tscope__rec *buf;
    uint64_t cap;
};

static void replay_slot(const struct tscope__shblock *b, void *payload, void *arg)
{
    struct rings *g = arg;
    struct tscope__thread *t = payload;
    uint64_t off = g->st->ring_offset;
    if (b->owner >= TSCOPE__THREADS_MAX || off < sizeof *t || b->bytes < off ||
        t->index != b->owner || tscope__g.threads[b->owner])
        return; /* not a slot this build wrote, or one met already */
    uint64_t ring_records = t->slot_records;
    if (ring_records == 0 || (ring_records & (ring_records - 1)) ||
        ring_records > (b->bytes - off) / sizeof(struct tscope__rec))
        return;
    tscope__g.threads[b->owner] = t; /* its name and counts, read by the profile */
    note_slot(g->rp, b->owner);
    if (atomic_load(&t->ring_freed))
        return;
    uint64_t head = atomic_load(&t->ring.head), tail = atomic_load(&t->ring.tail);
    uint64_t from =
        g->rp->seen[b->owner] && g->rp->applied[b->owner] > tail ? g->rp->applied[b->owner] : tail;
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
        if (g->buf[c].ts > g->rp->last_ticks)
            g->rp->last_ticks = g->buf[c].ts;
    }
    apply(b->owner, g->buf, n);
}

static void replay_rings(const struct tscope__jstate *st, struct replay *rp)
{
    struct rings g = {st, rp, NULL, 0};
    tscope__shards_each(TSCOPE__SHB_SLOT, replay_slot, &g);
    free(g.buf);
    /* the mapping stays: tscope__g.threads points into it until the release */
}

static int fail(char *why, size_t len, const char *fmt, const char *a, const char *b)
{
    snprintf(why, len, fmt, a, b);
    return -1;
}

/* The end of every recovery: placeholders for the threads, the tasks still
 * open closed at `end` (unfinished), the outputs written. */
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
    pthread_mutex_lock(&s->lock);
    tscope__shards_recover(s, &end);
    tscope__store_complete(s, end);
    pthread_mutex_unlock(&s->lock);
    if (tscope__shards_damaged())
        fprintf(stderr,
                "taskscope: warning: %s.map: %llu bytes in it are damaged (not whole blocks); "
                "what they held is lost, the rest is recovered\n",
                base, (unsigned long long)tscope__shards_damaged());
    tscope__g.end_ticks = end;
    tscope__g.finalised = 1;

    struct tscope__profile *p = tscope__profile_snapshot();
    if (!p)
        return fail(why, whylen, "cannot recover %s: %s", base, "out of memory");
    free(p->program);
    p->program = strdup(program);
    *as_of_s = p->totals.elapsed_ns / 1e9;
    /* what the program would have written itself (its configuration is
     * in the store); the sampler's time series lived only in the process */
    const struct tscope__config *cfg = &s->cfg;
    if (cfg->summary && summary) {
        tscope__export_summary(p, summary, cfg->summary_sort, cfg->summary_rows);
        fflush(summary);
    }
    int rc = p->program ? tscope__output_write_files(outdir, cfg->outputs, 0, p, NULL, 0) : -1;
    tscope__profile_free(p);
    if (rc) {
        fail(why, whylen, "cannot write the recovered outputs to %s%s", outdir, "");
        return -2; /* what the journal holds is whole: kept for another try */
    }
    return 0;
}

/* A recovery from the shards file alone, when the journal's state is gone
 * or damaged: the configuration, names, clock and threads' shards it holds
 * (everything of the tasks that came through handles: every task of the
 * OpenMP, pthread and MPI adapters and of the bundled runtime). */
static int from_mapping(const char *outdir, const char *base, int sig, uint64_t death_mono_ns,
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
    /* what the rings still hold: no state or journal has it */
    struct tscope__jstate st = {.ring_offset = TSCOPE__SLOT_RING_OFFSET};
    struct replay rp = {calloc(TSCOPE__THREADS_MAX, sizeof(uint64_t)),
                        calloc(TSCOPE__THREADS_MAX, 1), 0, 0};
    if (rp.applied && rp.seen)
        replay_rings(&st, &rp);
    free(rp.applied);
    free(rp.seen);
    uint64_t end = rp.last_ticks;
    if (death_mono_ns > h->mono_ns) {
        uint64_t at = h->origin + (uint64_t)((double)(death_mono_ns - h->mono_ns) / h->ns_per_tick);
        end = at > end ? at : end;
    }
    char program[sizeof h->program];
    memcpy(program, h->program, sizeof program);
    program[sizeof program - 1] = 0;
    uint32_t slots = tscope__shards_slots();
    return finish(outdir, base, s, slots > rp.nslots ? slots : rp.nslots, end, sig, program,
                  summary, as_of_s, why, whylen);
}

/* 1 when the state's body is what its header's checksum says (f is left
 * just past the header). */
static int body_whole(FILE *f, const struct tscope__jstate *h)
{
    static char buf[1 << 16]; /* the journal sums in pieces of this size */
    uint64_t sum = TSCOPE__SUM64_START, left = h->body_bytes;
    if (fseek(f, (long)sizeof *h, SEEK_SET) != 0)
        return 0;
    while (left) {
        size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
        if (fread(buf, 1, want, f) != want)
            return 0;
        sum = tscope__sum64(sum, buf, want);
        left -= want;
    }
    return fgetc(f) == EOF && sum == h->body_sum && fseek(f, (long)sizeof *h, SEEK_SET) == 0;
}

int tscope_cli_recover(const char *outdir, long pid, int sig, uint64_t death_mono_ns, FILE *summary,
                       double *as_of_s, char *why, size_t whylen)
{
    char base[PATH_MAX + 64], path[PATH_MAX + 128];
    snprintf(base, sizeof base, "%s/.taskscope-%ld", outdir, pid);
    /* the newer of the two state files with a whole header (journal.c) */
    struct tscope__jstate st, cand;
    struct position *pos = NULL;
    uint32_t npos = 0;
    FILE *f = NULL;
    int open_err = ENOENT, states = 0;
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s.state-%d", base, i);
        FILE *g = fopen(path, "r");
        if (!g) {
            if (errno != ENOENT)
                open_err = errno;
            continue;
        }
        states++;
        if (fread(&cand, sizeof cand, 1, g) == 1 &&
            strncmp(cand.magic, TSCOPE__STATE_MAGIC, sizeof cand.magic) == 0 &&
            cand.head_sum == tscope__jstate_sum(&cand) && (cand.generation & 1) == (uint64_t)i &&
            (!f || cand.generation > st.generation)) {
            if (f)
                fclose(f);
            f = g;
            st = cand;
        } else {
            fclose(g);
        }
    }
    if (f) {
        snprintf(path, sizeof path, "%s.state-%d", base, (int)(st.generation & 1));
        if (!body_whole(f, &st)) {
            fclose(f);
            fprintf(stderr,
                    "taskscope: warning: %s is damaged (its checksum does not match); what it "
                    "held - the instance graph, dependencies, counters, tasks recorded by id - is "
                    "lost, the rest comes from the threads' shards\n",
                    path);
            return from_mapping(outdir, base, sig, death_mono_ns, summary, as_of_s, why, whylen);
        }
    }
    if (!f) {
        snprintf(path, sizeof path, "%s.map", base);
        if (access(path, R_OK) == 0) {
            if (states || open_err != ENOENT) /* the consumer's mode wrote states */
                fprintf(stderr,
                        "taskscope: warning: no whole crash journal state in %s; the outputs come "
                        "from the threads' shards alone\n",
                        outdir);
            return from_mapping(outdir, base, sig, death_mono_ns, summary, as_of_s, why, whylen);
        }
        char target[PATH_MAX];
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) { /* the link names a file that is gone */
            target[len] = 0;
            snprintf(why, whylen,
                     "%s is gone (/dev/shm was emptied?): what process %ld measured is lost",
                     target, pid);
            return -3;
        }
        fail(why, whylen, "no crash journal in %s (%s)", outdir,
             open_err == ENOENT ? "it could not be written, see above" : strerror(open_err));
        return -3; /* nothing to keep */
    }
    snprintf(path, sizeof path, "%s.state-%d", base, (int)(st.generation & 1));
    const char *bad = "truncated";
    struct tscope__store *s = NULL;
    st.program[sizeof st.program - 1] = 0;
    if (st.nthreads > TSCOPE__THREADS_MAX || st.nranks < 1 || st.nranks > 65536 || st.rank < 0 ||
        st.rank >= st.nranks || !(st.ns_per_tick > 0 && st.ns_per_tick < 1e6) ||
        st.clock_kind < TSCOPE__CLOCK_TSC || st.clock_kind > TSCOPE__CLOCK_MANUAL)
        bad = "its header is corrupt";
    else if (get_names(f, &tscope__types) || get_names(f, &tscope__counters) ||
             get_names(f, &tscope__events))
        bad = "its name tables are corrupt";
    else if (get_positions(f, &npos, &pos))
        bad = "its ring positions are corrupt";
    else {
        snprintf(path, sizeof path, "%s.appendix", base);
        FILE *ax = fopen(path, "r");
        s = tscope__store_load(f, ax, &bad);
        if (ax)
            fclose(ax);
        snprintf(path, sizeof path, "%s.state-%d", base, (int)(st.generation & 1));
    }
    fclose(f);
    if (!s) {
        free(pos);
        char mp[PATH_MAX + 128];
        snprintf(mp, sizeof mp, "%s.map", base);
        if (access(mp, R_OK) == 0) { /* whole (its checksums) but not readable here */
            fprintf(stderr,
                    "taskscope: warning: cannot read %s: %s; the outputs come from the threads' "
                    "shards alone\n",
                    path, bad);
            tscope__names_clear(&tscope__types); /* what it had interned */
            tscope__names_clear(&tscope__counters);
            tscope__names_clear(&tscope__events);
            return from_mapping(outdir, base, sig, death_mono_ns, summary, as_of_s, why, whylen);
        }
        return fail(why, whylen, "cannot read %s: %s", path, bad);
    }

    tscope__clock_restore(st.clock_kind, st.ns_per_tick);
    tscope__g.store = s;
    tscope__g.origin = s->origin;
    tscope__g.rank = st.rank;
    tscope__g.nranks = st.nranks;
    struct replay rp = {calloc(TSCOPE__THREADS_MAX, sizeof(uint64_t)),
                        calloc(TSCOPE__THREADS_MAX, 1), st.nthreads, st.ticks};
    for (uint32_t i = 0; rp.applied && rp.seen && i < npos; i++) {
        /* what the state holds of each ring: its records are skipped there */
        rp.applied[pos[i].slot] = pos[i].pos;
        rp.seen[pos[i].slot] = 1;
    }
    free(pos);
    if (!rp.applied || !rp.seen) {
        free(rp.applied);
        free(rp.seen);
        return fail(why, whylen, "cannot recover %s: %s", base, "out of memory");
    }
    /* a batch system may wipe /dev/shm after killing a job: the folder's
     * links then name nothing, and what they held is lost */
    char target[PATH_MAX];
    struct stat lst;
    snprintf(path, sizeof path, "%s.map", base);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len > 0 && (target[len] = 0, stat(target, &lst) != 0))
        fprintf(stderr,
                "taskscope: warning: %s is gone (/dev/shm was emptied?): what the threads' rings "
                "and shards held after the last checkpoint (as of %.3f s) is lost\n",
                target,
                (double)(st.ticks > s->origin ? st.ticks - s->origin : 0) * st.ns_per_tick / 1e9);
    /* the threads' own shards (TASKSCOPE_AGGREGATE=thread): their tree
     * paths first, numbered as the process numbered them */
    snprintf(path, sizeof path, "%s.map", base);
    const char *shbad = NULL;
    int shards = tscope__shards_open(path, &shbad);
    if (shards == 3) {
        fprintf(stderr, "taskscope: warning: %s: %s\n", path, shbad);
        shards = 1;
    }
    if (shards < 0)
        fprintf(stderr,
                "taskscope: warning: cannot read %s: %s; what the threads recorded and "
                "aggregated since the last checkpoint is lost\n",
                path, shbad);
    else if (shards == 2)
        fprintf(stderr,
                "taskscope: warning: %s: %s; what the threads aggregated since the last "
                "checkpoint is lost, their rings and the names are read\n",
                path, shbad);
    if (shards == 1)
        tscope__shards_recover_paths(s);
    snprintf(path, sizeof path, "%s.journal-%u", base, (unsigned)(st.generation & 1));
    replay_journal(path, st.generation, &rp);
    replay_rings(&st, &rp);
    /* names the journal lost (damaged) are in the shards file too */
    if (shards > 0 && tscope__shards_recover_names())
        fprintf(stderr, "taskscope: warning: %s.map: some names in it are damaged\n", base);
    free(rp.applied);
    free(rp.seen);

    /* the end: when the launcher saw the program gone, or the last record */
    uint64_t end = rp.last_ticks;
    if (death_mono_ns > st.mono_ns && st.ns_per_tick > 0) {
        uint64_t at = st.ticks + (uint64_t)((double)(death_mono_ns - st.mono_ns) / st.ns_per_tick);
        if (at > end)
            end = at;
    }
    return finish(outdir, base, s, rp.nslots, end, sig, st.program, summary, as_of_s, why, whylen);
}

const struct tscope__config *tscope_cli_recovered_config(void)
{
    return tscope__g.store ? &tscope__g.store->cfg : NULL;
}

void tscope_cli_recover_release(void)
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

/* What the program's measurement left in outdir (src/lifecycle): a marker
 * .taskscope-PID.running per process that measured and never finalized,
 * and its crash journal (journal.h).  The program's own process (prog_pid),
 * else the first one met, is rebuilt into the outputs (recover.c; *as_of:
 * the time it ended, and *recovered set); then every .taskscope-* file is
 * removed.  Returns how many processes never finalized. */
int tscope_cli_take_markers(const char *outdir, long prog_pid, int sig, uint64_t died_ns,
                            FILE *summary, int *recovered, double *as_of)
{
    *recovered = 0;
    DIR *d = opendir(outdir);
    if (!d)
        return 0;
    int n = 0;
    long chosen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid;
        char rest[32];
        if (sscanf(e->d_name, ".taskscope-%ld.%31s", &pid, rest) == 2 &&
            strcmp(rest, "running") == 0) {
            n++;
            if (!chosen || pid == prog_pid)
                chosen = pid;
        }
    }
    if (chosen) {
        char why[PATH_MAX + 200];
        int rc = tscope_cli_recover(outdir, chosen, sig, died_ns, summary, as_of, why, sizeof why);
        if (rc == 0)
            *recovered = 1;
        else if (rc == -2)
            fprintf(stderr,
                    "taskscope: %s; what process %ld left stays in %s (.taskscope-%ld.*): "
                    "'taskscope recover %s' tries again\n",
                    why, chosen, outdir, chosen, outdir);
        else if (rc == -3)
            fprintf(stderr, "taskscope: %s\n", why);
        else
            fprintf(stderr,
                    "taskscope: %s; what process %ld left stays in %s (.taskscope-%ld.*): "
                    "'taskscope recover %s' tries again, or remove them\n",
                    why, chosen, outdir, chosen, outdir);
        tscope_cli_recover_release();
        if (rc != 0 && rc != -3) { /* never the only copy */
            closedir(d);
            return n;
        }
    }
    rewinddir(d);
    char path[PATH_MAX + 300];
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, ".taskscope-", 11) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
        char target[PATH_MAX];
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) { /* the slots file in /dev/shm (src/lifecycle/journal.c) */
            target[len] = 0;
            if (strncmp(target, "/dev/shm/taskscope-", 19) == 0)
                unlink(target);
        }
        unlink(path);
    }
    closedir(d);
    return n;
}
