/* read.h - the input readers of src/model/ (tscope_mexp_read dispatches). */
#ifndef TSCOPE_MODEL_READ_H
#define TSCOPE_MODEL_READ_H

#include <stddef.h>

#include "taskscope/model.h"

/* Each parses the whole file text (modifiable, NUL-terminated) into e and
 * returns 0 or a negative error with "FILE:LINE: problem" in err. */
int tscope__read_text(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen);
int tscope__read_json(tscope_mexp_t *e, const char *path, char *text, char *err, size_t errlen);
/* JSON Lines and Talpas (talpas: ';' separates the fields). */
int tscope__read_lines(tscope_mexp_t *e, const char *path, char *text, int talpas, char *err,
                       size_t errlen);

#endif
