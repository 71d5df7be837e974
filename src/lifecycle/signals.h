/* signals.h - outputs written when SIGTERM, SIGINT or SIGHUP ends the
 * program (signals.c).  Called by the composition root under its lock. */
#ifndef TSCOPE_LIFECYCLE_SIGNALS_H
#define TSCOPE_LIFECYCLE_SIGNALS_H

/* At init: the thread that finalizes on a signal, and the handlers for the
 * signals still at their default action. */
void tscope__signals_install(void);
/* At finalize: the default actions back (where our handler still is), the
 * thread stopped (unless finalize runs on it). */
void tscope__signals_remove(void);
/* In a forked child: the default actions back; the thread is not there. */
void tscope__signals_forget(void);

#endif
