/* tailcall.h - finding an OpenMP construct the compiler hid behind a tail
 * jump, for naming it (x86-64; elsewhere every lookup finds nothing).
 *
 * gcc -O2 ends a function whose last statement is `#pragma omp taskwait`
 * with `jmp GOMP_taskwait`: the runtime then reports the return address of
 * the function's caller (another task body, or the runtime that ran the
 * task), and the construct would be named after that place.  These lookups
 * read the program's code to find the jump itself.  Each runs once per
 * type (typecache.c caches the name), never per event. */
#ifndef TSCOPE_ADAPT_TAILCALL_H
#define TSCOPE_ADAPT_TAILCALL_H

/* The function gcc passes as the first argument of the call that returns to
 * ra, when it is an outlined body (FN._omp_fn.N: GOMP_task's, GOMP_parallel's
 * task or region); NULL otherwise. */
const void *tscope__tail_outlined(const void *ra);

/* The tail jump to a runtime entry whose name contains `word` ("taskwait",
 * "taskgroup", "barrier") in function fn or in a function fn tail-jumps
 * to (a few levels deep); NULL if none. */
const void *tscope__tail_site(const void *fn, const char *word);

/* When the call that returns to ra is a direct call to a function of the
 * program (not to the runtime entry itself), the tail jump to `word`
 * reached from that function (tscope__tail_site); NULL otherwise. */
const void *tscope__tail_behind_call(const void *ra, const char *word);

#endif
