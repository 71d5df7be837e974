/* counts.c - an output format added by a test build (tests/formats/,
 * TSCOPE_EXTRA_FORMATS): counts.txt, each task type's name and calls, one
 * line each.  It is the whole of the format: this file and its entry in the
 * list (tests/CMakeLists.txt writes the test build's extra entries); `run
 * --outputs`, `convert --to` and the help find it there
 * (tests/test_formats_extra.sh). */
#include "export/output.h"
#include "taskscope/taskscope.h"

static int write_counts(const struct tscope__profile *p, FILE *f)
{
    for (uint32_t i = 0; i < p->ntypes; i++)
        fprintf(f, "%s %llu\n", p->types[i].name, (unsigned long long)p->types[i].calls);
    return ferror(f) ? TSCOPE_EIO : 0;
}

const struct tscope__output_format tscope__output_counts = {
    "each task type's calls, a line each (a test build's format)",
    TSCOPE__OUTPUT_FROM_PROFILE,
    {{"counts.txt", write_counts, 0, NULL}}};
