/* idmap.c - task id -> task record (idmap.h), shared by the threads: a task
 * created by id on one thread is begun, yielded, resumed or ended by id on
 * others.  64 stripes by the id's hash, each an open-addressing table
 * (linear probing at load <= 1/2, deletion by backward shift, as u64map.c)
 * under its own mutex: an event takes one stripe's lock once, and threads
 * meet on a stripe only by chance.  Tasks begun with tscope_task_start
 * never enter it unless they yield (ids.c).
 */
#include <pthread.h>
#include <stdlib.h>

#include "idmap.h"
#include "u64map.h"

#define STRIPES 64

struct entry {
    uint64_t id; /* 0: empty */
    struct tscope_task *t;
};

static struct stripe {
    pthread_mutex_t lock;
    struct entry *e;
    uint64_t mask, count;
} __attribute__((aligned(64))) stripes[STRIPES];

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (int i = 0; i < STRIPES; i++)
        pthread_mutex_init(&stripes[i].lock, NULL);
}

static struct stripe *stripe_of(uint64_t h)
{
    pthread_once(&once, init);
    return &stripes[h >> 58]; /* the high bits pick the stripe, the low ones the entry */
}

/* Finds id's entry: its index, or that of the empty entry where it goes. */
static uint64_t probe(const struct stripe *s, uint64_t id, uint64_t h)
{
    uint64_t i = h & s->mask;
    while (s->e[i].id && s->e[i].id != id)
        i = (i + 1) & s->mask;
    return i;
}

static int grow(struct stripe *s)
{
    uint64_t cap = s->e ? 2 * (s->mask + 1) : 64;
    struct entry *e = calloc(cap, sizeof *e), *old = s->e;
    if (!e)
        return -1;
    uint64_t oldcap = old ? s->mask + 1 : 0;
    s->e = e;
    s->mask = cap - 1;
    for (uint64_t i = 0; i < oldcap; i++)
        if (old[i].id)
            s->e[probe(s, old[i].id, tscope__mix64(old[i].id))] = old[i];
    free(old);
    return 0;
}

int tscope__idmap_put(uint64_t id, struct tscope_task *t)
{
    uint64_t h = tscope__mix64(id);
    struct stripe *s = stripe_of(h);
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    if ((!s->e || 2 * (s->count + 1) > s->mask + 1) && grow(s)) {
        rc = -1;
    } else {
        uint64_t i = probe(s, id, h);
        if (s->e[i].id) {
            rc = 1;
        } else {
            s->e[i] = (struct entry){id, t};
            s->count++;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

struct tscope_task *tscope__idmap_get(uint64_t id)
{
    uint64_t h = tscope__mix64(id);
    struct stripe *s = stripe_of(h);
    struct tscope_task *t = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->e) {
        uint64_t i = probe(s, id, h);
        t = s->e[i].t;
    }
    pthread_mutex_unlock(&s->lock);
    return t;
}

int tscope__idmap_del(uint64_t id, const struct tscope_task *t)
{
    uint64_t h = tscope__mix64(id);
    struct stripe *s = stripe_of(h);
    int found = 0;
    pthread_mutex_lock(&s->lock);
    uint64_t i = s->e ? probe(s, id, h) : 0;
    if (s->e && s->e[i].id && s->e[i].t == t) {
        found = 1;
        s->count--;
        /* backward shift: move up what probed past i */
        for (uint64_t j = (i + 1) & s->mask; s->e[j].id; j = (j + 1) & s->mask) {
            uint64_t home = tscope__mix64(s->e[j].id) & s->mask;
            if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
                s->e[i] = s->e[j];
                i = j;
            }
        }
        s->e[i] = (struct entry){0, NULL};
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

void tscope__idmap_clear(void)
{
    pthread_once(&once, init);
    for (int k = 0; k < STRIPES; k++) {
        struct stripe *s = &stripes[k];
        pthread_mutex_lock(&s->lock);
        free(s->e);
        s->e = NULL;
        s->mask = s->count = 0;
        pthread_mutex_unlock(&s->lock);
    }
}
