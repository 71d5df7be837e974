/* fuzz_profile.c - fuzz target "profile": the profile.json reader of
 * `taskscope report` (tscope__offline_profile_read, src/offline/profile_read.c, linked
 * in), then what `taskscope report` does with what it read.
 *
 * The input is written to a file (fuzz_input_file) and read.  What it
 * checks:
 *   - on failure: no profile, and one line of message that starts with
 *     "PATH: " (profile_read.c: "always holds one line for this call");
 *   - on success: the ranges the reader promises (1 <= nranks <= 65536,
 *     rank < nranks, type ids ascending, node 0 the root and every other
 *     node's parent an earlier node, at most TSCOPE__UNFINISHED_LIST
 *     unfinished tasks, ended_by a signal, _exit or nothing; dependency
 *     type pairs ascending, each count at least its hazards and remote
 *     edges together; task ids not 0, task states and dependency kinds
 *     known values, remote 0 or 1, ranks 0 to 65535), every name present; the renderers of
 * `taskscope report` (summary and --threads with each sort key, a global profile's global
 * summary, --tree, --dot) and the CSV files run on it without error; a global profile's
 * ranks are in order, as many as it says; a thread's types ascend, each with calls;
 *   - the round trip: the profile written back as profile.json
 *     (tscope__export_json) reads again, and writing that one gives the
 *     same JSON document (compared as JSON values, so -0 and 0 are one).
 * Without libjansson the reader only ever fails; the target then checks
 * its message alone.
 */
#include <string.h>

#include "cli.h"
#include "core/core.h"
#include "export/export.h"
#include "fuzz.h"

#ifdef TSCOPE_HAVE_JANSSON
#include <jansson.h>
#endif

static FILE *sink(void)
{
    static FILE *f;
    if (!f && !(f = fopen("/dev/null", "w")))
        FUZZ_FAIL("cannot open /dev/null");
    return f;
}

/* The message of a failed read: one line, "PATH: problem". */
static void check_message(const char *err, const char *path)
{
    size_t n = strlen(path);
    if (!fuzz_starts_with(err, path) || err[n] != ':' || err[n + 1] != ' ' || !err[n + 2])
        FUZZ_FAIL("the message does not start with \"%s: \": \"%s\"", path, err);
    if (strchr(err, '\n'))
        FUZZ_FAIL("the message is not one line: \"%s\"", err);
}

static void check_profile(const struct tscope__profile *p)
{
    FUZZ_ASSERT(p->program && p->clock && p->mode && p->full_policy);
    FUZZ_ASSERT(p->nranks >= 1 && p->nranks <= 65536 && p->rank >= 0 && p->rank < p->nranks);
    FUZZ_ASSERT(p->ended_by == 0 || p->ended_by == TSCOPE__ENDED_BY_EXIT ||
                (p->ended_by > 0 && p->ended_by < 65));
    for (uint32_t i = 0; i < p->ntypes; i++) {
        FUZZ_ASSERT(p->types[i].name);
        FUZZ_ASSERT(i == 0 || p->types[i].id > p->types[i - 1].id);
    }
    for (uint32_t i = 0; i < p->ncounters; i++)
        FUZZ_ASSERT(p->counters[i].name);
    for (uint32_t i = 0; i < p->nevents; i++)
        FUZZ_ASSERT(p->events[i].name);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        FUZZ_ASSERT(p->threads[i].name);
        for (uint32_t k = 0; k < p->threads[i].ntypes; k++) /* ids ascending, calls >= 1 */
            FUZZ_ASSERT(p->threads[i].types[k].calls >= 1 &&
                        (k == 0 || p->threads[i].types[k].type > p->threads[i].types[k - 1].type));
    }
    if (p->global) { /* a global profile: its ranks in order, as many as it says */
        FUZZ_ASSERT(p->global->nranks >= 1 && p->global->present >= 0 &&
                    p->global->present <= p->global->nranks && p->global->ranks);
        for (int i = 0; i < p->global->nranks; i++)
            FUZZ_ASSERT(p->global->ranks[i].rank == i);
    }
    for (uint32_t i = 0; i < p->nnodes; i++)
        FUZZ_ASSERT(i == 0 ? p->nodes[i].parent == UINT32_MAX : p->nodes[i].parent < i);
    FUZZ_ASSERT(p->nunfinished <= TSCOPE__UNFINISHED_LIST);
    for (uint32_t i = 0; i < p->ndeptypes; i++) {
        const struct tscope__pdeptype *d = &p->deptypes[i], *prev = i ? d - 1 : NULL;
        FUZZ_ASSERT(!prev || d->from > prev->from || (d->from == prev->from && d->to > prev->to));
        /* count >= raw + war + waw + remote, without overflow */
        const uint64_t parts[] = {d->raw, d->war, d->waw, d->remote};
        uint64_t rest = d->count;
        for (int k = 0; k < 4; k++) {
            FUZZ_ASSERT(rest >= parts[k]);
            rest -= parts[k];
        }
    }
    for (uint32_t i = 0; i < p->ntasks; i++)
        FUZZ_ASSERT(p->tasks[i].id != 0 && p->tasks[i].state >= TSCOPE_TASK_LIVE &&
                    p->tasks[i].state <= TSCOPE_TASK_UNFINISHED);
    for (uint32_t i = 0; i < p->ndeps; i++) {
        const struct tscope__pdep *d = &p->deps[i];
        FUZZ_ASSERT(d->kind >= 0 && (d->remote == 0 || d->remote == 1));
        FUZZ_ASSERT(d->from_rank >= 0 && d->from_rank <= 65535 && d->to_rank >= 0 &&
                    d->to_rank <= 65535);
    }
}

/* What `taskscope report` prints (and the CSV files), to /dev/null. */
static void render(const struct tscope__profile *p)
{
    static const char *const sorts[] = {"self", "running", "elapsed", "calls", "mean", "name"};
    FILE *f = sink();
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        FUZZ_ASSERT(tscope__export_summary(p, f, sorts[i], i == 0 ? 20 : 0) == 0);
        FUZZ_ASSERT(tscope__export_threads(p, f, sorts[i], i == 0 ? 3 : 0) == 0); /* --threads */
    }
    if (p->global) /* report of an MPI run folder */
        FUZZ_ASSERT(tscope__global_summary(p, f, 0) == 0 && tscope__global_summary(p, f, 2) == 0);
    FUZZ_ASSERT(tscope__export_tree(p, f) == 0);
    FUZZ_ASSERT(tscope__export_dot(p, f) == 0);
    FUZZ_ASSERT(tscope__export_csv_types(p, f) == 0);
    FUZZ_ASSERT(tscope__export_csv_counters(p, f) == 0);
    FUZZ_ASSERT(tscope__export_folded(p, f) == 0);
    FUZZ_ASSERT(tscope__export_hatchet(p, f) == 0);
    FUZZ_ASSERT(tscope__export_tau(p, f) == 0);
    FUZZ_ASSERT(tscope__export_treedot(p, f) == 0);
    FUZZ_ASSERT(tscope_cli_critical_path(p, f, 0) == 0); /* report --deps */
    FUZZ_ASSERT(tscope_cli_critical_path(p, f, 3) == 0);
}

/* p as profile.json text (free it). */
static char *to_json(const struct tscope__profile *p, size_t *len)
{
    char *text;
    FILE *f = open_memstream(&text, len);
    if (!f)
        FUZZ_FAIL("open_memstream failed");
    FUZZ_ASSERT(tscope__export_json(p, f) == 0);
    fclose(f);
    return text;
}

#ifdef TSCOPE_HAVE_JANSSON
/* a and b are the same JSON document. */
static int same_json(const char *a, const char *b)
{
    json_error_t je;
    json_t *x = json_loads(a, 0, &je), *y = json_loads(b, 0, &je);
    int same = x && y && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size);
    char err[1200];
    memset(err, 'x', sizeof err); /* a stale message must not survive */
    err[sizeof err - 1] = 0;
    struct tscope__profile *p = tscope__offline_profile_read(path, err, sizeof err);
    if (!p) {
        check_message(err, path);
        return 0;
    }
    check_profile(p);
    render(p);

    size_t len1, len2;
    char *json1 = to_json(p, &len1);
    tscope__profile_free(p);
    path = fuzz_input_file((const uint8_t *)json1, len1);
    struct tscope__profile *again = tscope__offline_profile_read(path, err, sizeof err);
    if (!again)
        FUZZ_FAIL("the profile as written does not read back: %s", err);
    check_profile(again);
    char *json2 = to_json(again, &len2);
    tscope__profile_free(again);
#ifdef TSCOPE_HAVE_JANSSON
    if (!same_json(json1, json2))
        FUZZ_FAIL("written, read and written again, the profile differs:\n%s\n---\n%s", json1,
                  json2);
#endif
    free(json1);
    free(json2);
    return 0;
}
