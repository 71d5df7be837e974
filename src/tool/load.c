/* load.c - loading the plugins named in TASKSCOPE_TOOLS.
 *
 * An entry with a '/' is a path; a bare NAME is looked for as
 * libtaskscope-tool-NAME.so next to the taskscope library (tools/ and
 * taskscope/tools/ below its folder: the build tree and the install tree),
 * then through the dynamic loader's search path.  Every failure - missing
 * file, missing init symbol, another ABI version, an init that fails - is one
 * warning line, and the program runs on without that plugin.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "core/names.h"
#include "tools.h"

static tscope_tool_handle_t handles[TSCOPE__TOOLS_MAX];
static int nhandles;

static const char *event_name(tscope_tool_event_t event)
{
    switch (event) {
#define TSCOPE_TOOL_NAME(E, name, params, args)                                                    \
    case TSCOPE_TOOL_EVENT_##E:                                                                    \
        return #name;
        TSCOPE_TOOL_EVENTS(TSCOPE_TOOL_NAME)
#undef TSCOPE_TOOL_NAME
    default:
        return "unknown";
    }
}

static int type_name(tscope_type_t t, char *buf, size_t len)
{
    return tscope__names_get(&tscope__types, t, buf, len);
}

static int counter_name(tscope_counter_t c, char *buf, size_t len)
{
    return tscope__names_get(&tscope__counters, c, buf, len);
}

static int custom_name(tscope_event_t e, char *buf, size_t len)
{
    return tscope__names_get(&tscope__events, e, buf, len);
}

/* Opens `entry`; on failure writes the loader's reason into why. */
static void *open_plugin(const char *entry, char *path, size_t len, char *why, size_t whylen)
{
    if (strchr(entry, '/')) {
        snprintf(path, len, "%s", entry);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!dl)
            snprintf(why, whylen, "%s", dlerror());
        return dl;
    }
    char dir[1024] = ".";
    Dl_info info;
    if (dladdr((void *)&tscope__tools_load, &info) && info.dli_fname) {
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        else
            strcpy(dir, ".");
    }
    const char *forms[] = {"%s/tools/libtaskscope-tool-%s.so",
                           "%s/taskscope/tools/libtaskscope-tool-%s.so"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, len, forms[i], dir, entry);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (dl)
            return dl;
    }
    snprintf(path, len, "libtaskscope-tool-%s.so", entry);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        snprintf(why, whylen, "no %s in %s/tools, %s/taskscope/tools or the loader's path", path,
                 dir, dir);
    return dl;
}

static int load_one(const char *entry)
{
    char path[1024], why[1200] = "";
    if (nhandles == TSCOPE__TOOLS_MAX) {
        fprintf(stderr,
                "taskscope: warning: TASKSCOPE_TOOLS: more than %d tools; '%s' not loaded\n",
                TSCOPE__TOOLS_MAX, entry);
        return -1;
    }
    void *dl = open_plugin(entry, path, sizeof path, why, sizeof why);
    if (!dl) {
        fprintf(stderr,
                "taskscope: warning: TASKSCOPE_TOOLS: cannot load tool '%s': %s; running "
                "without it\n",
                entry, why);
        return -1;
    }
    tscope_tool_init_fn init;
    *(void **)&init = dlsym(dl, TSCOPE_TOOL_INIT_SYMBOL);
    if (!init) {
        int other = 0;
        for (int v = 2; v < 10 && !other; v++) {
            char sym[64];
            snprintf(sym, sizeof sym, "tscope_tool_init_v%d", v);
            if (dlsym(dl, sym))
                other = v;
        }
        if (other)
            fprintf(stderr,
                    "taskscope: warning: TASKSCOPE_TOOLS: tool %s was built for another tools "
                    "interface (tscope_tool_init_v%d), this taskscope loads %s of ABI versions 1 "
                    "to %d; running without it\n",
                    path, other, TSCOPE_TOOL_INIT_SYMBOL, TSCOPE_TOOL_ABI_VERSION);
        else
            fprintf(stderr,
                    "taskscope: warning: TASKSCOPE_TOOLS: %s has no %s function; "
                    "running without it\n",
                    path, TSCOPE_TOOL_INIT_SYMBOL);
        dlclose(dl);
        return -1;
    }
    tscope_tool_handle_t *h = &handles[nhandles];
    memset(h, 0, sizeof *h);
    snprintf(h->path, sizeof h->path, "%s", path);
    h->dl = dl;
    h->reg.struct_size = sizeof h->reg;
    tscope_tool_api_t api = {sizeof api,  TSCOPE_TOOL_ABI_VERSION,
                             h,           tscope__tools_set_callback,
                             type_name,   counter_name,
                             custom_name, event_name};
    int rc = init(&api, &h->reg);
    const char *problem = NULL;
    char text[160];
    if (rc < 0) {
        snprintf(text, sizeof text, "its init returned %d (%s)", rc, tscope_strerror(rc));
        problem = text;
    } else if (h->reg.abi_version < 1 || h->reg.abi_version > TSCOPE_TOOL_ABI_VERSION) {
        snprintf(text, sizeof text,
                 "it declares tools ABI version %u, this taskscope speaks 1 to %d",
                 h->reg.abi_version, TSCOPE_TOOL_ABI_VERSION);
        problem = text;
    }
    if (problem) {
        fprintf(stderr, "taskscope: warning: TASKSCOPE_TOOLS: tool %s: %s; running without it\n",
                path, problem);
        tscope__tools_forget(h);
        /* the library stays loaded: its init may have started threads */
        return -1;
    }
    if (!h->reg.name)
        h->reg.name = entry;
    nhandles++;
    return 0;
}

int tscope__tools_load(const char *list, int rank, int nranks, uint32_t max_threads)
{
    tscope__tools_reset();
    nhandles = 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    char *save = NULL;
    for (char *item = strtok_r(buf, ":", &save); item; item = strtok_r(NULL, ":", &save))
        if (*item)
            load_one(item);
    extern char *program_invocation_short_name;
    tscope_tool_init_info_t info = {sizeof info, rank, nranks, max_threads,
                                    program_invocation_short_name};
    for (int i = 0; i < nhandles; i++)
        tscope__tools_lifecycle(&handles[i], 1, &info, 0);
    return nhandles;
}

void tscope__tools_finalize(uint64_t time_ns)
{
    for (int i = 0; i < nhandles; i++) {
        tscope__tools_lifecycle(&handles[i], 0, NULL, time_ns);
        if (handles[i].reg.finalize)
            handles[i].reg.finalize(handles[i].reg.tool_data);
    }
    tscope__tools_reset();
    nhandles = 0;
}
