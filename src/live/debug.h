/* debug.h - the task debugger (src/live/debug.c): the gate on task begins
 * and the dashboard's pause, resume, break, clear_break and step. */
#ifndef TSCOPE_LIVE_DEBUG_H
#define TSCOPE_LIVE_DEBUG_H

#include <stddef.h>
#include <stdint.h>

/* The core's gate hooks (core/hooks.h). */
void tscope__live_gate(uint64_t id, uint32_t type);
void tscope__live_gate_create(uint64_t id, uint32_t type);
/* Carries out op ("pause", "resume", "break" with type, "clear_break",
 * "step"); 1 done, 0 refused; text says what happened. */
int tscope__live_debug(const char *op, const char *type, char *text, size_t len);
/* Resumes every held task and clears the breakpoint; says so (why) on
 * stderr when something was in force. */
void tscope__live_debug_release(const char *why);

/* In a forked child: no pause, no breakpoint, the gate disarmed. */
void tscope__live_debug_forget(void);

struct tscope__live_debug_state {
    int paused;
    unsigned held;        /* threads waiting before a task's begin */
    char break_name[256]; /* "" : no breakpoint */
    char hit[256];        /* the type whose breakpoint paused it ("" : a pause or none) */
};
void tscope__live_debug_state(struct tscope__live_debug_state *out);

#endif
