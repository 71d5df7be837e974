/* kmpdeps.c - inoutset and omp_all_memory as a newer compiler passes them
 * to libomp (clang 14 and gcc 12 cannot spell them): tasks made through
 * libomp's own entry points (__kmpc_omp_task_alloc and
 * __kmpc_omp_task_with_deps with the compiler's kmp_depend_info flags: in 1,
 * out 2, mtx 4, set 8, all 0x80), for test_adapters.sh.  libomp 14 reports
 * them to the tools interface as clang 16 emits them: inoutset on x, and
 * omp_all_memory (base address 0, flag all) as an inoutset on NULL; the
 * last one passes address ~0, which the runtime reports too.  Tasks, in
 * creation order, and the edges expected:
 *   1 out x          2 inoutset x (1->2)   3 inoutset x (1->3)
 *   4 in x (2->4, 3->4)   5 omp_all_memory (4->5)   6 in y (5->6)
 *   7 omp_all_memory at ~0 (6->7)   8 in x (7->8) */
#include <stdint.h>
#include <stdio.h>

typedef struct {
    int reserved_1, flags, reserved_2, reserved_3;
    const char *psource;
} ident_t;

typedef struct {
    intptr_t base_addr;
    size_t len;
    unsigned char flags;
} kmp_depend_info_t;

typedef struct kmp_task {
    void *shareds;
    int (*routine)(int, struct kmp_task *);
    int part_id;
} kmp_task_t;

extern int __kmpc_global_thread_num(ident_t *);
extern kmp_task_t *__kmpc_omp_task_alloc(ident_t *, int, int, size_t, size_t,
                                         int (*)(int, kmp_task_t *));
extern int __kmpc_omp_task_with_deps(ident_t *, int, kmp_task_t *, int, kmp_depend_info_t *, int,
                                     kmp_depend_info_t *);

static ident_t loc = {0, 2, 0, 0, ";kmpdeps.c;main;1;1;;"};
static volatile long sink;

static int body(int gtid, kmp_task_t *task)
{
    sink += gtid + (task != NULL);
    return 0;
}

static void task(unsigned char flags, intptr_t addr)
{
    int gtid = __kmpc_global_thread_num(&loc);
    kmp_task_t *t = __kmpc_omp_task_alloc(&loc, gtid, 1, sizeof(kmp_task_t) + 64, 0, body);
    kmp_depend_info_t dep = {addr, sizeof(int), flags};
    __kmpc_omp_task_with_deps(&loc, gtid, t, 1, &dep, 0, NULL);
}

int main(void)
{
    int x = 0, y = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        task(2, (intptr_t)&x);
        task(8, (intptr_t)&x);
        task(8, (intptr_t)&x);
        task(1, (intptr_t)&x);
        task(0x80, 0);
        task(1, (intptr_t)&y);
        task(0x80, (intptr_t) ~(uintptr_t)0);
        task(1, (intptr_t)&x);
    }
    printf("kmpdeps 8 tasks\n");
    return 0;
}
