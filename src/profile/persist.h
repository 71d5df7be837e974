/* persist.h - the profile store saved as bytes and loaded back (persist.c),
 * for the crash journal and its recovery. */
#ifndef TSCOPE_PROFILE_PERSIST_H
#define TSCOPE_PROFILE_PERSIST_H

#include <stdint.h>
#include <stdio.h>

struct tscope__store;

/* The parts of a store that grow, the instance graph and the list of
 * dependencies (up to 100,000 entries each, most of a large store): kept
 * in an appendix file where each entry is written once, instead of in every
 * saved state.  Instances the cap drops later stay in the appendix (the
 * state's depth limit leaves them out on load) and the record each leaves
 * is appended too; an instance whose count of left-out descendants grows is
 * appended again as an update.  f is the
 * appendix, open for appending; deps_done the dependencies it holds already
 * (the store counts its instances: inst_saved, inst_appended). */
struct tscope__appendix {
    FILE *f;
    uint64_t deps_done;
};

/* Writes the store (lock held by the caller, or no other user); with ax,
 * appends the new instances and dependencies to ax->f first (flushed) and
 * leaves them out of f.  0 or -1 (errno from the stream). */
int tscope__store_save(struct tscope__store *s, FILE *f, struct tscope__appendix *ax);
/* Reads a store written by tscope__store_save of the same build, with the
 * appendix file it was saved with (NULL if none).  NULL with *why set (a
 * static phrase) when the bytes are short, corrupt, from another build, the
 * appendix is missing, or memory runs out. */
struct tscope__store *tscope__store_load(FILE *f, FILE *appendix, const char **why);

#endif
