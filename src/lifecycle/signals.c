/* signals.c - outputs written when a termination signal ends the program.
 *
 * SIGTERM (kill, batch systems, CI timeouts), SIGINT (Ctrl-C) and SIGHUP
 * end a program by default without its atexit handlers, so nothing measured
 * would be written.  For each of them still at its default action when
 * measurement starts, a handler is installed.  The handler does nothing
 * that is unsafe in a signal handler: it wakes a waiting thread of
 * taskscope's own ("tscope-signal"), which runs tscope_finalize (the
 * program's other threads go on meanwhile; the interrupted one waits), and
 * once the outputs are written - or after TASKSCOPE__SIGNAL_WAIT_S, should
 * finalize be stuck behind a lock the interrupted thread holds - the
 * default action is restored and the signal raised again, so the program
 * ends as it would have, with the same status.  A second signal while the
 * outputs are being written ends it at once.
 *
 * A handler the program installs (before or after) is left alone: the
 * program then decides what the signal does.  Fatal signals (SEGV, ABRT, ...)
 * are not handled here: the heap may be broken when they come.
 */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "signals.h"
#include "taskscope/taskscope.h"

#define TASKSCOPE__SIGNAL_WAIT_S 10

static const int handled[] = {SIGTERM, SIGINT, SIGHUP};
#define NHANDLED (sizeof handled / sizeof *handled)

static sem_t go, done;
static pthread_t thread;
static int running;        /* the thread exists (init/finalize, under their lock) */
static _Atomic int caught; /* the first signal caught, 0 before */
static _Atomic int quit;   /* the thread should end without finalizing */
static int installed[NHANDLED];

static void *signal_main(void *arg)
{
    (void)arg;
    for (;;) {
        while (sem_wait(&go) != 0 && errno == EINTR)
            ;
        if (atomic_load(&quit))
            return NULL;
        tscope_finalize();
        sem_post(&done);
    }
}

static void on_signal(int sig)
{
    int saved = errno;
    if (atomic_exchange(&caught, sig) == 0) {
        sem_post(&go);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += TASKSCOPE__SIGNAL_WAIT_S;
        while (sem_timedwait(&done, &until) != 0 && errno == EINTR)
            ;
    }
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when this handler returns */
    errno = saved;
}

void tscope__signals_install(void)
{
    if (running)
        return;
    atomic_store(&caught, 0);
    atomic_store(&quit, 0);
    if (sem_init(&go, 0, 0) || sem_init(&done, 0, 0))
        return;
    if (tscope__thread_start(&thread, signal_main, NULL, "tscope-signal"))
        return; /* no thread: the signals keep their default action */
    running = 1;
    for (size_t i = 0; i < NHANDLED; i++) {
        struct sigaction old, sa;
        installed[i] = 0;
        if (sigaction(handled[i], NULL, &old) || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue; /* the program's own handler, or ignored: left alone */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        installed[i] = sigaction(handled[i], &sa, NULL) == 0;
    }
}

/* Puts back the default action where our handler is still in place. */
static void restore(void)
{
    for (size_t i = 0; i < NHANDLED; i++) {
        struct sigaction cur;
        if (installed[i] && sigaction(handled[i], NULL, &cur) == 0 &&
            !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == on_signal)
            signal(handled[i], SIG_DFL);
        installed[i] = 0;
    }
}

void tscope__signals_remove(void)
{
    if (!running)
        return;
    restore();
    if (pthread_equal(pthread_self(), thread)) {
        /* finalize runs on the signal thread: the handler ends the process */
        running = 0;
        return;
    }
    atomic_store(&quit, 1);
    sem_post(&go);
    pthread_join(thread, NULL);
    sem_destroy(&go);
    sem_destroy(&done);
    running = 0;
}

void tscope__signals_forget(void)
{
    restore();
    running = 0; /* the thread did not come along */
}
