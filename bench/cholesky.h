/* cholesky.h - the blocked Cholesky benchmark (built with OpenBLAS). */
#ifndef TSCOPE_BENCH_CHOLESKY_H
#define TSCOPE_BENCH_CHOLESKY_H

/* Factorises an n x n SPD matrix in bs x bs tiles as runtime tasks and
 * checks the result against LAPACKE_dpotrf.  Returns 0 if it matches. */
int cholesky_run(int n, int bs);

#endif
