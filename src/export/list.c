/* list.c - the output formats of the list (core/formats.h) as their
 * descriptors, each defined in its format's file.  One of the three files
 * that expand the list. */
#include <strings.h>

#include "output.h"

#define TSCOPE__X(ID, name, words, flags)                                                          \
    extern const struct tscope__output_format tscope__output_##name;
TSCOPE__OUTPUT_FORMATS(TSCOPE__X)
#undef TSCOPE__X

#define TSCOPE__X(ID, name, words, flags)                                                          \
    {&tscope__output_ids[TSCOPE__OUT_INDEX_##ID], &tscope__output_##name},
const struct tscope__output_entry tscope__outputs[] = {TSCOPE__OUTPUT_FORMATS(TSCOPE__X)};
#undef TSCOPE__X
const unsigned tscope__noutputs = sizeof tscope__outputs / sizeof tscope__outputs[0];
