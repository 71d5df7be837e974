/* signals.c - outputs written when a signal ends the program.
 *
 * Termination signals (SIGTERM from kill, batch systems and CI timeouts,
 * SIGINT from Ctrl-C, SIGHUP) and crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT) end a program without its atexit handlers, so nothing measured
 * would be written.  For each of them still at its default action when
 * measurement starts, a handler is installed.  The handler does nothing
 * that is unsafe in a signal handler: it notes the signal, wakes the
 * consumer thread (a semaphore's post), which runs tscope_finalize (the
 * outputs then say which signal ended the run, and the tasks still running
 * are closed at that moment, as unfinished), and waits.  (A thread of its
 * own waited for this until session 22: one more thread to start and join
 * in every measured process, ~0.5 ms of its fixed cost here.)  Once the
 * outputs are written - or after TASKSCOPE__SIGNAL_WAIT_S, should finalize be
 * stuck behind a lock the interrupted thread holds, or the heap be broken -
 * the default action is restored and the signal raised again, so the
 * program ends as it would have (same status, a core dump where there would
 * have been one).
 *
 * A second termination signal while the outputs are being written ends the
 * program at once (Ctrl-C twice); a crash of another thread meanwhile waits
 * as the first did.  A crash on one of taskscope's own threads does not
 * wait (finalize would wait for that thread).  A handler the program
 * installs, before or after, is left alone: the program then decides.
 * SIGKILL cannot be caught; `_exit()` is exit.c's.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "core/hooks.h"
#include "signals.h"
#include "taskscope/taskscope.h"

#define TASKSCOPE__SIGNAL_WAIT_S 10

static const int handled[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NHANDLED (sizeof handled / sizeof *handled)

static int running;         /* the handlers are installed (init/finalize, under their lock) */
static _Atomic int caught;  /* the first signal caught, 0 before */
static _Atomic int written; /* finalize after a signal returned */
static int installed[NHANDLED];

/* On the consumer, woken by the handler. */
static void finalize_caught(void)
{
    if (!atomic_load(&caught))
        return;
    tscope_finalize();
    atomic_store(&written, 1);
}

static int terminates(int sig)
{
    return sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
}

/* Waits (async-signal-safe: nanosleep) until the outputs are written, at
 * most TASKSCOPE__SIGNAL_WAIT_S. */
static void wait_written(void)
{
    struct timespec step = {0, 2000000};
    for (int i = 0; i < TASKSCOPE__SIGNAL_WAIT_S * 500 && !atomic_load(&written); i++)
        nanosleep(&step, NULL);
}

static void on_signal(int sig)
{
    int saved = errno;
    if (!tscope__thread_is_own()) {
        if (atomic_exchange(&caught, sig) == 0) {
            tscope__g.ended_by = sig;
            if (tscope__consumer_wake_async() == 0)
                wait_written();
        } else if (!terminates(sig)) {
            wait_written(); /* another thread crashed meanwhile */
        }
    }
    /* the default action, now or (blocked in this handler) when it returns;
     * a fault re-executes the instruction and faults again */
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

void tscope__signals_install(void)
{
    if (running)
        return;
    atomic_store(&caught, 0);
    atomic_store(&written, 0);
    tscope__g.ended_by = 0;
    if (!tscope__g.consumer_running)
        return; /* no consumer: the signals keep their default action */
    tscope__hooks.on_wake_async = finalize_caught;
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
    running = 0;
    if (atomic_load(&caught))
        return; /* finalize after a signal: the handlers stay (a crash of
                 * another thread meanwhile waits too), the handler that
                 * waits ends the process */
    tscope__hooks.on_wake_async = NULL;
    restore();
}

void tscope__signals_forget(void)
{
    restore();
    running = 0; /* the consumer did not come along */
}
