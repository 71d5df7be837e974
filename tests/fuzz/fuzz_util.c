/* fuzz_util.c - the helpers of fuzz.h: the input as text, or as a file.
 *
 * The file is a memfd created once per process (the targets run inputs one
 * after another on one thread) and rewritten for each input; readers open
 * it by name ("/proc/self/fd/N"), which gives them their own file offset.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        FUZZ_FAIL("out of memory for a %zu-byte input", size);
    if (size)
        memcpy(s, data, size);
    s[size] = 0;
    return s;
}

const char *fuzz_input_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("taskscope-fuzz-input", 0);
        if (fd < 0)
            FUZZ_FAIL("memfd_create failed");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0)
        FUZZ_FAIL("ftruncate of the input file failed");
    for (size_t done = 0; done < size;) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        if (n <= 0)
            FUZZ_FAIL("writing the input file failed");
        done += (size_t)n;
    }
    return path;
}

int fuzz_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}
