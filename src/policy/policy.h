/* policy.h - internals of src/policy/ used by the core's lifecycle. */
#ifndef TSCOPE_POLICY_POLICY_H
#define TSCOPE_POLICY_POLICY_H

/* tscope_finalize: stops the throttling policy and the policy thread and
 * forgets every policy. */
void tscope__policy_stop_all(void);

#include <stdatomic.h>
#include <stdint.h>

#include "core/record.h"

/* Record kinds (bits) that some triggered policy wants; the consumer
 * checks it once per batch. */
extern _Atomic uint32_t tscope__policy_trigger_mask;
/* Consumer: a record of a wanted kind, after its batch was applied. */
void tscope__policy_trigger(uint32_t thread, const struct tscope__rec *rec);

#endif
