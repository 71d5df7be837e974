/* outfile.h - a file written whole or not at all, for every writer of an
 * output after the run (the exporters' files, a job's global view, the
 * trace converters, the timeline picture).
 *
 * The content goes to PATH.tmp, renamed to PATH once it is complete and
 * closed; on any failure the temporary file is removed and PATH left as it
 * was, and the failure is said in one line that names PATH and the reason
 * (a full disk: "No space left on device", a file size limit: "File too
 * large").  A writer of several files (Paraver's three) closes each, then
 * renames them all or removes them all.  "-" is standard output, written
 * in place, and so is a PATH that exists and is not a regular file
 * (/dev/null, a FIFO, a terminal: a rename would replace the device).  Nothing here is on the
 * per-event path: writers run at the end.
 */
#ifndef TSCOPE_CORE_OUTFILE_H
#define TSCOPE_CORE_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

struct tscope__outfile {
    FILE *f;                /* where to write: the temporary file, or stdout */
    const char *path;       /* the final name (borrowed) */
    char tmp[PATH_MAX + 8]; /* PATH.tmp; "" for standard output */
    int errnum;             /* the first failed write's errno, 0 */
};

/* Creates path's temporary file and opens o->f on it ("-": stdout); 0, or
 * -1 with "cannot create PATH: reason" in err and nothing made. */
int tscope__outfile_open(struct tscope__outfile *o, const char *path, char *err, size_t errlen);

/* Notes that a write to o->f failed just now: errno says why (the first
 * failure is kept).  Call it where the failure is seen: glibc drops the
 * bytes of a failed write, so closing later succeeds and could only say
 * "Input/output error". */
void tscope__outfile_fail(struct tscope__outfile *o);

/* Closes o->f.  ok: the caller's content is complete.  0 when it is and
 * every write succeeded: the temporary file waits for _commit or
 * _discard.  Else -1 and the temporary file is removed; err gets "writing
 * PATH failed: reason" when a write failed, and keeps the caller's message
 * when only !ok. */
int tscope__outfile_close(struct tscope__outfile *o, int ok, char *err, size_t errlen);

/* Renames a closed temporary file to its path; 0, or -1 with "cannot
 * write PATH: reason" in err and the temporary file removed. */
int tscope__outfile_commit(struct tscope__outfile *o, char *err, size_t errlen);

/* Removes a closed temporary file that will not be committed. */
void tscope__outfile_discard(struct tscope__outfile *o);

/* _close, then _commit when it succeeded: the one-file writer's end. */
int tscope__outfile_finish(struct tscope__outfile *o, int ok, char *err, size_t errlen);

#endif
