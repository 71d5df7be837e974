/* fuzz_trace.c - fuzz target "trace": the binary trace reader and the
 * replay every converter shares (src/trace/read.c, convert.c), with the
 * Chrome JSON writer and the timeline picture behind it.
 *
 * The input is a trace file (src/trace/format.h).  The target writes it to
 * a file of its own and converts it to Chrome JSON (to /dev/null) and to the
 * timeline (in its folder).  What it checks:
 *   - a failure is one line of message, no newline, naming the file;
 *   - a success saw consistent numbers: every task that began has a stay,
 *     no more counter values and instants than records;
 *   - both conversions of one input agree on what the replay saw.
 * Seeds (corpus/trace): the test suite's fixed log, an OpenMP run with
 * dependencies (cholesky under OMPT), a trace cut inside its last chunk.
 */
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "trace/convert.h"

static char dir[64];

static void check_message(const char *err, const char *path)
{
    FUZZ_ASSERT(err[0] != 0);
    FUZZ_ASSERT(strchr(err, '\n') == NULL);
    FUZZ_ASSERT(strstr(err, path) != NULL || strstr(err, "out of memory") != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/taskscope-fuzz-trace-%ld", (long)getpid());
        char cmd[128];
        snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
        FUZZ_ASSERT(system(cmd) == 0);
    }
    char path[128], gp[128];
    snprintf(path, sizeof path, "%s/trace.tsct", dir);
    snprintf(gp, sizeof gp, "%s/timeline.gp", dir);
    FILE *f = fopen(path, "wb");
    FUZZ_ASSERT(f != NULL);
    FUZZ_ASSERT(size == 0 || fwrite(data, 1, size, f) == size);
    FUZZ_ASSERT(fclose(f) == 0);
    struct tscope__replay_stats a, b;
    char err[1400];
    int ra = tscope__trace_convert(path, TSCOPE__FMT_CHROME, "/dev/null", 0, &a, err, sizeof err);
    if (ra)
        check_message(err, path);
    int rb = tscope__trace_convert(path, TSCOPE__FMT_TIMELINE, gp, 0, &b, err, sizeof err);
    if (rb)
        check_message(err, path);
    FUZZ_ASSERT(ra == rb || strstr(err, "out of memory") != NULL);
    if (ra == 0 && rb == 0) {
        FUZZ_ASSERT(memcmp(&a, &b, sizeof a) == 0); /* one replay, two sinks */
        FUZZ_ASSERT(a.slices >= a.tasks);           /* every task that began has a stay */
        FUZZ_ASSERT(a.instants + a.counters <= a.records);
    }
    return 0;
}
