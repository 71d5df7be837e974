/* validator.c - test plugin: checks every task's event sequence as it
 * happens (synchronous delivery): create, queued, begin, then yield/resume
 * pairs, then end - or cancel before begin.  At finalize every task must
 * have ended or been cancelled.  Results in the exported validator_results.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <taskscope/tool.h>

enum { NONE, CREATED, QUEUED, RUNNING, YIELDED, ENDED, CANCELLED };

struct validator_results {
    uint64_t tasks, ended, cancelled, violations;
    char first[256];
};

__attribute__((visibility("default"))) struct validator_results validator_results;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot {
    uint64_t id;
    int state;
} * slots;
static size_t cap, count;

static struct slot *find(uint64_t id, int add)
{
    if (add && (count + 1) * 2 > cap) {
        size_t ncap = cap ? cap * 2 : 1024;
        struct slot *n = calloc(ncap, sizeof *n);
        if (!n)
            abort();
        for (size_t i = 0; i < cap; i++) {
            if (!slots[i].id)
                continue;
            size_t j = (slots[i].id * 0x9E3779B97F4A7C15ull) & (ncap - 1);
            while (n[j].id)
                j = (j + 1) & (ncap - 1);
            n[j] = slots[i];
        }
        free(slots);
        slots = n;
        cap = ncap;
    }
    if (!cap)
        return NULL;
    size_t i = (id * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (slots[i].id && slots[i].id != id)
        i = (i + 1) & (cap - 1);
    if (!slots[i].id) {
        if (!add)
            return NULL;
        slots[i].id = id;
        count++;
    }
    return &slots[i];
}

static void violation(const char *what, uint64_t id, int state)
{
    if (!validator_results.violations++)
        snprintf(validator_results.first, sizeof validator_results.first,
                 "task %" PRIu64 ": %s in state %d", id, what, state);
}

/* Moves task id from one of the allowed states (bit mask) to `to`. */
static void step(uint64_t id, unsigned allowed, int to, const char *what)
{
    pthread_mutex_lock(&lock);
    struct slot *s = find(id, to == CREATED);
    int st = s ? s->state : NONE;
    if (!(allowed & (1u << st)))
        violation(what, id, st);
    if (s)
        s->state = to;
    if (to == CREATED)
        validator_results.tasks++;
    else if (to == ENDED)
        validator_results.ended++;
    else if (to == CANCELLED)
        validator_results.cancelled++;
    pthread_mutex_unlock(&lock);
}

static void on_create(const tscope_tool_ctx_t *ctx, const tscope_tool_task_t *t)
{
    (void)ctx;
    step(t->id, 1u << NONE, CREATED, "create");
}

#define ON(name, allowed, to)                                                                      \
    static void on_##name(const tscope_tool_ctx_t *ctx, uint64_t task)                             \
    {                                                                                              \
        (void)ctx;                                                                                 \
        step(task, allowed, to, #name);                                                            \
    }
ON(queued, 1u << CREATED, QUEUED)
ON(end, 1u << RUNNING, ENDED)
ON(cancel, (1u << CREATED) | (1u << QUEUED), CANCELLED)
ON(yield, 1u << RUNNING, YIELDED)
ON(resume, 1u << YIELDED, RUNNING)
#undef ON

static void on_begin(const tscope_tool_ctx_t *ctx, uint64_t task, tscope_type_t type)
{
    (void)ctx;
    (void)type;
    step(task, 1u << QUEUED, RUNNING, "begin");
}

static void on_finalize(const tscope_tool_ctx_t *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < cap; i++)
        if (slots[i].id && slots[i].state != ENDED && slots[i].state != CANCELLED)
            violation("still open at finalize", slots[i].id, slots[i].state);
    free(slots);
    slots = NULL;
    cap = count = 0;
    pthread_mutex_unlock(&lock);
}

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg);

int tscope_tool_init_v1(const tscope_tool_api_t *api, tscope_tool_reg_t *reg)
{
    memset(&validator_results, 0, sizeof validator_results);
    reg->abi_version = TSCOPE_TOOL_ABI_VERSION;
    reg->name = "validator";
    struct {
        tscope_tool_event_t ev;
        tscope_tool_callback_t cb;
    } cbs[] = {
        {TSCOPE_TOOL_EVENT_TASK_CREATE, (tscope_tool_callback_t)on_create},
        {TSCOPE_TOOL_EVENT_TASK_QUEUED, (tscope_tool_callback_t)on_queued},
        {TSCOPE_TOOL_EVENT_TASK_BEGIN, (tscope_tool_callback_t)on_begin},
        {TSCOPE_TOOL_EVENT_TASK_END, (tscope_tool_callback_t)on_end},
        {TSCOPE_TOOL_EVENT_TASK_CANCEL, (tscope_tool_callback_t)on_cancel},
        {TSCOPE_TOOL_EVENT_TASK_YIELD, (tscope_tool_callback_t)on_yield},
        {TSCOPE_TOOL_EVENT_TASK_RESUME, (tscope_tool_callback_t)on_resume},
        {TSCOPE_TOOL_EVENT_FINALIZE, (tscope_tool_callback_t)on_finalize},
    };
    for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++)
        if (api->set_callback(api->handle, cbs[i].ev, cbs[i].cb, TSCOPE_TOOL_SYNC) < 0)
            return TSCOPE_EINVAL;
    return 0;
}
