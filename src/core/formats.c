/* formats.c - the list of formats (formats.h) as data: each entry's words
 * and bit, and the texts that name them all, for the configuration's
 * table (its accepted values, so docs/configuration.md too) and the CLI's
 * messages.  One of the three files that expand the list. */
#include "formats.h"

#include <strings.h>

#define TSCOPE__X(ID, name, words, flags) {#name, words, TSCOPE__OUT_##ID, flags},
const struct tscope__format_id tscope__output_ids[] = {TSCOPE__OUTPUT_FORMATS(TSCOPE__X)};
#undef TSCOPE__X
const unsigned tscope__noutput_ids = sizeof tscope__output_ids / sizeof tscope__output_ids[0];

#define TSCOPE__X(ID, name, words, flags) {#name, words, TSCOPE__TRACE_##ID, flags},
const struct tscope__format_id tscope__trace_ids[] = {TSCOPE__TRACE_FORMATS(TSCOPE__X)};
#undef TSCOPE__X
const unsigned tscope__ntrace_ids = sizeof tscope__trace_ids / sizeof tscope__trace_ids[0];

#define TSCOPE__X(ID, name, words, flags) words ", "
const char tscope__outputs_accepted[] =
    "comma-separated: " TSCOPE__OUTPUT_FORMATS(TSCOPE__X) "tasks, all, none";
const char tscope__trace_accepted[] =
    "0/off, 1/on/binary, or comma-separated formats: " TSCOPE__TRACE_FORMATS(TSCOPE__X) "all";
#undef TSCOPE__X

int tscope__format_is(const struct tscope__format_id *id, const char *w, size_t n)
{
    for (const char *p = id->words; *p;) {
        size_t len = 0;
        while (p[len] && p[len] != ',')
            len++;
        if (len == n && strncasecmp(p, w, n) == 0)
            return 1;
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

static const struct tscope__format_id *find(const struct tscope__format_id *ids, unsigned n,
                                            const char *w, size_t len)
{
    for (unsigned i = 0; i < n; i++)
        if (tscope__format_is(&ids[i], w, len))
            return &ids[i];
    return NULL;
}

const struct tscope__format_id *tscope__output_id_find(const char *w, size_t n)
{
    return find(tscope__output_ids, tscope__noutput_ids, w, n);
}

const struct tscope__format_id *tscope__trace_id_find(const char *w, size_t n)
{
    return find(tscope__trace_ids, tscope__ntrace_ids, w, n);
}
