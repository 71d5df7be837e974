/* read.h - the input readers of src/model/ (tscope_mexp_read dispatches)
 * and what they share: the message format and parameter matching. */
#ifndef TSCOPE_MODEL_READ_H
#define TSCOPE_MODEL_READ_H

#include <stddef.h>

#include "taskscope/model.h"

/* Each parses the whole file text (modifiable, NUL-terminated, alive until
 * the reader returns) into e and returns 0 or a negative error with
 * "FILE:LINE: problem" (or "FILE: JSON path: problem") in err. */
int tscope__read_text(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen);
int tscope__read_json(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen);
/* JSON Lines and Talpas (talpas: ';' separates the fields). */
int tscope__read_lines(tscope_mexp_t *e, const char *path, char *text, int talpas, char *err,
                       size_t errlen);

/* Writes "PATH:LINE: problem" (line > 0) or "PATH: problem" into err and
 * returns code: the one place that shapes reader messages. */
__attribute__((format(printf, 6, 7))) int tscope__read_fail(char *err, size_t errlen, int code,
                                                            const char *path, int line,
                                                            const char *fmt, ...);

/* Matches the n parameter names of a file (in the file's order) with those
 * of e: the first file declares them in its order, a later file must name
 * the same set, in any order.  map[i] gets e's index of names[i] (map has
 * room for TSCOPE_MODEL_MAX_PARAMS).  Rejects empty or repeated names, more
 * than TSCOPE_MODEL_MAX_PARAMS, and a set that differs from e's (naming
 * both files and the names that differ).  Messages start "PATH:LINE: "
 * (line > 0) or "PATH: where: ".  0, TSCOPE_EFORMAT or TSCOPE_ENOMEM. */
int tscope__read_params(tscope_mexp_t *e, const char *path, int line, const char *where,
                        const char *const *names, size_t n, unsigned *map, char *err,
                        size_t errlen);

/* map[i] = e's index of names[i] when the n (distinct) names are exactly
 * e's parameters, in any order: 0; otherwise -1 (no message). */
int tscope__params_map(const tscope_mexp_t *e, const char *const *names, size_t n, unsigned *map);

#endif
