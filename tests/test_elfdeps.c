/* test_elfdeps.c - cli/elfdeps.c against the dynamic loader itself: for
 * each program given (or a default set: taskscope, the examples, tests and
 * tools of the build tree, system programs), the libraries elfdeps.c finds
 * must be those the loader lists (LD_TRACE_LOADED_OBJECTS), by name and
 * path, in the same order; or elfdeps.c must decline (then taskscope asks
 * the loader).  Also under LD_LIBRARY_PATH pointing at a folder holding
 * libgomp.so.1 -> libomp (what `taskscope run` does for GCC's OpenMP), and
 * a folder where a RUNPATH library is shadowed.
 *   usage: test_elfdeps [PROGRAM...] */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli/elfdeps.h"

#define MAX_LIBS 256

struct list {
    char line[MAX_LIBS][2 * PATH_MAX + 8];
    int n;
};

static void add(const char *name, const char *path, void *arg)
{
    struct list *l = arg;
    if (l->n < MAX_LIBS)
        snprintf(l->line[l->n++], sizeof l->line[0], "%s => %s", name, path);
}

/* The loader's listing, "NAME => PATH" lines only (not the vDSO's or the
 * loader's own); -1 when it fails. */
static int loader_list(const char *prog, struct list *l)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
        unsetenv("LD_PRELOAD");
        execl(prog, prog, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char buf[2 * PATH_MAX + 64];
    while (f && fgets(buf, sizeof buf, f)) {
        char *arrow = strstr(buf, " => "), *addr = strstr(buf, " (0x");
        if (!arrow || !addr)
            continue;
        *addr = 0;
        char *name = buf + strspn(buf, "\t ");
        add("", "", l);
        snprintf(l->line[l->n - 1], sizeof l->line[0], "%s", name);
    }
    if (f)
        fclose(f);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int failures, answered, declined;

static void check(const char *prog)
{
    static struct list mine, theirs;
    mine.n = theirs.n = 0;
    if (access(prog, X_OK) || loader_list(prog, &theirs))
        return; /* not there, or not a dynamically linked program */
    if (tscope_cli_elf_libraries(prog, add, &mine)) {
        declined++;
        printf("declined: %s\n", prog);
        return;
    }
    answered++;
    int same = mine.n == theirs.n;
    for (int i = 0; same && i < mine.n; i++)
        same = strcmp(mine.line[i], theirs.line[i]) == 0;
    if (same)
        return;
    failures++;
    printf("FAIL: %s: elfdeps.c and the loader differ\n", prog);
    for (int i = 0; i < mine.n || i < theirs.n; i++)
        printf("  %-60s | %s\n", i < mine.n ? mine.line[i] : "",
               i < theirs.n ? theirs.line[i] : "");
}

static void check_build(const char *build)
{
    static const char *const progs[] = {
        "taskscope",         "taskscope-dashboard", "examples/fib",   "examples/fib-gcc",
        "examples/nqueens",  "examples/cholesky",   "examples/loops", "examples/stencil",
        "examples/tasktree", "tests/omp",           "tests/mpicases", "tests/mpiremote",
        "tests/live_worker", "tests/fakeproc",      "tests/endings",  "tests/forgetful",
        "tests/test_api",    "tests/plugins",       "bench/rt_bench", "bench/mpi_reduce"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof progs / sizeof *progs; i++) {
        snprintf(p, sizeof p, "%s/%s", build, progs[i]);
        check(p);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            check(argv[i]);
        printf("test_elfdeps: %d answered, %d declined, %d differ\n", answered, declined, failures);
        return failures ? 1 : 0;
    }
    const char *build = getenv("TSCOPE_BUILD_DIR");
    if (!build) {
        fprintf(stderr, "test_elfdeps: TSCOPE_BUILD_DIR is not set\n");
        return 2;
    }
    static const char *const system_progs[] = {
        "/bin/ls",       "/bin/sh",         "/usr/bin/python3", "/usr/bin/gnuplot",
        "/usr/bin/perl", "/usr/bin/mpirun", "/usr/bin/cmake",   "/usr/bin/git"};
    unsetenv("LD_LIBRARY_PATH");
    check_build(build);
    for (size_t i = 0; i < sizeof system_progs / sizeof *system_progs; i++)
        check(system_progs[i]);
    int plain = answered;
    /* LD_LIBRARY_PATH first: a folder with libgomp.so.1 -> libomp.so.5, as
     * `taskscope run` makes for GCC's OpenMP, and the build folder */
    char dir[] = "/tmp/test_elfdeps.XXXXXX", link[PATH_MAX], path[2 * PATH_MAX];
    if (!mkdtemp(dir))
        return 2;
    snprintf(link, sizeof link, "%s/libgomp.so.1", dir);
    const char *libomp = "/usr/lib/llvm-14/lib/libomp.so.5";
    if (access(libomp, R_OK) == 0 && symlink(libomp, link) == 0) {
        snprintf(path, sizeof path, "%s:%s", dir, build);
        setenv("LD_LIBRARY_PATH", path, 1);
        check_build(build);
        unlink(link);
    }
    /* a folder that does not exist, then one with libtaskscope.so.0 ahead of
     * the RUNPATH's (a copy: another file) */
    snprintf(link, sizeof link, "%s/libtaskscope.so.0", dir);
    snprintf(path, sizeof path, "cp %s/libtaskscope.so.0 %s", build, link);
    if (system(path) == 0) {
        snprintf(path, sizeof path, "/nonexistent:%s", dir);
        setenv("LD_LIBRARY_PATH", path, 1);
        check_build(build);
        unlink(link);
    }
    rmdir(dir);
    printf("test_elfdeps: %d answered (%d without LD_LIBRARY_PATH), %d declined, %d differ\n",
           answered, plain, declined, failures);
    if (plain < 8) {
        printf("FAIL: elfdeps.c answered for only %d programs\n", plain);
        return 1;
    }
    return failures ? 1 : 0;
}
