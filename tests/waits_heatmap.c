/* waits_heatmap.c - one thread computes while another waits, for
 * tests/test_waits.sh: the main thread runs a work task ("compute") that
 * spins 300 ms; a second thread runs a work task ("waiter") with a task of
 * a waiting type (TSCOPE_TYPE_WAIT, "wait-for-compute", as a taskwait or
 * an MPI_Recv is) nested in it until the computation is done.  The
 * computing thread uses task handles, the waiting one task ids, so both
 * ways to the profile are drawn. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include <taskscope/taskscope.h>

static tscope_type_t compute, waiter, waiting;
static atomic_int done;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void *wait_for_it(void *arg)
{
    (void)arg;
    uint64_t outer = tscope_task_id_next(), inner = tscope_task_id_next();
    tscope_task_start(outer, waiter);
    tscope_task_start(inner, waiting);
    while (!atomic_load(&done)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    tscope_task_end(inner);
    tscope_task_end(outer);
    return NULL;
}

int main(void)
{
    if (tscope_init(0, 1) || tscope_type_register("compute", &compute) ||
        tscope_type_register("waiter", &waiter) ||
        tscope_type_register("wait-for-compute", &waiting) ||
        tscope_type_set_attrs(waiting, TSCOPE_TYPE_WAIT))
        return 1;
    pthread_t other;
    if (pthread_create(&other, NULL, wait_for_it, NULL))
        return 1;
    tscope_task_t *h = tscope_task_start_h(tscope_task_id_next(), compute);
    volatile double x = 0;
    for (double end = now_ms() + 300; now_ms() < end;)
        x += 1;
    (void)x;
    tscope_task_end_h(h);
    atomic_store(&done, 1);
    pthread_join(other, NULL);
    printf("done\n");
    return tscope_finalize() ? 1 : 0;
}
