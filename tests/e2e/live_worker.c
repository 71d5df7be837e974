/* live_worker.c - the measured program of tests/test_dashboard_e2e.sh: keeps
 * taskscope's task runtime busy for a while so that a dashboard has a
 * process to stream (TASKSCOPE_LIVE), with the runtime's parameters
 * (rt.thread_cap, rt.schedule) to set from the page.
 *
 * Rounds of recursive tasks ("split" spawns two children down to "leaf"
 * tasks that spin for about 50 us) run until SECONDS have passed or SIGTERM
 * or SIGINT arrives; the main thread waits for each in a task of a
 * waiting type ("round wait", TSCOPE_TYPE_WAIT: grey on the page).
 * Between rounds the main thread reads the thread cap and prints
 * "live_worker: rt.thread_cap = N" when it changed (and once at the
 * start): the program's own word that a control from the page took
 * effect.
 *
 * usage: live_worker [seconds (default 60)] [threads (default 2)]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <taskscope/rt.h>
#include <taskscope/taskscope.h>

static tscope_type_t t_split, t_leaf, t_wait;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void leaf(void *arg)
{
    (void)arg;
    double end = now() + 50e-6;
    while (now() < end)
        ;
}

static void split(void *arg)
{
    unsigned depth = (unsigned)(size_t)arg;
    tscope_rt_spawn_opts_t o = {sizeof o, t_split, 0, TSCOPE_TASK_SPLITTABLE, depth + 1, NULL, 0};
    if (depth >= 6) {
        o.type = t_leaf;
        o.flags = TSCOPE_TASK_PROCESSABLE;
        for (int k = 0; k < 4; k++)
            tscope_rt_spawn(leaf, NULL, &o, NULL);
    } else {
        for (int k = 0; k < 2; k++)
            tscope_rt_spawn(split, (void *)(size_t)(depth + 1), &o, NULL);
    }
    tscope_rt_taskwait();
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (seconds <= 0 || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: live_worker [seconds > 0] [threads 1..256]\n");
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int rc = tscope_init(0, 1);
    if (rc)
        fprintf(stderr, "live_worker: tscope_init: %s (running unmeasured)\n", tscope_strerror(rc));
    tscope_type_register("split", &t_split);
    tscope_type_register("leaf", &t_leaf);
    /* the main thread's wait for each round: a waiting type (grey on the page) */
    if (tscope_type_register("round wait", &t_wait) == 0)
        tscope_type_set_attrs(t_wait, TSCOPE_TYPE_WAIT);
    if (tscope_rt_init((unsigned)threads)) {
        fprintf(stderr, "live_worker: cannot start the runtime\n");
        return 1;
    }
    unsigned shown = 0;
    unsigned long rounds = 0;
    double end = now() + seconds;
    tscope_rt_spawn_opts_t o = {sizeof o, t_split, 0, TSCOPE_TASK_SPLITTABLE, 0, NULL, 0};
    while (!stop && now() < end) {
        unsigned cap = tscope_rt_thread_cap();
        if (cap != shown) {
            printf("live_worker: rt.thread_cap = %u\n", cap);
            fflush(stdout);
            shown = cap;
        }
        tscope_rt_spawn(split, (void *)(size_t)0, &o, NULL);
        tscope_task_t *w = t_wait ? tscope_task_start_h(tscope_task_id_next(), t_wait) : NULL;
        tscope_rt_taskwait();
        if (w)
            tscope_task_end_h(w);
        rounds++;
    }
    tscope_rt_finalize();
    printf("live_worker: %lu rounds\n", rounds);
    tscope_finalize();
    return 0;
}
