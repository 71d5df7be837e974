/* names.c - interned name tables (see names.h).
 *
 * Concurrency: every function takes t->lock; names are never removed, so an
 * id stays valid for the life of the process.
 */
#include "names.h"
#include "filter.h"
#include "hooks.h"

#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "taskscope/taskscope.h"

_Atomic uint32_t tscope__names_attrs_gen;

struct tscope__names tscope__types = {.lock = PTHREAD_MUTEX_INITIALIZER};
struct tscope__names tscope__counters = {.lock = PTHREAD_MUTEX_INITIALIZER};
struct tscope__names tscope__events = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Slot for name in the hash: either holding its id or empty.  Lock held. */
static uint32_t *lookup_slot(struct tscope__names *t, const char *name)
{
    uint32_t mask = t->hash_cap - 1;
    for (uint64_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
        uint32_t id = t->hash[i];
        if (id == 0 || strcmp(t->names[id], name) == 0)
            return &t->hash[i];
    }
}

static int grow_hash(struct tscope__names *t)
{
    uint32_t ncap = t->hash_cap ? t->hash_cap * 2 : 64;
    uint32_t *old = t->hash;
    uint32_t old_cap = t->hash_cap;
    t->hash = calloc(ncap, sizeof *t->hash);
    if (!t->hash) {
        t->hash = old;
        return TSCOPE_ENOMEM;
    }
    t->hash_cap = ncap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i])
            *lookup_slot(t, t->names[old[i]]) = old[i];
    free(old);
    return 0;
}

int tscope__names_intern(struct tscope__names *t, const char *name, uint32_t *id)
{
    if (!name || !*name || strlen(name) > TSCOPE__NAME_MAX || !id)
        return TSCOPE_EINVAL;
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    if (t->hash_cap == 0 && (rc = grow_hash(t)) != 0)
        goto out;
    uint32_t *slot = lookup_slot(t, name);
    if (*slot) {
        *id = *slot;
        goto out;
    }
    if (t->count >= TSCOPE__MAX_IDS) {
        rc = TSCOPE_ELIMIT;
        goto out;
    }
    if (t->count + 2 > t->cap) {
        uint32_t ncap = t->cap ? t->cap * 2 : 16;
        char **n = realloc(t->names, ncap * sizeof *n);
        if (n)
            t->names = n;
        uint8_t *a = n ? realloc(t->attrs, ncap) : NULL;
        if (!a) {
            rc = TSCOPE_ENOMEM;
            goto out;
        }
        memset(a + t->cap, 0, ncap - t->cap);
        t->attrs = a;
        t->cap = ncap;
    }
    char *copy = strdup(name);
    if (!copy) {
        rc = TSCOPE_ENOMEM;
        goto out;
    }
    t->names[++t->count] = copy;
    *slot = t->count;
    *id = t->count;
    if (t == &tscope__types) /* before any thread can use the id */
        tscope__filter_decide(t->count, copy);
    if (tscope__hooks.name_added) /* under the lock: see the hook */
        tscope__hooks.name_added(t, t->count, copy);
    if (t->count * 2 > t->hash_cap)
        grow_hash(t); /* a failed grow leaves a valid, fuller table */
out:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

uint32_t tscope__names_find(struct tscope__names *t, const char *name)
{
    uint32_t id = 0;
    pthread_mutex_lock(&t->lock);
    if (t->hash_cap)
        id = *lookup_slot(t, name);
    pthread_mutex_unlock(&t->lock);
    return id;
}

int tscope__names_get(struct tscope__names *t, uint32_t id, char *buf, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    if (id == 0 || id > t->count) {
        rc = TSCOPE_ENOENT;
    } else if (buf && len) {
        strncpy(buf, t->names[id], len - 1);
        buf[len - 1] = 0;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int tscope__names_add_attrs(struct tscope__names *t, uint32_t id, unsigned attrs)
{
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    if (id == 0 || id > t->count)
        rc = TSCOPE_ENOENT;
    else if ((t->attrs[id] | attrs) != t->attrs[id]) {
        t->attrs[id] |= (uint8_t)attrs;
        if (tscope__hooks.attrs_added) /* under the lock, as name_added */
            tscope__hooks.attrs_added(t, id, t->attrs[id]);
    }
    pthread_mutex_unlock(&t->lock);
    if (!rc)
        atomic_fetch_add_explicit(&tscope__names_attrs_gen, 1, memory_order_release);
    return rc;
}

unsigned tscope__names_attrs(struct tscope__names *t, uint32_t id)
{
    pthread_mutex_lock(&t->lock);
    unsigned attrs = id && id <= t->count ? t->attrs[id] : 0;
    pthread_mutex_unlock(&t->lock);
    return attrs;
}

uint32_t tscope__names_count(struct tscope__names *t)
{
    pthread_mutex_lock(&t->lock);
    uint32_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void tscope__names_clear(struct tscope__names *t)
{
    pthread_mutex_lock(&t->lock);
    for (uint32_t id = 1; id <= t->count; id++) {
        free(t->names[id]);
        if (t == &tscope__types && id <= TSCOPE__MAX_IDS)
            tscope__type_excluded[id] = 0; /* the ids will name other types */
    }
    free(t->names);
    free(t->attrs);
    free(t->hash);
    t->names = NULL;
    t->attrs = NULL;
    t->hash = NULL;
    t->count = t->cap = t->hash_cap = 0;
    pthread_mutex_unlock(&t->lock);
    atomic_fetch_add_explicit(&tscope__names_attrs_gen, 1, memory_order_release);
}
