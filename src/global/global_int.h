/* global_int.h - what the files of src/global share: the all-or-nothing
 * agreement, the broadcast of a blob and the gather of variable-length
 * blobs over the transport (global.c), the remote dependencies (rdeps.c). */
#ifndef TSCOPE_GLOBAL_GLOBAL_INT_H
#define TSCOPE_GLOBAL_GLOBAL_INT_H

#include <stdint.h>

#include "global.h"

/* 1 when every rank's ok is 1 (a minimum at rank 0, broadcast): the ranks
 * then all go on, or all stop, so that no collective is left waiting. */
int tscope__global_all_ok(const tscope_comm_t *c, int ok);
/* Rank 0's blob of *len bytes to every rank (*blob allocated there). */
int tscope__global_bcast_blob(const tscope_comm_t *c, char **blob, uint64_t *len);
/* Gathers each rank's blob (len bytes) to rank 0: *all (allocated there)
 * holds them in rank order, (*at)[i] where rank i's starts, *total the sum
 * (the lengths gathered first).  0, or -1 on every rank together. */
int tscope__global_gather_blobs(const tscope_comm_t *c, const void *blob, uint64_t len, char **all,
                                size_t **at, size_t *total);

/* g->rdeps: the remote dependencies of the ranks' profiles, named by type;
 * offline from every profile (ps[r] NULL: rank r missing), or in the run
 * over c, where rank 0's g receives them (the others may pass any g).
 * 0, or -1 (out of memory, a collective failed: on every rank together). */
int tscope__global_rdeps_merge(struct tscope__pglobal *g, struct tscope__profile *const *ps,
                               int nranks);
int tscope__global_rdeps_run(const tscope_comm_t *c, const struct tscope__profile *p,
                             struct tscope__pglobal *g);

#endif
