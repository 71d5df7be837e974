/* wiring.h - the composition root's connection of subsystems to core hooks. */
#ifndef TSCOPE_LIFECYCLE_WIRING_H
#define TSCOPE_LIFECYCLE_WIRING_H

/* The consumer's subscribers (core/hooks.h) in the order they see each
 * batch, round end and retired thread: the store settles a round before the
 * trace writes its end, and the trace, the batched tools and the triggered
 * policies see a batch in this order. */
enum {
    TSCOPE__SUB_STORE = 10,  /* profile/drain.c: round ends, retired threads */
    TSCOPE__SUB_TRACE = 20,  /* trace/writer.c, with TASKSCOPE_TRACE */
    TSCOPE__SUB_TOOLS = 30,  /* batched tool callbacks */
    TSCOPE__SUB_POLICY = 40, /* triggered policies */
};

/* Fills core/hooks.h from the loaded tools, the policy engine and the
 * profile store (when profiler is set), and subscribes the store, the tools
 * and the policies to the consumer.  Before measurement is switched on. */
void tscope__wire(int profiler);
/* The shadow kinds of the trace and the tools (core/hooks.h), once the
 * trace is started: a thread that aggregates its own tasks hands them the
 * events they want.  Before measurement is switched on. */
void tscope__wire_shadows(void);
/* Tools are gone (finalize): no more synchronous or thread callbacks. */
void tscope__unwire_tools(void);

#endif
