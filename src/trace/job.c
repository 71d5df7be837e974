/* job.c - a job's rank traces read together (job.h): the common clock, the
 * summed statistics and the messages' sends joined to their receives, for
 * every writer that puts a whole job in one output. */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskscope/taskscope.h"

int tscope__job_open(struct tscope__job *job, const char *const *paths, int n, char *err,
                     size_t errlen)
{
    memset(job, 0, sizeof *job);
    job->t = calloc((size_t)n + 1, sizeof *job->t);
    job->offset = calloc((size_t)n + 1, sizeof *job->offset);
    if (!job->t || !job->offset) {
        snprintf(err, errlen, "out of memory");
        tscope__job_close(job);
        return -1;
    }
    job->n = n;
    job->origin = UINT64_MAX;
    for (int r = 0; r < n; r++) {
        if (tscope__trace_open(paths[r], &job->t[r], err, errlen)) {
            tscope__job_close(job);
            return -1;
        }
        uint64_t rt = tscope__trace_info(job->t[r])->realtime_ns;
        if (rt < job->origin)
            job->origin = rt;
    }
    for (int r = 0; r < n; r++)
        job->offset[r] = tscope__trace_info(job->t[r])->realtime_ns - job->origin;
    return 0;
}

void tscope__job_close(struct tscope__job *job)
{
    for (int r = 0; job->t && r < job->n; r++)
        if (job->t[r])
            tscope__trace_close(job->t[r]);
    free(job->t);
    free(job->offset);
    memset(job, 0, sizeof *job);
}

int tscope__job_complete(const struct tscope__job *job)
{
    if (job->n < 1)
        return 0;
    unsigned char *seen = calloc((size_t)job->n, 1);
    int ok = seen != NULL;
    for (int r = 0; ok && r < job->n; r++) {
        const struct tscope__trace_info *i = tscope__trace_info(job->t[r]);
        ok = i->nranks == (uint32_t)job->n && i->rank < (uint32_t)job->n && !seen[i->rank];
        if (ok)
            seen[i->rank] = 1;
    }
    free(seen);
    return ok;
}

void tscope__job_add_stats(struct tscope__replay_stats *sum, const struct tscope__replay_stats *one,
                           uint64_t offset)
{
    sum->records += one->records;
    sum->slices += one->slices;
    sum->tasks += one->tasks;
    sum->flows += one->flows;
    sum->flows_unbound += one->flows_unbound;
    sum->flows_lost += one->flows_lost;
    sum->unmatched += one->unmatched;
    sum->counters += one->counters;
    sum->instants += one->instants;
    sum->remote += one->remote;
    sum->messages += one->messages;
    if (one->end_ns + offset > sum->end_ns)
        sum->end_ns = one->end_ns + offset;
}

int tscope__msgs_add(struct tscope__msgs *l, const struct tscope__msg *m)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        struct tscope__msg *g = realloc(l->m, cap * sizeof *g);
        if (!g)
            return -1;
        l->m = g;
        l->cap = cap;
    }
    l->m[l->n++] = *m;
    return 0;
}

static int is_send(const struct tscope__msg *m)
{
    return (m->flags & TSCOPE_MSG_SEND) != 0;
}

static int is_coll(const struct tscope__msg *m)
{
    return (m->flags & TSCOPE_MSG_COLLECTIVE) != 0;
}

/* The channel's sender and receiver, whichever end m is. */
static uint32_t sender(const struct tscope__msg *m)
{
    return is_send(m) ? m->rank : m->peer;
}

static uint32_t receiver(const struct tscope__msg *m)
{
    return is_send(m) ? m->peer : m->rank;
}

/* Sends and receives in the order that joins them: by channel, then sends
 * first, then time. */
static int by_channel(const void *a, const void *b)
{
    const struct tscope__msg *x = a, *y = b;
    if (sender(x) != sender(y))
        return sender(x) < sender(y) ? -1 : 1;
    if (receiver(x) != receiver(y))
        return receiver(x) < receiver(y) ? -1 : 1;
    if (is_coll(x) != is_coll(y))
        return is_coll(x) - is_coll(y);
    if (!is_coll(x) && x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    if (is_send(x) != is_send(y))
        return is_send(y) - is_send(x);
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int same_channel(const struct tscope__msg *a, const struct tscope__msg *b)
{
    return sender(a) == sender(b) && receiver(a) == receiver(b) && is_coll(a) == is_coll(b) &&
           (is_coll(a) || a->tag == b->tag);
}

int tscope__msgs_join(struct tscope__msgs *l,
                      int (*pair)(void *ctx, const struct tscope__msg *snd,
                                  const struct tscope__msg *rcv),
                      void *ctx, uint64_t *unmatched)
{
    if (l->n) /* no messages: no array */
        qsort(l->m, l->n, sizeof *l->m, by_channel);
    for (size_t i = 0; i < l->n;) {
        /* one channel: [i, j) sends, [j, k) receives */
        size_t j = i, k;
        while (j < l->n && is_send(&l->m[j]) && same_channel(&l->m[j], &l->m[i]))
            j++;
        k = j;
        while (k < l->n && !is_send(&l->m[k]) && same_channel(&l->m[k], &l->m[i]))
            k++;
        size_t ns = j - i, nr = k - j, pairs = ns < nr ? ns : nr;
        *unmatched += (ns - pairs) + (nr - pairs);
        for (size_t q = 0; q < pairs; q++)
            if (pair(ctx, &l->m[i + q], &l->m[j + q]))
                return -1;
        i = k;
    }
    return 0;
}

void tscope__msgs_free(struct tscope__msgs *l)
{
    free(l->m);
    memset(l, 0, sizeof *l);
}
