/* wiring.h - the composition root's connection of subsystems to core hooks. */
#ifndef TSCOPE_LIFECYCLE_WIRING_H
#define TSCOPE_LIFECYCLE_WIRING_H

/* Fills core/hooks.h from the loaded tools, the policy engine and the
 * profile store (when profiler is set).  Before measurement is switched on. */
void tscope__wire(int profiler);
/* The shadow kinds of the trace and the tools (core/hooks.h), once the
 * trace is started: a thread that aggregates its own tasks hands them the
 * events they want.  Before measurement is switched on. */
void tscope__wire_shadows(void);
/* Tools are gone (finalize): no more synchronous or thread callbacks. */
void tscope__unwire_tools(void);

#endif
