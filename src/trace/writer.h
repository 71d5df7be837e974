/* writer.h - the binary trace (format.h) written by the consumer thread.
 *
 * With TASKSCOPE_TRACE on, the consumer hands every batch of ring records
 * it drained (after the profile applied them) to tscope__trace_batch, which
 * encodes them into a buffer flushed at each round's end: the producers'
 * path is unchanged, memory is one buffer whatever the run's length, and a
 * killed program loses at most the records of the round in progress.  A
 * failed write (full disk) or the size limit stops the trace with one line
 * on stderr and leaves a valid file marked truncated; the profile goes on.
 */
#ifndef TSCOPE_TRACE_WRITER_H
#define TSCOPE_TRACE_WRITER_H

#include <stdint.h>

#include "core/ring.h"

struct tscope__config;

/* Creates DIR/trace.tsct; 0, or -1 after one line on stderr (no trace). */
int tscope__trace_start(const char *dir, const struct tscope__config *cfg, int rank, int nranks);
/* Records [from, to) of thread's ring (consumer thread). */
void tscope__trace_batch(uint32_t thread, struct tscope__ring *r, uint64_t from, uint64_t to);
/* The end of a consumer round: what is buffered goes to the file. */
void tscope__trace_round(void);
/* Writes what is left and closes the file, marked complete unless it was
 * truncated; no-op when no trace is open. */
void tscope__trace_stop(void);
/* The open (or last) trace's path, "" when none. */
const char *tscope__trace_path(void);
/* After fork(), in the child: the parent's trace is not this process's. */
void tscope__trace_forget(void);

#endif
