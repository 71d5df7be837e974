/* lazylib.h - an optional shared library opened with dlopen at its first
 * use, by the SONAME found at build time, instead of linked: a program (or
 * a CLI command) that does not use it never maps and relocates it.  Used for
 * PAPI (src/sampler/papi.c), libotf2 (src/trace/otf2.c), libdw
 * (src/adapt/srcloc.c) and libsodium (src/live/auth.c).
 *
 * Header-only and libc-only, so every layer may include it, the adapters
 * (which otherwise use only the public headers) included.  A user lists the
 * functions it calls in an X-macro, declares a pointer for each
 * (TSCOPE__LAZY_DECLARE), lists them for the loader (TSCOPE__LAZY_SYM) and
 * #defines each name to its pointer after the load function:
 *
 *   #define FOO_FUNCS(X) X(foo_open) X(foo_close)
 *   FOO_FUNCS(TSCOPE__LAZY_DECLARE)
 *   static const struct tscope__lazy_sym foo_syms[] = {FOO_FUNCS(TSCOPE__LAZY_SYM)};
 *   ... tscope__lazy_load(&state, SONAME, foo_syms, n, why, sizeof why) ...
 *   #define foo_open p_foo_open
 *
 * The caller serialises loads (its own lock, or one thread). */
#ifndef TSCOPE_COMMON_LAZYLIB_H
#define TSCOPE_COMMON_LAZYLIB_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

struct tscope__lazy_sym {
    const char *name;
    void **slot; /* the function pointer, filled as POSIX allows (dlsym) */
};

#define TSCOPE__LAZY_DECLARE(f) static __typeof__(f) *p_##f;
#define TSCOPE__LAZY_SYM(f) {#f, (void **)&p_##f},

/* Opens soname and fills every slot of syms, once: *state 0 not tried, 1
 * loaded, -1 failed (kept: later calls answer at once).  0, or -1 with why
 * ("cannot load X: ..." or "X has no f") in why (when why is not NULL, on
 * the failing call only). */
static inline int tscope__lazy_load(int *state, const char *soname,
                                    const struct tscope__lazy_sym *syms, size_t n, char *why,
                                    size_t whylen)
{
    if (*state)
        return *state > 0 ? 0 : -1;
    *state = -1;
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (why)
            snprintf(why, whylen, "cannot load %s: %s", soname, dlerror());
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
            if (why)
                snprintf(why, whylen, "%s has no %s", soname, syms[i].name);
            return -1;
        }
    *state = 1;
    return 0;
}

#endif
