/* pictures_types.c - a run with 20 task types doing work and 2 waiting
 * (TSCOPE_TYPE_WAIT) for tests/test_pictures.sh: work type k ("work-KK")
 * computes (k + 1) ms in 4 tasks, on the main thread and on a
 * second one alike; the two waiting types ("wait-taskwait", "wait-barrier")
 * are nested in a work task as a taskwait is and take 100 and 80 ms, so they
 * rank among the largest types by self time (a spin the machine preempts
 * lasts longer: test_pictures.sh ranks the types as types.csv has them). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <taskscope/taskscope.h>

#define WORK_TYPES 20
#define TASKS_PER_TYPE 4

static tscope_type_t work[WORK_TYPES], waits[2];
static atomic_uint_fast64_t next_id;

static void spin(double ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6 < ms);
}

/* One thread's share: every work type's tasks, then a work task with a
 * waiting task nested in it per waiting type. */
static void *share(void *arg)
{
    (void)arg;
    for (int k = 0; k < WORK_TYPES; k++)
        for (int i = 0; i < TASKS_PER_TYPE; i++) {
            uint64_t id = atomic_fetch_add(&next_id, 1) + 1;
            tscope_task_start(id, work[k]);
            spin((k + 1) * 1.0 / TASKS_PER_TYPE * (0.7 + 0.2 * i));
            tscope_task_end(id);
        }
    for (int w = 0; w < 2; w++) {
        uint64_t outer = atomic_fetch_add(&next_id, 1) + 1;
        tscope_task_start(outer, work[0]);
        uint64_t id = atomic_fetch_add(&next_id, 1) + 1;
        tscope_task_start(id, waits[w]);
        spin(w ? 80 : 100);
        tscope_task_end(id);
        tscope_task_end(outer);
    }
    return NULL;
}

int main(void)
{
    if (tscope_init(0, 1))
        return 1;
    char name[32];
    for (int k = 0; k < WORK_TYPES; k++) {
        snprintf(name, sizeof name, "work-%02d", k);
        if (tscope_type_register(name, &work[k]))
            return 1;
    }
    if (tscope_type_register("wait-taskwait", &waits[0]) ||
        tscope_type_register("wait-barrier", &waits[1]) ||
        tscope_type_set_attrs(waits[0], TSCOPE_TYPE_WAIT) ||
        tscope_type_set_attrs(waits[1], TSCOPE_TYPE_WAIT | TSCOPE_TYPE_BARRIER))
        return 1;
    pthread_t other;
    if (pthread_create(&other, NULL, share, NULL))
        return 1;
    share(NULL);
    pthread_join(other, NULL);
    return tscope_finalize() ? 1 : 0;
}
