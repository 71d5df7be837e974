/* contention.h - what the composition (compose.c) asks of a contention
 * table (contention.c): each factor of a component at one size. */
#ifndef TSCOPE_MODEL_CONTENTION_H
#define TSCOPE_MODEL_CONTENTION_H

#include "taskscope/model.h"

/* The component named name, or NULL (also when ct is NULL). */
const tscope_ccomp_t *tscope__contention_find(const tscope_contention_t *ct, const char *name);
/* Its slowdown next to co-runners whose demand on each probe's resource is
 * load[k] copies of probe k: per probe, the measured slowdowns interpolated
 * linearly in the copies (extrapolated past the last one), and the largest
 * of them (the resource the co-runners compete for most). */
double tscope__contention_slowdown(const tscope_ccomp_t *c, const double load[TSCOPE_NPROBES],
                                   double n);
double tscope__contention_demand(const tscope_ccomp_t *c, int probe, double n);
double tscope__contention_handover(const tscope_ccomp_t *c, double n);
double tscope__contention_writes(const tscope_ccomp_t *c, double n);

#endif
