/* text.h - a growable text buffer, for whatever writes text of unknown
 * length in memory: the live stream's snapshots (src/live), the
 * dashboard's answers (cli/dashboard_*.c).  A failed allocation is sticky
 * (failed): a writer appends without checking each step and looks once at
 * the end.  Not thread-safe: one writer per buffer. */
#ifndef TSCOPE_CORE_TEXT_H
#define TSCOPE_CORE_TEXT_H

#include <stdarg.h>
#include <stddef.h>

struct tscope__text {
    char *p; /* NUL-terminated while len > 0 and !failed */
    size_t len, cap;
    int failed;
};

void tscope__text_add(struct tscope__text *t, const char *s, size_t n);
void tscope__text_str(struct tscope__text *t, const char *s);
void tscope__text_printf(struct tscope__text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tscope__text_vprintf(struct tscope__text *t, const char *fmt, va_list ap);
/* s as a JSON string, quotes included (json_escape.h). */
void tscope__text_json_str(struct tscope__text *t, const char *s);
void tscope__text_free(struct tscope__text *t);

#endif
