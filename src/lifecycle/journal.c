/* journal.c - the crash journal under `taskscope run`: the process's
 * file-backed mapping, .taskscope-PID.map, mapped shared (format and
 * recovery: journal.h, profile/shard.h).
 *
 * Every thread slot (its struct and its ring), every name, the
 * configuration and every shard - what each thread aggregated itself - are
 * blocks of the mapping, so what a thread recorded is in the page cache the
 * moment it is written, and none of it needs the process alive: a SIGKILL
 * loses nothing.  Nothing is ever copied out; the producer's path is the
 * same code writing to different pages.
 *
 * The mapping lives in /dev/shm when that is a tmpfs, and
 * .taskscope-PID.map is a symbolic link to it.  On a disk file system the
 * kernel's writeback cleans dirty pages of a shared mapping and
 * write-protects them, so the producer's next record into such a page takes
 * a fault: measured, the producer's pair cost rose 31% while other files
 * were being written back.  tmpfs pages have no writeback.  Elsewhere the
 * mapping is in the output folder.
 *
 * When the file cannot grow (a full /dev/shm, a size limit), that is said
 * once and memory comes from the heap from then on: the run goes on, only a
 * SIGKILL would lose what lives there.  Normal endings (finalize, handled
 * signals, exit, _exit) write the outputs themselves and remove the file.
 */
#include "journal.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/hooks.h"
#include "core/names.h"
#include "profile/shard.h"
#include "profile/store.h"

extern char *program_invocation_short_name;

static struct {
    _Atomic int on;
    char base[1100]; /* DIR/.taskscope-PID */
    char dir[1024];  /* DIR */
    uint64_t ring_records, ring_offset;
    _Atomic int slot_warned; /* a slot's failure said (threads race to say it) */
} J;

/* The mapping (the thread slots, names, configuration and the shards):
 * one window of address space
 * reserved over it at start, blocks appended under the lock, each one's
 * pages allocated (posix_fallocate) before use, so that a full /dev/shm is
 * a NULL here (ordinary memory, said once), never a SIGBUS in a thread.
 * The window stays mapped after the journal stops: shards may point into
 * it until the next tscope_init frees them. */
#define SHARDS_WINDOW (16ull << 30)
static struct {
    pthread_mutex_t lock;
    int fd;
    char shm[128];
    char *base;
    struct tscope__shfile *head_copy; /* the header's copy (TSCOPE__SHB_HEAD) */
    uint64_t off;
    uint64_t backed; /* the file's pages exist up to here (past the last block's start) */
    int warned;
} A = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* Pages are allocated BACK_AHEAD bytes at a time past what a block needs:
 * the small blocks a run makes (names, chunks, the configuration) take one
 * posix_fallocate between them, not one each (42 calls for a trivial
 * OpenMP run, ~5 us each here).  Small, so that the file is never much
 * longer than its blocks (a reader of a cut file says what is missing). */
#define BACK_AHEAD (16u << 10)

static void shard_name(uint32_t table, uint32_t id, const char *name);
static void shard_attrs(uint32_t table, uint32_t id, unsigned attrs);
static void *block(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes);
static void *block_part(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes, size_t backed);

static void path_of(char *out, size_t len, const char *what)
{
    snprintf(out, len, "%s.%s", J.base, what);
}

static void remove_files(void)
{
    char p[1200];
    path_of(p, sizeof p, "map");
    unlink(p);
    if (A.shm[0])
        unlink(A.shm);
    A.shm[0] = 0;
}

/* Creates the mapping's file: in /dev/shm (tmpfs) behind a link at
 * `link`, its name in shm, or at `link` itself.  Returns the descriptor or
 * -1. */
static int open_map(const char *link, char *shm, size_t shm_len)
{
    struct statfs fs;
    shm[0] = 0;
    /* one left by this pid's previous program (it exec'd this one) */
    char old[sizeof A.shm];
    ssize_t len = readlink(link, old, sizeof old - 1);
    if (len > 0) {
        old[len] = 0;
        if (strncmp(old, "/dev/shm/taskscope-", 19) == 0)
            unlink(old);
    }
    unlink(link);
    if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
        snprintf(shm, shm_len, "/dev/shm/taskscope-%ld-XXXXXX", (long)getpid());
        int fd = mkostemp(shm, O_CLOEXEC);
        if (fd >= 0 && symlink(shm, link) == 0)
            return fd;
        if (fd >= 0) {
            close(fd);
            unlink(shm);
        }
        shm[0] = 0;
    }
    return open(link, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static void name_added(const void *table, uint32_t id, const char *name)
{
    if (!atomic_load_explicit(&J.on, memory_order_relaxed))
        return;
    uint16_t t = table == &tscope__types ? 0 : table == &tscope__counters ? 1 : 2;
    if (A.base)
        shard_name(t, id, name);
}

static void attrs_added(const void *table, uint32_t id, unsigned attrs)
{
    if (!atomic_load_explicit(&J.on, memory_order_relaxed))
        return;
    uint16_t t = table == &tscope__types ? 0 : table == &tscope__counters ? 1 : 2;
    if (A.base)
        shard_attrs(t, id, attrs);
}

/* The pages of a slot's ring, at its first write (slot_memory left them
 * out): 0, or -1 when the file cannot have them. */
static int slot_back(void *ring, size_t bytes)
{
    pthread_mutex_lock(&A.lock);
    int err = !atomic_load(&J.on) || A.fd < 0 || !A.base || (char *)ring < A.base ||
                      (char *)ring + bytes > A.base + A.off
                  ? EBADF
                  : posix_fallocate(A.fd, (off_t)((char *)ring - A.base), (off_t)bytes);
    pthread_mutex_unlock(&A.lock);
    if (err && err != EBADF && !atomic_exchange(&J.slot_warned, 1)) /* EBADF: the journal stopped */
        fprintf(stderr,
                "taskscope: warning: cannot give a thread's ring its pages in %s.map (%s); a "
                "SIGKILL would lose what such rings hold\n",
                J.base, strerror(err));
    return err ? -1 : 0;
}

/* The clock's latest factor in the header and its copy, for the readers
 * of the mapping alone (taskscope top, a recovery): after every round. */
static void refresh_clock(void)
{
    if (!A.base)
        return;
    double f = tscope__clock_ns_per_tick();
    ((struct tscope__shfile *)A.base)->ns_per_tick = f;
    if (A.head_copy)
        A.head_copy->ns_per_tick = f;
}

static void *slot_memory(uint32_t index, size_t thread_bytes, uint64_t *ring_records,
                         struct tscope__rec **ring)
{
    if (!atomic_load(&J.on) || thread_bytes > J.ring_offset)
        return NULL;
    uint64_t records = J.ring_records;
    /* a block of the mapping whose thread struct has its pages; the ring's
     * come at its first write (slot_back: most threads never write theirs,
     * their events go to their shards), and all are mapped into the page
     * tables only as they are first written (docs/architecture.md) */
    pthread_mutex_lock(&A.lock);
    char *p = block_part(TSCOPE__SHB_SLOT, index, 0,
                         J.ring_offset + records * sizeof(struct tscope__rec), J.ring_offset);
    pthread_mutex_unlock(&A.lock);
    if (!p) {
        if (!atomic_exchange(&J.slot_warned, 1))
            fprintf(stderr,
                    "taskscope: warning: cannot put thread slot %u in %s.map; a SIGKILL would "
                    "lose what such threads record\n",
                    index, J.base);
        return NULL;
    }
    *ring = (struct tscope__rec *)(p + J.ring_offset);
    *ring_records = records;
    return p;
}

/* A block of the mapping (A.lock held), its header written but for the
 * magic; NULL when it cannot grow.  publish() shows it to the readers.
 * Only its first `backed` bytes of payload get their pages now. */
static struct tscope__shblock *reserve_part(uint32_t kind, uint32_t owner, uint32_t index,
                                            size_t bytes, size_t backed)
{
    uint64_t at = A.off, len = (sizeof(struct tscope__shblock) + bytes + 63) & ~(uint64_t)63;
    uint64_t need = at + sizeof(struct tscope__shblock) + backed;
    int err = A.fd < 0 ? EBADF : at + len > SHARDS_WINDOW ? ENOSPC : 0;
    if (!err && need > A.backed) {
        /* from the block's start, or from where the pages end if that is
         * inside it (a ring before it may have been left without pages) */
        uint64_t from = at < A.backed ? A.backed : at, to = need + BACK_AHEAD;
        if (to > SHARDS_WINDOW)
            to = need;
        err = posix_fallocate(A.fd, (off_t)from, (off_t)(to - from));
        if (err && to > need) /* no room for the pages ahead: those it needs, then */
            err = posix_fallocate(A.fd, (off_t)from, (off_t)((to = need) - from));
        if (!err)
            A.backed = to;
    }
    if (err) {
        if (!A.warned++)
            fprintf(stderr,
                    "taskscope: warning: cannot grow %s.map (%s); a SIGKILL would lose what "
                    "threads record or aggregate in memory taken from now on\n",
                    J.base, strerror(err));
        return NULL;
    }
    struct tscope__shblock *b = (struct tscope__shblock *)(A.base + at);
    b->kind = (uint16_t)kind;
    b->owner = owner;
    b->index = index;
    b->bytes = bytes;
    A.off = at + len;
    return b;
}

/* A block whose pages all exist. */
static struct tscope__shblock *reserve(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes)
{
    return reserve_part(kind, owner, index, bytes, bytes);
}

/* Its payload written: the magic, then the end of the blocks (A.lock held;
 * a reader that sees the end sees every block before it whole). */
static void publish(struct tscope__shblock *b)
{
    __atomic_store_n(&b->magic, TSCOPE__SHBLOCK_MAGIC, __ATOMIC_RELEASE);
    __atomic_store_n(&((struct tscope__shfile *)A.base)->used, A.off, __ATOMIC_RELEASE);
}

/* A block whose payload is valid zeroed (memory handed out), its first
 * `backed` bytes with their pages. */
static void *block_part(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes, size_t backed)
{
    struct tscope__shblock *b = reserve_part(kind, owner, index, bytes, backed);
    if (!b)
        return NULL;
    publish(b);
    return b + 1;
}

static void *block(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes)
{
    return block_part(kind, owner, index, bytes, bytes);
}

static void *durable(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes)
{
    if (!atomic_load(&J.on))
        return NULL;
    pthread_mutex_lock(&A.lock);
    void *p = block(kind, owner, index, bytes);
    pthread_mutex_unlock(&A.lock);
#ifdef MADV_POPULATE_WRITE
    /* a shard's log chunk is written through soon: its pages mapped in one
     * call, not one fault each (no error matters).  Not the shard itself
     * (its 0.5 MB are mostly directories that stay empty) */
    if (p && kind == TSCOPE__SHB_LOG && bytes >= (64u << 10)) {
        uintptr_t from = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
        if (to > from)
            madvise((void *)from, to - from, MADV_POPULATE_WRITE);
    }
#endif
    return p;
}

/* A name in the mapping, for the readers that have only that file
 * (taskscope top); name tables' lock held (name_added) or before events. */
static void shard_name(uint32_t table, uint32_t id, const char *name)
{
    uint32_t len = (uint32_t)strlen(name);
    pthread_mutex_lock(&A.lock);
    struct tscope__shblock *b =
        A.base ? reserve(TSCOPE__SHB_NAME, table, id, sizeof(struct tscope__shname) + len) : NULL;
    if (b) { /* whole before it is seen (taskscope top reads it live) */
        struct tscope__shname *n = (struct tscope__shname *)(b + 1);
        memcpy(n->name, name, len);
        n->len = len;
        n->sum = tscope__shname_sum(table, id, name, len);
        publish(b);
    }
    pthread_mutex_unlock(&A.lock);
}

/* A name's attributes in the mapping (name tables' lock held, or before
 * events), so a recovered run keeps its wait types and sampled counters. */
static void shard_attrs(uint32_t table, uint32_t id, unsigned attrs)
{
    pthread_mutex_lock(&A.lock);
    struct tscope__shblock *b =
        A.base ? reserve(TSCOPE__SHB_ATTRS, table, id, sizeof(struct tscope__shattrs)) : NULL;
    if (b) {
        struct tscope__shattrs *a = (struct tscope__shattrs *)(b + 1);
        a->attrs = attrs;
        a->sum = tscope__shattrs_sum(table, id, attrs);
        publish(b);
    }
    pthread_mutex_unlock(&A.lock);
}

static int durable_owns(const void *p)
{
    return A.base && (const char *)p >= A.base && (const char *)p < A.base + SHARDS_WINDOW;
}

/* The mapping: its window
 * mapped and its header written; -1 (errno) when it cannot be. */
static int shards_start(void)
{
    char p[1200];
    path_of(p, sizeof p, "map");
    if (A.base) { /* an earlier tscope_init's: its shards are gone, not its mapping */
        A.base = NULL;
    }
    A.off = A.backed = TSCOPE__SHFILE_HEAD;
    A.warned = 0;
    A.fd = open_map(p, A.shm, sizeof A.shm);
    if (A.fd < 0)
        return -1;
    int err = posix_fallocate(A.fd, 0, TSCOPE__SHFILE_HEAD);
    void *m = err ? MAP_FAILED
                  : mmap(NULL, SHARDS_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                         A.fd, 0);
    if (m == MAP_FAILED) {
        err = err ? err : errno;
        close(A.fd);
        A.fd = -1;
        errno = err;
        return -1;
    }
    A.base = m;
    struct tscope__shfile *h = m;
    h->version = TSCOPE__SHFILE_VERSION;
    h->base = (uint64_t)(uintptr_t)m;
    h->window = SHARDS_WINDOW;
    h->pid = (int64_t)getpid();
    h->rank = tscope__g.rank;
    h->nranks = tscope__g.nranks;
    h->clock_kind = tscope__clock_kind;
    h->origin = tscope__g.store ? tscope__g.store->origin : 0;
    h->mono_ns = tscope__mono_ns();
    snprintf(h->program, sizeof h->program, "%s", program_invocation_short_name);
    snprintf(h->dir, sizeof h->dir, "%s", J.dir);
    memcpy(h->magic, TSCOPE__SHFILE_MAGIC, sizeof TSCOPE__SHFILE_MAGIC);
    h->sum = tscope__shfile_sum(h);
    h->ns_per_tick = tscope__clock_ns_per_tick();
    h->used = A.off;
    /* what the program asked for (its outputs, filters, ...), for a
     * recovery from this file alone */
    pthread_mutex_lock(&A.lock);
    /* the header's copy, for a reader whose first page is damaged */
    struct tscope__shblock *hb = reserve(TSCOPE__SHB_HEAD, 0, 0, sizeof *h);
    A.head_copy = NULL;
    if (hb) {
        memcpy(hb + 1, h, sizeof *h);
        A.head_copy = (struct tscope__shfile *)(hb + 1);
        publish(hb);
    }
    struct tscope__shblock *b =
        tscope__g.store ? reserve(TSCOPE__SHB_CONFIG, 0, 0, sizeof(struct tscope__shconfig)) : NULL;
    if (b) {
        struct tscope__shconfig *c = (struct tscope__shconfig *)(b + 1);
        c->cfg = tscope__g.store->cfg;
        /* the live channel's secret stays in this process, never in a file */
        char *secret = strrchr(c->cfg.live, '/');
        if (secret)
            memset(secret, 0, sizeof c->cfg.live - (size_t)(secret - c->cfg.live));
        c->sum = tscope__sum64(TSCOPE__SUM64_START, &c->cfg, sizeof c->cfg);
        publish(b);
    }
    pthread_mutex_unlock(&A.lock);
    /* the names so far; later ones come through name_added */
    struct tscope__names *tables[3] = {&tscope__types, &tscope__counters, &tscope__events};
    char buf[TSCOPE__NAME_MAX + 1];
    for (uint32_t t = 0; t < 3; t++)
        for (uint32_t id = 1, n = tscope__names_count(tables[t]); id <= n; id++)
            if (tscope__names_get(tables[t], id, buf, sizeof buf) == 0) {
                shard_name(t, id, buf);
                unsigned attrs = tscope__names_attrs(tables[t], id);
                if (attrs)
                    shard_attrs(t, id, attrs);
            }
    return 0;
}

static void close_files(void)
{
    if (A.fd >= 0)
        close(A.fd); /* its window stays mapped: shards still point into it */
    A.fd = -1;
}

int tscope__journal_start(const char *dir, uint64_t ring_records)
{
    snprintf(J.base, sizeof J.base, "%s/.taskscope-%ld", dir, (long)getpid());
    char abs[PATH_MAX];
    const char *d = realpath(dir, abs) ? abs : dir;
    J.dir[0] = 0;
    if (strlen(d) < sizeof J.dir) /* longer: the readers find the file by its pid only */
        memcpy(J.dir, d, strlen(d) + 1);
    J.ring_records = ring_records;
    /* a slot's ring follows its thread struct (64-byte aligned, like the
     * block that holds both) */
    J.ring_offset = TSCOPE__SLOT_RING_OFFSET;
    atomic_store(&J.slot_warned, 0);
    if (shards_start()) {
        fprintf(stderr,
                "taskscope: warning: cannot start the crash journal (%s.map: %s); measuring goes "
                "on, but a SIGKILL would lose the profile\n",
                J.base, strerror(errno));
        remove_files();
        return -1;
    }
    atomic_store(&J.on, 1);
    tscope__hooks.slot_memory = slot_memory;
    tscope__hooks.slot_back = slot_back;
    tscope__hooks.name_added = name_added;
    tscope__hooks.attrs_added = attrs_added;
    tscope__hooks.durable = durable;
    tscope__hooks.durable_owns = durable_owns;
    tscope__hooks.after_round = refresh_clock;
    return 0;
}

void tscope__journal_stop(void)
{
    if (A.fd < 0)
        return;
    atomic_store(&J.on, 0);
    remove_files();
    close_files();
}

/* In a forked child (one thread, the lock perhaps held by a thread that is
 * not there): the file stays, it is the parent's. */
void tscope__journal_forget(void)
{
    atomic_store(&J.on, 0);
    /* the child has one thread: a lock another thread held at the fork
     * (a name being added, a block being made) would never be released */
    pthread_mutex_init(&A.lock, NULL);
    /* the slots and shards this child inherited stay readable, but its
     * writes (a tscope_init resetting them) must not reach its parent's
     * file; the window stays mapped either way (the thread slots are in it) */
    if (A.base && A.fd >= 0 &&
        mmap(A.base, A.off, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, A.fd, 0) == MAP_FAILED)
        fprintf(stderr,
                "taskscope: warning: forked process %ld cannot make its copy of %s.map private "
                "(%s): a tscope_init there would write into its parent's\n",
                (long)getpid(), J.base, strerror(errno));
    close_files();
}
