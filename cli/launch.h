/* launch.h - inspecting a program and arranging its adapter (launch.c). */
#ifndef TSCOPE_CLI_LAUNCH_H
#define TSCOPE_CLI_LAUNCH_H

#include <limits.h>
#include <stddef.h>

enum tscope_adapter {
    TSCOPE_ADAPT_AUTO,    /* by what the program loads */
    TSCOPE_ADAPT_NONE,    /* --no-preload: the program calls taskscope itself */
    TSCOPE_ADAPT_OMPT,    /* --ompt */
    TSCOPE_ADAPT_PTHREAD, /* --pthread */
    TSCOPE_ADAPT_MPI      /* MPI programs, on top of the others */
};

/* What a program is and loads (its libraries, directly or through others). */
enum tscope_prog {
    TSCOPE_PROG_SCRIPT = 1 << 0,     /* not ELF: a script, say */
    TSCOPE_PROG_TASKSCOPE = 1 << 1,  /* libtaskscope */
    TSCOPE_PROG_LIBOMP = 1 << 2,     /* LLVM's (or Intel's) OpenMP runtime */
    TSCOPE_PROG_LIBGOMP = 1 << 3,    /* GCC's */
    TSCOPE_PROG_LIBMPI = 1 << 4,     /* the MPI library the MPI adapter was built for */
    TSCOPE_PROG_OTHER_MPI = 1 << 5,  /* another one */
    TSCOPE_PROG_MPI_ADAPTER = 1 << 6 /* libtaskscope-mpi, linked in */
};

struct tscope_launch {
    char path[PATH_MAX]; /* where the program is */
    int kind;            /* 1 dynamic ELF, 0 static ELF, -1 not ELF (a script) */
    unsigned has;        /* TSCOPE_PROG_* */
};

/* Finds and inspects prog.  0, or ENOENT (not found: exit status 127) or
 * EACCES (not executable: 126). */
int tscope_launch_inspect(const char *prog, struct tscope_launch *l);

/* Sets up this process's environment so that the program, once executed,
 * loads the adapter (chosen by `adapter`, or by what it loads), saying in
 * one line on stderr what was arranged when it is not the plain case
 * (unless quiet: then only what goes wrong).
 * tmpdir receives a folder to remove afterwards ("" for none).  0, or -1
 * when the program will run unprofiled (said on stderr). */
int tscope_launch_prepare(const struct tscope_launch *l, int adapter, const char *prog,
                          char *tmpdir, size_t tmplen, int quiet);

/* Removes what tscope_launch_prepare made. */
void tscope_launch_cleanup(const char *tmpdir);

#endif
