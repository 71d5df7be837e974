/* golden.h - reading files and comparing output with golden files in
 * tests/golden/ (TSCOPE_REGENERATE=1 rewrites them instead). */
#ifndef TSCOPE_TESTS_GOLDEN_H
#define TSCOPE_TESTS_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* The whole file as a string (free it), or NULL if it cannot be read. */
static inline char *test_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&buf, &cap, '\0', f);
    fclose(f);
    if (n < 0) {
        free(buf);
        return strdup("");
    }
    return buf;
}

/* Path of tests/golden/NAME in the source tree. */
static inline const char *test_golden_path(const char *name)
{
    static char path[1200];
    const char *src = getenv("TSCOPE_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/golden/%s", src ? src : ".", name);
    return path;
}

/* Fails the test unless text equals tests/golden/NAME, naming the first
 * differing line. */
static inline void test_check_golden(const char *name, const char *text)
{
    const char *path = test_golden_path(name);
    const char *regen = getenv("TSCOPE_REGENERATE");
    if (regen && strcmp(regen, "1") == 0) {
        FILE *f = fopen(path, "w");
        ASSERT(f != NULL);
        fputs(text, f);
        fclose(f);
        fprintf(stderr, "regenerated %s\n", path);
        return;
    }
    char *want = test_slurp(path);
    if (!want)
        TEST_FAIL("missing golden file %s (TSCOPE_REGENERATE=1 creates it)", path);
    if (strcmp(want, text) != 0) {
        size_t line = 1;
        for (size_t i = 0; want[i] && want[i] == text[i]; i++)
            line += want[i] == '\n';
        TEST_FAIL("%s differs from the output at line %zu:\n--- output:\n%s", path, line, text);
    }
    free(want);
}

#endif
