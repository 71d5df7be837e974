/* palette.h - the colours of the task types in every picture of a run
 * (concurrency.gp, scatter.gp, the trace's timeline.gp), assigned by one
 * rule in one place, and the placement of the pictures' legends.
 *
 * The rule: the types are ranked by their self time over the whole run
 * (largest first, ties by type id).  The first TSCOPE__PALETTE_OWN of them
 * have a colour of their own: a type doing work the work colour of its rank
 * (tscope__palette_work[rank]), a waiting type (TSCOPE_TYPE_WAIT: taskwait,
 * taskgroup, barriers, MPI waits) the next grey of tscope__palette_wait in
 * the order of the waits' ranks.  The rest are grouped: work as "other"
 * (TSCOPE__PALETTE_OTHER), waits as "other waiting" (also the waits ranked
 * below the last grey).  A type's work colour depends on its rank alone, so
 * a picture that cannot tell waits apart (a trace carries no type marks)
 * still gives every work type the colour the other pictures give it.
 * docs/output-formats.md ("Colours") states the same for other readers.
 */
#ifndef TSCOPE_EXPORT_PALETTE_H
#define TSCOPE_EXPORT_PALETTE_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

#define TSCOPE__PALETTE_OWN 12  /* types with a colour of their own */
#define TSCOPE__PALETTE_GREYS 4 /* waiting types with a grey of their own */
#define TSCOPE__PALETTE_OTHER "#8C564B"
#define TSCOPE__PALETTE_OTHER_WAIT "#DEDEDE"

extern const char *const tscope__palette_work[TSCOPE__PALETTE_OWN];
extern const char *const tscope__palette_wait[TSCOPE__PALETTE_GREYS];

enum tscope__colour_group {
    TSCOPE__COLOUR_NONE = -1,      /* not a type of the run */
    TSCOPE__COLOUR_OWN = 0,        /* its own colour */
    TSCOPE__COLOUR_OTHER = 1,      /* grouped as "other" */
    TSCOPE__COLOUR_OTHER_WAIT = 2, /* grouped as "other waiting" */
};

struct tscope__colour {
    const char *rgb; /* "#RRGGBB"; NULL for TSCOPE__COLOUR_NONE */
    int group;       /* enum tscope__colour_group */
    int wait;        /* a waiting type */
    uint32_t rank;   /* by self time, 0 = largest */
};

/* The colours of type ids 0 .. n-1: self[id] their self time (negative: not
 * a type of the run), wait[id] nonzero for a waiting type (wait may be
 * NULL: none known).  out has n entries.  Returns 0 or TSCOPE_ENOMEM. */
int tscope__palette_assign(const double *self, const unsigned char *wait, uint32_t n,
                           struct tscope__colour *out);
/* The colours of a profile's types, by type id (*n entries: every id the
 * types, the timeline rows and the duration sample name); the self time of
 * a type the profile lists but for its timeline row (untyped time) is that
 * row's.  NULL on memory exhaustion; free() it. */
struct tscope__colour *tscope__palette_of_profile(const struct tscope__profile *p, uint32_t *n);

/* A legend below the plot, in columns, that takes at most a quarter of the
 * picture: entries titles of at most `longest` characters in a picture
 * `width` pixels wide.  Writes the `set key` line (and a comment saying
 * the bound) to f; returns the picture's height: at least min_height, and
 * at least four times the legend's. */
unsigned tscope__palette_key(FILE *f, unsigned entries, size_t longest, unsigned width,
                             unsigned min_height);

/* A title for a gnuplot string in single quotes ('' for a quote). */
void tscope__palette_put_title(FILE *f, const char *name);

#endif
