/* calibrate.c - `taskscope model calibrate`: the contention measurements of
 * a user's own kernel program, taken the way the composition benchmark
 * takes them for its bundled kernels (bench/composition.c), written as a
 * measurements file that `taskscope model compose --contention` reads
 * (the format: src/model/contention.c, docs/modeling.md).
 *
 * For each size the program runs once untimed, then (posix_spawn, no shell;
 * its stdin and stdout /dev/null, its stderr passed through) alone and next to k = 1..K
 * copies of each synthetic co-runner of model.h (tscope_probe_start, threads
 * of this process), R times; its time is the wall time of the process.  A
 * probe's progress over a run, against its rate alone, is how much the
 * program slows it (its demand).  What a process cannot show - the handover
 * of elements to another thread, how much of them it writes, the queue's
 * costs - is not measured: the composition takes 0 for it.
 *
 * Nothing measured is lost: the file is rewritten after every size, and a
 * program that fails, or a SIGINT / SIGTERM / SIGHUP to this process
 * (blocked while measuring, looked at between runs), ends the calibration
 * with one line and the measurements taken so far in the file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"
#include "taskscope/model.h"

extern char **environ;

enum { MAX_SIZES = 64, MAX_REPS = 1000 };

/* "N1,N2,...": up to MAX_SIZES whole numbers >= 1; how many, or -1. */
static int parse_sizes(const char *v, double *out)
{
    int n = 0;
    const char *s = v;
    while (v && *s) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (end == s || *s == '-' || *s == '+' || errno || x < 1 || x > (1ull << 53) ||
            n == MAX_SIZES || (*end && *end != ','))
            return -1;
        out[n++] = (double)x;
        s = *end ? end + 1 : end;
        if (*end && !*s)
            return -1; /* a trailing comma */
    }
    return n ? n : -1;
}

static int check_sizes(const char *v, char *expected, size_t len)
{
    double sizes[MAX_SIZES];
    snprintf(expected, len, "sizes N1,N2,... (whole numbers >= 1, at most %d)", MAX_SIZES);
    return parse_sizes(v, sizes) > 0 ? 0 : -1;
}

/* A whole number in [lo, hi]; -1 if not. */
static long whole(const char *v, long lo, long hi)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : -1;
    return v && end != v && !*end && n >= lo && n <= hi ? n : -1;
}

static int check_copies(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "a number of copies from 1 to %d", TSCOPE_CONTENTION_MAX_COPIES);
    return whole(v, 1, TSCOPE_CONTENTION_MAX_COPIES) > 0 ? 0 : -1;
}

static int check_reps(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "a number of repetitions from 1 to %d", MAX_REPS);
    return whole(v, 1, MAX_REPS) > 0 ? 0 : -1;
}

/* A component name a measurements file can hold: a line's first field. */
static int check_name(const char *v, char *expected, size_t len)
{
    size_t max = sizeof((tscope_cmeas_t *)0)->component - 1;
    snprintf(expected, len,
             "a component name (1 to %zu characters, no space, not '-', not starting with '#')",
             max);
    int ok = v && *v && strlen(v) <= max && strcmp(v, "-") != 0 && *v != '#';
    for (const char *p = v; ok && *p; p++)
        ok = !isspace((unsigned char)*p) && !iscntrl((unsigned char)*p);
    return ok ? 0 : -1;
}

/* The calibration under way: what it measured, where it writes it. */
struct calib {
    const char *out, *name;
    struct tscope_launch prog; /* where the program is */
    tscope_cmeas_t *m;
    size_t n, cap;
    char **argv;        /* the program's, sizes put in (run_program) */
    char **templ;       /* as given */
    int argc, appended; /* appended: no {} given, the size is the last */
    char sizebuf[32];
    sigset_t stop; /* SIGINT, SIGTERM, SIGHUP: blocked, looked at between runs */
    sigset_t old_mask;
    char failure[512];
};

static int add(struct calib *c, const char *comp, const char *kind, double n, double value)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        tscope_cmeas_t *g = realloc(c->m, cap * sizeof *g);
        if (!g) {
            snprintf(c->failure, sizeof c->failure, "out of memory");
            return -1;
        }
        c->m = g;
        c->cap = cap;
    }
    tscope_cmeas_t *m = &c->m[c->n++];
    memset(m, 0, sizeof *m);
    snprintf(m->component, sizeof m->component, "%s", comp);
    snprintf(m->kind, sizeof m->kind, "%s", kind);
    m->n = n;
    m->value = value;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A signal of c->stop that came: its number, else 0. */
static int stopped(struct calib *c)
{
    struct timespec zero = {0, 0};
    int sig = sigtimedwait(&c->stop, NULL, &zero);
    return sig > 0 ? sig : 0;
}

/* The program's arguments at size n: every "{}" in an argument replaced by
 * the size, or the size appended when there is none.  0 or -1 (memory). */
static int set_size(struct calib *c, double n)
{
    snprintf(c->sizebuf, sizeof c->sizebuf, "%.0f", n);
    size_t sl = strlen(c->sizebuf);
    for (int i = 1; i < c->argc; i++) {
        if (c->argv[i] != c->templ[i])
            free(c->argv[i]);
        c->argv[i] = c->templ[i];
        const char *t = c->templ[i];
        size_t count = 0;
        for (const char *p = strstr(t, "{}"); p; p = strstr(p + 2, "{}"))
            count++;
        if (!count)
            continue;
        char *s = malloc(strlen(t) + count * sl + 1), *w = s;
        if (!s) {
            snprintf(c->failure, sizeof c->failure, "out of memory");
            return -1;
        }
        for (const char *p = t, *q; *p; p = q + 2) {
            if (!(q = strstr(p, "{}"))) {
                w = stpcpy(w, p);
                break;
            }
            memcpy(w, p, (size_t)(q - p));
            w = stpcpy(w + (q - p), c->sizebuf);
        }
        *w = 0;
        c->argv[i] = s;
    }
    if (c->appended)
        c->argv[c->argc] = c->sizebuf;
    return 0;
}

/* The command as a message names it: its words, a space between. */
static void command_text(const struct calib *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; c->argv[i] && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? " " : "", c->argv[i]);
        used += k > 0 ? (size_t)k : 0;
    }
}

/* Runs the program once; its wall time in seconds, or a negative value
 * after c->failure says why (what: "alone", "next to 2 stream probes"). */
static double run_program(struct calib *c, const char *what, tscope_probe_t *probe, double *p0,
                          double *p1)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int err = posix_spawn_file_actions_init(&fa);
    if (!err && !(err = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)))
        err = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!err && !(err = posix_spawnattr_init(&attr))) {
        if (!(err = posix_spawnattr_setsigmask(&attr, &c->old_mask)))
            err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    }
    char cmd[384];
    command_text(c, cmd, sizeof cmd);
    pid_t pid = -1;
    double t0 = now_s();
    if (probe)
        *p0 = tscope_probe_progress(probe);
    if (!err)
        err = posix_spawn(&pid, c->prog.path, &fa, &attr, c->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (err) {
        snprintf(c->failure, sizeof c->failure, "%s (size %s, %s): cannot run: %s", cmd, c->sizebuf,
                 what, strerror(err));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (probe)
        *p1 = tscope_probe_progress(probe);
    double secs = now_s() - t0;
    if (WIFSIGNALED(status)) {
        snprintf(c->failure, sizeof c->failure, "%s (size %s, %s): killed by signal %d (%s)", cmd,
                 c->sizebuf, what, WTERMSIG(status), strsignal(WTERMSIG(status)));
        return -1;
    }
    if (WEXITSTATUS(status)) {
        snprintf(c->failure, sizeof c->failure, "%s (size %s, %s): exit status %d", cmd, c->sizebuf,
                 what, WEXITSTATUS(status));
        return -1;
    }
    return secs;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of what c measured of (comp, kind) at n; NAN if nothing. */
static double median(const struct calib *c, const char *comp, const char *kind, double n)
{
    double v[MAX_REPS];
    size_t k = 0;
    for (size_t i = 0; i < c->n && k < MAX_REPS; i++)
        if (c->m[i].n == n && !strcmp(c->m[i].component, comp) && !strcmp(c->m[i].kind, kind))
            v[k++] = c->m[i].value;
    if (!k)
        return NAN;
    qsort(v, k, sizeof *v, cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* The machine's lines: how much one copy of each probe slows another, the
 * cores; alone[p] gets one copy's rate alone (the median).  0 or -1. */
static int measure_machine(struct calib *c, int reps, double alone[TSCOPE_NPROBES])
{
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        double one[MAX_REPS];
        char kind[32];
        snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
        for (int r = 0; r < reps; r++) {
            double r1 = tscope_probe_rate(p, 1, 0.1), r2 = tscope_probe_rate(p, 2, 0.1);
            if (!(r1 > 0) || !(r2 > 0)) {
                snprintf(c->failure, sizeof c->failure, "cannot start a %s probe",
                         tscope_probe_name(p));
                return -1;
            }
            one[r] = r1;
            if (add(c, "-", kind, 0, r1 / r2))
                return -1;
        }
        qsort(one, (size_t)reps, sizeof *one, cmp_double);
        alone[p] = reps % 2 ? one[reps / 2] : (one[reps / 2 - 1] + one[reps / 2]) / 2;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return add(c, "-", "cores", 0, cpus > 0 ? (double)cpus : 1);
}

/* One repetition at size n: alone, then next to 1..copies of each probe.
 * 0, -1 after c->failure says why. */
static int measure_size(struct calib *c, double n, unsigned copies,
                        const double alone[TSCOPE_NPROBES])
{
    double p0 = 0, p1 = 0, t;
    if (set_size(c, n) || (t = run_program(c, "alone", NULL, NULL, NULL)) < 0 ||
        add(c, c->name, "alone", n, t))
        return -1;
    for (int p = 0; p < TSCOPE_NPROBES; p++)
        for (unsigned k = 1; k <= copies; k++) {
            char what[64], kind[32];
            snprintf(what, sizeof what, "next to %u %s probe%s", k, tscope_probe_name(p),
                     k > 1 ? "s" : "");
            /* the probe's rate alone right before: the machine's speed drifts
             * (a rate taken once at the start made later ratios 0.75) */
            double ref = k == 1 ? tscope_probe_rate(p, 1, 0.1) : 0;
            if (k == 1 && !(ref > 0))
                ref = alone[p];
            tscope_probe_t *probe;
            if (tscope_probe_start(p, k, &probe)) {
                snprintf(c->failure, sizeof c->failure, "cannot start %u %s probe%s", k,
                         tscope_probe_name(p), k > 1 ? "s" : "");
                return -1;
            }
            t = run_program(c, what, probe, &p0, &p1);
            tscope_probe_stop(probe);
            snprintf(kind, sizeof kind, "%s:%u", tscope_probe_name(p), k);
            if (t < 0 || add(c, c->name, kind, n, t))
                return -1;
            if (k == 1) {
                double rate = (p1 - p0) / t;
                snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
                if (add(c, c->name, kind, n, rate > 0 ? ref / rate : 1))
                    return -1;
            }
        }
    return 0;
}

static void print_row(const struct calib *c, double n)
{
    double a = median(c, c->name, "alone", n);
    printf("%12.0f %12.6g", n, a);
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        char kind[32];
        snprintf(kind, sizeof kind, "%s:1", tscope_probe_name(p));
        printf(" %10.4g", median(c, c->name, kind, n) / a);
    }
    for (int p = 0; p < TSCOPE_NPROBES; p++) {
        char kind[32];
        snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
        printf(" %12.4g", median(c, c->name, kind, n));
    }
    printf("\n");
}

int tscope_cli_model_calibrate(int argc, char **argv)
{
    static const struct tscope_cli_option opts[] = {
        {"sizes", 's', 0, TSCOPE_CLI_VALUE, "N1,N2,...", check_sizes, NULL, 0},
        {"copies", 'k', 0, TSCOPE_CLI_VALUE, "K", check_copies, NULL, 0},
        {"reps", 'r', 0, TSCOPE_CLI_VALUE, "R", check_reps, NULL, 0},
        {"name", 'n', 0, TSCOPE_CLI_VALUE, "NAME", check_name, NULL, 0},
        {"output", 'o', 1, TSCOPE_CLI_VALUE, "FILE", NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    double sizes[MAX_SIZES];
    int nsizes = 0, reps = 3, c;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned copies = cpus > 2 ? (unsigned)cpus - 1 : 1;
    if (copies > TSCOPE_CONTENTION_MAX_COPIES)
        copies = TSCOPE_CONTENTION_MAX_COPIES;
    struct calib cal;
    memset(&cal, 0, sizeof cal);
    optind = 1;
    while ((c = tscope_cli_getopt("model calibrate", argc, argv, opts,
                                  TSCOPE_CLI_STOP_AT_OPERAND)) != -1) {
        switch (c) {
        case 's':
            nsizes = parse_sizes(optarg, sizes);
            break;
        case 'k':
            copies = (unsigned)whole(optarg, 1, TSCOPE_CONTENTION_MAX_COPIES);
            break;
        case 'r':
            reps = (int)whole(optarg, 1, MAX_REPS);
            break;
        case 'n':
            cal.name = optarg;
            break;
        case 'o':
            cal.out = optarg;
            break;
        case 'h':
            tscope_cli_model_usage(stdout);
            return 0;
        default:
            return TSCOPE_CLI_STATUS(c);
        }
    }
    const char *missing = optind >= argc ? "PROGRAM (after --)"
                          : !nsizes      ? "--sizes N1,N2,... (no default: the sizes are yours)"
                          : !cal.out     ? "-o FILE"
                                         : NULL;
    if (missing) {
        fprintf(stderr, "taskscope model calibrate: needs %s; taskscope model --help says more\n",
                missing);
        return 2;
    }
    cal.templ = argv + optind;
    cal.argc = argc - optind;
    for (int i = 1; i < cal.argc && !cal.appended; i++)
        cal.appended = strstr(cal.templ[i], "{}") != NULL;
    cal.appended = !cal.appended;
    const char *base = strrchr(cal.templ[0], '/');
    base = base ? base + 1 : cal.templ[0];
    char expected[256];
    if (!cal.name && check_name(base, expected, sizeof expected)) {
        fprintf(stderr,
                "taskscope model calibrate: the program's name '%s' is no component name: "
                "give --name NAME\n",
                base);
        return 2;
    }
    if (!cal.name)
        cal.name = base;
    int err = tscope_launch_inspect(cal.templ[0], &cal.prog);
    if (err) {
        fprintf(stderr, "taskscope model calibrate: cannot run %s: %s\n", cal.templ[0],
                strerror(err));
        return 1;
    }
    /* the file is writable before anything runs */
    if (tscope_contention_write(cal.out, NULL, 0)) {
        fprintf(stderr, "taskscope model calibrate: cannot write %s: %s\n", cal.out,
                strerror(errno));
        return 1;
    }
    cal.argv = calloc((size_t)cal.argc + 2, sizeof *cal.argv);
    if (!cal.argv) {
        fprintf(stderr, "taskscope model calibrate: out of memory\n");
        return 1;
    }
    memcpy(cal.argv, cal.templ, (size_t)cal.argc * sizeof *cal.argv);
    sigemptyset(&cal.stop);
    sigaddset(&cal.stop, SIGINT);
    sigaddset(&cal.stop, SIGTERM);
    sigaddset(&cal.stop, SIGHUP);
    /* blocked before the probes' threads start, so that they inherit it */
    sigprocmask(SIG_BLOCK, &cal.stop, &cal.old_mask);

    double alone[TSCOPE_NPROBES];
    int rc = measure_machine(&cal, reps, alone), sig = 0, done = 0;
    for (int s = 0; !rc && s < nsizes; s++) {
        /* a first run at each size, not timed: what a new size costs once
         * (page faults, the program's files read) is not its time */
        if (set_size(&cal, sizes[s]) || run_program(&cal, "first run", NULL, NULL, NULL) < 0)
            rc = -1;
        for (int r = 0; !rc && r < reps; r++)
            if ((rc = measure_size(&cal, sizes[s], copies, alone)) == 0 && (sig = stopped(&cal))) {
                snprintf(cal.failure, sizeof cal.failure, "stopped by signal %d (%s) at size %.0f",
                         sig, strsignal(sig), sizes[s]);
                rc = -1;
            }
        if (!rc)
            done++;
        if (tscope_contention_write(cal.out, cal.m, cal.n)) {
            fprintf(stderr, "taskscope model calibrate: cannot write %s: %s\n", cal.out,
                    strerror(errno));
            rc = 1;
            break;
        }
    }
    if (rc < 0 && !cal.n)
        fprintf(stderr, "taskscope model calibrate: %s\n", cal.failure);
    else if (rc < 0)
        fprintf(stderr, "taskscope model calibrate: %s; the %zu measurements before it are in %s\n",
                cal.failure, cal.n, cal.out);
    if (done) {
        printf("%s: %d size%s, %d repetition%s, next to 1..%u copies of each probe\n", cal.name,
               done, done > 1 ? "s" : "", reps, reps > 1 ? "s" : "", copies);
        printf("machine: a second copy slows a probe by");
        for (int p = 0; p < TSCOPE_NPROBES; p++) {
            char kind[32];
            snprintf(kind, sizeof kind, "slows:%s", tscope_probe_name(p));
            printf(" %.4g (%s)%s", median(&cal, "-", kind, 0), tscope_probe_name(p),
                   p + 1 < TSCOPE_NPROBES ? "," : ";");
        }
        printf(" %.0f cores\n", median(&cal, "-", "cores", 0));
        printf("%12s %12s", "size", "alone (s)");
        for (int p = 0; p < TSCOPE_NPROBES; p++) {
            char col[32];
            snprintf(col, sizeof col, "x %s:1", tscope_probe_name(p));
            printf(" %10s", col);
        }
        for (int p = 0; p < TSCOPE_NPROBES; p++) {
            char col[32];
            snprintf(col, sizeof col, "slows:%s", tscope_probe_name(p));
            printf(" %12s", col);
        }
        printf("\n");
        for (int s = 0; s < done; s++)
            print_row(&cal, sizes[s]);
        printf("(x PROBE:1: its time next to one probe copy over its time alone; "
               "slows: a\nprobe's rate alone over its rate next to it; the measurements: %s)\n",
               cal.out);
    }
    sigprocmask(SIG_SETMASK, &cal.old_mask, NULL);
    for (int i = 1; i < cal.argc; i++)
        if (cal.argv[i] != cal.templ[i])
            free(cal.argv[i]);
    free(cal.argv);
    free(cal.m);
    return rc ? 1 : 0;
}
