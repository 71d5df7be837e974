/* read.h - reads a binary trace (format.h) back, record by record, in
 * bounded memory: the converters' input.
 *
 * Opening scans the chunk headers once (seeking over the events) to
 * collect what the converters need before the first record: names, the
 * last clock calibration, how the file ends.  Then tscope__trace_next
 * returns the records in file order, which is per thread in time order.
 */
#ifndef TSCOPE_TRACE_READ_H
#define TSCOPE_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "format.h"

struct tscope__trace_info {
    uint32_t version, status, rank, nranks, pid;
    double ns_per_tick;
    uint64_t origin;      /* ticks at tscope_init */
    uint64_t realtime_ns; /* CLOCK_REALTIME at the origin */
    int has_end;          /* the END chunk was found: */
    uint64_t end_events, end_lost;
    int cut;                    /* the file ends inside a chunk (killed or cut short) */
    uint64_t event_chunks;      /* EVENTS chunks in the file */
    uint32_t threads;           /* highest thread slot + 1 */
    uint64_t first_ts, last_ts; /* base ts of the first and last EVENTS chunk (ticks) */
};

struct tscope__trace;

/* Opens path; 0, or -1 with a one-line message naming the file in err. */
int tscope__trace_open(const char *path, struct tscope__trace **out, char *err, size_t errlen);
void tscope__trace_close(struct tscope__trace *t);
const struct tscope__trace_info *tscope__trace_info(const struct tscope__trace *t);
/* The name of id in table (TSCOPE__TABLE_*), NULL when the trace has none;
 * a thread slot used by several threads has their names joined by " / ". */
const char *tscope__trace_name(const struct tscope__trace *t, int table, uint32_t id);
/* The next record: 1 (*thread, *rec set; an EXT record has the ts of the
 * record it belongs to), 0 at the end, -1 for corrupt data (message in
 * tscope__trace_error). */
int tscope__trace_next(struct tscope__trace *t, uint32_t *thread, struct tscope__rec *rec);
const char *tscope__trace_error(const struct tscope__trace *t);
/* ns since the origin for a record's ts. */
static inline double tscope__trace_ns(const struct tscope__trace_info *i, uint64_t ts)
{
    return (double)(int64_t)(ts - i->origin) * i->ns_per_tick;
}
/* What the header's status means, in words. */
const char *tscope__trace_status_text(uint32_t status, int cut);

#endif
