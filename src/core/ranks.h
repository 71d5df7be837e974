/* ranks.h - the job this process belongs to (ranks.c; the rank itself is
 * the public tscope_rank_from_env). */
#ifndef TSCOPE_CORE_RANKS_H
#define TSCOPE_CORE_RANKS_H

#include <stddef.h>

/* A name shared by the ranks of one job and by no other job running now
 * (the launcher's job id; the parent process as the last resort). */
void tscope__job_id(char *buf, size_t len);

#endif
