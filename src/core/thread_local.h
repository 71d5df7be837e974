/* thread_local.h - the calling thread's registration, one TLS load away. */
#ifndef TSCOPE_CORE_THREAD_LOCAL_H
#define TSCOPE_CORE_THREAD_LOCAL_H

#include "core.h"

extern _Thread_local struct tscope__thread *tscope__tls_self
    __attribute__((tls_model("initial-exec")));

/* The calling thread's registration, registering it on first use; NULL if
 * that fails (thread limit, memory). */
static inline struct tscope__thread *tscope__thread_self(void)
{
    struct tscope__thread *t = tscope__tls_self;
    return __builtin_expect(t != NULL, 1) ? t : tscope__thread_self_slow();
}

#endif
