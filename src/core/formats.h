/* formats.h - the one list of output formats and trace formats.
 *
 * Each format is one file that defines its descriptor: an output format
 * (src/export/NAME.c) a struct tscope__output_format (export/output.h:
 * its files and their writers, help line, whether `taskscope convert`
 * writes it from a saved profile), a trace format (src/trace/NAME.c) a
 * struct tscope__trace_format (trace/convert.h: default file names, what
 * the build lacks for it, its writer and job-level writer).  This list
 * names them, in the order they are written and shown, with the words that
 * select them.  Adding a format: its file, one entry here
 * (docs/architecture.md, "How to add").
 *
 * The list is a header that includes nothing, at the bottom with core,
 * because the measured process reads it too: core's configuration must
 * know every word of TASKSCOPE_OUTPUTS and TASKSCOPE_TRACE at tscope_init
 * (a bad word is a warning there), while the trace converters live in a
 * library the process never loads (zlib, OTF2).  So the words are here and
 * everything else is in the format's file.  Three files expand the list:
 * core/formats.c (the words, bits and accepted-values texts), export/list.c
 * and trace/list.c (the descriptors); every other file uses their tables,
 * so a build with more formats (tests/formats/, TSCOPE_EXTRA_FORMATS)
 * recompiles only these.
 *
 * An entry is X(ID, name, "word, alias, ...", flags):
 *   ID     the constants TSCOPE__OUT_ID (a bit of tscope__config.outputs),
 *          TSCOPE__FMT_ID (a trace format's number) and TSCOPE__TRACE_ID
 *          (its bit in tscope__config.trace_formats)
 *   name   the descriptor's name: tscope__output_NAME, tscope__trace_NAME
 *   words  what selects it (any case), the first its name everywhere
 *          (help, docs, messages), separated by ", "
 *   flags  TSCOPE__FORMAT_IN_ALL: the word "all" selects it too
 */
#ifndef TSCOPE_CORE_FORMATS_H
#define TSCOPE_CORE_FORMATS_H

#include <stddef.h>

#define TSCOPE__FORMAT_IN_ALL 1u

/* Written at finalize from the profile (TASKSCOPE_OUTPUTS, run --outputs). */
#define TSCOPE__OUTPUT_FORMATS(X)                                                                  \
    X(CSV, csv, "csv", TSCOPE__FORMAT_IN_ALL)                                                      \
    X(JSON, json, "json", TSCOPE__FORMAT_IN_ALL)                                                   \
    X(DOT, dot, "dot", TSCOPE__FORMAT_IN_ALL)                                                      \
    X(TREE, tree, "tree", TSCOPE__FORMAT_IN_ALL)                                                   \
    X(FOLDED, folded, "folded", 0)                                                                 \
    X(HATCHET, hatchet, "hatchet", 0)                                                              \
    X(TAU, tau, "tau", 0)                                                                          \
    X(TREEDOT, treedot, "treedot", 0)                                                              \
    TSCOPE__EXTRA_OUTPUT_FORMATS(X)

/* Converted from the binary trace, trace.tsct (TASKSCOPE_TRACE, run
 * --trace, convert --to).  The binary trace itself is no entry: it is what
 * they are converted from (TASKSCOPE_TRACE=1/on/binary writes it alone). */
#define TSCOPE__TRACE_FORMATS(X)                                                                   \
    X(CHROME, chrome, "chrome, perfetto, json", TSCOPE__FORMAT_IN_ALL)                             \
    X(OTF2, otf2, "otf2", TSCOPE__FORMAT_IN_ALL)                                                   \
    X(PARAVER, paraver, "paraver, prv", TSCOPE__FORMAT_IN_ALL)                                     \
    X(TIMELINE, timeline, "timeline", TSCOPE__FORMAT_IN_ALL)                                       \
    TSCOPE__EXTRA_TRACE_FORMATS(X)

/* A build may add formats from outside src/ (tests/formats/): the header
 * TSCOPE_EXTRA_FORMATS names defines TSCOPE__EXTRA_OUTPUT_FORMATS(X) and
 * TSCOPE__EXTRA_TRACE_FORMATS(X) with entries as above. */
#ifdef TSCOPE_EXTRA_FORMATS
#include TSCOPE_EXTRA_FORMATS
#else
#define TSCOPE__EXTRA_OUTPUT_FORMATS(X)
#define TSCOPE__EXTRA_TRACE_FORMATS(X)
#endif

/* Positions in the lists. */
enum {
#define TSCOPE__X(ID, name, words, flags) TSCOPE__OUT_INDEX_##ID,
    TSCOPE__OUTPUT_FORMATS(TSCOPE__X)
#undef TSCOPE__X
};

/* Bits of tscope__config.outputs: one per output format, and "tasks" (the
 * instance graph in profile.json: 100,000 tasks are 25 MB and half a
 * second of finalize, so only when asked for - or when the run recorded
 * dependencies, whose critical path needs them), which is no format. */
enum {
#define TSCOPE__X(ID, name, words, flags) TSCOPE__OUT_##ID = 1 << TSCOPE__OUT_INDEX_##ID,
    TSCOPE__OUTPUT_FORMATS(TSCOPE__X)
#undef TSCOPE__X
        TSCOPE__OUT_TASKS = 1 << 20,
#define TSCOPE__X(ID, name, words, flags) ((flags)&TSCOPE__FORMAT_IN_ALL ? TSCOPE__OUT_##ID : 0) |
    TSCOPE__OUT_ALL = TSCOPE__OUTPUT_FORMATS(TSCOPE__X) 0, /* "all" and the default */
#undef TSCOPE__X
#define TSCOPE__X(ID, name, words, flags) TSCOPE__OUT_##ID |
    TSCOPE__OUT_ANY = TSCOPE__OUTPUT_FORMATS(TSCOPE__X) TSCOPE__OUT_TASKS
#undef TSCOPE__X
};

/* A trace format's number (0: none), the one enum of the trace formats;
 * TSCOPE__TRACE_ID is its bit in tscope__config.trace_formats. */
enum {
    TSCOPE__FMT_NONE = 0,
#define TSCOPE__X(ID, name, words, flags) TSCOPE__FMT_##ID,
    TSCOPE__TRACE_FORMATS(TSCOPE__X)
#undef TSCOPE__X
};
#define TSCOPE__TRACE_BIT(format) (1 << ((format)-1))
enum {
#define TSCOPE__X(ID, name, words, flags) TSCOPE__TRACE_##ID = TSCOPE__TRACE_BIT(TSCOPE__FMT_##ID),
    TSCOPE__TRACE_FORMATS(TSCOPE__X)
#undef TSCOPE__X
#define TSCOPE__X(ID, name, words, flags) ((flags)&TSCOPE__FORMAT_IN_ALL ? TSCOPE__TRACE_##ID : 0) |
        TSCOPE__TRACE_ALL = TSCOPE__TRACE_FORMATS(TSCOPE__X) 0
#undef TSCOPE__X
};

/* A list entry as data (core/formats.c). */
struct tscope__format_id {
    const char *name;  /* the first word */
    const char *words; /* every word, ", " between */
    int bit;           /* TSCOPE__OUT_ID, TSCOPE__TRACE_ID */
    unsigned flags;    /* TSCOPE__FORMAT_* */
};

/* The lists' entries in order: output formats, trace formats (trace
 * format f is tscope__trace_ids[f - 1]). */
extern const struct tscope__format_id tscope__output_ids[];
extern const unsigned tscope__noutput_ids;
extern const struct tscope__format_id tscope__trace_ids[];
extern const unsigned tscope__ntrace_ids;

/* The accepted values of TASKSCOPE_OUTPUTS and TASKSCOPE_TRACE, every word
 * named (core/config.c's table: its warnings, docs/configuration.md). */
extern const char tscope__outputs_accepted[], tscope__trace_accepted[];

/* 1 if the n bytes at w are one of id's words (any case), else 0. */
int tscope__format_is(const struct tscope__format_id *id, const char *w, size_t n);

/* The output format, or trace format, that the n bytes at w name: its
 * entry, or NULL. */
const struct tscope__format_id *tscope__output_id_find(const char *w, size_t n);
const struct tscope__format_id *tscope__trace_id_find(const char *w, size_t n);

#endif
