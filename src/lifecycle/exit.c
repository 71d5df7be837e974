/* exit.c - _exit() and _Exit() write the outputs first.
 *
 * A program that ends with _exit() (or _Exit()) skips the atexit handlers
 * that write taskscope's outputs.  libtaskscope defines both, so that a
 * program linked with it, or measured through the preloaded pthread
 * wrapper, finalizes first (the outputs then say "ended_by": "_exit"); the
 * process then ends with the exit_group system call, as glibc's _exit does.
 * Not in a forked or vfork()ed child (another pid than tscope_init's: its
 * memory, or the parent's, is not its own to finalize), and not on one of
 * taskscope's own threads.  An OpenMP program measured through
 * OMP_TOOL_LIBRARIES loads libtaskscope privately: its _exit is glibc's.
 */
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"
#include "exit.h"
#include "taskscope/taskscope.h"

_Atomic long tscope__init_pid;

static void finish(void)
{
    if (atomic_load(&tscope__g.initialised) && (long)getpid() == atomic_load(&tscope__init_pid) &&
        !tscope__thread_is_own()) {
        int none = 0;
        atomic_compare_exchange_strong(&tscope__g.ended_by, &none, TSCOPE__ENDED_BY_EXIT);
        tscope_finalize();
    }
}

void _exit(int status)
{
    finish();
    for (;;)
        syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
    finish();
    for (;;)
        syscall(SYS_exit_group, status);
}
