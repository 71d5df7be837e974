/* elfdeps.h - the libraries a program loads at start, found as the dynamic
 * loader finds them, without running it (elfdeps.c). */
#ifndef TSCOPE_CLI_ELFDEPS_H
#define TSCOPE_CLI_ELFDEPS_H

/* Calls found(name, path, arg) for each library the dynamic loader would
 * load into the dynamically linked program prog at its start, in the
 * loader's order (name: the DT_NEEDED entry it was first found by; path:
 * where the loader would open it), with this process's environment but
 * LD_PRELOAD.  Returns 0; or -1, without calling found, when the loader
 * might answer differently (a case elfdeps.c does not follow): then ask
 * the loader.  Not thread-safe (getenv). */
int tscope_cli_elf_libraries(const char *prog,
                             void (*found)(const char *name, const char *path, void *arg),
                             void *arg);

#endif
