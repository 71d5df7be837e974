/* persist.h - the profile store saved as bytes and loaded back (persist.c),
 * for the crash journal and its recovery. */
#ifndef TSCOPE_PROFILE_PERSIST_H
#define TSCOPE_PROFILE_PERSIST_H

#include <stdio.h>

struct tscope__store;

/* Writes the store (lock held by the caller, or no other user).  0 or -1
 * (errno from the stream). */
int tscope__store_save(struct tscope__store *s, FILE *f);
/* Reads a store written by tscope__store_save of the same build.  NULL with
 * *why set (a static phrase) when the bytes are short, corrupt, from another
 * build, or memory runs out. */
struct tscope__store *tscope__store_load(FILE *f, const char **why);

#endif
