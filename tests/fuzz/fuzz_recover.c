/* fuzz_recover.c - fuzz target "recover": the crash journal's reader
 * (tscope_cli_recover, cli/recover.c, linked in), which `taskscope run`
 * uses to rebuild the outputs of a program that died without writing them.
 *
 * The input is a 4-byte length L (little-endian), L bytes of state file, a
 * 4-byte length A, A bytes of appendix (the instances and dependencies),
 * then the journal (src/lifecycle/journal.h has the formats).  The target
 * writes them as process 1's .taskscope-1.state-0/-1, .taskscope-1.appendix
 * and .taskscope-1.journal-0/-1 in a folder of its own (the reader picks
 * the files by the generation the state names) and recovers.  What it checks:
 *   - on failure: one line of message, no newline, saying what could not be
 *     read ("cannot read PATH: ...", "no crash journal in ...", or "cannot
 *     recover ...: out of memory");
 *   - on success: the run's length is a finite number >= 0, and every output
 *     the state's configuration asks for exists;
 *   - either way, what the recovery built is released again (the globals it
 *     fills are empty for the next input: no leak, no stale name).
 * Seeds (corpus/recover) are states and journals of real runs killed by
 * SIGKILL (tests/fuzz/README.md says how they were made); they carry the
 * store's layout stamp, so a change of the store's structs turns them into
 * inputs that are refused ("written by another build").
 */
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/config.h"
#include "fuzz.h"

static char dir[64];

static void put(const char *name, const uint8_t *data, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
        FUZZ_FAIL("cannot write %s", path);
}

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

/* Reads a 4-byte little-endian length at *at (what is there, if short) and
 * returns it, cut to what follows. */
static size_t part(const uint8_t **at, const uint8_t *end)
{
    uint32_t len = 0;
    if (end - *at >= 4) {
        len = (uint32_t)(*at)[0] | (uint32_t)(*at)[1] << 8 | (uint32_t)(*at)[2] << 16 |
              (uint32_t)(*at)[3] << 24;
        *at += 4;
    } else {
        *at = end;
    }
    return len < (size_t)(end - *at) ? len : (size_t)(end - *at);
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
    }
    const uint8_t *at = data, *end = data + size;
    size_t len = part(&at, end);
    put(".taskscope-1.state-0", at, len);
    put(".taskscope-1.state-1", at, len);
    at += len;
    len = part(&at, end);
    put(".taskscope-1.appendix", at, len);
    at += len;
    put(".taskscope-1.journal-0", at, (size_t)(end - at));
    put(".taskscope-1.journal-1", at, (size_t)(end - at));

    char why[1024] = "";
    double as_of = -1;
    int rc = tscope_cli_recover(dir, 1, 9, 0, sink, &as_of, why, sizeof why);
    if (rc == 0) {
        FUZZ_ASSERT(isfinite(as_of) && as_of >= 0);
        /* what the program was configured to write */
        const struct tscope__config *cfg = tscope_cli_recovered_config();
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
        FUZZ_ASSERT(why[0] && !strchr(why, '\n'));
        FUZZ_ASSERT(fuzz_starts_with(why, "cannot read ") ||
                    fuzz_starts_with(why, "no crash journal in ") ||
                    fuzz_starts_with(why, "cannot recover ")); /* out of memory */
    }
    tscope_cli_recover_release();
    FUZZ_ASSERT(tscope_cli_recovered_config() == NULL);
    empty_dir();
    return 0;
}
