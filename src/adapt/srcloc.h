/* srcloc.h - code addresses -> "function (file:line)" for the adapters.
 *
 * Used once per distinct address (the adapters cache the result as a task
 * type), never per event.  Thread-safe (one lock inside). */
#ifndef TSCOPE_ADAPT_SRCLOC_H
#define TSCOPE_ADAPT_SRCLOC_H

#include <stddef.h>
#include <stdint.h>

/* Writes a readable name of the code at addr into buf: "function
 * (file.c:line)" from debug information when present (libdw), the symbol
 * ("function") otherwise, and "module+0xoffset" as the last resort.  When
 * addr is a return address (ret != 0), the call instruction before it is
 * described.  Always writes a NUL-terminated string. */
void tscope__srcloc(const void *addr, int ret, char *buf, size_t len);

/* The function symbol that contains addr: its start, size and name; 0, or
 * -1 when no function symbol covers addr (libdw's full symbol table, else
 * the dynamic symbols dladdr1 sees). */
int tscope__srcloc_symbol(const void *addr, uintptr_t *start, size_t *size, char *name, size_t len);

/* 1 when addr lies in the same loaded object as `in`, else 0. */
int tscope__srcloc_same_object(const void *addr, const void *in);

#endif
