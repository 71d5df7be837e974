/* fuzz_recover.c - fuzz target "recover": the crash journal's reader
 * (tscope__offline_recover, src/offline/recover.c and src/lifecycle/recover.c,
 * linked in), which `taskscope run`
 * uses to rebuild the outputs of a program that died without writing them
 * from the mapping it left (.taskscope-PID.map: a header, then blocks that
 * say what they hold - src/profile/shard.h, src/lifecycle/journal.h).
 *
 * A real mapping is megabytes of mostly zeros (a shard's chunk directories,
 * log chunks of 4096 records), so the input is not the file itself but a
 * recipe for it, all numbers little-endian:
 *
 *   u32 length       the mapping's size in bytes (cut to MAP_MAX, 8 MiB)
 *   u64 died_ns      CLOCK_MONOTONIC when the program was seen gone (0: not
 *                    known), tscope__offline_recover's death_mono_ns
 *   then patches to the end of the input, each
 *     u32 offset, u16 n, n bytes   written at offset
 *
 * over a file of `length` zero bytes, in order (a later patch overwrites an
 * earlier one).  What lies past `length`, and what the input lacks (a short
 * header reads as zeros, a short patch gives what is there), is dropped.
 * The target writes that file as process 1's .taskscope-1.map (a plain
 * file: the reader opens the name, link or not) in a folder of its own and
 * recovers.  What it checks:
 *   - on failure: -1 and one line of message, no newline, that names the
 *     mapping and what in it cannot be read ("cannot read
 *     DIR/.taskscope-1.map: WHAT") or says memory ran out ("cannot
 *     recover ...");
 *   - on success: the run's length is a finite number >= 0, and every output
 *     the recovered configuration asks for exists;
 *   - either way, what the recovery built is released again (the globals it
 *     fills are empty for the next input: no leak, no stale name).
 * The folder is emptied after each input and removed at exit.
 * Seeds (corpus/recover) are mappings of real runs killed by SIGKILL, made
 * by make_recover_seeds.sh (tests/fuzz/README.md says which); the mapping
 * carries no layout stamp, so after a change of the structs in it they
 * still replay, read as damaged blocks: make them again then.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "lifecycle/recover.h"
#include "offline/offline.h"
#include "fuzz.h"

#define MAP_MAX (8u << 20) /* a seed of four threads' shards is about 3 MiB */

static char dir[64];
static char map_path[128];

static void empty_dir(void)
{
    DIR *d = opendir(dir);
    if (!d)
        FUZZ_FAIL("cannot open %s", dir);
    struct dirent *e;
    char path[512];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

static void remove_dir(void)
{
    empty_dir();
    rmdir(dir);
}

/* The next `bytes` bytes at *at as a little-endian number (those the input
 * lacks as zeros); *at moves past them. */
static uint64_t take(const uint8_t **at, const uint8_t *end, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && *at < end; i++, (*at)++)
        v |= (uint64_t) * *at << (8 * i);
    return v;
}

/* Writes the mapping the input describes at map_path: `length` zero bytes
 * (a sparse file), then the patches. */
static void write_mapping(const uint8_t *at, const uint8_t *end, uint64_t length)
{
    int fd = open(map_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)length))
        FUZZ_FAIL("cannot write %s", map_path);
    while (end - at >= 6) {
        uint64_t offset = take(&at, end, 4);
        size_t n = (size_t)take(&at, end, 2);
        if (n > (size_t)(end - at))
            n = (size_t)(end - at);
        const uint8_t *bytes = at;
        at += n;
        if (offset >= length)
            continue;
        if (n > length - offset)
            n = (size_t)(length - offset);
        if (pwrite(fd, bytes, n, (off_t)offset) != (ssize_t)n)
            FUZZ_FAIL("cannot write %s", map_path);
    }
    if (close(fd))
        FUZZ_FAIL("cannot write %s", map_path);
}

static int exists(const char *name)
{
    char path[128];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &sb) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/taskscope-fuzz-recover-XXXXXX");
        if (!mkdtemp(dir) || !(sink = fopen("/dev/null", "w")))
            FUZZ_FAIL("cannot make a folder or open /dev/null");
        atexit(remove_dir);
        snprintf(map_path, sizeof map_path, "%s/.taskscope-1.map", dir);
    }
    const uint8_t *at = data, *end = data + size;
    uint64_t length = take(&at, end, 4);
    if (length > MAP_MAX)
        length = MAP_MAX;
    uint64_t died_ns = take(&at, end, 8);
    write_mapping(at, end, length);

    char why[1024] = "";
    double as_of = -1;
    int rc = tscope__offline_recover(dir, 1, 9, died_ns, sink, &as_of, why, sizeof why);
    if (rc == 0) {
        FUZZ_ASSERT(isfinite(as_of) && as_of >= 0);
        /* what the program was configured to write */
        const struct tscope__config *cfg = tscope__recovered_config();
        FUZZ_ASSERT(cfg != NULL);
        if (cfg->outputs & TSCOPE__OUT_JSON)
            FUZZ_ASSERT(exists("profile.json"));
        if (cfg->outputs & TSCOPE__OUT_CSV)
            FUZZ_ASSERT(exists("types.csv") && exists("counters.csv"));
        if (cfg->outputs & TSCOPE__OUT_DOT)
            FUZZ_ASSERT(exists("taskgraph.dot"));
        if (cfg->outputs & TSCOPE__OUT_TREE)
            FUZZ_ASSERT(exists("tasktree.txt"));
    } else {
        char named[sizeof map_path + 16];
        snprintf(named, sizeof named, "cannot read %s: ", map_path);
        if (rc != -1 || !why[0] || strchr(why, '\n') ||
            !((fuzz_starts_with(why, named) && why[strlen(named)]) ||
              fuzz_starts_with(why, "cannot recover "))) /* out of memory */
            FUZZ_FAIL("recovery returned %d: \"%s\"", rc, why);
    }
    tscope__offline_recover_release();
    FUZZ_ASSERT(tscope__recovered_config() == NULL);
    empty_dir();
    return 0;
}
