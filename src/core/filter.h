/* filter.h - the filter file (TASKSCOPE_FILTER_FILE, `taskscope run
 * --filter`): which task types are measured at all (docs/filter.md).
 *
 * A filter is an ordered list of include and exclude rules on type names
 * and on the source file in a type's name ("fib (fib.c:17)": fib.c), with
 * the wildcards of fnmatch(3); the last rule that matches a type decides,
 * a type no rule matches is measured.  The decision is made once per type,
 * when the type is registered (or when the filter is installed at
 * tscope_init, for the types registered before it), and kept as one byte
 * per type id that the task create and start on handles test
 * (tscope__type_excluded): an excluded type's tasks get no handle.
 */
#ifndef TSCOPE_CORE_FILTER_H
#define TSCOPE_CORE_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record.h"

struct tscope__filter;

/* Reads and parses the filter file at path: 0 and *out (free it with
 * tscope__filter_free), or -1 with one line in err ("PATH:LINE: what",
 * or "PATH: why" when it cannot be read), *out NULL. */
int tscope__filter_parse(const char *path, struct tscope__filter **out, char *err, size_t len);
void tscope__filter_free(struct tscope__filter *f);
/* 1 when f excludes the task type of this name, else 0. */
int tscope__filter_excludes(const struct tscope__filter *f, const char *type_name);
/* The number of rules in f. */
size_t tscope__filter_rules(const struct tscope__filter *f);

/* excluded[type]: 1 when the filter in force excludes that type's tasks
 * (written at registration under the type table's lock, before the id is
 * handed out; read with a relaxed load on the hot path). */
extern uint8_t tscope__type_excluded[TSCOPE__MAX_IDS + 1];

static inline int tscope__excluded(uint32_t type)
{
    return type <= TSCOPE__MAX_IDS &&
           __atomic_load_n(&tscope__type_excluded[type], __ATOMIC_RELAXED);
}

/* Puts the filter file at path in force (tscope_init; "" none): the types
 * registered so far are decided at once, later ones at their registration.
 * A file that cannot be read or parsed is one warning on `warn` and no
 * filter (everything measured).  Returns 1 when a filter is in force. */
int tscope__filter_install(const char *path, FILE *warn);
/* Decides type id of this name under the filter in force (registration). */
void tscope__filter_decide(uint32_t id, const char *name);
/* 1 when a filter file is in force (the outputs then count what it left out). */
int tscope__filter_active(void);

#endif
