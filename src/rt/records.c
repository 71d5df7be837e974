/* records.c - task records, recycled.
 *
 * A runtime worker keeps the records of the tasks it finishes in a list of
 * its own and takes new records from it.  Past 2 x BATCH it hands BATCH of
 * them to a shared pool, and a worker whose list is empty takes BATCH from
 * the pool at once (one lock per BATCH records).  Without this, malloc and
 * free of the records took ~20% of the CPU in taskbench, where one thread
 * spawns and another runs half of the tasks, freeing records it did not
 * allocate (docs/performance.md).
 *
 * Every record is a calloc of its own, so any record may still go to
 * free(): threads that are not the runtime's workers (a user thread
 * releasing a handle, say) use malloc and free directly, and each list is
 * freed when its thread stops.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { BATCH = 256 };

/* A free record's link: its parent pointer (no task owns it any more).
 * In the pool, the first record of each batch links to the next batch
 * through its arg pointer. */
#define NEXT(t) ((t)->parent)

static _Thread_local struct {
    struct tscope_rt_task *head;
    unsigned n;
    int on; /* a worker of the runtime */
} local;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tscope_rt_task *pool;

static void free_list(struct tscope_rt_task *t)
{
    while (t) {
        struct tscope_rt_task *next = NEXT(t);
        free(t);
        t = next;
    }
}

/* Under AddressSanitizer every record goes back to free(), so that a task
 * used after its last reference is released is still reported; the other
 * builds (ThreadSanitizer, normal) test the recycling. */
#if defined(__SANITIZE_ADDRESS__)
#define RECYCLE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RECYCLE 0
#endif
#endif
#ifndef RECYCLE
#define RECYCLE 1
#endif

void tscope__rt_records_start(void)
{
    local.on = RECYCLE;
}

void tscope__rt_records_stop(void)
{
    free_list(local.head);
    local.head = NULL;
    local.n = 0;
    local.on = 0;
}

void tscope__rt_records_drop_pool(void)
{
    pthread_mutex_lock(&pool_lock);
    while (pool) {
        struct tscope_rt_task *batch = pool;
        pool = batch->arg;
        free_list(batch);
    }
    pthread_mutex_unlock(&pool_lock);
}

struct tscope_rt_task *tscope__rt_record_new(void)
{
    if (!local.head && local.on) {
        pthread_mutex_lock(&pool_lock);
        if (pool) {
            local.head = pool;
            local.n = BATCH;
            pool = pool->arg;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    struct tscope_rt_task *t = local.head;
    if (!t)
        return calloc(1, sizeof *t);
    local.head = NEXT(t);
    local.n--;
    memset(t, 0, sizeof *t);
    return t;
}

void tscope__rt_record_free(struct tscope_rt_task *t)
{
    free(t->succ);
    if (!local.on) {
        free(t);
        return;
    }
    NEXT(t) = local.head;
    local.head = t;
    if (++local.n < 2 * BATCH)
        return;
    struct tscope_rt_task *batch = local.head, *last = batch;
    for (unsigned i = 1; i < BATCH; i++)
        last = NEXT(last);
    local.head = NEXT(last);
    local.n -= BATCH;
    NEXT(last) = NULL;
    pthread_mutex_lock(&pool_lock);
    batch->arg = pool;
    pool = batch;
    pthread_mutex_unlock(&pool_lock);
}
