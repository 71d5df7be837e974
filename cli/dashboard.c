/* dashboard.c - `taskscope dashboard` (docs/dashboard.md): its options,
 * the token, the two listening sockets, and the order in which the parts
 * (dashboard.h) start and stop.
 *
 * Startup: options; the page's folder (--web, else $TASKSCOPE_WEB_DIR,
 * else the source tree's web/, else the installed share folder: the first
 * holding index.html); the token (--token, else 16 hex digits from
 * /dev/urandom); libsodium and the live channel's secret (--secret-file,
 * else 32 random bytes: src/live/auth.h); both sockets bound here (so a busy port is said with its
 * reason and --port 0 / --ingest-port 0 get free ones); SIGINT, SIGTERM and
 * SIGHUP blocked in every thread; the store, the ingest side (its thread
 * not yet running), HTTP, then the ingest thread; the two lines tests and
 * users read, on stdout, flushed.  The main thread then waits for one of
 * those signals (sigtimedwait), or --exit-after seconds.
 *
 * The bounds (struct tscope__dash_limits, docs/dashboard.md "Limits"):
 * a quarter of --memory for the frames being received, the rest for the
 * histories; the deadlines and the idle timeout are fixed, but for tests,
 * which may set them all with TASKSCOPE_DASHBOARD_DEADLINE_MS
 * (milliseconds).
 *
 * Shutdown, in this order: the hub stops (SSE readers return at once), the
 * HTTP server stops (joins its connection threads, which closes every SSE
 * listener), the ingest thread stops (closes the processes' connections),
 * then the store and the hub are freed: nothing is left for the sanitizers.
 *
 * Built without libmicrohttpd or jansson, the command says which package
 * is missing and exits 1.
 */
#include <stdio.h>

#include "cli.h"

#if !defined(TSCOPE_HAVE_MHD) || !defined(TSCOPE_HAVE_JANSSON)

int tscope_cli_dashboard(int argc, char **argv)
{
    (void)argc;
    (void)argv;
#if !defined(TSCOPE_HAVE_MHD) && !defined(TSCOPE_HAVE_JANSSON)
    const char *missing = "libmicrohttpd-dev and libjansson-dev";
#elif !defined(TSCOPE_HAVE_MHD)
    const char *missing = "libmicrohttpd-dev";
#else
    const char *missing = "libjansson-dev";
#endif
    fprintf(stderr,
            "taskscope dashboard: taskscope was built without %s (install it and rebuild, or "
            "run ./scripts/setup)\n",
            missing);
    return 1;
}

#else

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dashboard.h"
#include "optparse.h"

#define TOKEN_MAX 128

struct options {
    unsigned port, ingest_port;
    const char *bind, *token, *web, *secret_file;
    size_t history, memory_mib;
    double exit_after; /* 0: run until a signal */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: taskscope dashboard [options]\n"
            "\n"
            "Receives the live streams of measured processes (TASKSCOPE_LIVE=ADDRESS:INGEST-PORT/\n"
            "SECRET as printed at the start, or taskscope run --live=THAT) and serves them: the\n"
            "page, a JSON API, Server-Sent Events, controls sent back to the processes, and\n"
            "/metrics for Prometheus.  Processes and the dashboard prove to each other that\n"
            "they know the secret, and every frame between them carries a MAC.\n"
            "\n"
            "options:\n"
            "  --port N          the page's HTTP port (default 8740; 0: a free one)\n"
            "  --ingest-port N   the port processes send to (default 8741; 0: a free one)\n"
            "  --bind ADDRESS    the address of both (default 127.0.0.1)\n"
            "  --history N       snapshots kept per process (default 3000)\n"
            "  --memory MIB      memory the histories and the frames being received may\n"
            "                    hold: a quarter for the frames, the rest for the\n"
            "                    histories, shared equally by the processes (default 1024)\n"
            "  --token TOKEN     what every control must carry (default: random)\n"
            "  --secret-file F   the processes' secret: 64 hex digits in F, a file only its\n"
            "                    owner may read; created with a new one if F does not exist\n"
            "                    (default: a new random secret at every start)\n"
            "  --web DIR         the page's folder (default: $TASKSCOPE_WEB_DIR, the source\n"
            "                    tree's web/, the installed one)\n"
            "  --exit-after S    stop after S seconds\n"
            "  -h, --help        this text\n"
            "\n"
            "exit status: 0 stopped (Ctrl-C, SIGTERM, --exit-after), 1 could not start, 2 usage\n");
}

/* The checks of the options' values (optparse.h). */
static int long_in(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long n = v && *v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || n < lo || n > hi)
        return -1;
    if (out)
        *out = n;
    return 0;
}

static int check_port(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "a port number 0-65535");
    return long_in(v, 0, 65535, NULL);
}

static int check_history(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "a number 1-%d", TSCOPE__DASH_HISTORY_MAX);
    return long_in(v, 1, TSCOPE__DASH_HISTORY_MAX, NULL);
}

static int check_memory(const char *v, char *expected, size_t len)
{
    snprintf(expected, len, "MiB, 1-%ld", (long)TSCOPE__DASH_MEMORY_MAX);
    return long_in(v, 1, TSCOPE__DASH_MEMORY_MAX, NULL);
}

static int check_seconds(const char *v, char *expected, size_t len)
{
    char *end;
    snprintf(expected, len, "seconds > 0");
    double s = v && *v ? strtod(v, &end) : 0;
    return v && *v && !*end && s > 0 && s <= 1e9 ? 0 : -1;
}

static int check_token(const char *t, char *expected, size_t len)
{
    snprintf(expected, len, "1-%d printable characters, no spaces", TOKEN_MAX);
    size_t n = t ? strlen(t) : 0;
    int ok = n > 0 && n <= TOKEN_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = t[i] > ' ' && t[i] <= '~';
    return ok ? 0 : -1;
}

/* 0 and *o, or the exit status (0 after --help, 2 after a line). */
static int parse_options(int argc, char **argv, struct options *o, int *done)
{
    static const struct tscope_cli_option opts[] = {
        {"port", 'p', 0, TSCOPE_CLI_VALUE, "PORT", check_port, NULL, 0},
        {"ingest-port", 'i', 0, TSCOPE_CLI_VALUE, "PORT", check_port, NULL, 0},
        {"bind", 'b', 0, TSCOPE_CLI_VALUE, "ADDRESS", NULL, NULL, 0},
        {"history", 'n', 0, TSCOPE_CLI_VALUE, "N", check_history, NULL, 0},
        {"memory", 'm', 0, TSCOPE_CLI_VALUE, "MIB", check_memory, NULL, 0},
        {"token", 't', 0, TSCOPE_CLI_VALUE, "TOKEN", check_token, NULL, 1},
        {"web", 'w', 0, TSCOPE_CLI_VALUE, "DIR", NULL, NULL, 0},
        {"exit-after", 'x', 0, TSCOPE_CLI_VALUE, "SECONDS", check_seconds, NULL, 0},
        {"secret-file", 's', 0, TSCOPE_CLI_VALUE, "FILE", NULL, NULL, 0},
        {"help", 'h', 1, TSCOPE_CLI_FLAG, NULL, NULL, NULL, 0},
        {NULL, 0, 0, 0, NULL, NULL, NULL, 0}};
    *o = (struct options){8740, 8741, "127.0.0.1", NULL, NULL, NULL, 3000, 1024, 0};
    *done = 0;
    int c;
    optind = 1;
    while ((c = tscope_cli_getopt("dashboard", argc, argv, opts, 0)) != -1) {
        switch (c) {
        case 'p':
            o->port = (unsigned)strtol(optarg, NULL, 10);
            break;
        case 'i':
            o->ingest_port = (unsigned)strtol(optarg, NULL, 10);
            break;
        case 'b':
            o->bind = optarg;
            break;
        case 'n':
            o->history = (size_t)strtol(optarg, NULL, 10);
            break;
        case 'm':
            o->memory_mib = (size_t)strtol(optarg, NULL, 10);
            break;
        case 't':
            o->token = optarg;
            break;
        case 'w':
            o->web = optarg;
            break;
        case 's':
            o->secret_file = optarg;
            break;
        case 'x':
            o->exit_after = strtod(optarg, NULL);
            break;
        case 'h':
            usage(stdout);
            *done = 1;
            return 0;
        default:
            *done = c == TSCOPE_CLI_LISTED;
            return TSCOPE_CLI_STATUS(c);
        }
    }
    if (optind != argc) {
        fprintf(stderr, "taskscope dashboard: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return 0;
}

static int has_page(const char *dir)
{
    char path[4096];
    struct stat st;
    return dir && *dir && snprintf(path, sizeof path, "%s/index.html", dir) < (int)sizeof path &&
           stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The page's folder, or NULL (said on stderr).  *bad: --web names one
 * without index.html. */
static const char *find_web(const char *given, int *bad)
{
    *bad = 0;
    if (given) {
        if (has_page(given))
            return given;
        fprintf(stderr, "taskscope dashboard: --web %s: no index.html there\n", given);
        *bad = 1;
        return NULL;
    }
    /* the source tree's before the installed one: a build-tree binary must
     * not serve an older installed page (an installed binary's source tree
     * is usually gone) */
    const char *candidates[] = {getenv("TASKSCOPE_WEB_DIR"),
#ifdef TSCOPE_WEB_SOURCE_DIR
                                TSCOPE_WEB_SOURCE_DIR,
#endif
#ifdef TSCOPE_WEB_INSTALL_DIR
                                TSCOPE_WEB_INSTALL_DIR,
#endif
                                NULL};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (has_page(candidates[i]))
            return candidates[i];
    fprintf(stderr, "taskscope dashboard: no page found (--web DIR or TASKSCOPE_WEB_DIR): the "
                    "API and /metrics work, / answers 404\n");
    return NULL;
}

static int random_token(char *out, size_t cap)
{
    unsigned char bytes[8];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, bytes, sizeof bytes) : -1;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)sizeof bytes || cap < 2 * sizeof bytes + 1) {
        fprintf(stderr, "taskscope dashboard: cannot read /dev/urandom for a token (give one "
                        "with --token)\n");
        return -1;
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

/* The live channel's secret (src/live/auth.h): read from path, or a new
 * random one written there when path does not exist (mode 0600), or a new
 * one (path NULL).  0, or -1 after a line on stderr. */
static int live_secret(const char *path, unsigned char secret[TSCOPE__LIVE_SECRET])
{
    char hex[TSCOPE__LIVE_SECRET_HEX + 2];
    if (!path) {
        tscope__live_random(secret, TSCOPE__LIVE_SECRET);
        return 0;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) {
            fprintf(stderr, "taskscope dashboard: --secret-file %s: %s\n", path, strerror(errno));
            return -1;
        }
        tscope__live_random(secret, TSCOPE__LIVE_SECRET);
        tscope__live_secret_hex(secret, hex);
        hex[TSCOPE__LIVE_SECRET_HEX] = '\n';
        ssize_t n = write(fd, hex, TSCOPE__LIVE_SECRET_HEX + 1);
        int err = errno;
        if (close(fd) != 0 || n != TSCOPE__LIVE_SECRET_HEX + 1) {
            fprintf(stderr, "taskscope dashboard: --secret-file %s: %s\n", path,
                    strerror(n < 0 ? err : EIO));
            unlink(path);
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "taskscope dashboard: --secret-file %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    ssize_t n = read(fd, hex, sizeof hex);
    close(fd);
    while (n > 0 && (hex[n - 1] == '\n' || hex[n - 1] == '\r' || hex[n - 1] == ' '))
        n--;
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        fprintf(stderr, "taskscope dashboard: --secret-file %s: %s (chmod 600 it)\n", path,
                S_ISREG(st.st_mode) ? "others may read it" : "not a regular file");
        return -1;
    }
    if (n < 0 || tscope__live_secret_parse(hex, (size_t)n, secret)) {
        fprintf(stderr, "taskscope dashboard: --secret-file %s: expected 64 hex digits\n", path);
        return -1;
    }
    return 0;
}

struct address {
    struct sockaddr_storage sa;
    socklen_t len;
    char text[NI_MAXHOST + 2]; /* numeric; IPv6 in brackets */
    int loopback;
};

static int resolve(const char *name, struct address *a)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(name, "0", &hints, &res);
    if (rc != 0 || !res) {
        fprintf(stderr, "taskscope dashboard: --bind %s: %s\n", name,
                rc ? gai_strerror(rc) : "no address");
        return -1;
    }
    memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
    a->len = res->ai_addrlen;
    freeaddrinfo(res);
    char host[NI_MAXHOST];
    if (getnameinfo((struct sockaddr *)&a->sa, a->len, host, sizeof host, NULL, 0,
                    NI_NUMERICHOST) != 0)
        snprintf(host, sizeof host, "%s", name);
    if (a->sa.ss_family == AF_INET6) {
        snprintf(a->text, sizeof a->text, "[%s]", host);
        a->loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&a->sa)->sin6_addr);
    } else {
        snprintf(a->text, sizeof a->text, "%s", host);
        a->loopback = (ntohl(((struct sockaddr_in *)&a->sa)->sin_addr.s_addr) >> 24) == 127;
    }
    return 0;
}

/* A listening socket on a:port (non-blocking); *bound: its port.  -1 after
 * a line on stderr. */
static int listen_on(const struct address *a, unsigned port, const char *what, unsigned *bound)
{
    struct sockaddr_storage sa = a->sa;
    if (sa.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&sa)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)&sa)->sin_port = htons((uint16_t)port);
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    socklen_t len = a->len;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, a->len) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        fprintf(stderr, "taskscope dashboard: cannot listen on %s:%u (%s): %s\n", a->text, port,
                what, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *bound = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                            : ((struct sockaddr_in *)&sa)->sin_port);
    return fd;
}

/* Room for a descriptor per process connection and HTTP connection. */
static void raise_file_limit(void)
{
    struct rlimit r;
    rlim_t want = TSCOPE__DASH_MAX_PROCESSES + 512;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < want) {
        r.rlim_cur = r.rlim_max == RLIM_INFINITY || r.rlim_max > want ? want : r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

/* The limits for --memory (bytes) and the environment. */
static struct tscope__dash_limits limits_for(size_t memory)
{
    struct tscope__dash_limits l = {.http_request_ms = TSCOPE__DASH_HTTP_REQUEST_MS,
                                    .ingest_auth_ms = TSCOPE__DASH_INGEST_AUTH_MS,
                                    .ingest_frame_ms = TSCOPE__DASH_INGEST_FRAME_MS,
                                    .ingest_idle_ms = TSCOPE__DASH_INGEST_IDLE_MS,
                                    .frame_memory = memory / TSCOPE__DASH_FRAME_SHARE};
    const char *v = getenv("TASKSCOPE_DASHBOARD_DEADLINE_MS");
    if (v && *v) {
        char *end;
        errno = 0;
        long ms = strtol(v, &end, 10);
        if (*end || errno || ms < 1 || ms > 3600000)
            fprintf(stderr,
                    "taskscope dashboard: TASKSCOPE_DASHBOARD_DEADLINE_MS=%s: expected "
                    "milliseconds 1-3600000 (for tests); ignored\n",
                    v);
        else
            l.http_request_ms = l.ingest_auth_ms = l.ingest_frame_ms = l.ingest_idle_ms =
                (unsigned)ms;
    }
    return l;
}

/* Waits for SIGINT, SIGTERM or SIGHUP (blocked in set), or exit_after
 * seconds (0: no limit). */
static void wait_for_end(const sigset_t *set, double exit_after)
{
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += (time_t)exit_after;
    end.tv_nsec += (long)((exit_after - floor(exit_after)) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    for (;;) {
        if (exit_after <= 0) {
            int sig;
            if (sigwait(set, &sig) == 0)
                return;
            continue;
        }
        struct timespec now, left;
        clock_gettime(CLOCK_MONOTONIC, &now);
        left.tv_sec = end.tv_sec - now.tv_sec;
        left.tv_nsec = end.tv_nsec - now.tv_nsec;
        if (left.tv_nsec < 0) {
            left.tv_sec--;
            left.tv_nsec += 1000000000L;
        }
        if (left.tv_sec < 0)
            return;
        if (sigtimedwait(set, NULL, &left) >= 0 || errno == EAGAIN)
            return;
    }
}

int tscope_cli_dashboard(int argc, char **argv)
{
    struct options o;
    int done;
    int status = parse_options(argc, argv, &o, &done);
    if (status || done)
        return status;
    int bad_web;
    const char *web = find_web(o.web, &bad_web);
    if (bad_web)
        return 2;
    char token[TOKEN_MAX + 1];
    if (o.token)
        snprintf(token, sizeof token, "%s", o.token);
    else if (random_token(token, sizeof token))
        return 1;
    struct address a;
    if (resolve(o.bind, &a))
        return 2;
    char why[600];
    if (tscope__live_crypto(why, sizeof why)) {
        fprintf(stderr,
                "taskscope dashboard: %s; not starting (install libsodium-dev and rebuild, "
                "or run ./scripts/setup)\n",
                why);
        return 1;
    }
    unsigned char secret[TSCOPE__LIVE_SECRET];
    char secret_hex[TSCOPE__LIVE_SECRET_HEX + 1];
    if (live_secret(o.secret_file, secret))
        return 1;
    tscope__live_secret_hex(secret, secret_hex);

    /* signals: delivered to nobody but sigwait below; the threads made from
     * here on inherit the mask */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_file_limit();

    unsigned http_port, ingest_port;
    int http_fd = listen_on(&a, o.port, "--port", &http_port);
    int ingest_fd = http_fd < 0 ? -1 : listen_on(&a, o.ingest_port, "--ingest-port", &ingest_port);
    if (ingest_fd < 0) {
        if (http_fd >= 0)
            close(http_fd);
        return 1;
    }
    size_t memory = o.memory_mib << 20;
    struct tscope__dash d = {.token = token, .webdir = web, .limits = limits_for(memory)};
    atomic_init(&d.next_command, 0);
    struct tscope__dash_http *http = NULL;
    status = 1;
    if (!(d.hub = tscope__dash_hub_new()) ||
        !(d.store = tscope__dash_store_new(o.history, memory - d.limits.frame_memory, d.hub))) {
        fprintf(stderr, "taskscope dashboard: out of memory\n");
        close(http_fd);
        close(ingest_fd);
        goto out;
    }
    if (!(d.ingest = tscope__dash_ingest_new(ingest_fd, d.store, secret))) {
        close(http_fd);
        goto out;
    }
    tscope__dash_ingest_limit(d.ingest, &d.limits);
    if (!(http = tscope__dash_http_start(http_fd, a.sa.ss_family == AF_INET6, &d)) ||
        tscope__dash_ingest_run(d.ingest) != 0)
        goto out;

    if (!a.loopback)
        fprintf(stderr,
                "taskscope dashboard: bound to %s, not loopback: anyone who can reach port %u "
                "(%u: processes, which must prove they know the secret) can see every "
                "process's metrics; controls still need the token\n",
                a.text, http_port, ingest_port);
    printf("taskscope dashboard: http://%s:%u/ (token %s)\n", a.text, http_port, token);
    printf("taskscope dashboard: processes send to %s:%u (TASKSCOPE_LIVE=%s:%u/%s)\n", a.text,
           ingest_port, a.text, ingest_port, secret_hex);
    fflush(stdout);
    wait_for_end(&set, o.exit_after);
    status = 0;
out:
    if (d.hub)
        tscope__dash_hub_stop(d.hub);
    tscope__dash_http_stop(http);
    tscope__dash_ingest_stop(d.ingest);
    tscope__dash_store_free(d.store);
    tscope__dash_hub_free(d.hub);
    memset(secret, 0, sizeof secret);
    memset(secret_hex, 0, sizeof secret_hex);
    return status;
}

#endif
