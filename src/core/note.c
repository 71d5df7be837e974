/* note.c - the one way taskscope says something that is neither a warning
 * nor an error (what this machine lacks, where the outputs went): a line
 * on stderr, "taskscope: ...", unless TASKSCOPE_QUIET is set (taskscope
 * run -q).  Warnings and errors are always printed. */
#include <stdarg.h>
#include <stdio.h>

#include "core.h"

void tscope__note(const char *fmt, ...)
{
    if (tscope__g.cfg.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("taskscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}
