/* peek.c - a read-only look into a process's mapping (peek.h): what
 * `taskscope top` shows of a running program, or of one that died, with no
 * help from it.
 *
 * The file is a header page and blocks appended after it (shard.h); the
 * type entries are in TYPES blocks (owner: the thread slot, index: the
 * chunk), so no pointer of the process needs rebasing.  Entries are read
 * as the fold reads them: the same even version before and after the copy
 * (a few tries), else the entry is being written and is left out of this
 * look; once the process is gone an odd version stays odd, and the entry is
 * taken as it is, as the recovery takes it.  A block whose header is not
 * whole is skipped 64 bytes at a time up to the next whole one, so
 * garbage in the middle of the file loses what it covers and no more.
 */
#include "peek.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/names.h"
#include "shard_layout.h"

#define LD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)

/* Copies an entry of n words written under its version (word 0): 1 whole,
 * 0 being written. */
static int copy_entry(const uint64_t *src, uint64_t *dst, size_t n, int dead)
{
    for (int tries = 0; tries < 100; tries++) {
        uint64_t v = LD(src[0]);
        if (v & 1)
            continue;
        for (size_t i = 1; i < n; i++)
            dst[i] = LD(src[i]);
        if (LD(src[0]) == v)
            return 1;
    }
    if (!dead)
        return 0;
    for (size_t i = 1; i < n; i++)
        dst[i] = src[i];
    return 1;
}

static int grow_types(struct tscope__peek *p, uint32_t need)
{
    if (need <= p->ntypes)
        return 0;
    struct tscope__peek_type *t = realloc(p->types, need * sizeof *t);
    if (!t)
        return -1;
    p->types = t;
    char **n = realloc(p->names, need * sizeof *n);
    if (!n)
        return -1;
    p->names = n;
    memset(t + p->ntypes, 0, (need - p->ntypes) * sizeof *t);
    memset(n + p->ntypes, 0, (need - p->ntypes) * sizeof *n);
    p->ntypes = need;
    return 0;
}

static struct tscope__peek_thread *thread_of(struct tscope__peek *p, uint32_t slot)
{
    for (uint32_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].slot == slot)
            return &p->threads[i];
    struct tscope__peek_thread *t = realloc(p->threads, (p->nthreads + 1) * sizeof *t);
    if (!t)
        return NULL;
    p->threads = t;
    t += p->nthreads++;
    memset(t, 0, sizeof *t);
    t->slot = slot;
    return t;
}

static void take_types(struct tscope__peek *p, const struct tscope__shblock *b, int dead)
{
    const struct stype *e = (const struct stype *)(b + 1);
    struct tscope__peek_thread *th = thread_of(p, b->owner);
    for (uint32_t i = 0; i < CHUNK; i++) {
        struct stype c;
        if (!copy_entry((const uint64_t *)&e[i], (uint64_t *)&c, sizeof c / 8, dead)) {
            p->busy++;
            continue;
        }
        if (!c.created && !c.calls && !c.cancelled)
            continue;
        uint32_t id = b->index * CHUNK + i;
        if (id > TSCOPE__MAX_IDS || grow_types(p, id + 1))
            continue;
        p->types[id].created += c.created;
        p->types[id].calls += c.calls;
        p->types[id].cancelled += c.cancelled;
        p->types[id].self += c.self.sum;
        if (th) {
            th->calls += c.calls;
            th->self += c.self.sum;
        }
    }
}

static void take_name(struct tscope__peek *p, const struct tscope__shblock *b)
{
    const struct tscope__shname *n = (const struct tscope__shname *)(b + 1);
    if (b->owner != 0)
        return; /* counters' and custom events' names: top shows types only */
    if (!tscope__shname_whole(b)) {
        p->damaged += b->bytes;
        return;
    }
    if (grow_types(p, b->index + 1))
        return;
    free(p->names[b->index]);
    p->names[b->index] = strndup(n->name, n->len);
}

/* The process's clock now, in its ticks (0: not known; a manual clock is
 * no time). */
static uint64_t ticks_now(const struct tscope__shfile *h)
{
    struct timespec ts;
    if (h->clock_kind == TSCOPE__CLOCK_MANUAL || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return tscope__shfile_ticks_at(h, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* What the tasks on a running thread's stack ran so far (its segments'
 * self time, the top one's until now) into their types and the thread:
 * the owner's stack, rebased from its address in the process (`seg` and
 * `n` read as they are: a value past the run's time is a torn read). */
static void take_running(struct tscope__peek *p, const struct tscope__shard *s, uint32_t owner,
                         const char *m, size_t size, uint64_t now)
{
    uint64_t seg = (uint64_t)(uintptr_t)__atomic_load_n(&s->seg, __ATOMIC_RELAXED);
    uint32_t n = __atomic_load_n(&s->n, __ATOMIC_RELAXED);
    uint64_t base = p->head.base, most = now - p->head.origin;
    if (!n || n > (1u << 20) || seg < base || seg - base > size ||
        (uint64_t)n * sizeof(struct segment) > size - (seg - base))
        return;
    const struct segment *g = (const struct segment *)(m + (seg - base));
    struct tscope__peek_thread *th = thread_of(p, owner);
    for (uint32_t i = 0; i < n; i++) {
        uint16_t type = __atomic_load_n(&g[i].type, __ATOMIC_RELAXED);
        uint64_t acc = __atomic_load_n(&g[i].self_acc, __ATOMIC_RELAXED);
        if (i == n - 1) {
            uint64_t since = __atomic_load_n(&g[i].self_since, __ATOMIC_RELAXED);
            acc += now > since && now - since <= most ? now - since : 0;
        }
        if (acc > most || type > TSCOPE__MAX_IDS || grow_types(p, (uint32_t)type + 1))
            continue;
        p->types[type].self += acc;
        if (th)
            th->self += acc;
    }
}

/* The size a block of this kind must have, 0: any. */
static uint64_t block_bytes(uint16_t kind)
{
    switch (kind) {
    case TSCOPE__SHB_SHARD:
        return sizeof(struct tscope__shard);
    case TSCOPE__SHB_TYPES:
        return CHUNK * sizeof(struct stype);
    case TSCOPE__SHB_NODES:
        return CHUNK * sizeof(struct snode);
    case TSCOPE__SHB_EDGES:
        return CHUNK * sizeof(uint64_t);
    case TSCOPE__SHB_PATHS:
        return sizeof(struct plog);
    default:
        return 0;
    }
}

int tscope__peek(const char *path, struct tscope__peek *p, char *why, size_t len)
{
    memset(p, 0, sizeof *p);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, len, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    char *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= TSCOPE__SHFILE_HEAD)
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, len, "not a taskscope mapping (%s)", "too short");
        return -1;
    }
    size_t size = (size_t)st.st_size;
    p->bytes = size;
    memcpy(&p->head, m, sizeof p->head);
    const struct tscope__shfile *h = &p->head;
    if (memcmp(h->magic, "taskscope-sh-", 13) != 0) {
        munmap(m, size);
        snprintf(why, len, "not a taskscope mapping (%s)", "no magic");
        return -1;
    }
    if (memcmp(h->magic, TSCOPE__SHFILE_MAGIC, sizeof TSCOPE__SHFILE_MAGIC) != 0 ||
        h->version != TSCOPE__SHFILE_VERSION) {
        munmap(m, size);
        snprintf(why, len, "written by another version of taskscope (%.15s)", h->magic);
        return -1;
    }
    if (h->sum != tscope__shfile_sum(h)) {
        munmap(m, size);
        snprintf(why, len, "its header is damaged (checksum)");
        return -1;
    }
    p->head.program[sizeof p->head.program - 1] = 0;
    p->head.dir[sizeof p->head.dir - 1] = 0;
    int dead = kill((pid_t)h->pid, 0) != 0 && errno == ESRCH;
    uint64_t now = dead ? 0 : ticks_now(h); /* a dead process's running tasks: not known */
    uint64_t end = h->used >= TSCOPE__SHFILE_HEAD && h->used <= size ? h->used : size;
    for (uint64_t off = TSCOPE__SHFILE_HEAD; off + sizeof(struct tscope__shblock) <= end;) {
        const struct tscope__shblock *b = (const struct tscope__shblock *)(m + off);
        uint64_t want = __atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) == TSCOPE__SHBLOCK_MAGIC
                            ? block_bytes(b->kind)
                            : 0;
        if (__atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != TSCOPE__SHBLOCK_MAGIC ||
            b->bytes > end - off - sizeof *b || (want && b->bytes != want) || b->kind == 0 ||
            b->kind > TSCOPE__SHB_LAST) {
            p->damaged += 64; /* not a whole block: the next one may be */
            off += 64;
            continue;
        }
        if (b->kind == TSCOPE__SHB_TYPES)
            take_types(p, b, dead);
        else if (b->kind == TSCOPE__SHB_NAME)
            take_name(p, b);
        else if (b->kind == TSCOPE__SHB_SLOT && b->bytes >= sizeof(struct tscope__thread)) {
            const struct tscope__thread *th = (const struct tscope__thread *)(b + 1);
            struct tscope__peek_thread *t = thread_of(p, b->owner);
            if (t) { /* the name its thread gave it (may change: a copy, cut) */
                memcpy(t->name, th->name, sizeof t->name - 1);
                t->name[sizeof t->name - 1] = 0;
                for (char *c = t->name; *c; c++)
                    if ((unsigned char)*c < 32)
                        *c = '?';
            }
        } else if (b->kind == TSCOPE__SHB_SHARD) {
            const struct tscope__shard *s = (const struct tscope__shard *)(b + 1);
            struct tscope__peek_thread *t = thread_of(p, b->owner);
            if (t) {
                t->shard = 1;
                t->events = __atomic_load_n(&s->totals.events, __ATOMIC_RELAXED);
                t->top = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
            }
            if (now)
                take_running(p, s, b->owner, m, size, now);
        }
        off += (sizeof *b + b->bytes + 63) & ~(uint64_t)63;
    }
    munmap(m, size);
    return 0;
}

void tscope__peek_free(struct tscope__peek *p)
{
    for (uint32_t i = 0; i < p->ntypes; i++)
        free(p->names[i]);
    free(p->names);
    free(p->types);
    free(p->threads);
    memset(p, 0, sizeof *p);
}
