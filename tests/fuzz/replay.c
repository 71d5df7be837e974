/* replay.c - main() of the replay drivers: runs a fuzz target's
 * LLVMFuzzerTestOneInput on every regular file of the folders (or on the
 * files) named on the command line, in name order, one after another.
 *
 * This is what ctest runs (fuzz_replay_NAME on tests/fuzz/corpus/NAME/):
 * the corpora become ordinary tests of every build, with or without
 * libFuzzer.  A target's failed invariant aborts the process; a folder with
 * no input fails too (a corpus that went missing must not pass silently).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Runs the target on one file; 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* a copy of exactly n bytes, so ASan sees a read past the input */
    uint8_t *input = malloc(n ? n : 1);
    if (!input) {
        free(buf);
        return -1;
    }
    memcpy(input, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(input, n);
    free(input);
    return 0;
}

/* Runs every regular file of dir; the number run, or -1. */
static int replay_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: %s: cannot list\n", dir);
        return -1;
    }
    int ran = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(path))
                rc = -1;
            else
                ran++;
        }
        free(names[i]);
    }
    free(names);
    return rc ? rc : ran;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_FOLDER|FILE...\n", argv[0]);
        return 2;
    }
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int ran;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            ran = replay_dir(argv[i]);
        else
            ran = replay_file(argv[i]) ? -1 : 1;
        if (ran <= 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], ran ? "failed" : "no input files");
            return 1;
        }
        total += ran;
    }
    printf("replay: %d inputs ran without breaking an invariant\n", total);
    return 0;
}
