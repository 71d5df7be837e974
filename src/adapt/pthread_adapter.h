/* pthread_adapter.h - what the pthread adapter's files share. */
#ifndef TSCOPE_ADAPT_PTHREAD_ADAPTER_H
#define TSCOPE_ADAPT_PTHREAD_ADAPTER_H

#include <stdint.h>

#include "taskscope/taskscope.h"

/* The task running on the calling thread: NULL on threads that are not the
 * program's (taskscope's own), or before the adapter started. */
tscope_task_t *tscope__pthread_current(void);

/* Reads TASKSCOPE_PTHREAD_WAITS (one warning line for a bad value) and
 * finds the real lock and wait functions (pthread_waits.c). */
void tscope__pthread_waits_init(void);

#endif
