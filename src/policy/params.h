/* params.h - what the parameter registry (params.c) offers inside
 * taskscope beyond include/taskscope/policy.h. */
#ifndef TSCOPE_POLICY_PARAMS_H
#define TSCOPE_POLICY_PARAMS_H

#include "taskscope/policy.h"

/* Calls fn for every registered parameter, in registration order, with its
 * description and its getter's value; while fn runs the parameter cannot be
 * freed (tscope_param_unregister waits), so the description's strings stay
 * valid.  fn must not unregister parameters.  0, or TSCOPE_ENOMEM. */
int tscope__param_each(void (*fn)(void *ctx, const tscope_param_desc_t *d, double value),
                       void *ctx);

#endif
