/* eventlog.c - writes every event as one text line: for debugging and for
 * golden tests of event sequences.
 *
 *   TASKSCOPE_EVENTLOG=FILE             where to write (default: stderr)
 *   TASKSCOPE_EVENTLOG_DELIVERY=batched (default) or sync
 *
 * Line format: "<ns since init> t<thread> <event> <key>=<value> ...", type,
 * counter and event ids followed by their names.  With batched delivery the
 * lines of one thread are in its event order; lines of different threads
 * interleave as the consumer applies them.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <taskscope/tool.h>

struct log {
    FILE *f;
    int close;
    pthread_mutex_t lock;
    const tscope_tool_api_t *api; /* valid during init only: copy what we need */
    int (*type_name)(tscope_type_t, char *, size_t);
    int (*counter_name)(tscope_counter_t, char *, size_t);
    int (*event_name)(tscope_event_t, char *, size_t);
};

static struct log the_log = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define LINE(ctx, fmt, ...)                                                                        \
    do {                                                                                           \
        struct log *l_ = (ctx)->tool_data;                                                         \
        pthread_mutex_lock(&l_->lock);                                                             \
        fprintf(l_->f, "%" PRIu64 " t%u " fmt "\n", (ctx)->time_ns, (ctx)->thread, __VA_ARGS__);   \
        pthread_mutex_unlock(&l_->lock);                                                           \
    } while (0)

static const char *name_of(int (*fn)(uint32_t, char *, size_t), uint32_t id, char *buf, size_t n)
{
    if (id == 0 || fn(id, buf, n) != 0)
        snprintf(buf, n, "-");
    return buf;
}

static void on_init(const tscope_tool_ctx_t *ctx, const tscope_tool_init_info_t *info)
{
    LINE(ctx, "init program=%s rank=%d nranks=%d", info->program, info->rank, info->nranks);
}

static void on_finalize(const tscope_tool_ctx_t *ctx)
{
    LINE(ctx, "finalize%s", "");
}

static void on_thread_begin(const tscope_tool_ctx_t *ctx, const char *name)
{
    LINE(ctx, "thread_begin name=%s", name);
}

static void on_thread_end(const tscope_tool_ctx_t *ctx)
{
    LINE(ctx, "thread_end%s", "");
}

static void on_task_create(const tscope_tool_ctx_t *ctx, const tscope_tool_task_t *task)
{
    char n[256];
    struct log *l = ctx->tool_data;
    LINE(ctx,
         "task_create task=%" PRIu64 " parent=%" PRIu64 " type=%u(%s) flags=%u depth=%u prio=%d",
         task->id, task->parent, task->type, name_of(l->type_name, task->type, n, sizeof n),
         task->flags, task->depth, task->priority);
}

static void on_task_begin(const tscope_tool_ctx_t *ctx, uint64_t task, tscope_type_t type)
{
    char n[256];
    struct log *l = ctx->tool_data;
    LINE(ctx, "task_begin task=%" PRIu64 " type=%u(%s)", task, type,
         name_of(l->type_name, type, n, sizeof n));
}

#define SIMPLE(name)                                                                               \
    static void on_##name(const tscope_tool_ctx_t *ctx, uint64_t task)                             \
    {                                                                                              \
        LINE(ctx, #name " task=%" PRIu64, task);                                                   \
    }
SIMPLE(task_queued)
SIMPLE(task_end)
SIMPLE(task_cancel)
SIMPLE(task_yield)
SIMPLE(task_resume)
#undef SIMPLE

static const char *direction(tscope_dep_dir_t d)
{
    return d == TSCOPE_DEP_IN ? "in" : d == TSCOPE_DEP_OUT ? "out" : "copyin";
}

/* One line per pair of tasks (tools ABI version 2): hazards as
 * RAW+WAW, mutex, ... and the address count. */
static void on_dep_edge(const tscope_tool_ctx_t *ctx, const tscope_tool_dep_t *d)
{
    static const char *const names[] = {"RAW", "WAR", "WAW", "mutex"};
    char h[32] = "";
    for (int i = 0; i < 4; i++)
        if (d->hazards & (1u << i))
            snprintf(h + strlen(h), sizeof h - strlen(h), "%s%s", *h ? "+" : "", names[i]);
    LINE(ctx, "dep_edge from=%" PRIu64 " to=%" PRIu64 " addr=%p hazards=%s addrs=%u", d->from,
         d->to, d->addr, h, d->naddrs);
}

static void on_dep_remote(const tscope_tool_ctx_t *ctx, uint64_t from, int from_rank, uint64_t to,
                          int to_rank, const void *addr, tscope_dep_dir_t dir)
{
    LINE(ctx, "dep_remote from=%" PRIu64 "@%d to=%" PRIu64 "@%d addr=%p dir=%s", from, from_rank,
         to, to_rank, addr, direction(dir));
}

static void on_counter(const tscope_tool_ctx_t *ctx, tscope_counter_t counter, double value)
{
    char n[256];
    struct log *l = ctx->tool_data;
    LINE(ctx, "counter counter=%u(%s) value=%.17g", counter,
         name_of(l->counter_name, counter, n, sizeof n), value);
}

static void on_custom(const tscope_tool_ctx_t *ctx, tscope_event_t event, uint64_t payload)
{
    char n[256];
    struct log *l = ctx->tool_data;
    LINE(ctx, "custom event=%u(%s) payload=%" PRIu64, event,
         name_of(l->event_name, event, n, sizeof n), payload);
}

static void finish(void *data)
{
    struct log *l = data;
    fflush(l->f);
    if (l->close)
        fclose(l->f);
    l->f = NULL;
}

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg)
{
    struct log *l = &the_log;
    const char *path = getenv("TASKSCOPE_EVENTLOG");
    const char *d = getenv("TASKSCOPE_EVENTLOG_DELIVERY");
    int delivery = d && strcmp(d, "sync") == 0 ? TSCOPE_TOOL_SYNC : TSCOPE_TOOL_BATCHED;
    l->f = stderr;
    l->close = 0;
    if (path && *path) {
        l->f = fopen(path, "w");
        if (!l->f) {
            fprintf(stderr, "taskscope eventlog: cannot write %s\n", path);
            return TSCOPE_EIO;
        }
        l->close = 1;
    }
    l->type_name = api->type_name;
    l->counter_name = api->counter_name;
    l->event_name = api->event_name;
    reg->abi_version = TSCOPE_TOOL_ABI_VERSION;
    reg->name = "eventlog";
    reg->tool_data = l;
    reg->finalize = finish;
    struct {
        tscope_tool_event_t ev;
        tscope_tool_callback_t cb;
    } cbs[] = {
        {TSCOPE_TOOL_EVENT_INIT, (tscope_tool_callback_t)on_init},
        {TSCOPE_TOOL_EVENT_FINALIZE, (tscope_tool_callback_t)on_finalize},
        {TSCOPE_TOOL_EVENT_THREAD_BEGIN, (tscope_tool_callback_t)on_thread_begin},
        {TSCOPE_TOOL_EVENT_THREAD_END, (tscope_tool_callback_t)on_thread_end},
        {TSCOPE_TOOL_EVENT_TASK_CREATE, (tscope_tool_callback_t)on_task_create},
        {TSCOPE_TOOL_EVENT_TASK_QUEUED, (tscope_tool_callback_t)on_task_queued},
        {TSCOPE_TOOL_EVENT_TASK_BEGIN, (tscope_tool_callback_t)on_task_begin},
        {TSCOPE_TOOL_EVENT_TASK_END, (tscope_tool_callback_t)on_task_end},
        {TSCOPE_TOOL_EVENT_TASK_CANCEL, (tscope_tool_callback_t)on_task_cancel},
        {TSCOPE_TOOL_EVENT_TASK_YIELD, (tscope_tool_callback_t)on_task_yield},
        {TSCOPE_TOOL_EVENT_TASK_RESUME, (tscope_tool_callback_t)on_task_resume},
        {TSCOPE_TOOL_EVENT_DEP_EDGE, (tscope_tool_callback_t)on_dep_edge},
        {TSCOPE_TOOL_EVENT_DEP_REMOTE, (tscope_tool_callback_t)on_dep_remote},
        {TSCOPE_TOOL_EVENT_COUNTER, (tscope_tool_callback_t)on_counter},
        {TSCOPE_TOOL_EVENT_CUSTOM, (tscope_tool_callback_t)on_custom},
    };
    for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++)
        if (api->set_callback(api->handle, cbs[i].ev, cbs[i].cb, delivery) < 0)
            return TSCOPE_EINVAL;
    return 0;
}
