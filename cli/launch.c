/* launch.c - what `taskscope run` needs to know about a program before it
 * starts it: where it is, whether it can run, whether it is dynamically
 * linked, and which of libtaskscope, libomp, libgomp it loads (directly or
 * through its libraries); and the environment that puts the right adapter
 * into it (OMP_TOOL_LIBRARIES for OpenMP, LD_PRELOAD for pthreads, libomp in
 * place of libgomp for GCC-built OpenMP programs).
 *
 * The libraries come from the ELF files, found as the dynamic loader finds
 * them (elfdeps.c: no process started); where that cannot be sure to give
 * the loader's answer, from the dynamic loader itself
 * (LD_TRACE_LOADED_OBJECTS, which lists them without running the program,
 * in a child process: ~2-5 ms), asked only after the ELF header showed a
 * dynamically linked executable: the loader would run a static one.
 *
 * Two tables decide: `libraries` (what is looked for among the program's
 * libraries, as TSCOPE_PROG_* bits) and `adapters` (which adapter those
 * call for, in order, the library and the variable that puts it in).  A
 * new adapter is a row there; the MPI launchers' names are the library's
 * (tscope_mpi_launcher, src/core/ranks.c), shared with the pthread adapter.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfdeps.h"
#include "launch.h"

/* PATH lookup as execvp does it; 0 and the path, or the errno of the best
 * failure (ENOENT, EACCES). */
static int locate(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return access(out, F_OK) ? ENOENT : 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            err = EACCES;
        }
        p += n + (colon != NULL);
    }
    return err;
}

/* 1: ELF with an interpreter (dynamic), 0: ELF without (static), -1: not
 * ELF (a script, say). */
static int elf_dynamic(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int result = -1;
    if (read(fd, &eh, sizeof eh) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64)
        goto out;
    result = 0;
    Elf64_Phdr ph[16]; /* 16 at a time: a program has ~13 */
    for (int at = 0; eh.e_phentsize == sizeof *ph && at < eh.e_phnum && result == 0; at += 16) {
        size_t k = eh.e_phnum - at < 16 ? (size_t)(eh.e_phnum - at) : 16;
        if (pread(fd, ph, k * sizeof *ph, (off_t)(eh.e_phoff + (uint64_t)at * sizeof *ph)) !=
            (ssize_t)(k * sizeof *ph))
            break;
        for (size_t i = 0; i < k; i++)
            if (ph[i].p_type == PT_INTERP)
                result = 1;
    }
out:
    close(fd);
    return result;
}

/* What is looked for in the program's libraries (each line of the loader's
 * listing, "\tNAME => PATH (0x...)", that contains `lib` sets `has`).  An
 * MPI library is the adapter's (TSCOPE_MPI_SONAME, the one it was built
 * for) or another: the MPI adapter works only with the first. */
static const struct {
    const char *lib;
    unsigned has; /* TSCOPE_PROG_* */
} libraries[] = {
    {"libtaskscope.so", TSCOPE_PROG_TASKSCOPE},
    {"libomp.so", TSCOPE_PROG_LIBOMP},
    {"libiomp5.so", TSCOPE_PROG_LIBOMP},
    {"libgomp.so", TSCOPE_PROG_LIBGOMP},
    {"libmpi.so", TSCOPE_PROG_OTHER_MPI},
    {"libmpich.so", TSCOPE_PROG_OTHER_MPI},
    {"libtaskscope-mpi.so", TSCOPE_PROG_MPI_ADAPTER},
};

/* Notes which of the libraries above a line of the loader's listing names. */
static void note_library(const char *line, struct tscope_launch *l)
{
    for (size_t i = 0; i < sizeof libraries / sizeof *libraries; i++) {
        if (!strstr(line, libraries[i].lib))
            continue;
        unsigned has = libraries[i].has;
#ifdef TSCOPE_MPI_SONAME /* the MPI the adapter was built for */
        if (has == TSCOPE_PROG_OTHER_MPI && strstr(line, TSCOPE_MPI_SONAME " "))
            has = TSCOPE_PROG_LIBMPI;
#endif
        l->has |= has;
    }
}

/* elfdeps.c's answer, as the line the loader's listing would have. */
static void found_library(const char *name, const char *path, void *arg)
{
    char line[2 * PATH_MAX + 32];
    snprintf(line, sizeof line, "\t%s => %s (0x0)\n", name, path);
    note_library(line, arg);
}

/* Runs the loader's listing of the program's libraries and notes which of
 * ours it loads. */
static void scan_libraries(const char *path, struct tscope_launch *l)
{
    int fds[2];
    if (pipe(fds))
        return;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2);
        close(fds[0]);
        setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
        unsetenv("LD_PRELOAD");
        execl(path, path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[PATH_MAX + 64];
    while (f && fgets(line, sizeof line, f))
        note_library(line, l);
    if (f)
        fclose(f);
    else
        close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
}

int tscope_launch_inspect(const char *prog, struct tscope_launch *l)
{
    memset(l, 0, sizeof *l);
    int err = locate(prog, l->path, sizeof l->path);
    if (err)
        return err;
    struct stat st;
    if (stat(l->path, &st) || !S_ISREG(st.st_mode) || access(l->path, X_OK))
        return EACCES;
    l->kind = elf_dynamic(l->path);
    if (l->kind < 0)
        l->has |= TSCOPE_PROG_SCRIPT;
    /* the libraries from the ELF files, as the loader finds them; from the
     * loader itself when elfdeps.c cannot be sure to answer the same */
    if (l->kind == 1 && tscope_cli_elf_libraries(l->path, found_library, l))
        scan_libraries(l->path, l);
    return 0;
}

/* The path of adapter library `name`, next to the running taskscope binary
 * (build tree) or in ../lib* (installed); -1 with a one-line message that
 * prog runs unprofiled when it is in neither. */
static int adapter_path(const char *name, const char *prog, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char *slash = strrchr(self, '/');
    static const char *const rel[] = {"", "/../lib", "/../lib64", "/../lib/x86_64-linux-gnu"};
    for (size_t i = 0; slash && i < sizeof rel / sizeof *rel; i++) {
        *slash = 0;
        if ((size_t)snprintf(out, len, "%.*s%s/%s", PATH_MAX / 2, self, rel[i], name) >= len)
            continue;
        if (access(out, R_OK) == 0)
            return 0;
    }
    fprintf(stderr,
            "taskscope: %s not found next to taskscope or in its ../lib: %s runs unprofiled\n",
            name, prog);
    return -1;
}

/* Adds value to the colon-separated list in variable var: in front
 * (first != 0), or after the user's own entries. */
static void list_add(const char *var, const char *value, int first)
{
    const char *old = getenv(var);
    if (!old || !*old) {
        setenv(var, value, 1);
        return;
    }
    size_t len = strlen(value) + strlen(old) + 2;
    char *v = malloc(len);
    if (!v)
        return;
    snprintf(v, len, "%s:%s", first ? value : old, first ? old : value);
    setenv(var, v, 1);
    free(v);
}

/* A folder holding libgomp.so.1 -> the installed libomp, so that a program
 * built by gcc -fopenmp loads libomp (which implements the GOMP_ entry
 * points and OMPT).  0 and the folder in dir, or -1 when libomp is missing. */
static int libomp_as_libgomp(char *dir, size_t len)
{
    void *h = dlopen("libomp.so.5", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return -1;
    void *sym = dlsym(h, "omp_get_max_threads");
    Dl_info info;
    int rc = -1;
    if (sym && dladdr(sym, &info) && info.dli_fname) {
        char real[PATH_MAX];
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, len, "%s/taskscope-gomp.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (realpath(info.dli_fname, real) && mkdtemp(dir)) {
            char link[PATH_MAX + 32];
            snprintf(link, sizeof link, "%s/libgomp.so.1", dir);
            rc = symlink(real, link);
        }
    }
    dlclose(h);
    return rc;
}

/* The OMPT tool's preparation: a program built by gcc -fopenmp runs on
 * libomp (libomp_as_libgomp); a program that loads no OpenMP runtime is
 * told that the tool waits for one.  0, or -1 when it runs unprofiled. */
static int ompt_prepare(const struct tscope_launch *l, const char *prog, char *tmpdir,
                        size_t tmplen, int quiet)
{
    if (l->kind == 1 && !(l->has & (TSCOPE_PROG_LIBOMP | TSCOPE_PROG_LIBGOMP)))
        fprintf(stderr,
                "taskscope: %s loads no OpenMP runtime (libomp or libgomp): the OMPT tool is "
                "offered, but only an OpenMP runtime it loads later (dlopen) would start it\n",
                prog);
    if ((l->has & TSCOPE_PROG_LIBGOMP) && !(l->has & TSCOPE_PROG_LIBOMP)) {
        if (libomp_as_libgomp(tmpdir, tmplen)) {
            tmpdir[0] = 0;
            fprintf(stderr,
                    "taskscope: %s uses GCC's libgomp, which has no tools interface, and LLVM's "
                    "libomp (Debian package libomp5) is not installed: it runs unprofiled\n",
                    prog);
            return -1;
        }
        if (!quiet) /* a note: it is measured */
            fprintf(stderr,
                    "taskscope: %s was built with GCC's OpenMP (libgomp, no tools interface): it "
                    "runs on LLVM's libomp instead, which implements the same GOMP_ entry points\n",
                    prog);
        list_add("LD_LIBRARY_PATH", tmpdir, 1);
    }
    return 0;
}

/* The adapters and what in a program calls for each.  Without --ompt,
 * --pthread or --no-preload, a program gets the first row (not on_top)
 * whose `when` it has (0: any program); every on_top row whose `when` it
 * has (and none of `unless`) comes in addition, whatever was chosen.  Why
 * a row is chosen is its comment; what is not the plain case (a static
 * program, libgomp, no OpenMP runtime, another MPI) is said on stderr. */
static const struct adapter {
    int adapter;     /* TSCOPE_ADAPT_* */
    int on_top;      /* added to the chosen adapter, not chosen instead of it */
    unsigned when;   /* TSCOPE_PROG_*: what calls for it */
    unsigned unless; /* TSCOPE_PROG_*: what makes it needless */
    const char *lib; /* the adapter library (NULL: none) */
    const char *var; /* the colon-separated list that names it to the program */
    int first;       /* in front of the user's own entries (else after them) */
    /* what else it needs (NULL: nothing); 0, or -1 when the program runs unprofiled */
    int (*prepare)(const struct tscope_launch *l, const char *prog, char *tmpdir, size_t tmplen,
                   int quiet);
} adapters[] = {
    /* it links libtaskscope: it reports its own tasks */
    {TSCOPE_ADAPT_NONE, 0, TSCOPE_PROG_TASKSCOPE, 0, NULL, NULL, 0, NULL},
    /* OpenMP: libomp starts the tool it names; a script: what it starts may
     * be OpenMP */
    {TSCOPE_ADAPT_OMPT, 0, TSCOPE_PROG_LIBOMP | TSCOPE_PROG_LIBGOMP | TSCOPE_PROG_SCRIPT, 0,
     "libtaskscope-ompt.so", "OMP_TOOL_LIBRARIES", 1, ompt_prepare},
    /* anything else: each thread's start function is a task */
    {TSCOPE_ADAPT_PTHREAD, 0, 0, 0, "libtaskscope-pthread.so", "LD_PRELOAD", 0, NULL},
    /* MPI (the library the adapter was built for): rank, messages, global view */
    {TSCOPE_ADAPT_MPI, 1, TSCOPE_PROG_LIBMPI, TSCOPE_PROG_MPI_ADAPTER, "libtaskscope-mpi.so",
     "LD_PRELOAD", 0, NULL},
};

/* Puts adapter a into the program's environment.  0, or -1 when it could
 * not be (said on stderr). */
static int put_in(const struct adapter *a, const struct tscope_launch *l, const char *prog,
                  char *tmpdir, size_t tmplen, int quiet)
{
    char lib[PATH_MAX];
    if (!a->lib)
        return 0;
    if (adapter_path(a->lib, prog, lib, sizeof lib))
        return -1; /* (the OMPT tool: built without omp-tools.h, say) */
    if (a->prepare && a->prepare(l, prog, tmpdir, tmplen, quiet))
        return -1;
    list_add(a->var, lib, a->first);
    return 0;
}

int tscope_launch_prepare(const struct tscope_launch *l, int adapter, const char *prog,
                          char *tmpdir, size_t tmplen, int quiet)
{
    tmpdir[0] = 0;
    size_t n = sizeof adapters / sizeof *adapters;
    if (adapter == TSCOPE_ADAPT_AUTO) {
        if (l->kind == 0) {
            fprintf(stderr,
                    "taskscope: %s is statically linked: no adapter can be loaded into it, so it "
                    "is measured only if it calls tscope_init() itself\n",
                    prog);
            return 0;
        }
        for (size_t i = 0; i < n && adapter == TSCOPE_ADAPT_AUTO; i++)
            if (!adapters[i].on_top && (!adapters[i].when || (l->has & adapters[i].when)))
                adapter = adapters[i].adapter;
    }
    for (size_t i = 0; i < n; i++)
        if (adapters[i].on_top && (l->has & adapters[i].when) && !(l->has & adapters[i].unless))
            put_in(&adapters[i], l, prog, tmpdir, tmplen,
                   quiet); /* failed: said; the rest goes on */
    if ((l->has & TSCOPE_PROG_OTHER_MPI) &&
        !(l->has & (TSCOPE_PROG_LIBMPI | TSCOPE_PROG_MPI_ADAPTER)))
        fprintf(stderr,
                "taskscope: %s uses an MPI library taskscope's MPI adapter was not built for (it "
                "was built for %s): its MPI calls, messages and global view are not measured\n",
                prog,
#ifdef TSCOPE_MPI_SONAME
                TSCOPE_MPI_SONAME
#else
                "none: no MPI was found at build time"
#endif
        );
    for (size_t i = 0; i < n; i++)
        if (!adapters[i].on_top && adapters[i].adapter == adapter)
            return put_in(&adapters[i], l, prog, tmpdir, tmplen, quiet);
    return 0;
}

void tscope_launch_cleanup(const char *tmpdir)
{
    if (!tmpdir || !*tmpdir)
        return;
    char link[PATH_MAX + 32];
    snprintf(link, sizeof link, "%s/libgomp.so.1", tmpdir);
    unlink(link);
    rmdir(tmpdir);
}
