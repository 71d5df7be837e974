/* fuzz.h - what the fuzz targets of tests/fuzz/ share.
 *
 * Each target is one file that defines LLVMFuzzerTestOneInput.  It is built
 * twice: with libFuzzer (-fsanitize=fuzzer, TSCOPE_FUZZ=ON, clang only) and
 * with replay.c, whose main() runs it on every file of a corpus folder, so
 * any compiler's build replays the corpora as ordinary tests.
 *
 * FUZZ_ASSERT survives NDEBUG, names the location and the failed condition
 * on file descriptor 2 (not through stderr, which a target may redirect)
 * and aborts: libFuzzer (and the replay test) count that as a crash.
 */
#ifndef TSCOPE_TESTS_FUZZ_FUZZ_H
#define TSCOPE_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FAIL(...)                                                                             \
    do {                                                                                           \
        dprintf(2, "%s:%d: fuzz invariant broken: ", __FILE__, __LINE__);                          \
        dprintf(2, __VA_ARGS__);                                                                   \
        dprintf(2, "\n");                                                                          \
        abort();                                                                                   \
    } while (0)

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            FUZZ_FAIL("%s", #cond);                                                                \
    } while (0)

/* The input as a NUL-terminated string (cut at its first NUL byte), for the
 * targets whose readers take text.  Free it.  Never NULL (aborts when memory
 * runs out). */
char *fuzz_text(const uint8_t *data, size_t size);

/* A path whose file holds exactly the input (for the readers that take a
 * path): an anonymous in-memory file reached through /proc/self/fd, reused
 * by every call of the process, so nothing is left on disk.  Valid until
 * the next call.  Never NULL (aborts when it cannot be written). */
const char *fuzz_input_file(const uint8_t *data, size_t size);

/* 1 if s begins with prefix. */
int fuzz_starts_with(const char *s, const char *prefix);

#endif
