/* critpath.h - the critical path of a profile's instance graph: the longest
 * path through its tasks (creation, dependence and join edges) weighted by
 * work, where waits weigh nothing.  Computed on an immutable profile
 * (profile.h), so profile.json's writer and `taskscope report --deps` give
 * the same path; critpath.c has the model and its approximations.
 */
#ifndef TSCOPE_PROFILE_CRITPATH_H
#define TSCOPE_PROFILE_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* How the next step of a path follows from a step. */
enum tscope__cplink {
    TSCOPE__CP_END,     /* the last step */
    TSCOPE__CP_CREATED, /* the step's task (or construct) created the next one */
    TSCOPE__CP_DEP,     /* the next task depends on it (a p->deps edge) */
    TSCOPE__CP_JOINED,  /* the next step continues a task that waited for it */
    TSCOPE__CP_BARRIER  /* the next step continues a task of its team after a
                           barrier the step's task reached last */
};

/* One step: the stretch [from, to] (ns) of one task and the work it did
 * there, and why the next step follows ("created", "joined", the hazards of
 * a dependence edge; "" on the last step). */
struct tscope__cpstep {
    uint64_t id;   /* the task's id */
    uint32_t type; /* its type id */
    uint32_t task; /* its index in p->tasks (UINT32_MAX: read from a file) */
    int link;      /* enum tscope__cplink */
    double from, to, work;
    char why[48];
};

struct tscope__critpath {
    struct tscope__cpstep *steps; /* first to last */
    uint32_t nsteps;
    double length;          /* the work on the path (ns): the span */
    double work;            /* the work of every ended task (ns) */
    uint32_t tasks;         /* the tasks it was looked for among (ended, begun) */
    uint64_t tasks_cut_off; /* tasks the instance graph's cap left out */
    int waits_marked;       /* some type of the profile has TSCOPE_TYPE_WAIT */
    uint64_t steps_cut;     /* read from a file: the earlier steps it did not keep */
};

/* profile.json keeps the last this many steps of a path. */
#define TSCOPE__CP_STEPS_KEPT 10000u

/* Finds the critical path of p's instance graph into *out (nsteps 0 when no
 * task ended; p->path, a path read from a file, when p has no tasks).  0, or TSCOPE_ENOMEM (then
 * *out holds nothing to free). Free with tscope__critpath_free.  Cost: O((tasks + edges) log
 * tasks). */
int tscope__critpath_find(const struct tscope__profile *p, struct tscope__critpath *out);
void tscope__critpath_free(struct tscope__critpath *cp);

/* Whether a dependence edge orders its tasks (a predecessor on a path). */
int tscope__critpath_orders(const struct tscope__pdep *d);

/* The work on the path per type: work[i] for p->types[i] (the caller's
 * array of p->ntypes), plus what tasks of types p does not list had. */
double tscope__critpath_by_type(const struct tscope__profile *p, const struct tscope__critpath *cp,
                                double *work);

#endif
