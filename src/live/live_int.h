/* live_int.h - what the files of src/live share, all on the live thread:
 * the queue of frames going out (queue.c), the JSON they carry (snapshot.c:
 * HELLO and the snapshots; command.c: the commands carried out and their
 * acknowledgements) and the writing of that JSON.  stream.c owns the thread
 * and the connection. */
#ifndef TSCOPE_LIVE_LIVE_INT_H
#define TSCOPE_LIVE_LIVE_INT_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/text.h"

/* ---- writing JSON into a text ---- */

/* Like tscope__text_printf, for the constant pieces too ("" included). */
static inline void tscope__live_put(struct tscope__text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tscope__text_vprintf(t, fmt, ap);
    va_end(ap);
}

/* A JSON number; null for what JSON cannot hold. */
static inline void tscope__live_put_num(struct tscope__text *t, double v)
{
    if (isfinite(v))
        tscope__live_put(t, "%.9g", v);
    else
        tscope__live_put(t, "null");
}

/* ---- the frames going out (queue.c) ----
 * Snapshots wait in a ring of cap; when it is full the oldest is dropped
 * and counted (drops), never the one being sent.  HELLO and
 * acknowledgements (urgent) go before snapshots, in order, and are never
 * dropped while connected; a broken connection forgets them (they were
 * for it) and sends the snapshot it was sending again, whole. */
struct tscope__live_out {
    char *buf; /* header + payload + MAC (sealed as it goes out) */
    size_t len;
};

#define TSCOPE__LIVE_URGENT 16

struct tscope__live_queue {
    struct tscope__live_out *q; /* snapshots: a ring of cap */
    uint32_t cap, qhead, qcount;
    struct tscope__live_out urgent[TSCOPE__LIVE_URGENT];
    uint32_t nurgent;
    size_t sent;       /* bytes of the frame being sent */
    int sending_queue; /* that frame: 1 the ring's head, 0 urgent[0] */
    uint64_t drops;
};

/* 0, or -1 out of memory. */
int tscope__live_queue_init(struct tscope__live_queue *q, uint32_t cap);
void tscope__live_queue_free(struct tscope__live_queue *q);
/* A frame of kind with payload t (taken over: t is emptied); buf NULL when
 * out of memory or too large. */
struct tscope__live_out tscope__live_out_make(unsigned kind, struct tscope__text *t);
/* Queue a frame (a snapshot whose buf is NULL counts as dropped). */
void tscope__live_queue_urgent(struct tscope__live_queue *q, struct tscope__live_out f);
void tscope__live_queue_snapshot(struct tscope__live_queue *q, struct tscope__live_out f);
int tscope__live_queue_pending(const struct tscope__live_queue *q);
/* The frame to send now (its bytes from q->sent on), or NULL: none. */
struct tscope__live_out *tscope__live_queue_next(struct tscope__live_queue *q);
/* n more bytes of it went out; a frame sent whole leaves the queue. */
void tscope__live_queue_sent(struct tscope__live_queue *q, size_t n);
/* The connection broke, or a new one begins. */
void tscope__live_queue_broken(struct tscope__live_queue *q);

/* ---- what the frames say (snapshot.c, command.c) ---- */

/* HELLO's payload: who this process is. */
void tscope__live_hello(struct tscope__text *t, time_t started, uint32_t period_ms);

/* A snapshot's payload, number seq, drops so far; rate carries the tasks
 * ended at the previous snapshot and its time (tasks.ended_per_s). */
struct tscope__live_rate {
    uint64_t ended;
    double ended_t; /* s; 0 before the first snapshot */
};
void tscope__live_snapshot(struct tscope__text *t, uint64_t seq, uint64_t drops,
                           struct tscope__live_rate *rate);

/* Carries out a COMMAND frame's payload (a parameter set, the debugger's
 * pause, break...) and writes its acknowledgement's payload into ack. */
void tscope__live_command(const char *payload, size_t len, struct tscope__text *ack);

#endif
