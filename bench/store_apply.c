/* store_apply.c - the consumer's own cost: records applied straight to a
 * store on one thread (no rings, no other threads), in rounds of 16384
 * records as a busy consumer would see them.
 *
 * Variants: start_end (tscope_task_start/end pairs, the timer pattern),
 * create_begin_end (create, begin, end: explicitly created tasks) and
 * spawned (the bundled runtime's pattern: a round holds the create and
 * queued records of 8192 tasks from the spawning thread's ring, then their
 * begin and end records from a worker's ring) and taskwait (a parent that
 * creates two children and waits for them: OpenMP's fib and nqueens).
 * usage: store_apply [tasks (default 10000000)]
 */
#include <stdlib.h>

#include "bench.h"
#include "core/config.h"
#include "profile/store.h"

/* A store as the consumer has it, instance graph off. */
static struct tscope__store *new_store(void)
{
    struct tscope__config cfg;
    tscope__config_load(&cfg, NULL);
    cfg.instance_cap = 0;
    struct tscope__store *s = tscope__store_new(&cfg, 0);
    if (!s)
        exit(1);
    return s;
}

/* Ends the last rounds, checks that every task was counted, frees the
 * store; events per second since t0. */
static double finish(struct tscope__store *s, uint64_t tasks, uint64_t events, double t0)
{
    tscope__store_end_round(s);
    tscope__store_end_round(s);
    double secs = bench_now_s() - t0;
    if (s->types[1].calls != tasks) {
        fprintf(stderr, "store_apply: %llu calls, expected %llu\n",
                (unsigned long long)s->types[1].calls, (unsigned long long)tasks);
        exit(1);
    }
    tscope__store_free(s);
    return (double)events / secs;
}

/* Applies one record of task `id` (type 1), as written by thread `thread`. */
static void apply(struct tscope__store *s, uint32_t thread, uint64_t id, uint8_t kind, uint64_t *ts)
{
    struct tscope__rec r = {.ts = (*ts)++, .id = id, .type = 1, .kind = kind};
    tscope__store_apply(s, thread, &r, NULL);
}

static double run(uint64_t tasks, int created)
{
    struct tscope__store *s = new_store();
    uint64_t ts = 0, events = 0;
    double t0 = bench_now_s();
    for (uint64_t i = 1; i <= tasks; i++) {
        struct tscope__rec r = {.ts = ts++, .id = i, .type = 1};
        if (created) {
            r.kind = TSCOPE__REC_CREATE;
            tscope__store_apply(s, 0, &r, NULL);
            r.kind = TSCOPE__REC_BEGIN;
            r.ts = ts++;
            tscope__store_apply(s, 0, &r, NULL);
            events += 2;
        } else {
            /* as the consumer does: a START followed by its END is a leaf pair */
            struct tscope__rec e = r;
            r.kind = TSCOPE__REC_START;
            e.kind = TSCOPE__REC_END;
            e.ts = ts++;
            if (tscope__store_apply_leaf(s, 0, &r, &e)) {
                tscope__store_apply(s, 0, &r, NULL);
                tscope__store_apply(s, 0, &e, NULL);
            }
            events += 2;
        }
        if (created) {
            r.kind = TSCOPE__REC_END;
            r.ts = ts++;
            tscope__store_apply(s, 0, &r, NULL);
            events++;
        }
        if (i % 8192 == 0)
            tscope__store_end_round(s);
    }
    return finish(s, tasks, events, t0);
}

/* Explicit tasks that wait for their children, as OpenMP programs make
 * them (fib, nqueens): a parent created and begun, two children created, a
 * yield at the taskwait, the children begun and ended, the parent resumed
 * and ended, all on one thread; a round every 8192 parents.  Counted: the
 * children (type 1, so that finish() checks them) and the parents (type 2). */
static double run_taskwait(uint64_t parents)
{
    struct tscope__store *s = new_store();
    uint64_t ts = 0, events = 0;
    double t0 = bench_now_s();
    for (uint64_t i = 1; i <= parents; i++) {
        uint64_t p = 3 * i, c1 = p + 1, c2 = p + 2;
        struct tscope__rec r[] = {
            {.ts = ts + 0, .id = p, .type = 2, .kind = TSCOPE__REC_CREATE},
            {.ts = ts + 1, .id = p, .kind = TSCOPE__REC_BEGIN},
            {.ts = ts + 2, .id = c1, .arg = p, .type = 1, .kind = TSCOPE__REC_CREATE},
            {.ts = ts + 3, .id = c2, .arg = p, .type = 1, .kind = TSCOPE__REC_CREATE},
            {.ts = ts + 4, .id = p, .kind = TSCOPE__REC_YIELD},
            {.ts = ts + 5, .id = c1, .kind = TSCOPE__REC_BEGIN},
            {.ts = ts + 6, .id = c1, .kind = TSCOPE__REC_END},
            {.ts = ts + 7, .id = c2, .kind = TSCOPE__REC_BEGIN},
            {.ts = ts + 8, .id = c2, .kind = TSCOPE__REC_END},
            {.ts = ts + 9, .id = p, .kind = TSCOPE__REC_RESUME},
            {.ts = ts + 10, .id = p, .kind = TSCOPE__REC_END},
        };
        for (size_t k = 0; k < sizeof r / sizeof *r; k++)
            tscope__store_apply(s, 0, &r[k], NULL);
        ts += sizeof r / sizeof *r; /* (ts++ in the initializers: unsequenced) */
        events += sizeof r / sizeof *r;
        if (i % 8192 == 0)
            tscope__store_end_round(s);
    }
    return finish(s, 2 * parents, events, t0);
}

/* The runtime's pattern, in rounds of 8192 tasks. */
static double run_spawned(uint64_t tasks)
{
    struct tscope__store *s = new_store();
    uint64_t ts = 0, events = 0;
    double t0 = bench_now_s();
    for (uint64_t first = 1; first <= tasks; first += 8192) {
        uint64_t last = first + 8191 < tasks ? first + 8191 : tasks;
        for (uint64_t i = first; i <= last; i++) { /* the spawning thread's ring */
            apply(s, 0, i, TSCOPE__REC_CREATE, &ts);
            apply(s, 0, i, TSCOPE__REC_QUEUED, &ts);
        }
        for (uint64_t i = first; i <= last; i++) { /* a worker's ring */
            apply(s, 1, i, TSCOPE__REC_BEGIN, &ts);
            apply(s, 1, i, TSCOPE__REC_END, &ts);
        }
        events += 4 * (last - first + 1);
        tscope__store_end_round(s);
    }
    return finish(s, tasks, events, t0);
}

int main(int argc, char **argv)
{
    uint64_t tasks = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    bench_result("store_apply", "start_end", "events_per_s", run(tasks, 0), "events/s");
    bench_result("store_apply", "create_begin_end", "events_per_s", run(tasks, 1), "events/s");
    bench_result("store_apply", "spawned", "events_per_s", run_spawned(tasks), "events/s");
    bench_result("store_apply", "taskwait", "events_per_s", run_taskwait(tasks / 3), "events/s");
    return 0;
}
