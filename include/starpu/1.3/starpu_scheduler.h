/* StarPU 1.3 API on MPC: priorities and what schedulers ask of models. Policies are chosen with
 * STARPU_SCHED (or MPC_TG_SCHED, or starpu_conf::sched_policy_name): eager (default), prio,
 * random, ws, lws, dm, dmda, dmdas, heteroprio, modular-eager, modular-prio (STARPU_SCHED=help
 * lists them). Writing one's own policy (struct starpu_sched_policy) is not provided. */
#ifndef MPC_STARPU_SCHEDULER_H
#define MPC_STARPU_SCHEDULER_H

#include <stdint.h>

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

struct starpu_task;
struct starpu_perfmodel;
struct starpu_perfmodel_arch;

/** The footprint indexing the task in `model`'s history (the model's footprint function, else
 * the data footprint). */
uint32_t starpu_task_footprint(struct starpu_perfmodel *model, struct starpu_task *task,
                               struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** A hash of the task's data layout (interface kinds and sizes). */
uint32_t starpu_task_data_footprint(struct starpu_task *task);
/** Expected duration in µs from the codelet's model: NaN while it is not calibrated, 0 without
 * a model. */
double starpu_task_expected_length(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Expected energy from the codelet's energy_model (fed with starpu_perfmodel_update_history):
 * NaN while uncalibrated, 0 without one. */
double starpu_task_expected_energy(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Speed of an architecture relative to a CPU core (1 for CPUs). */
double starpu_worker_get_relative_speedup(struct starpu_perfmodel_arch *perf_arch);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_SCHEDULER_H */
