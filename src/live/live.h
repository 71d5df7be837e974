/* live.h - TASKSCOPE_LIVE: the process's stream to `taskscope dashboard`
 * (src/live/stream.c, docs/dashboard.md).  Wired by the lifecycle: started
 * after the sampler at tscope_init, stopped before it at tscope_finalize. */
#ifndef TSCOPE_LIVE_LIVE_H
#define TSCOPE_LIVE_LIVE_H

#include "core/config.h"

/* Starts the live thread when cfg->live names a dashboard (HOST:PORT/SECRET,
 * src/live/auth.h) and libsodium loads; 0, or -1 after one line on stderr
 * (measurement goes on without it). */
int tscope__live_start(const struct tscope__config *cfg);
/* Sends the last snapshot (waiting at most 0.5 s for the socket) and
 * stops the thread; nothing when it is not running. */
void tscope__live_stop(void);
/* In a forked child: the parent's thread is not there; forget it. */
void tscope__live_forget(void);

#endif
