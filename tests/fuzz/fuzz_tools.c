/* fuzz_tools.c - fuzz target "tools": the TASKSCOPE_TOOLS list as
 * tscope__tools_load (src/tool/load.c) splits and loads it.
 *
 * The list parsing is not separable from the loading, so the loader's
 * dlopen and dlerror are replaced at link time (-Wl,--wrap=dlopen,
 * --wrap=dlerror): no path the fuzzer makes up is ever opened.  The fake
 * dlopen logs every path and answers by the file name (after the last '/',
 * less a "libtaskscope-tool-" prefix):
 *   ok...      loads: a plugin whose init registers INIT, FINALIZE (sync)
 *              and TASK_BEGIN (batched) callbacks and succeeds;
 *   fail...    loads: the same plugin, but its init fails;
 *   abi...     loads: the same plugin, declaring another ABI version;
 *   noinit...  loads a library without the init symbol (libm);
 *   anything else: "not found".
 * The three plugins are one init function, tscope_tool_init_v1, exported
 * by this program (dlopen(NULL) finds it); the kind is what the fake
 * dlopen answered last.
 *
 * The input (up to its first NUL) is the list.  The target splits it as
 * load.c documents (colon-separated, empty items skipped, at most 4095
 * bytes, TSCOPE__TOOLS_MAX plugins) and checks against that model: the
 * paths opened (an entry with a '/' as given, a bare NAME as
 * .../tools/libtaskscope-tool-NAME.so first and libtaskscope-tool-NAME.so
 * last), the number of plugins loaded, one warning line per entry not
 * loaded, INIT delivered once to each loaded plugin and to no other, the
 * callback masks of exactly the loaded plugins, and after
 * tscope__tools_finalize: FINALIZE and the finalize function once per
 * plugin, no callback left.
 *
 * A path longer than load.c's buffer (1024 bytes) is cut there: the target
 * checks that such a path is a prefix of what was meant, not more.
 * Concurrency: single-threaded.
 */
#include <dlfcn.h>
#include <string.h>

#include "fuzz.h"
#include "tool/tools.h"

#define LIST_MAX 4095     /* load.c copies the list into char[4096] */
#define PATH_MAX_LEN 1023 /* load.c's char path[1024] */

enum kind { NOT_FOUND, OK, FAIL, ABI, NOINIT };

void *__real_dlopen(const char *path, int flags);
void *__wrap_dlopen(const char *path, int flags);
char *__real_dlerror(void);
char *__wrap_dlerror(void);
int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

static char **opened; /* the paths dlopen was asked for, this input */
static size_t nopened, cap_opened;
static enum kind last_kind;
static int error_pending;
static int inits, finalize_events, finalizes; /* deliveries seen */

static enum kind kind_of(const char *path)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    if (fuzz_starts_with(name, "libtaskscope-tool-"))
        name += strlen("libtaskscope-tool-");
    if (fuzz_starts_with(name, "ok"))
        return OK;
    if (fuzz_starts_with(name, "fail"))
        return FAIL;
    if (fuzz_starts_with(name, "abi"))
        return ABI;
    if (fuzz_starts_with(name, "noinit"))
        return NOINIT;
    return NOT_FOUND;
}

void *__wrap_dlopen(const char *path, int flags)
{
    if (!path) /* not the loader's call */
        return __real_dlopen(path, flags);
    if (nopened == cap_opened) {
        cap_opened = cap_opened ? 2 * cap_opened : 64;
        if (!(opened = realloc(opened, cap_opened * sizeof *opened)))
            FUZZ_FAIL("out of memory");
    }
    if (!(opened[nopened++] = strdup(path)))
        FUZZ_FAIL("out of memory");
    last_kind = kind_of(path);
    error_pending = last_kind == NOT_FOUND;
    switch (last_kind) {
    case NOT_FOUND:
        return NULL;
    case NOINIT:
        return __real_dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    default:
        return __real_dlopen(NULL, RTLD_NOW | RTLD_LOCAL);
    }
}

char *__wrap_dlerror(void)
{
    if (!error_pending)
        return __real_dlerror();
    error_pending = 0;
    return (char *)"fuzz: no such plugin";
}

static void on_init(const tscope_tool_ctx_t *ctx, const tscope_tool_init_info_t *info)
{
    FUZZ_ASSERT(ctx->tool_data == &inits && info && info->struct_size == sizeof *info);
    inits++;
}

static void on_finalize(const tscope_tool_ctx_t *ctx)
{
    FUZZ_ASSERT(ctx->tool_data == &inits);
    finalize_events++;
}

static void on_task_begin(const tscope_tool_ctx_t *ctx, uint64_t task, tscope_type_t type)
{
    (void)ctx;
    (void)task;
    (void)type;
    FUZZ_FAIL("no task event is delivered here");
}

static void finalize(void *tool_data)
{
    FUZZ_ASSERT(tool_data == &inits);
    finalizes++;
}

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg)
{
    FUZZ_ASSERT(api->abi_version == TSCOPE_TOOL_ABI_VERSION && api->handle);
    FUZZ_ASSERT(last_kind == OK || last_kind == FAIL || last_kind == ABI);
    reg->abi_version = last_kind == ABI ? TSCOPE_TOOL_ABI_VERSION + 1 : TSCOPE_TOOL_ABI_VERSION;
    reg->tool_data = &inits;
    reg->finalize = finalize;
    FUZZ_ASSERT(api->set_callback(api->handle, TSCOPE_TOOL_EVENT_INIT,
                                  (tscope_tool_callback_t)on_init, TSCOPE_TOOL_SYNC) > 0);
    FUZZ_ASSERT(api->set_callback(api->handle, TSCOPE_TOOL_EVENT_FINALIZE,
                                  (tscope_tool_callback_t)on_finalize, TSCOPE_TOOL_SYNC) > 0);
    FUZZ_ASSERT(api->set_callback(api->handle, TSCOPE_TOOL_EVENT_TASK_BEGIN,
                                  (tscope_tool_callback_t)on_task_begin, TSCOPE_TOOL_BATCHED) > 0);
    return last_kind == FAIL ? TSCOPE_EINVAL : 0;
}

/* The paths opened for `entry`, from opened[*next] on; 1 if one opened. */
static int check_entry(const char *entry, size_t *next)
{
    size_t len = strlen(entry);
    FUZZ_ASSERT(*next < nopened);
    const char *path = opened[(*next)++];
    if (strchr(entry, '/')) { /* as given (cut at load.c's buffer) */
        FUZZ_ASSERT(strlen(path) == (len < PATH_MAX_LEN ? len : PATH_MAX_LEN));
        FUZZ_ASSERT(strncmp(path, entry, strlen(path)) == 0);
        return kind_of(path) != NOT_FOUND;
    }
    /* a bare name: in tools/ and taskscope/tools/ next to the library, then
     * the loader's path; the first that opens ends the search */
    static const char *const forms[] = {
        "/tools/libtaskscope-tool-", "/taskscope/tools/libtaskscope-tool-", "libtaskscope-tool-"};
    for (size_t f = 0;; f++) {
        const char *at = f < 2 ? strstr(path, forms[f]) : path;
        FUZZ_ASSERT(at && fuzz_starts_with(at, forms[f]));
        if (strlen(path) < PATH_MAX_LEN) { /* whole: the name, then ".so" */
            at += strlen(forms[f]);
            FUZZ_ASSERT(strncmp(at, entry, len) == 0 && strcmp(at + len, ".so") == 0);
        }
        if (kind_of(path) != NOT_FOUND)
            return 1;
        if (f == 2)
            return 0;
        FUZZ_ASSERT(*next < nopened);
        path = opened[(*next)++];
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *list = fuzz_text(data, size);
    nopened = 0;
    inits = finalize_events = finalizes = 0;

    /* the loader's warnings, captured (glibc's stderr is a variable) */
    char *warnings;
    size_t warnings_len;
    FILE *saved = stderr, *capture = open_memstream(&warnings, &warnings_len);
    if (!capture)
        FUZZ_FAIL("open_memstream failed");
    stderr = capture;
    int loaded = tscope__tools_load(list, 0, 1, 64);
    uint32_t sync_mask = tscope__tools_sync_mask, batched_mask = tscope__tools_batched_mask;
    int inits_at_load = inits;
    tscope__tools_finalize(123);
    stderr = saved;
    fclose(capture);

    /* the model: split as load.c documents */
    char copy[LIST_MAX + 1];
    snprintf(copy, sizeof copy, "%s", list);
    size_t next = 0;
    int expect_loaded = 0, expect_warnings = 0, newline_in_entry = 0;
    char *save = NULL;
    for (char *entry = strtok_r(copy, ":", &save); entry; entry = strtok_r(NULL, ":", &save)) {
        FUZZ_ASSERT(entry[0]);
        newline_in_entry |= strchr(entry, '\n') != NULL;
        if (expect_loaded == TSCOPE__TOOLS_MAX) { /* not even opened */
            expect_warnings++;
            continue;
        }
        int opened_ok = check_entry(entry, &next);
        enum kind k = kind_of(opened[next - 1]);
        if (opened_ok && k == OK)
            expect_loaded++;
        else
            expect_warnings++;
    }
    FUZZ_ASSERT(next == nopened); /* nothing else was opened */
    FUZZ_ASSERT(loaded == expect_loaded);
    FUZZ_ASSERT(inits_at_load == loaded && finalize_events == loaded && finalizes == loaded);
    const uint32_t sync = 1u << TSCOPE_TOOL_EVENT_INIT | 1u << TSCOPE_TOOL_EVENT_FINALIZE;
    const uint32_t batched = 1u << TSCOPE_TOOL_EVENT_TASK_BEGIN;
    FUZZ_ASSERT(sync_mask == (loaded ? sync : 0) && batched_mask == (loaded ? batched : 0));
    FUZZ_ASSERT(tscope__tools_sync_mask == 0 && tscope__tools_batched_mask == 0);

    int lines = 0;
    for (const char *l = warnings; *l; lines++) {
        FUZZ_ASSERT(fuzz_starts_with(l, "taskscope: warning: TASKSCOPE_TOOLS: "));
        const char *end = strchr(l, '\n');
        FUZZ_ASSERT(end);
        l = end + 1;
        if (newline_in_entry) /* an entry's newline splits its warning */
            break;
    }
    FUZZ_ASSERT(newline_in_entry || lines == expect_warnings);

    for (size_t i = 0; i < nopened; i++)
        free(opened[i]);
    free(warnings);
    free(list);
    return 0;
}
