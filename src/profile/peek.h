/* peek.h - a read-only look into a process's mapping, while it runs or
 * after it died (taskscope top): per task type the counts and self time
 * summed over its threads, per thread its events and the type it runs now,
 * and the names.  While the process runs, the self time also holds what
 * the tasks running now (on each thread's stack) ran so far, read from the
 * owners' stacks without a version: a look may be off by what a thread
 * did meanwhile, never by more than the run's time (such values are left
 * out).  The process does nothing for it: the file is mapped
 * read-only, every entry read under its version (a torn one is left for
 * the next look), the header and each name checked against their sums.
 */
#ifndef TSCOPE_PROFILE_PEEK_H
#define TSCOPE_PROFILE_PEEK_H

#include <stddef.h>
#include <stdint.h>

#include "shard.h"

struct tscope__peek_type {
    uint64_t created, calls, cancelled;
    uint64_t self; /* ticks: the ended tasks', and the running ones' so far */
};

struct tscope__peek_thread {
    uint32_t slot;
    char name[32];  /* its thread's name ("" when its slot is not in the file) */
    uint32_t top;   /* the type running on top of its stack + 1; 0: idle */
    uint32_t shard; /* it aggregated tasks (taskscope's own threads never do) */
    uint64_t events, calls;
    uint64_t self; /* ticks */
};

struct tscope__peek {
    struct tscope__shfile head; /* a copy of the file's header */
    uint32_t ntypes;            /* types[id], names[id] (NULL: not in the file) for id < ntypes */
    struct tscope__peek_type *types;
    char **names;
    uint32_t nthreads;
    struct tscope__peek_thread *threads;
    uint64_t busy;    /* entries being written as they were read: in the next look */
    uint64_t damaged; /* bytes of blocks or names that are not whole (torn, overwritten) */
    uint64_t bytes;   /* the file's size */
};

/* Reads the mapping at path into *p.  Returns 0, or -1 with a reason
 * in why ("not a taskscope mapping", "its header is damaged", ...). */
int tscope__peek(const char *path, struct tscope__peek *p, char *why, size_t len);
void tscope__peek_free(struct tscope__peek *p);

#endif
