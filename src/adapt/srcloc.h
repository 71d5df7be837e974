/* srcloc.h - code addresses -> "function (file:line)" for the adapters.
 *
 * Used once per distinct address (the adapters cache the result as a task
 * type), never per event.  Thread-safe (one lock inside). */
#ifndef TSCOPE_ADAPT_SRCLOC_H
#define TSCOPE_ADAPT_SRCLOC_H

#include <stddef.h>

/* Writes a readable name of the code at addr into buf: "function
 * (file.c:line)" from debug information when present (libdw), the symbol
 * ("function") otherwise, and "module+0xoffset" as the last resort.  When
 * addr is a return address (ret != 0), the call instruction before it is
 * described.  Always writes a NUL-terminated string. */
void tscope__srcloc(const void *addr, int ret, char *buf, size_t len);

/* 1 when addr lies in the same loaded object as `in`, else 0. */
int tscope__srcloc_same_object(const void *addr, const void *in);

#endif
