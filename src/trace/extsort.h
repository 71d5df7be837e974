/* extsort.h - an external merge sort of fixed-size records, for writers
 * whose output must be in an order their input does not come in (the
 * Paraver writer: records by time, arriving per thread and late).
 *
 * Records are added one by one into a buffer of run_records; a full
 * buffer is sorted (qsort) and appended as a run to a temporary file
 * (the caller names it).  tscope__extsort_each then merges the runs and the
 * buffer (a k-way merge on a heap, `ways` runs at a time; with more runs,
 * passes through a second temporary file first) and hands every record to put in
 * order.  cmp must be a total order (no two records equal: the caller
 * makes the key unique, e.g. with an emission number), so the output does
 * not depend on where runs were cut.  Memory: the buffer (plus qsort's
 * scratch) and the merge's read buffers (ways x 1024 records).  Temporary
 * files are made only when the buffer fills up, and removed by
 * tscope__extsort_free. */
#ifndef TSCOPE_TRACE_EXTSORT_H
#define TSCOPE_TRACE_EXTSORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TSCOPE__EXTSORT_WAYS_MAX 64u

struct tscope__extsort_run {
    uint64_t off, n; /* in records, in the run file */
};

struct tscope__extsort {
    size_t size; /* of a record, in bytes */
    int (*cmp)(const void *a, const void *b);
    char *buf; /* cap records */
    uint32_t n, cap, ways;
    struct tscope__extsort_run *runs;
    uint32_t nruns, capruns;
    FILE *runfile, *mergefile; /* opened at the first spill */
    char *runpath, *mergepath;
    /* the first failure: errno and the file it concerns (NULL: memory) */
    int failed, err_no;
    const char *err_path;
};

/* Prepares s for records of `size` bytes ordered by cmp, the temporary
 * files at runpath and mergepath (made only when needed); run_records and
 * ways (2..TSCOPE__EXTSORT_WAYS_MAX) bound memory.  0, or -1 out of memory
 * (s can be freed). */
int tscope__extsort_init(struct tscope__extsort *s, size_t size,
                         int (*cmp)(const void *a, const void *b), uint32_t run_records,
                         uint32_t ways, const char *runpath, const char *mergepath);
/* Keeps a copy of rec; 0, or -1 (s->failed says why). */
int tscope__extsort_add(struct tscope__extsort *s, const void *rec);
/* Every record kept, in cmp's order, to put(ctx, rec) (which returns 0, or
 * -1 to stop).  0; -1 when put stopped (s->failed 0) or sorting failed
 * (s->failed set). */
int tscope__extsort_each(struct tscope__extsort *s, int (*put)(void *ctx, const void *rec),
                         void *ctx);
/* Frees s and removes its temporary files. */
void tscope__extsort_free(struct tscope__extsort *s);

#endif
