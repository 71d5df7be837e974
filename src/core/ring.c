/* ring.c - allocation of per-thread rings (see ring.h for the protocol). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

#include "taskscope/taskscope.h"

int tscope__ring_init(struct tscope__ring *r, uint64_t size, struct tscope__rec *buf)
{
    memset(r, 0, sizeof *r);
    r->external = buf != NULL;
    r->buf = buf ? buf : aligned_alloc(64, size * sizeof *r->buf);
    if (!r->buf)
        return TSCOPE_ENOMEM;
    r->size = size;
    r->mask = size - 1;
    r->half = size / 2;
    return 0;
}

void tscope__ring_free(struct tscope__ring *r)
{
    if (!r->external)
        free(r->buf);
    r->buf = NULL;
}
