/* namecache.h - source locations found by earlier runs of the same build
 * (namecache.c), so that srcloc.c need not load libdw again.  Called under
 * srcloc.c's lock. */
#ifndef TSCOPE_ADAPT_NAMECACHE_H
#define TSCOPE_ADAPT_NAMECACHE_H

#include <stddef.h>
#include <stdint.h>

/* 1 and pc's name in buf when an earlier run (or this one) resolved it;
 * 0 when the cache does not know it. */
int tscope__namecache_get(uintptr_t pc, char *buf, size_t len);
/* Keeps name (one resolved with its source line) for pc, for this process
 * and the next runs of the same build. */
void tscope__namecache_put(uintptr_t pc, const char *name);
/* The checksum of a cache line (its offset and name). */
uint32_t tscope__namecache_sum(uint64_t off, const char *name);
/* Forgets what this process read and resolved (the tests: the next get
 * reads the file again). */
void tscope__namecache_forget(void);

#endif
