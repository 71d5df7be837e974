/* endings.c - a measured program that ends in the ways test_cli.sh checks
 * `taskscope run` against:
 *   endings exit3   runs 5 tasks, then _exit(3) (no atexit handlers)
 *   endings segv    runs 5 tasks, begins a sixth, and writes to address 8
 *   endings abort   runs 5 tasks, begins a sixth, and calls abort()
 *   endings term    prints "ready", runs a task every millisecond until SIGTERM
 *                   (a handler), then prints "stopped after N tasks" and returns 0
 *   endings hang    runs 3 tasks, prints "ready", then waits for a signal
 *                   without a handler of its own
 *   endings flood N [T] runs N tasks on the main thread and on each of T
 *                   workers (default 1; a type for each side), the workers
 *                   all alive at once and staying so, as
 *                   fast as it can, begins one more on the main thread,
 *                   prints "ready" and waits for a signal: a SIGKILL then
 *                   finds everything in the threads' shards
 *   endings flood_h N [T] the same through task handles
 *   endings flood_d N [T] flood_h with a typed RAW dependency from each
 *                   task to the next on its thread
 *   endings count T FILE [ids] runs tasks on the main thread ("tick") and
 *                   on T workers ("work") until it is killed, through
 *                   handles (or ids), after every 16th task a sample of
 *                   counter "every16" and after every 64th a custom event
 *                   "every64" and a message of 8 bytes to rank 1, and
 *                   writes how many tasks, samples and events (messages)
 *                   there have been into FILE every 10 ms, on one line
 *                   (written aside, then renamed): a rebuilt profile must
 *                   have at least that many
 *   endings snap N DIR  a worker runs tasks through handles as fast as it
 *                   can while the main thread interrupts it N times, about
 *                   a millisecond apart, with SIGUSR1, whose handler (on
 *                   the worker, so it stands still wherever it was, inside
 *                   an end too) copies the process's mapping to DIR/K.map:
 *                   N states a SIGKILL could have left (a signal with no
 *                   copy after 5 s is sent again; a late copy may make
 *                   N + 1); prints "snaps K", then SIGKILL
 *   endings parent N M [kill|hang|childkill] runs N tasks, then forks and
 *                   executes itself as `endings child M` (a measured
 *                   descendant), prints "child PID", waits for it, and
 *                   returns 0 - or, with kill, raises SIGKILL (its profile
 *                   then only in its mapping), with hang prints "ready" and
 *                   waits for a signal; childkill, childhang: the child is
 *                   `endings child M kill` (`... hang`), however it ends
 *                   the parent returns 0
 *   endings child M [kill|hang] runs M tasks and returns 0 (raises
 *                   SIGKILL; prints "ready" and waits for a signal)
 *   endings spin MS segv|kill|exit runs 3 tasks of "spinning" (1 ms each),
 *                   begins a fourth, prints "ready", spins MS ms of wall time in it and
 *                   then writes to address 8, raises SIGKILL or returns 0
 *                   with it still running: an unfinished task whose time
 *                   until the end the profile must hold */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <taskscope/taskscope.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t flood_n;
static int flood_handles; /* flood_h: through task handles */
static int flood_deps;    /* flood_d: and dependencies */

static void flood(uint64_t first, tscope_type_t t)
{
    for (uint64_t i = 0; i < flood_n; i++) {
        if (flood_handles) {
            tscope_task_end_h(tscope_task_start_h(first + i, t));
            if (flood_deps && i)
                tscope_dep_local_typed(first + i - 1, t, first + i, t, &flood_n, TSCOPE_DEP_RAW);
            continue;
        }
        tscope_task_start(first + i, t);
        tscope_task_end(first + i);
    }
}

static pthread_mutex_t flood_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flood_cond = PTHREAD_COND_INITIALIZER;
static unsigned flood_done;

/* Runs its tasks, says so, and stays (its slot stays taken) until the
 * process ends. */
static void *flood_worker(void *arg)
{
    tscope_type_t t;
    uint64_t k = (uint64_t)(uintptr_t)arg;
    if (tscope_type_register("work", &t) == 0)
        flood((1ull << 30) + k * flood_n, t);
    pthread_mutex_lock(&flood_lock);
    flood_done++;
    pthread_cond_broadcast(&flood_cond);
    for (;;)
        pthread_cond_wait(&flood_cond, &flood_lock);
    return NULL;
}

/* endings count: tasks that ended, counter samples and custom events
 * (each with a message), over all threads */
static _Atomic uint64_t counted, sampled, evented;
static int count_ids;
static tscope_counter_t every16;
static tscope_event_t every64;

static void *count_loop(void *arg)
{
    uint64_t k = (uint64_t)(uintptr_t)arg;
    tscope_type_t t;
    if (tscope_type_register(k ? "work" : "tick", &t))
        return NULL;
    for (uint64_t i = 1;; i++) {
        uint64_t id = k << 40 | i;
        if (count_ids) {
            tscope_task_start(id, t);
            tscope_task_end(id);
        } else {
            tscope_task_end_h(tscope_task_start_h(id, t));
        }
        atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed); /* after its end */
        if (i % 16 == 0 && tscope_counter_sample(every16, (double)i) == 0)
            atomic_fetch_add_explicit(&sampled, 1, memory_order_relaxed);
        if (i % 64 == 0 && tscope_custom_event(every64, i) == 0 &&
            tscope_message(1, 8, 0, TSCOPE_MSG_SEND) == 0)
            atomic_fetch_add_explicit(&evented, 1, memory_order_relaxed);
    }
    return NULL;
}

static void *count_writer(void *arg)
{
    const char *file = arg;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    struct timespec ms10 = {0, 10000000};
    for (;;) {
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%llu %llu %llu\n", (unsigned long long)atomic_load(&counted),
                    (unsigned long long)atomic_load(&sampled),
                    (unsigned long long)atomic_load(&evented));
            if (fclose(f) == 0)
                rename(tmp, file);
        }
        nanosleep(&ms10, NULL);
    }
    return NULL;
}

/* snap: the mapping (.taskscope-PID.map in the output folder, a link into
 * /dev/shm) and where its copies go; the handler uses only system calls. */
static char snap_from[4200], snap_to[4200];
static size_t snap_to_len;
static atomic_int snaps;       /* lock-free: async-signal-safe */
static atomic_int snap_errors; /* copies the handler could not make */
static char snap_buf[1 << 16];

static void on_snap(int sig)
{
    (void)sig;
    int saved = errno;
    char *p = snap_to + snap_to_len; /* DIR/K.map, K in decimal */
    char digits[16];
    int k = 0;
    for (unsigned v = (unsigned)atomic_load(&snaps); k == 0 || v; v /= 10)
        digits[k++] = (char)('0' + v % 10);
    while (k)
        *p++ = digits[--k];
    memcpy(p, ".map", 5);
    int in = open(snap_from, O_RDONLY), out = open(snap_to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    off_t size = in >= 0 ? lseek(in, 0, SEEK_END) : -1;
    for (off_t at = 0; in >= 0 && out >= 0 && at < size;) { /* its data, not its holes */
        off_t data = lseek(in, at, SEEK_DATA);
        if (data < 0)
            break;
        off_t hole = lseek(in, data, SEEK_HOLE);
        for (at = data; at < hole;) {
            size_t want =
                (size_t)(hole - at) < sizeof snap_buf ? (size_t)(hole - at) : sizeof snap_buf;
            ssize_t got = pread(in, snap_buf, want, at);
            if (got <= 0) {
                at = size;
                break;
            }
            for (ssize_t b = 0; b < got; b += 4096) { /* pages of zeros stay holes */
                ssize_t len = got - b < 4096 ? got - b : 4096;
                int zero = 1;
                for (ssize_t i = 0; i < len && zero; i++)
                    zero = snap_buf[b + i] == 0;
                if (!zero && pwrite(out, snap_buf + b, (size_t)len, at + b) != len)
                    got = -1;
            }
            if (got < 0) {
                at = size;
                break;
            }
            at += got;
        }
    }
    if (out >= 0 && size > 0 && ftruncate(out, size) == 0)
        atomic_fetch_add(&snaps, 1);
    else
        atomic_fetch_add(&snap_errors, 1);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    errno = saved;
}

static void *snap_loop(void *arg)
{
    tscope_type_t w;
    if (tscope_type_register("work", &w))
        return NULL;
    atomic_store((atomic_int *)arg, 1);
    for (uint64_t id = 1u << 20;; id++) {
        tscope_task_end_h(tscope_task_start_h(id, w));
        if ((id & 255) == 0) { /* ThreadSanitizer delivers a signal only in a libc call */
            struct timespec none = {0, 0};
            nanosleep(&none, NULL);
        }
    }
    return NULL;
}

/* Spins ms milliseconds of wall time (CLOCK_MONOTONIC). */
static void spin_ms(double ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) * 1e-6 < ms);
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
    if (strcmp(argv[1], "spin") == 0 && argc > 3) {
        tscope_type_t spinning;
        if (tscope_type_register("spinning", &spinning))
            return 1;
        for (n = 1; n <= 4; n++) {
            tscope_task_start(n, spinning);
            if (n == 4) {
                printf("ready\n");
                fflush(stdout);
            }
            spin_ms(n < 4 ? 1 : atof(argv[2]));
            if (n < 4)
                tscope_task_end(n);
        }
        if (strcmp(argv[3], "kill") == 0)
            raise(SIGKILL);
        if (strcmp(argv[3], "segv") == 0) {
            volatile int *volatile nowhere = (volatile int *)(uintptr_t)8;
            *nowhere = 1;
        }
        return 0;
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
    if ((strcmp(argv[1], "flood") == 0 || strcmp(argv[1], "flood_h") == 0 ||
         strcmp(argv[1], "flood_d") == 0) &&
        argc > 2) {
        flood_n = strtoull(argv[2], NULL, 10);
        flood_handles = argv[1][5] == '_';
        flood_deps = argv[1][5] == '_' && argv[1][6] == 'd';
        unsigned workers = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
        for (unsigned k = 0; k < workers; k++) {
            pthread_t th;
            if (pthread_create(&th, NULL, flood_worker, (void *)(uintptr_t)k))
                return 1;
        }
        flood(1, t);
        pthread_mutex_lock(&flood_lock);
        while (flood_done < workers)
            pthread_cond_wait(&flood_cond, &flood_lock);
        pthread_mutex_unlock(&flood_lock);
        if (flood_handles) /* running when the program dies */
            tscope_task_start_h(1u << 31, t);
        else
            tscope_task_start(1u << 31, t);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (strcmp(argv[1], "count") == 0 && argc > 3) {
        unsigned workers = (unsigned)atoi(argv[2]);
        count_ids = argc > 4 && strcmp(argv[4], "ids") == 0;
        if (tscope_counter_register("every16", &every16) ||
            tscope_event_register("every64", &every64))
            return 1;
        pthread_t th;
        for (unsigned k = 1; k <= workers; k++)
            if (pthread_create(&th, NULL, count_loop, (void *)(uintptr_t)k))
                return 1;
        if (pthread_create(&th, NULL, count_writer, argv[3]))
            return 1;
        printf("ready\n");
        fflush(stdout);
        count_loop(NULL);
    }
    if (strcmp(argv[1], "snap") == 0 && argc > 3) {
        int n_snaps = atoi(argv[2]);
        const char *out = getenv("TASKSCOPE_OUTPUT_DIR");
        snprintf(snap_from, sizeof snap_from, "%s/.taskscope-%ld.map", out ? out : ".",
                 (long)getpid());
        snap_to_len = (size_t)snprintf(snap_to, sizeof snap_to - 32, "%s/", argv[3]);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_snap;
        sigaction(SIGUSR1, &sa, NULL);
        atomic_int started = 0;
        pthread_t th;
        if (pthread_create(&th, NULL, snap_loop, &started))
            return 1;
        while (!atomic_load(&started))
            sched_yield();
        srand((unsigned)getpid());
        /* One signal at a time, until N copies are made: a second signal
         * sent while the first is pending is lost (a copy under
         * ThreadSanitizer on a loaded machine outlasted 100,000
         * sched_yield()s once), so each waits for its copy, 5 s at most;
         * then the signal is sent again (under ThreadSanitizer, which holds
         * a signal back until the thread's next intercepted call, one of 150
         * never arrived in 30 s), 6 times in all. */
        int sent = 0, resent = 0;
        while (atomic_load(&snaps) < n_snaps && sent < n_snaps * 6) {
            struct timespec pause_for = {0, 500000 + rand() % 1000000};
            nanosleep(&pause_for, NULL);
            int was = atomic_load(&snaps);
            pthread_kill(th, SIGUSR1);
            sent++;
            struct timespec now, end;
            clock_gettime(CLOCK_MONOTONIC, &end);
            end.tv_sec += 5;
            do {
                sched_yield();
                clock_gettime(CLOCK_MONOTONIC, &now);
            } while (atomic_load(&snaps) == was &&
                     (now.tv_sec < end.tv_sec ||
                      (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
            resent += atomic_load(&snaps) == was;
        }
        if (resent || atomic_load(&snap_errors))
            fprintf(stderr,
                    "endings: %d signals sent again after 5 s without a copy, %d copies failed\n",
                    resent, atomic_load(&snap_errors));
        printf("snaps %d\n", atomic_load(&snaps));
        fflush(stdout);
        raise(SIGKILL); /* what it leaves is recovered once, by the test */
    }
    if ((strcmp(argv[1], "parent") == 0 && argc > 3) ||
        (strcmp(argv[1], "child") == 0 && argc > 2)) {
        uint64_t count = strtoull(argv[2], NULL, 10);
        for (n = 1; n <= count; n++) {
            tscope_task_start(n, t);
            tscope_task_end(n);
        }
        int parent = strcmp(argv[1], "parent") == 0;
        const char *how = argc > 3 + parent ? argv[3 + parent] : "";
        if (!parent) {
            if (strcmp(how, "kill") == 0)
                raise(SIGKILL);
            if (strcmp(how, "hang") == 0) {
                printf("ready\n");
                fflush(stdout);
                for (;;)
                    pause();
            }
            return 0;
        }
        const char *for_child = strcmp(how, "childkill") == 0   ? "kill"
                                : strcmp(how, "childhang") == 0 ? "hang"
                                                                : NULL;
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            execl("/proc/self/exe", "endings", "child", argv[3], for_child, (char *)NULL);
            _exit(127);
        }
        printf("child %ld\n", (long)child);
        fflush(stdout);
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child)
            return 1;
        if (for_child)
            return 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
        if (strcmp(how, "kill") == 0)
            raise(SIGKILL);
        if (strcmp(how, "hang") == 0) {
            printf("ready\n");
            fflush(stdout);
            for (;;)
                pause();
        }
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
