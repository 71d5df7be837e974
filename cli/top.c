/* top.c - `taskscope top PID|FOLDER`: a running program's profile in the
 * terminal, read from outside (src/profile/peek.c) with no help from the
 * program and at no cost to it - what an HPC user has on a compute node
 * that no browser reaches.  Types by self time, threads, tasks per second,
 * refreshed every second; `q` quits.  When stdout is not a terminal each
 * look is printed as plain text, one after the other.
 *
 * The program's mapping is found (src/offline/leftovers.c) from its pid (its mappings in
 * /proc/PID/maps, else /dev/shm/taskscope-PID-*), or from an output folder
 * (.taskscope-PID.map, a link to /dev/shm or the file).  It exists under
 * `taskscope run` with threads aggregating their own tasks (the default);
 * it holds the tasks that came through handles, which is every task of the
 * OpenMP, pthread and MPI adapters and of the bundled runtime.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: taskscope top [-n COUNT] [-d SECONDS] [--rows N] PID|FOLDER\n"
               "\n"
               "The profile of a program running under 'taskscope run' (or of one that died\n"
               "before writing its outputs), read from outside: task types by self time,\n"
               "threads, tasks per second, refreshed every second ('q' quits).  When the\n"
               "output is not a terminal, each refresh is printed as plain text.\n"
               "\n"
               "  PID             the program's process id\n"
               "  FOLDER          its output folder\n"
               "  -n COUNT        stop after COUNT refreshes (default: until it ends or 'q')\n"
               "  -d SECONDS      time between refreshes (default 1)\n"
               "  --rows N        task types shown (default: what fits, 20 in plain text)\n");
}

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* 1,234,567 -> "1.23 M" in 8 columns. */
static void num(char *buf, size_t len, double v)
{
    if (v >= 1e9)
        snprintf(buf, len, "%.2f G", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.2f M", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, len, "%.1f k", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
}

struct look {
    struct tscope__peek p;
    double at; /* monotonic seconds */
    uint64_t calls;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const struct look *sort_look;
static int by_self(const void *a, const void *b)
{
    uint64_t x = sort_look->p.types[*(const uint32_t *)a].self;
    uint64_t y = sort_look->p.types[*(const uint32_t *)b].self;
    return x < y ? 1 : x > y ? -1 : (int)(*(const uint32_t *)a - *(const uint32_t *)b);
}

static const char *name_of(const struct tscope__peek *p, uint32_t id, char *buf, size_t len)
{
    if (id < p->ntypes && p->names[id])
        return p->names[id];
    snprintf(buf, len, "type %u", id);
    return buf;
}

/* One screen of look `now` (tasks per second against `was`, or the
 * average when there is none). */
static void show(FILE *f, const struct look *now, const struct look *was, int alive, long rows)
{
    const struct tscope__peek *p = &now->p;
    double ns = p->head.ns_per_tick > 0 ? p->head.ns_per_tick : 1;
    double elapsed = 0;
    if (alive) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double mono = ts.tv_sec * 1e9 + ts.tv_nsec;
        elapsed = mono > (double)p->head.mono_ns ? (mono - (double)p->head.mono_ns) / 1e9 : 0;
    }
    /* an entry being written is left out of a look: a count can seem to go back */
    double rate =
        was && now->at > was->at
            ? (double)(now->calls > was->calls ? now->calls - was->calls : 0) / (now->at - was->at)
        : elapsed > 0 ? (double)now->calls / elapsed
                      : 0;
    uint64_t self_all = 0;
    uint32_t busy = 0;
    for (uint32_t i = 0; i < p->ntypes; i++)
        self_all += p->types[i].self;
    uint32_t nthreads = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        busy += p->threads[i].top != 0;
        nthreads += p->threads[i].shard;
    }
    char c1[32], c2[32];
    num(c1, sizeof c1, (double)now->calls);
    num(c2, sizeof c2, rate);
    if (alive)
        fprintf(f, "taskscope top: %s (pid %lld, rank %d), running %.1f s: %s tasks, %s tasks/s\n",
                p->head.program, (long long)p->head.pid, p->head.rank, elapsed, c1, c2);
    else
        fprintf(f, "taskscope top: %s (pid %lld, rank %d), ended without its outputs: %s tasks\n",
                p->head.program, (long long)p->head.pid, p->head.rank, c1);
    fprintf(f, "threads: %u, %u running a task\n", nthreads, alive ? busy : 0);
    if (p->damaged)
        fprintf(f, "damaged: %llu bytes of the mapping could not be read\n",
                (unsigned long long)p->damaged);
    fprintf(f, "\n%7s %10s %9s %9s %9s  %s\n", "self%", "self s", "calls", "tasks/s", "running",
            "type");
    uint32_t *order = malloc((p->ntypes ? p->ntypes : 1) * sizeof *order);
    uint32_t n = 0;
    for (uint32_t i = 0; order && i < p->ntypes; i++)
        if (p->types[i].calls || p->types[i].created)
            order[n++] = i;
    sort_look = now;
    if (order)
        qsort(order, n, sizeof *order, by_self);
    for (uint32_t k = 0; k < n && (rows <= 0 || k < (uint32_t)rows); k++) {
        const struct tscope__peek_type *t = &p->types[order[k]];
        uint64_t before = was && order[k] < was->p.ntypes ? was->p.types[order[k]].calls : 0;
        double r = was && now->at > was->at
                       ? (double)(t->calls > before ? t->calls - before : 0) / (now->at - was->at)
                   : elapsed > 0 ? (double)t->calls / elapsed
                                 : 0;
        uint64_t running =
            t->created > t->calls + t->cancelled ? t->created - t->calls - t->cancelled : 0;
        char a[32], b[32], c[32], buf[48];
        num(a, sizeof a, (double)t->calls);
        num(b, sizeof b, r);
        num(c, sizeof c, (double)running);
        fprintf(f, "%6.1f%% %10.3f %9s %9s %9s  %s\n",
                self_all ? 100.0 * (double)t->self / (double)self_all : 0.0, t->self * ns / 1e9, a,
                b, c, name_of(p, order[k], buf, sizeof buf));
    }
    if (rows > 0 && n > (uint32_t)rows)
        fprintf(f, "(%u more types)\n", n - (uint32_t)rows);
    free(order);
    fprintf(f, "\n%7s %-16s %10s %9s  %s\n", "thread", "name", "self s", "calls", "running now");
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const struct tscope__peek_thread *t = &p->threads[i];
        if (!t->shard)
            continue; /* no task of its own: the sampler, a thread of the launcher's */
        char a[32], buf[48];
        num(a, sizeof a, (double)t->calls);
        fprintf(f, "%7u %-16.16s %10.3f %9s  %s\n", t->slot, t->name[0] ? t->name : "-",
                t->self * ns / 1e9, a,
                alive && t->top ? name_of(p, t->top - 1, buf, sizeof buf) : "-");
    }
}

static int look_at(const char *path, struct look *l, char *why, size_t len)
{
    if (tscope__peek(path, &l->p, why, len))
        return -1;
    l->at = mono_s();
    l->calls = 0;
    for (uint32_t i = 0; i < l->p.ntypes; i++)
        l->calls += l->p.types[i].calls;
    return 0;
}

/* -n's and -d's checks (optparse.h) */
static int top_count(const char *v, char *expected, size_t len)
{
    char *end;
    snprintf(expected, len, "a count of 1 or more");
    return v && *v && strtol(v, &end, 10) >= 1 && !*end ? 0 : -1;
}

static int top_every(const char *v, char *expected, size_t len)
{
    char *end;
    snprintf(expected, len, "seconds from 0.05 to 3600");
    double s = v && *v ? strtod(v, &end) : 0;
    return v && *v && !*end && s >= 0.05 && s <= 3600 ? 0 : -1;
}

int tscope_cli_top(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {NULL, 'n', 1, TSCOPE_CLI_VALUE, "COUNT", top_count, NULL, 0},
        {NULL, 'd', 1, TSCOPE_CLI_VALUE, "SECONDS", top_every, NULL, 0},
        {"rows", 'r', 0, TSCOPE_CLI_VALUE, "N", tscope_cli_count, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    long count = 0, rows = -1;
    double every = 1;
    int c;
    optind = 1;
    while ((c = tscope_cli_getopt("top", argc, argv, opts, 0)) != -1) {
        switch (c) {
        case 'n':
            count = strtol(optarg, NULL, 10);
            break;
        case 'd':
            every = strtod(optarg, NULL);
            break;
        case 'r':
            rows = strtol(optarg, NULL, 10);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "taskscope top: %s (taskscope top [options] PID|FOLDER)\n",
                optind >= argc ? "no process given" : "one process at a time");
        return 2;
    }
    const char *arg = argv[optind];
    char path[PATH_MAX + 300];
    int numeric = *arg != 0;
    for (const char *q = arg; *q; q++)
        numeric &= isdigit((unsigned char)*q) != 0;
    long pid = numeric ? strtol(arg, NULL, 10) : 0;
    if (numeric ? tscope__offline_mapping_of_process(pid, path, sizeof path)
                : tscope__offline_mapping_in_folder(arg, path, sizeof path)) {
        fprintf(stderr,
                numeric ? "taskscope top: process %s has no taskscope mapping (is it running under "
                          "'taskscope run'?)\n"
                        : "taskscope top: %s holds no taskscope mapping (no program measured there "
                          "runs, or it ended and wrote its outputs: taskscope report %s)\n",
                arg, arg);
        return 1;
    }
    int tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
    struct termios saved;
    if (tty && tcgetattr(STDIN_FILENO, &saved) == 0) {
        struct termios raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
        fputs("\033[?25l", stdout); /* no cursor */
    } else {
        tty = 0;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct look was = {0}, now = {0};
    int have_was = 0, rc = 0;
    char why[256];
    for (long k = 0; !stop && (!count || k < count); k++) {
        if (look_at(path, &now, why, sizeof why)) {
            if (have_was && access(path, F_OK) != 0)
                break; /* it ended and its mapping was taken (the outputs are written) */
            fprintf(stderr, "taskscope top: %s: %s\n", path, why);
            rc = 1;
            break;
        }
        int alive = tscope__offline_pid_alive((long)now.p.head.pid);
        long r = rows;
        if (r < 0) {
            struct winsize ws;
            r = tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 12
                    ? ws.ws_row - 9 - (long)now.p.nthreads
                    : 20;
            if (r < 3)
                r = 3;
        }
        if (tty)
            fputs("\033[H\033[2J", stdout);
        else if (k)
            fputc('\n', stdout);
        show(stdout, &now, have_was ? &was : NULL, alive, r);
        if (tty)
            fputs("\n(q quits)", stdout);
        fflush(stdout);
        if (have_was)
            tscope__peek_free(&was.p);
        was = now;
        have_was = 1;
        memset(&now, 0, sizeof now);
        if (!alive || (count && k + 1 >= count))
            break;
        /* wait, or a 'q' */
        double until = mono_s() + every;
        while (!stop) {
            double left = until - mono_s();
            if (left <= 0)
                break;
            struct pollfd pf = {STDIN_FILENO, POLLIN, 0};
            if (tty && poll(&pf, 1, (int)(left * 1000) + 1) > 0) {
                char ch;
                if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
                    stop = 1;
            } else if (!tty) {
                struct timespec ts = {(time_t)left, (long)((left - (time_t)left) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
    }
    if (have_was)
        tscope__peek_free(&was.p);
    if (tty) {
        fputs("\033[?25h\n", stdout);
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    }
    return rc;
}
