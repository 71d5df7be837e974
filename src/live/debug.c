/* debug.c - the task debugger behind the dashboard's pause, resume, break
 * and step (docs/dashboard.md): a gate every task passes before it begins
 * (core/hooks.h, the `gate` hook of tscope_task_begin and _start), so it
 * works for every runtime that reports begins - the bundled runtime, OpenMP
 * through OMPT, a runtime of one's own.
 *
 * Paused, a thread that is about to begin a task waits in the gate, before
 * the task's begin is recorded; the live thread and the sampler go on, so
 * the dashboard shows the process paused with N threads held, not hung.  A
 * breakpoint on a type pauses the process when a task of that type is
 * about to begin (that task is held first).  Step lets exactly one held
 * (or the next) task begin and stays paused.  The gate is armed only while
 * a pause or a breakpoint is in force: otherwise a begin (and a create)
 * pays one relaxed load.  Losing the dashboard, or tscope_finalize, resumes
 * and clears the breakpoint, so a program is never left waiting for a
 * debugger that is gone.
 *
 * A runtime may name a task's type only when it creates it and begin it
 * with type 0 (the OMPT adapter does: OpenMP's task data has no room for
 * it).  For a breakpoint the gate then finds the type: in a table of the
 * tasks created while the gate is armed (lock-free, one 64-bit word per
 * entry: the id's 48 counter bits and the type; a newer task may take an
 * entry), else in the profile's store, which keeps every task created and
 * not yet settled - after a flush when the store has not seen its create
 * yet (a flush per such begin: only a begin with no create at all, which
 * the API does not expect, pays it every time).  So a breakpoint also stops
 * tasks created before it was set.
 *
 * After fork() the child starts with no debugger: the dashboard's
 * connection was the parent's (tscope__live_debug_forget).
 */
#include "debug.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/hooks.h"
#include "profile/query.h"
#include "taskscope/taskscope.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int paused;
static _Atomic uint32_t break_type; /* 0: none; written under lock */
static char break_name[256];
static uint32_t hit_type;   /* the type whose breakpoint paused it last (0: none) */
static unsigned steps;      /* tasks allowed to begin while paused */
static unsigned held;       /* threads waiting in the gate */
static uint64_t generation; /* bumped by resume: every waiter leaves */

/* Tasks created while armed: entry = id's low 48 bits << 16 | type. */
#define CREATED_BITS 16
#define ID48 ((1ull << 48) - 1)
static _Atomic uint64_t created[1u << CREATED_BITS];

static void rearm(void)
{
    atomic_store_explicit(&tscope__gate_armed, paused || break_type != 0, memory_order_relaxed);
}

static _Atomic uint64_t *created_at(uint64_t id)
{
    return &created[id & ((1u << CREATED_BITS) - 1)];
}

void tscope__live_gate_create(uint64_t id, uint32_t type)
{
    atomic_store_explicit(created_at(id), (id & ID48) << 16 | (type & 0xFFFFu),
                          memory_order_relaxed);
}

/* The type of task id, begun with type 0; 0 when nobody knows it. */
static uint32_t type_of_task(uint64_t id)
{
    uint64_t e = atomic_load_explicit(created_at(id), memory_order_relaxed);
    if (e >> 16 == (id & ID48) && (e & 0xFFFFu))
        return (uint32_t)(e & 0xFFFFu);
    uint32_t type = 0;
    int rc = tscope__query_task_type(id, &type);
    if (rc == -1) { /* its create may still wait in a ring */
        tscope_flush();
        rc = tscope__query_task_type(id, &type);
    }
    return rc == 0 ? type : 0; /* never created (a begin without create): untyped */
}

void tscope__live_gate(uint64_t id, uint32_t type)
{
    if (type == 0 && atomic_load_explicit(&break_type, memory_order_relaxed))
        type = type_of_task(id);
    pthread_mutex_lock(&lock);
    if (!paused && break_type && type == break_type) {
        paused = 1;
        hit_type = type;
    }
    uint64_t gen = generation;
    while (paused && steps == 0 && gen == generation) {
        held++;
        pthread_cond_wait(&wake, &lock);
        held--;
    }
    if (paused && gen == generation && steps > 0)
        steps--;
    pthread_mutex_unlock(&lock);
}

int tscope__live_debug(const char *op, const char *type, char *text, size_t len)
{
    int ok = 1;
    pthread_mutex_lock(&lock);
    if (strcmp(op, "pause") == 0) {
        paused = 1;
        hit_type = 0;
        snprintf(text, len, "paused: tasks wait before they begin");
    } else if (strcmp(op, "resume") == 0) {
        paused = 0;
        steps = 0;
        generation++;
        pthread_cond_broadcast(&wake);
        snprintf(text, len, "resumed (%u held tasks go on)", held);
    } else if (strcmp(op, "break") == 0) {
        tscope_type_t id = 0;
        /* registering the name gives the id the runtime gets for it, now
         * or later (a name registered once keeps its id) */
        if (!type || !type[0] || strlen(type) >= sizeof break_name ||
            tscope_type_register(type, &id) != 0) {
            ok = 0;
            snprintf(text, len, "break needs the name of a task type");
        } else {
            break_type = id;
            snprintf(break_name, sizeof break_name, "%s", type);
            snprintf(text, len, "break before the next task of type \"%s\"", type);
        }
    } else if (strcmp(op, "clear_break") == 0) {
        break_type = 0;
        break_name[0] = 0;
        snprintf(text, len, "breakpoint cleared");
    } else if (strcmp(op, "step") == 0) {
        if (!paused) {
            ok = 0;
            snprintf(text, len, "step: not paused");
        } else {
            steps++;
            pthread_cond_broadcast(&wake);
            snprintf(text, len, "step: one task may begin");
        }
    } else {
        ok = 0;
        snprintf(text, len, "unknown debugger op \"%s\"", op);
    }
    rearm();
    pthread_mutex_unlock(&lock);
    return ok;
}

void tscope__live_debug_release(const char *why)
{
    pthread_mutex_lock(&lock);
    int was = paused || break_type != 0;
    paused = 0;
    break_type = 0;
    break_name[0] = 0;
    steps = 0;
    generation++;
    pthread_cond_broadcast(&wake);
    rearm();
    pthread_mutex_unlock(&lock);
    if (was && why)
        fprintf(stderr, "taskscope: live: %s: resumed, breakpoint cleared\n", why);
}

void tscope__live_debug_state(struct tscope__live_debug_state *out)
{
    pthread_mutex_lock(&lock);
    out->paused = paused;
    out->held = held;
    snprintf(out->break_name, sizeof out->break_name, "%s", break_name);
    out->hit[0] = 0;
    if (paused && hit_type && tscope_type_name(hit_type, out->hit, sizeof out->hit) != 0)
        out->hit[0] = 0;
    pthread_mutex_unlock(&lock);
}

void tscope__live_debug_forget(void)
{
    /* the child has one thread: the lock may have been held by another at
     * the fork, so both are made anew */
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
    paused = 0;
    atomic_store_explicit(&break_type, 0, memory_order_relaxed);
    break_name[0] = 0;
    hit_type = 0;
    steps = 0;
    held = 0;
    rearm();
}
