/* engine.c - periodic policies on taskscope's policy thread
 * (include/taskscope/policy.h).
 *
 * The thread starts with the first policy and sleeps until the earliest
 * policy is due; it runs each due policy under the engine lock (so
 * tscope_policy_remove returns only when that policy is not running, and a
 * policy cannot add or remove policies: TSCOPE_ESTATE from its thread).
 * Delay bound: a policy runs at most one scheduling latency after it is
 * due, plus the run time of the policies due before it.  tscope_finalize
 * stops the thread and forgets every policy.
 *
 * Triggered policies live in their own table under their own lock (so a
 * long periodic policy never holds up the consumer); the consumer calls
 * tscope__policy_trigger for records whose kind is in the trigger mask.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "core/hooks.h"
#include "policy.h"
#include "taskscope/policy.h"

enum { MAX_POLICIES = 32 };

struct policy {
    char name[64];
    unsigned period_ms;
    tscope_policy_fn fn;
    void *data;
    double due, last;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int running, stop;
    struct policy p[MAX_POLICIES];
    unsigned n;
} E = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static _Thread_local int on_policy_thread;

struct trigger {
    char name[64];
    tscope_trigger_kind_t kind;
    uint32_t id;
    tscope_trigger_fn fn;
    void *data;
};

static struct {
    pthread_mutex_t lock;
    struct trigger t[MAX_POLICIES];
    unsigned n;
} TR = {.lock = PTHREAD_MUTEX_INITIALIZER};

_Atomic uint32_t tscope__policy_trigger_mask;

static uint32_t kind_bit(tscope_trigger_kind_t k)
{
    switch (k) {
    case TSCOPE_TRIGGER_CUSTOM:
        return 1u << TSCOPE__REC_CUSTOM;
    case TSCOPE_TRIGGER_COUNTER:
        return 1u << TSCOPE__REC_COUNTER;
    default:
        return (1u << TSCOPE__REC_BEGIN) | (1u << TSCOPE__REC_START);
    }
}

static void trigger_mask_update(void) /* TR.lock held */
{
    uint32_t m = 0;
    for (unsigned i = 0; i < TR.n; i++)
        m |= kind_bit(TR.t[i].kind);
    atomic_store(&tscope__policy_trigger_mask, m);
    tscope__shadow_set(TSCOPE__SHADOW_POLICY, m); /* handle tasks' begins too */
}

int tscope_policy_on(const char *name, tscope_trigger_kind_t kind, uint32_t id,
                     tscope_trigger_fn fn, void *data)
{
    if (!name || !*name || strlen(name) >= sizeof TR.t[0].name || !fn ||
        kind < TSCOPE_TRIGGER_CUSTOM || kind > TSCOPE_TRIGGER_TASK_BEGIN)
        return TSCOPE_EINVAL;
    if (!tscope__g.initialised)
        return TSCOPE_ESTATE;
    pthread_mutex_lock(&TR.lock);
    int rc = 0;
    for (unsigned i = 0; i < TR.n; i++)
        if (strcmp(TR.t[i].name, name) == 0)
            rc = TSCOPE_EINVAL;
    if (!rc && TR.n == MAX_POLICIES)
        rc = TSCOPE_ELIMIT;
    if (!rc) {
        struct trigger *t = &TR.t[TR.n++];
        snprintf(t->name, sizeof t->name, "%s", name);
        t->kind = kind;
        t->id = id;
        t->fn = fn;
        t->data = data;
        trigger_mask_update();
    }
    pthread_mutex_unlock(&TR.lock);
    return rc;
}

void tscope__policy_trigger(uint32_t thread, const struct tscope__rec *rec)
{
    tscope_trigger_info_t info = {sizeof info, 0, rec->type, thread, 0, 0, 0};
    if (rec->kind == TSCOPE__REC_CUSTOM) {
        info.kind = TSCOPE_TRIGGER_CUSTOM;
        info.payload = rec->arg;
    } else if (rec->kind == TSCOPE__REC_COUNTER) {
        info.kind = TSCOPE_TRIGGER_COUNTER;
        memcpy(&info.value, &rec->arg, sizeof info.value);
    } else if (rec->kind == TSCOPE__REC_BEGIN || rec->kind == TSCOPE__REC_START) {
        info.kind = TSCOPE_TRIGGER_TASK_BEGIN;
        info.task = rec->id;
    } else {
        return;
    }
    pthread_mutex_lock(&TR.lock);
    for (unsigned i = 0; i < TR.n; i++)
        if (TR.t[i].kind == info.kind && (TR.t[i].id == 0 || TR.t[i].id == info.id))
            TR.t[i].fn(TR.t[i].data, &info);
    pthread_mutex_unlock(&TR.lock);
}

static int trigger_remove(const char *name)
{
    int rc = TSCOPE_ENOENT;
    pthread_mutex_lock(&TR.lock);
    for (unsigned i = 0; name && i < TR.n; i++)
        if (strcmp(TR.t[i].name, name) == 0) {
            memmove(&TR.t[i], &TR.t[i + 1], (TR.n - i - 1) * sizeof TR.t[0]);
            TR.n--;
            trigger_mask_update();
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&TR.lock);
    return rc;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *policy_main(void *arg)
{
    (void)arg;
    on_policy_thread = 1;
    pthread_mutex_lock(&E.lock);
    while (!E.stop) {
        double now = mono_s(), next = now + 1.0;
        for (unsigned i = 0; i < E.n; i++) {
            struct policy *p = &E.p[i];
            if (p->due <= now) {
                p->fn(p->data, p->last > 0 ? now - p->last : 0);
                p->last = now;
                p->due += p->period_ms * 1e-3;
                if (p->due < now) /* fell behind: no burst of catch-up runs */
                    p->due = now + p->period_ms * 1e-3;
            }
            if (p->due < next)
                next = p->due;
        }
        double wait = next - mono_s();
        if (wait > 0) {
            struct timespec until = tscope__deadline_after((uint64_t)(wait * 1e9));
            pthread_cond_timedwait(&E.wake, &E.lock, &until);
        }
    }
    pthread_mutex_unlock(&E.lock);
    return NULL;
}

int tscope_policy_add(const char *name, unsigned period_ms, tscope_policy_fn fn, void *data)
{
    if (!name || !*name || strlen(name) >= sizeof E.p[0].name || !fn || period_ms < 1)
        return TSCOPE_EINVAL;
    if (on_policy_thread)
        return TSCOPE_ESTATE;
    if (!tscope__g.initialised)
        return TSCOPE_ESTATE;
    pthread_mutex_lock(&E.lock);
    int rc = 0;
    for (unsigned i = 0; i < E.n; i++)
        if (strcmp(E.p[i].name, name) == 0)
            rc = TSCOPE_EINVAL;
    if (!rc && E.n == MAX_POLICIES)
        rc = TSCOPE_ELIMIT;
    if (!rc && !E.running) {
        E.stop = 0;
        if (tscope__thread_start(&E.thread, policy_main, NULL, "tscope-policy"))
            rc = TSCOPE_ENOMEM;
        else
            E.running = 1;
    }
    if (!rc) {
        struct policy *p = &E.p[E.n++];
        snprintf(p->name, sizeof p->name, "%s", name);
        p->period_ms = period_ms;
        p->fn = fn;
        p->data = data;
        p->last = 0;
        p->due = mono_s();
        pthread_cond_signal(&E.wake);
    }
    pthread_mutex_unlock(&E.lock);
    return rc;
}

int tscope_policy_remove(const char *name)
{
    if (on_policy_thread)
        return TSCOPE_ESTATE;
    pthread_mutex_lock(&E.lock);
    int rc = TSCOPE_ENOENT;
    for (unsigned i = 0; name && i < E.n; i++)
        if (strcmp(E.p[i].name, name) == 0) {
            memmove(&E.p[i], &E.p[i + 1], (E.n - i - 1) * sizeof E.p[0]);
            E.n--;
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&E.lock);
    return rc == TSCOPE_ENOENT ? trigger_remove(name) : rc;
}

void tscope__policy_stop_all(void)
{
    tscope_throttle_stop();
    tscope_powercap_stop();
    pthread_mutex_lock(&TR.lock);
    TR.n = 0;
    trigger_mask_update();
    pthread_mutex_unlock(&TR.lock);
    pthread_mutex_lock(&E.lock);
    int running = E.running;
    E.stop = 1;
    E.n = 0;
    pthread_cond_broadcast(&E.wake);
    pthread_mutex_unlock(&E.lock);
    if (running)
        pthread_join(E.thread, NULL);
    E.running = 0;
}
