/* hazard.h - the hazard bits of a local dependence edge (TSCOPE_HAZARD_*):
 * from and to the dependence API version 1 kinds, and as text.  Every
 * reader and writer of edges (store, shards, profile.json, traces, DOT,
 * the critical path) names hazards through here, so they agree. */
#ifndef TSCOPE_CORE_HAZARD_H
#define TSCOPE_CORE_HAZARD_H

#include <stdio.h>
#include <string.h>

#include "taskscope/taskscope.h"

/* A version 1 kind (TSCOPE_DEP_RAW..WAW) as bits; 0 if not one. */
static inline unsigned tscope__hazard_bits(int kind)
{
    return kind >= TSCOPE_DEP_RAW && kind <= TSCOPE_DEP_WAW ? 1u << (kind - 1) : 0;
}

/* The first ordering hazard of bits as a version 1 kind (0: none). */
static inline int tscope__hazard_kind(unsigned bits)
{
    return (bits & TSCOPE_HAZARD_RAW)   ? TSCOPE_DEP_RAW
           : (bits & TSCOPE_HAZARD_WAR) ? TSCOPE_DEP_WAR
           : (bits & TSCOPE_HAZARD_WAW) ? TSCOPE_DEP_WAW
                                        : 0;
}

#define TSCOPE__HAZARD_NAMES 4
static const char *const tscope__hazard_names[TSCOPE__HAZARD_NAMES] = {"RAW", "WAR", "WAW",
                                                                       "mutex"};

/* "RAW+WAW", "mutex", ... ("none" for 0); buf of at least 24 bytes. */
static inline const char *tscope__hazard_text(unsigned bits, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < TSCOPE__HAZARD_NAMES; i++)
        if (bits & (1u << i))
            at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? "+" : "",
                                   tscope__hazard_names[i]);
    return at ? buf : "none";
}

#endif
