/* exit.h - what exit.c needs from init: the pid that initialised. */
#ifndef TSCOPE_LIFECYCLE_EXIT_H
#define TSCOPE_LIFECYCLE_EXIT_H

extern _Atomic long tscope__init_pid;

#endif
