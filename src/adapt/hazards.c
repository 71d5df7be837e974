/* hazards.c - per-address access history for dependency hazards (hazards.h).
 *
 * An open-addressing table keyed by address: the parent whose children use
 * the address, its last writer and the readers since.  Readers live in a
 * growing array per address; a writer empties it.  One mutex: this runs
 * once per task with depend clauses (tasks that carry data dependencies are
 * coarse), not per event.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hazards.h"
#include "taskscope/taskscope.h"

struct access_hist {
    uintptr_t addr; /* 0: empty slot */
    uint64_t parent;
    uint64_t writer;   /* 0: none since the parent started using addr */
    uint64_t *readers; /* since the writer */
    uint32_t nreaders, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct access_hist *table;
static size_t table_cap, table_used;

static size_t slot_of(uintptr_t addr, size_t cap)
{
    uint64_t h = (uint64_t)addr * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static int grow(void)
{
    size_t cap = table_cap ? 2 * table_cap : 1024;
    struct access_hist *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < table_cap; i++) {
        if (!table[i].addr)
            continue;
        size_t j = slot_of(table[i].addr, cap);
        while (t[j].addr)
            j = (j + 1) & (cap - 1);
        t[j] = table[i];
    }
    free(table);
    table = t;
    table_cap = cap;
    return 0;
}

static struct access_hist *find(uintptr_t addr)
{
    if ((table_used + 1) * 4 > table_cap * 3 && grow())
        return NULL;
    size_t i = slot_of(addr, table_cap);
    while (table[i].addr && table[i].addr != addr)
        i = (i + 1) & (table_cap - 1);
    if (!table[i].addr) {
        table[i].addr = addr;
        table_used++;
    }
    return &table[i];
}

static int add_reader(struct access_hist *h, uint64_t task)
{
    if (h->nreaders == h->cap) {
        uint32_t cap = h->cap ? 2 * h->cap : 4;
        uint64_t *r = realloc(h->readers, cap * sizeof *r);
        if (!r)
            return -1;
        h->readers = r;
        h->cap = cap;
    }
    h->readers[h->nreaders++] = task;
    return 0;
}

int tscope__hazards_access(uint64_t parent, uint64_t task, const void *addr, int access,
                           tscope__edge_fn edge)
{
    pthread_mutex_lock(&lock);
    struct access_hist *h = find((uintptr_t)addr);
    int rc = 0;
    if (!h) {
        rc = -1;
        goto out;
    }
    if (h->parent != parent) { /* another parent's children: a fresh history */
        h->parent = parent;
        h->writer = 0;
        h->nreaders = 0;
    }
    if (access == TSCOPE__ACCESS_IN || access == TSCOPE__ACCESS_SET) {
        if (h->writer)
            edge(h->writer, task, addr, TSCOPE_DEP_RAW);
        rc = add_reader(h, task);
        goto out;
    }
    if (h->nreaders) {
        for (uint32_t i = 0; i < h->nreaders; i++)
            edge(h->readers[i], task, addr, TSCOPE_DEP_WAR);
    } else if (h->writer) {
        edge(h->writer, task, addr,
             access == TSCOPE__ACCESS_INOUT ? TSCOPE_DEP_RAW : TSCOPE_DEP_WAW);
    }
    h->writer = task;
    h->nreaders = 0;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}

void tscope__hazards_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < table_cap; i++)
        free(table[i].readers);
    free(table);
    table = NULL;
    table_cap = table_used = 0;
    pthread_mutex_unlock(&lock);
}
