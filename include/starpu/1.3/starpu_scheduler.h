/* StarPU 1.3 API on MPC: priorities. Policies are chosen with STARPU_SCHED (or MPC_TG_SCHED, or
 * starpu_conf::sched_policy_name): eager (default) and prio. */
#ifndef MPC_STARPU_SCHEDULER_H
#define MPC_STARPU_SCHEDULER_H

#include "starpu_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The priority range (-5..5, StarPU's default range). */
int starpu_sched_get_min_priority(void);
int starpu_sched_get_max_priority(void);

#define STARPU_MIN_PRIO (starpu_sched_get_min_priority())
#define STARPU_MAX_PRIO (starpu_sched_get_max_priority())
#define STARPU_DEFAULT_PRIO 0

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_SCHEDULER_H */
