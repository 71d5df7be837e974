/* endings.c - a measured program that ends in the ways test_cli.sh checks
 * `taskscope run` against:
 *   endings exit3   runs 5 tasks, then _exit(3) (no atexit handlers)
 *   endings segv    runs 5 tasks, begins a sixth, and writes to address 8
 *   endings abort   runs 5 tasks, begins a sixth, and calls abort()
 *   endings term    prints "ready", runs a task every millisecond until SIGTERM
 *                   (a handler), then prints "stopped after N tasks" and returns 0
 *   endings hang    runs 3 tasks, prints "ready", then waits for a signal
 *                   without a handler of its own */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <taskscope/taskscope.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    tscope_type_t t;
    if (argc < 2 || tscope_init(0, 1) || tscope_type_register("tick", &t))
        return 1;
    uint64_t n = 0;
    if (strcmp(argv[1], "exit3") == 0) {
        for (n = 1; n <= 5; n++) {
            tscope_task_start(n, t);
            tscope_task_end(n);
        }
        _exit(3);
    }
    if (strcmp(argv[1], "segv") == 0 || strcmp(argv[1], "abort") == 0) {
        for (n = 1; n <= 5; n++) {
            tscope_task_start(n, t);
            tscope_task_end(n);
        }
        tscope_task_start(n, t); /* running when the program dies */
        if (strcmp(argv[1], "abort") == 0)
            abort();
        /* a real fault, at an address that is not NULL (UBSan would stop a
         * NULL load itself) */
        volatile int *volatile nowhere = (volatile int *)(uintptr_t)8;
        *nowhere = 1;
        return 1;
    }
    if (strcmp(argv[1], "term") == 0) {
        signal(SIGTERM, on_term);
        printf("ready\n");
        fflush(stdout);
        struct timespec ms = {0, 1000000};
        while (!stop) {
            n++;
            tscope_task_start(n, t);
            nanosleep(&ms, NULL);
            tscope_task_end(n);
        }
        printf("stopped after %llu tasks\n", (unsigned long long)n);
        return 0;
    }
    if (strcmp(argv[1], "hang") == 0) {
        for (n = 1; n <= 3; n++) {
            tscope_task_start(n, t);
            tscope_task_end(n);
        }
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    return 1;
}
