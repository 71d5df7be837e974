/* list.c - the trace formats of the list (core/formats.h) as their
 * descriptors, each defined in its format's file.  One of the three files
 * that expand the list. */
#include "convert.h"

#define TSCOPE__X(ID, name, words, flags)                                                          \
    extern const struct tscope__trace_format tscope__trace_##name;
TSCOPE__TRACE_FORMATS(TSCOPE__X)
#undef TSCOPE__X

#define TSCOPE__X(ID, name, words, flags)                                                          \
    {&tscope__trace_ids[TSCOPE__FMT_##ID - 1], TSCOPE__FMT_##ID, &tscope__trace_##name},
const struct tscope__trace_entry tscope__traces[] = {TSCOPE__TRACE_FORMATS(TSCOPE__X)};
#undef TSCOPE__X
const unsigned tscope__ntraces = sizeof tscope__traces / sizeof tscope__traces[0];
