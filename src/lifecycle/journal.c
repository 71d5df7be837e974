/* journal.c - writes the crash journal (formats and recovery: journal.h).
 *
 * Under `taskscope run` (TASKSCOPE_CHECKPOINT_MS > 0, the profiler on, ring
 * mode) every thread slot lives in the mapping, .taskscope-PID.map, mapped
 * shared, so what a thread recorded is in the page cache the moment it is
 * published: the producer's path is the same code writing to different
 * pages.  The consumer applies records as ever, but releases their ring
 * space only once they are safe elsewhere (hooks.keep): a checkpoint saves
 * the store and releases every ring up to what it applied; a ring a
 * quarter held before the next checkpoint gets one at once, if a state
 * costs less than journaling its records, or has them appended to the
 * journal.  So every record is, at any moment, in its ring, in the journal
 * or in the saved state, and none of them needs the process alive; with
 * rings of 65536 records for the first threads (slot_memory) the journal is
 * rarely written.  A checkpoint also comes every TASKSCOPE_CHECKPOINT_MS,
 * and when the journal passes JOURNAL_MAX bytes; the disk used is bounded
 * by two states, the appendix (instances and dependencies, up to their
 * cap) and two journal files.
 *
 * The two journal files, and the two state files, take the generations in
 * turn and are overwritten in place, not recreated: writing over pages the
 * page cache already holds runs at memory speed (12 GB/s here), while a new
 * file's pages cost the kernel an allocation each (0.4-5 GB/s on this
 * ext4).  Stale entries of an older generation are told apart by the magic,
 * which carries the generation; an entry's payload is written before its
 * header, so an entry that SIGKILL cut short has no valid header and ends
 * the replay (its records are then still in the ring, which is released
 * only after).
 *
 * The mapping itself lives in /dev/shm when that is a tmpfs, and
 * .taskscope-PID.map is a symbolic link to it.  On a disk file system the
 * kernel's writeback cleans dirty pages of a shared mapping and
 * write-protects them, so the producer's next record into such a page takes
 * a fault: measured, the producer's pair cost rose 31% while other files
 * were being written back.  tmpfs pages have no writeback.  Elsewhere the
 * mapping is in the output folder.
 *
 * A write that fails (full disk, a file size limit) is said once, the files
 * are removed and journaling stops: the run goes on, only a SIGKILL would
 * now lose it.  Normal endings (finalize, handled signals, exit, _exit)
 * write the outputs themselves and remove the files.
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
#include <sys/uio.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/core.h"
#include "core/hooks.h"
#include "core/names.h"
#include "profile/persist.h"
#include "profile/shard.h"
#include "profile/store.h"

extern char *program_invocation_short_name;

#define JOURNAL_MAX (8ull << 20) /* bytes before a checkpoint comes early */

static struct {
    _Atomic int on;
    char base[1100];      /* DIR/.taskscope-PID */
    char dir[1024];       /* DIR */
    int fds[2];           /* the journal files; generation g writes fds[g & 1] */
    pthread_mutex_t lock; /* generation and off: the consumer and name writers */
    uint64_t generation;
    uint64_t off; /* where the next entry goes */
    uint64_t period_ns, next_ns;
    uint64_t ring_records, big_records, ring_offset;
    int slot_warned;
    struct tscope__appendix ax; /* the instances and dependencies, each saved once */
    int mapping_only;           /* no checkpoints: the threads aggregate everything in it */
    uint64_t state_bytes;       /* size of the last state: what a checkpoint costs */
    int journaled;              /* records journaled since the last round mark */
} J = {.fds = {-1, -1}, .lock = PTHREAD_MUTEX_INITIALIZER};

/* The mapping (the thread slots, names, configuration and, with
 * TASKSCOPE_AGGREGATE=thread, the shards): one window of address space
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
    int warned;
} A = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static void shard_name(uint32_t table, uint32_t id, const char *name);
static void *block(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes);

static void path_of(char *out, size_t len, const char *what)
{
    snprintf(out, len, "%s.%s", J.base, what);
}

static void remove_files(void)
{
    static const char *const files[] = {"state-0",   "state-1",  "journal-0",
                                        "journal-1", "appendix", "map"};
    char p[1200];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        path_of(p, sizeof p, files[i]);
        unlink(p);
    }
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

/* A write failed: said once, files removed, journaling off. */
static void give_up(const char *what, int err)
{
    if (!atomic_exchange(&J.on, 0)) /* somebody else gave up first */
        return;
    fprintf(stderr,
            "taskscope: warning: cannot write the crash journal (%s.%s: %s); measuring goes on, "
            "but a SIGKILL would now lose the profile\n",
            J.base, what, strerror(err));
    remove_files();
}

/* Appends one entry: header h, then payload a and b; h->magic is filled
 * in.  The payload goes first and the header after, both over the old
 * content of the file.  0, or -1 with errno. */
static int put_entry(struct tscope__jchunk *h, const void *a, size_t na, const void *b, size_t nb)
{
    struct iovec iov[2] = {{(void *)a, na}, {(void *)b, nb}};
    size_t len = (sizeof *h + na + nb + 31) / 32 * 32; /* headers stay in one page */
    pthread_mutex_lock(&J.lock);
    int fd = J.fds[J.generation & 1];
    h->magic = TSCOPE__JOURNAL_MAGIC ^ (uint32_t)J.generation;
    h->sum = tscope__jchunk_sum(h, a, na, b, nb);
    off_t at = (off_t)J.off;
    ssize_t w = na + nb ? pwritev(fd, iov, nb ? 2 : 1, at + (off_t)sizeof *h) : 0;
    int ok = w == (ssize_t)(na + nb) && pwrite(fd, h, sizeof *h, at) == (ssize_t)sizeof *h;
    if (ok)
        J.off += len;
    else if (errno == 0 || w >= 0)
        errno = ENOSPC; /* a short write to a regular file: the disk or a limit */
    pthread_mutex_unlock(&J.lock);
    return ok ? 0 : -1;
}

/* Journals records [from, to) of a ring.  0, or -1 (said; journaling off). */
static int journal_records(uint32_t thread, struct tscope__ring *r, uint64_t from, uint64_t to)
{
    struct tscope__jchunk h = {.kind = TSCOPE__J_RECORDS,
                               .slot = thread,
                               .n = (uint32_t)(to - from),
                               .start = from,
                               .ticks = tscope__ring_slot(r, to - 1)->ts};
    uint64_t first = from & r->mask, n = to - from;
    uint64_t n1 = r->size - first < n ? r->size - first : n;
    errno = 0;
    if (put_entry(&h, &r->buf[first], n1 * sizeof *r->buf, r->buf, (n - n1) * sizeof *r->buf)) {
        give_up("journal", errno);
        return -1;
    }
    J.journaled = 1;
    return 0;
}

static void mark(uint16_t kind, uint32_t slot, uint64_t ticks)
{
    if (!atomic_load_explicit(&J.on, memory_order_relaxed))
        return;
    struct tscope__jchunk h = {.kind = kind, .slot = slot, .ticks = ticks};
    errno = 0;
    if (put_entry(&h, NULL, 0, NULL, 0))
        give_up("journal", errno);
}

/* A round mark orders the journaled batches as the consumer applied them;
 * without batches since the last mark there is nothing to order. */
static void round_end(void)
{
    tscope__store_round_done();
    if (J.journaled)
        mark(TSCOPE__J_ROUND, 0, tscope__clock_now());
    J.journaled = 0;
}

static void thread_gone(uint32_t thread)
{
    uint64_t now = tscope__clock_now();
    mark(TSCOPE__J_GONE, thread, now);
    tscope__store_thread_gone_at(thread, now);
}

static void name_added(const void *table, uint32_t id, const char *name)
{
    if (!atomic_load_explicit(&J.on, memory_order_relaxed))
        return;
    uint16_t t = table == &tscope__types ? 0 : table == &tscope__counters ? 1 : 2;
    if (A.base)
        shard_name(t, id, name);
    if (J.mapping_only)
        return;
    size_t len = strlen(name);
    struct tscope__jchunk h = {.kind = TSCOPE__J_NAME,
                               .table = t,
                               .slot = id,
                               .n = (uint32_t)len,
                               .ticks = tscope__clock_now()};
    errno = 0;
    if (put_entry(&h, name, len, NULL, 0))
        give_up("journal", errno);
}

static int put_names(FILE *f, struct tscope__names *t)
{
    uint32_t n = tscope__names_count(t);
    if (fwrite(&n, sizeof n, 1, f) != 1)
        return -1;
    char buf[TSCOPE__NAME_MAX + 1];
    for (uint32_t id = 1; id <= n; id++) {
        if (tscope__names_get(t, id, buf, sizeof buf))
            snprintf(buf, sizeof buf, "name-%u", id);
        uint16_t len = (uint16_t)strlen(buf);
        if (fwrite(&len, sizeof len, 1, f) != 1 || fwrite(buf, 1, len, f) != len)
            return -1;
    }
    return 0;
}

/* How far the state covers each ring: the slots in use and their read
 * positions (records before it are in the store; a ring may still hold
 * some of them, released only once this state is whole). */
static int put_positions(FILE *f)
{
    uint32_t n = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire), live = 0;
    for (uint32_t i = 0; i < n; i++)
        live += !atomic_load_explicit(&tscope__g.threads[i]->ring_freed, memory_order_acquire);
    if (fwrite(&live, sizeof live, 1, f) != 1)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__thread *t = tscope__g.threads[i];
        if (atomic_load_explicit(&t->ring_freed, memory_order_acquire))
            continue;
        struct {
            uint32_t slot, pad;
            uint64_t pos;
        } e = {i, 0, t->read_pos};
        if (fwrite(&e, sizeof e, 1, f) != 1)
            return -1;
    }
    return 0;
}

/* The store and everything needed to read it, in state file generation % 2
 * (the other holds the previous generation, whole).  Overwritten in place,
 * like the journal files, and in this order: the old header made invalid,
 * the body, then the new header, one write within a page; a state cut short
 * by SIGKILL has no valid header and the recovery takes the other. */
static int write_state(void)
{
    char path[1200];
    path_of(path, sizeof path, J.generation & 1 ? "state-1" : "state-0");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "r+") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        errno = err;
        return -1;
    }
    struct tscope__jstate h = {.generation = J.generation,
                               .ticks = tscope__clock_now(),
                               .mono_ns = tscope__mono_ns(),
                               .ns_per_tick = tscope__clock_ns_per_tick(),
                               .clock_kind = tscope__clock_kind,
                               .rank = tscope__g.rank,
                               .nranks = tscope__g.nranks,
                               .nthreads = atomic_load(&tscope__g.nthreads),
                               .region_bytes = 0, /* the slots are blocks of the mapping */
                               .ring_offset = J.ring_offset};
    snprintf(h.program, sizeof h.program, "%s", program_invocation_short_name);
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && put_names(f, &tscope__types) == 0 &&
             put_names(f, &tscope__counters) == 0 && put_names(f, &tscope__events) == 0 &&
             put_positions(f) == 0;
    if (ok) {
        struct tscope__store *s = tscope__g.store;
        pthread_mutex_lock(&s->lock);
        ok = tscope__store_save(s, f, &J.ax) == 0;
        pthread_mutex_unlock(&s->lock);
    }
    ok = fflush(f) == 0 && ok;
    long end = ftell(f); /* nothing stale past it (a smaller store) */
    ok = ok && end > 0 && ftruncate(fd, (off_t)end) == 0;
    /* the body's checksum, read back from the page cache: a damaged state
     * is told from a whole one, never loaded as if it were */
    h.body_bytes = end > 0 ? (uint64_t)end - sizeof h : 0;
    h.body_sum = TSCOPE__SUM64_START;
    static char buf[1 << 16];
    for (uint64_t at = 0; ok && at < h.body_bytes;) {
        size_t want = h.body_bytes - at < sizeof buf ? (size_t)(h.body_bytes - at) : sizeof buf;
        ssize_t got = pread(fd, buf, want, (off_t)(sizeof h + at));
        ok = got == (ssize_t)want;
        if (ok)
            h.body_sum = tscope__sum64(h.body_sum, buf, want);
        at += want;
    }
    snprintf(h.magic, sizeof h.magic, "%s", TSCOPE__STATE_MAGIC);
    h.head_sum = tscope__jstate_sum(&h);
    ok = ok && pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    int err = errno;
    fclose(f);
    errno = err;
    if (ok)
        J.state_bytes = (uint64_t)end;
    return ok ? 0 : -1;
}

/* Every ring's applied records are in the state now: their space is
 * released.  Consumer thread (the only one that releases). */
static void release_all(void)
{
    uint32_t n = atomic_load_explicit(&tscope__g.nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct tscope__thread *t = tscope__g.threads[i];
        if (!atomic_load_explicit(&t->ring_freed, memory_order_acquire))
            tscope__ring_release(&t->ring, t->read_pos);
    }
}

/* Saves the store and starts journal generation+1, in the file that held
 * generation-1 (which no state names any more); then the rings let go of
 * what the state holds.  0, or -1 (said; journaling off). */
static int rotate(void)
{
    pthread_mutex_lock(&J.lock);
    J.generation++;
    J.off = 0;
    pthread_mutex_unlock(&J.lock);
    if (write_state()) {
        give_up(J.generation & 1 ? "state-1" : "state-0", errno);
        return -1;
    }
    release_all();
    J.next_ns = tscope__mono_ns() + J.period_ns;
    return 0;
}

/* hooks.keep: applied records stay in their ring (which survives the
 * process) until a checkpoint has them; when the ring needs the space
 * (over a quarter of it held) they go into a checkpoint if a state costs
 * less than journaling them, else into the journal; a slot about to be
 * reused has its records journaled. */
static uint64_t keep(uint32_t thread, struct tscope__ring *r, uint64_t released, uint64_t applied,
                     int must)
{
    if (!atomic_load_explicit(&J.on, memory_order_relaxed))
        return applied;
    uint64_t held = applied - released;
    if (!r->external) /* a slot the file could not take: its ring dies with the process */
        must = 1;
    if (!must && held <= r->size / 4)
        return released;
    if (!must && J.state_bytes < held * sizeof(struct tscope__rec)) {
        rotate(); /* every ring's applied records released, this one's too */
        return applied;
    }
    journal_records(thread, r, released, applied);
    return applied; /* journaled, or journaling off: released either way */
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

static void checkpoint(void)
{
    if (!atomic_load_explicit(&J.on, memory_order_relaxed))
        return;
    uint64_t now = tscope__mono_ns();
    pthread_mutex_lock(&J.lock); /* name writers move it too */
    uint64_t off = J.off;
    pthread_mutex_unlock(&J.lock);
    refresh_clock();
    if (now < J.next_ns && off < JOURNAL_MAX)
        return;
    rotate();
}

/* The first BIG_SLOTS slots get rings of J.big_records (BIG_RING unless
 * TASKSCOPE_RING_SIZE was chosen), the others J.ring_records: a record is
 * held in its ring until a checkpoint, and a checkpoint (or the journal)
 * comes when a ring is a quarter held, so large rings make that rare
 * (nqueens 12: 1.14x -> 1.01x the run without the journal, against 16384
 * records), while a program with a thousand threads does not take 2 GB of
 * /dev/shm.  Every slot has a region of the large size in the file (its
 * stride); only what its ring uses is allocated. */
#define BIG_SLOTS 64
#define BIG_RING 65536

static void *slot_memory(uint32_t index, size_t thread_bytes, uint64_t *ring_records,
                         struct tscope__rec **ring)
{
    if (!atomic_load(&J.on) || thread_bytes > J.ring_offset)
        return NULL;
    uint64_t records = index < BIG_SLOTS ? J.big_records : J.ring_records;
    /* a block of the mapping: its pages exist (fallocate), but are mapped
     * into the page tables as the ring is first written - populating 2 MB
     * a thread up front was more than half of what the journal cost a
     * short run, and the first lap's minor faults do not show in the
     * producer's cost (docs/architecture.md) */
    pthread_mutex_lock(&A.lock);
    char *p =
        block(TSCOPE__SHB_SLOT, index, 0, J.ring_offset + records * sizeof(struct tscope__rec));
    pthread_mutex_unlock(&A.lock);
    if (!p) {
        if (!J.slot_warned++)
            fprintf(stderr,
                    "taskscope: warning: cannot put thread slot %u in %s.map; a SIGKILL would "
                    "lose what such threads recorded since the consumer last read it\n",
                    index, J.base);
        return NULL;
    }
    *ring = (struct tscope__rec *)(p + J.ring_offset);
    *ring_records = records;
    return p;
}

/* A block of the mapping (A.lock held), its header written but for the
 * magic; NULL when it cannot grow.  publish() shows it to the readers. */
static struct tscope__shblock *reserve(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes)
{
    uint64_t at = A.off, len = (sizeof(struct tscope__shblock) + bytes + 63) & ~(uint64_t)63;
    int err = A.fd < 0 ? EBADF : at + len > SHARDS_WINDOW ? ENOSPC : 0;
    if (!err)
        err = posix_fallocate(A.fd, (off_t)at, (off_t)len);
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

/* Its payload written: the magic, then the end of the blocks (A.lock held;
 * a reader that sees the end sees every block before it whole). */
static void publish(struct tscope__shblock *b)
{
    __atomic_store_n(&b->magic, TSCOPE__SHBLOCK_MAGIC, __ATOMIC_RELEASE);
    __atomic_store_n(&((struct tscope__shfile *)A.base)->used, A.off, __ATOMIC_RELEASE);
}

/* A block whose payload is valid zeroed (memory handed out). */
static void *block(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes)
{
    struct tscope__shblock *b = reserve(kind, owner, index, bytes);
    if (!b)
        return NULL;
    publish(b);
    return b + 1;
}

static void *durable(uint32_t kind, uint32_t owner, uint32_t index, size_t bytes)
{
    if (!atomic_load(&J.on))
        return NULL;
    pthread_mutex_lock(&A.lock);
    void *p = block(kind, owner, index, bytes);
    pthread_mutex_unlock(&A.lock);
#ifdef MADV_POPULATE_WRITE
    /* a large block (a shard's log chunk) is written through soon: its
     * pages mapped in one call, not one fault each (no error matters) */
    if (p && bytes >= (64u << 10)) {
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
    A.off = TSCOPE__SHFILE_HEAD;
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
        c->sum = tscope__sum64(TSCOPE__SUM64_START, &c->cfg, sizeof c->cfg);
        publish(b);
    }
    pthread_mutex_unlock(&A.lock);
    /* the names so far; later ones come through name_added */
    struct tscope__names *tables[3] = {&tscope__types, &tscope__counters, &tscope__events};
    char buf[TSCOPE__NAME_MAX + 1];
    for (uint32_t t = 0; t < 3; t++)
        for (uint32_t id = 1, n = tscope__names_count(tables[t]); id <= n; id++)
            if (tscope__names_get(tables[t], id, buf, sizeof buf) == 0)
                shard_name(t, id, buf);
    return 0;
}

static void close_files(void)
{
    for (int i = 0; i < 2; i++) {
        if (J.fds[i] >= 0)
            close(J.fds[i]);
        J.fds[i] = -1;
    }
    if (A.fd >= 0)
        close(A.fd); /* its window stays mapped: shards still point into it */
    A.fd = -1;
    J.ax.f = NULL; /* closed by the caller (a forked child leaves it: its lock may be held) */
}

int tscope__journal_start(const char *dir, uint64_t ring_records, int size_chosen,
                          uint32_t checkpoint_ms, int checkpoints)
{
    snprintf(J.base, sizeof J.base, "%s/.taskscope-%ld", dir, (long)getpid());
    char abs[PATH_MAX];
    const char *d = realpath(dir, abs) ? abs : dir;
    J.dir[0] = 0;
    if (strlen(d) < sizeof J.dir) /* longer: the readers find the file by its pid only */
        memcpy(J.dir, d, strlen(d) + 1);
    J.ring_records = ring_records;
    /* large rings make checkpoints rare; without them a ring holds only
     * what the consumer has not read yet */
    J.big_records =
        !checkpoints || size_chosen || ring_records > BIG_RING ? ring_records : BIG_RING;
    /* a slot's ring follows its thread struct (64-byte aligned, like the
     * block that holds both) */
    J.ring_offset = TSCOPE__SLOT_RING_OFFSET;
    J.generation = 1;
    J.off = 0;
    J.journaled = 0;
    J.slot_warned = 0;
    J.period_ns = (uint64_t)checkpoint_ms * 1000000u;
    J.next_ns = tscope__mono_ns() + J.period_ns;
    char p[1200];
    const char *what = "map";
    int mapped = shards_start() == 0;
    if (mapped && !checkpoints) { /* the mapping alone: everything is in it */
        J.mapping_only = 1;
        atomic_store(&J.on, 1);
        tscope__hooks.slot_memory = slot_memory;
        tscope__hooks.name_added = name_added;
        tscope__hooks.durable = durable;
        tscope__hooks.durable_owns = durable_owns;
        tscope__hooks.checkpoint = refresh_clock; /* no checkpoint: the clock's factor */
        return 0;
    }
    for (int i = 0; i < 2 && mapped && (i == 0 || J.fds[0] >= 0); i++) {
        what = i ? "journal-1" : "journal-0";
        path_of(p, sizeof p, what);
        J.fds[i] = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (J.fds[1] >= 0) {
        what = "appendix";
        path_of(p, sizeof p, what);
        J.ax = (struct tscope__appendix){fopen(p, "we"), 0};
    }
    if (J.ax.f) {
        what = "state-1";
        if (write_state() == 0) {
            atomic_store(&J.on, 1);
            tscope__hooks.slot_memory = slot_memory;
            tscope__hooks.keep = keep;
            tscope__hooks.checkpoint = checkpoint;
            tscope__hooks.name_added = name_added;
            tscope__hooks.end_round = round_end;
            tscope__hooks.thread_gone = thread_gone;
            tscope__hooks.durable = durable;
            tscope__hooks.durable_owns = durable_owns;
            return 0;
        }
    }
    int err = errno;
    fprintf(stderr,
            "taskscope: warning: cannot start the crash journal (%s.%s: %s); measuring goes on, "
            "but a SIGKILL would lose the profile\n",
            J.base, what, strerror(err));
    remove_files();
    if (J.ax.f)
        fclose(J.ax.f);
    close_files();
    return -1;
}

void tscope__journal_stop(void)
{
    if (A.fd < 0 && J.fds[0] < 0)
        return;
    atomic_store(&J.on, 0);
    if (!J.mapping_only)
        release_all(); /* the consumer has stopped: nothing is held back any more */
    J.mapping_only = 0;
    remove_files();
    pthread_mutex_lock(&J.lock); /* an entry being written */
    if (J.ax.f)                  /* the consumer, its only writer, has stopped */
        fclose(J.ax.f);
    close_files();
    pthread_mutex_unlock(&J.lock);
}

/* In a forked child (one thread, the lock perhaps held by a thread that is
 * not there): the files stay, they are the parent's. */
void tscope__journal_forget(void)
{
    atomic_store(&J.on, 0);
    /* the child has one thread: a lock another thread held at the fork
     * (a name being added, a block being made) would never be released */
    pthread_mutex_init(&A.lock, NULL);
    pthread_mutex_init(&J.lock, NULL);
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
