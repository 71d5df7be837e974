/* format.h - the binary trace file (trace.tsct): layout and the variable
 * length integers shared by the writer (writer.c, in the measured process)
 * and the reader (read.c, in the converters).
 *
 * A 32-byte header, then chunks, each `u32 kind, u32 payload length,
 * payload` (little-endian); a reader skips kinds it does not know.
 *
 *   header   "TSCTRACE", u32 version, u32 status, u32 rank, u32 nranks,
 *            u32 pid, u32 0
 *   CLOCK    f64 ns per tick, u64 origin (ticks at tscope_init), u64
 *            CLOCK_REALTIME ns at the origin; written at open and again
 *            whenever the consumer has refined the factor; the last wins
 *   NAMES    entries: u8 table (0 task types, 1 counters, 2 custom events,
 *            3 threads), varint id, varint length, bytes; a name precedes
 *            the chunks that use it, a thread slot's name is written again
 *            when the slot is reused by another thread
 *   EVENTS   varint thread slot, u64 base ts (ticks), then records, each
 *            a kind byte, the zigzag delta of its ts from the previous
 *            record's, and per kind (deltas are zigzag varints; `id-` is
 *            the delta from the previous task id in this chunk):
 *              CREATE   id-, parent - id, type, prio (zigzag), depth, flags
 *              BEGIN, START   id-, type
 *              QUEUED, END, CANCEL, YIELD, RESUME   id-
 *              DEP_LOCAL   id-, to - id, hazard bits, address count (version
 *                          1: a hazard kind TSCOPE_DEP_*, no count)
 *              DEP_REMOTE  id-, to - id, fromrank, torank, flags
 *              COUNTER  counter id, u64 value bits
 *              CUSTOM   event id, payload
 *              MESSAGE  peer rank, bytes, tag (as u32), flags
 *              EXT      payload (no ts: it belongs to the record before it)
 *            Every chunk starts afresh (base ts, previous id 0), so a
 *            chunk decodes alone and a cut file loses only its last chunk.
 *   END      u64 events written, u64 events the trace could not take;
 *            the header's status says complete
 *
 * Status: WRITING while the program runs (a file left WRITING was not
 * closed: the program was killed), COMPLETE, FULL (a write failed: the
 * disk is full; the file ends at the last whole chunk), LIMIT
 * (TASKSCOPE_TRACE_MAX_MB reached).
 */
#ifndef TSCOPE_TRACE_FORMAT_H
#define TSCOPE_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TSCOPE__TRACE_MAGIC "TSCTRACE"
#define TSCOPE__TRACE_VERSION 2u /* 2: edges per task pair; 1 still read */
#define TSCOPE__TRACE_HEADER 32u
#define TSCOPE__TRACE_STATUS_AT 12u            /* offset of the status field */
#define TSCOPE__TRACE_CHUNK_MAX (256u * 1024u) /* payload bytes */

enum tscope__trace_status {
    TSCOPE__TRACE_WRITING = 0,
    TSCOPE__TRACE_COMPLETE = 1,
    TSCOPE__TRACE_FULL = 2,
    TSCOPE__TRACE_LIMIT = 3
};

enum tscope__trace_chunk {
    TSCOPE__CHUNK_CLOCK = 1,
    TSCOPE__CHUNK_NAMES = 2,
    TSCOPE__CHUNK_EVENTS = 3,
    TSCOPE__CHUNK_END = 4
};

enum tscope__trace_table {
    TSCOPE__TABLE_TYPES = 0,
    TSCOPE__TABLE_COUNTERS = 1,
    TSCOPE__TABLE_EVENTS = 2,
    TSCOPE__TABLE_THREADS = 3,
    TSCOPE__TABLES = 4
};

static inline uint64_t tscope__zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t tscope__unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Appends v at p (at most 10 bytes); returns the new end. */
static inline unsigned char *tscope__varint_put(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

/* Reads a varint from [*p, end); 0, or -1 when it runs past end or is
 * longer than 10 bytes. */
static inline int tscope__varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*p >= end)
            return -1;
        unsigned char b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

static inline void tscope__le32_put(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void tscope__le64_put(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t tscope__le32_get(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t tscope__le64_get(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#endif
