/* queue.c - the live stream's frames going out (live_int.h): snapshots in
 * a ring that drops its oldest when the dashboard is slow or absent, HELLO
 * and acknowledgements ahead of them, and how far the frame being sent
 * got.  A frame waits with room for its MAC; stream.c seals it (sequence
 * number, MAC) when it begins to go out on a connection. */
#include <stdlib.h>
#include <string.h>

#include "live_int.h"
#include "proto.h"

int tscope__live_queue_init(struct tscope__live_queue *q, uint32_t cap)
{
    memset(q, 0, sizeof *q);
    q->cap = cap;
    q->q = calloc(cap, sizeof *q->q);
    return q->q ? 0 : -1;
}

void tscope__live_queue_free(struct tscope__live_queue *q)
{
    for (uint32_t i = 0; i < q->qcount; i++)
        free(q->q[(q->qhead + i) % q->cap].buf);
    for (uint32_t i = 0; i < q->nurgent; i++)
        free(q->urgent[i].buf);
    free(q->q);
    memset(q, 0, sizeof *q);
}

struct tscope__live_out tscope__live_out_make(unsigned kind, struct tscope__text *t)
{
    struct tscope__live_out f = {NULL, 0};
    if (!t->failed && t->len <= TSCOPE__LIVE_FRAME_MAX &&
        (f.buf = malloc(TSCOPE__LIVE_FRAME_BYTES(t->len))) != NULL) {
        tscope__live_header((unsigned char *)f.buf, kind, t->len);
        memcpy(f.buf + TSCOPE__LIVE_HEADER, t->p, t->len);
        f.len = TSCOPE__LIVE_FRAME_BYTES(t->len); /* the MAC's room: sealed when it goes */
    }
    tscope__text_free(t);
    return f;
}

void tscope__live_queue_urgent(struct tscope__live_queue *q, struct tscope__live_out f)
{
    if (!f.buf)
        return;
    if (q->nurgent == TSCOPE__LIVE_URGENT) { /* commands flood: drop it */
        free(f.buf);
        return;
    }
    q->urgent[q->nurgent++] = f;
}

void tscope__live_queue_snapshot(struct tscope__live_queue *q, struct tscope__live_out f)
{
    if (!f.buf) {
        q->drops++;
        return;
    }
    if (q->qcount == q->cap) { /* full: the oldest goes, unless it is being sent */
        uint32_t victim = q->qhead;
        if (q->sending_queue && q->sent > 0) /* keep the head whole: drop the next */
            victim = (q->qhead + 1) % q->cap;
        if (q->qcount == 1 && victim != q->qhead) { /* only the one being sent: drop the new */
            free(f.buf);
            q->drops++;
            return;
        }
        free(q->q[victim].buf);
        if (victim == q->qhead) {
            q->qhead = (q->qhead + 1) % q->cap;
        } else { /* close the gap after the head */
            for (uint32_t k = 1; k + 1 < q->qcount; k++)
                q->q[(q->qhead + k) % q->cap] = q->q[(q->qhead + k + 1) % q->cap];
        }
        q->qcount--;
        q->drops++;
    }
    q->q[(q->qhead + q->qcount) % q->cap] = f;
    q->qcount++;
}

int tscope__live_queue_pending(const struct tscope__live_queue *q)
{
    return q->nurgent > 0 || q->qcount > 0;
}

struct tscope__live_out *tscope__live_queue_next(struct tscope__live_queue *q)
{
    if (!tscope__live_queue_pending(q))
        return NULL;
    if (q->sent == 0) /* a new frame: urgent ones first */
        q->sending_queue = q->nurgent == 0;
    return q->sending_queue ? &q->q[q->qhead] : &q->urgent[0];
}

void tscope__live_queue_sent(struct tscope__live_queue *q, size_t n)
{
    struct tscope__live_out *f = q->sending_queue ? &q->q[q->qhead] : &q->urgent[0];
    q->sent += n;
    if (q->sent < f->len)
        return;
    free(f->buf);
    q->sent = 0;
    if (q->sending_queue) {
        q->qhead = (q->qhead + 1) % q->cap;
        q->qcount--;
    } else {
        memmove(q->urgent, q->urgent + 1, --q->nurgent * sizeof q->urgent[0]);
    }
}

void tscope__live_queue_broken(struct tscope__live_queue *q)
{
    for (uint32_t i = 0; i < q->nurgent; i++) /* acks are for that connection's commands */
        free(q->urgent[i].buf);
    q->nurgent = 0;
    q->sent = 0;
}
