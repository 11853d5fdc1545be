/* StarPU 1.3 API on MPC: priorities and what schedulers ask of models. Policies are chosen with
 * STARPU_SCHED (or MPC_TG_SCHED, or starpu_conf::sched_policy_name): eager (default), prio,
 * random, ws, lws, dm, dmda, dmdas, heteroprio, modular-eager, modular-prio (STARPU_SCHED=help
 * lists them). An application's own policy is a struct starpu_sched_policy given in
 * starpu_conf::sched_policy (docs/taskgraph.md says which of its methods are called when). */
#ifndef MPC_STARPU_SCHEDULER_H
#define MPC_STARPU_SCHEDULER_H

#include <stdint.h>

#include "starpu_config.h"
#include "starpu_worker.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The priority range of the thread's scheduling context (starpu_sched_ctx_set_context; else
 * context 0's: -5..5, StarPU's default range, or STARPU_MIN_PRIO / STARPU_MAX_PRIO). */
int starpu_sched_get_min_priority(void);
int starpu_sched_get_max_priority(void);
/** Sets that context's range (starpu_sched_ctx_set_min_priority / _max_priority). */
int starpu_sched_set_min_priority(int min_prio);
int starpu_sched_set_max_priority(int max_prio);

#define STARPU_MIN_PRIO (starpu_sched_get_min_priority())
#define STARPU_MAX_PRIO (starpu_sched_get_max_priority())
#define STARPU_DEFAULT_PRIO 0

struct starpu_task;
struct starpu_perfmodel;
struct starpu_perfmodel_arch;

/** A scheduling policy written by the application (StarPU's fields and order), given in
 * starpu_conf::sched_policy. MPC calls: init_sched(0) at starpu_init once the workers are known,
 * then add_workers(0, every id, n); push_task for each ready task (it must queue it: the
 * policy's pop_task hands it to a worker later, or starpu_push_local_task gives it to one);
 * pop_task(0) from an idle worker (starpu_worker_get_id() tells which; NULL: nothing for it; the
 * worker looks again after the next push_task or starpu_wake_worker_*() for it);
 * pre_exec_hook / post_exec_hook around each task's function on its worker; submit_hook at
 * each submission; do_schedule at starpu_do_schedule() and starpu_task_wait_for_all(); at
 * shutdown remove_workers then deinit_sched. A task pinned with execute_on_a_specific_worker
 * goes to its worker's own queue without push_task: push_task_notify(task, workerid,
 * workerid, 0) tells the policy when it is ready. simulate_push_task and pop_every_task are
 * not called. Tasks the runtime makes itself (reductions) do not go through the policy. */
struct starpu_sched_policy {
    void (*init_sched)(unsigned sched_ctx_id);
    void (*deinit_sched)(unsigned sched_ctx_id);
    int (*push_task)(struct starpu_task *);
    double (*simulate_push_task)(struct starpu_task *);
    void (*push_task_notify)(struct starpu_task *, int workerid, int perf_workerid, unsigned sched_ctx_id);
    struct starpu_task *(*pop_task)(unsigned sched_ctx_id);
    struct starpu_task *(*pop_every_task)(unsigned sched_ctx_id);
    void (*submit_hook)(struct starpu_task *task);
    void (*pre_exec_hook)(struct starpu_task *, unsigned sched_ctx_id);
    void (*post_exec_hook)(struct starpu_task *, unsigned sched_ctx_id);
    void (*do_schedule)(unsigned sched_ctx_id);
    void (*add_workers)(unsigned sched_ctx_id, int *workerids, unsigned nworkers);
    void (*remove_workers)(unsigned sched_ctx_id, int *workerids, unsigned nworkers);
    const char *policy_name;
    const char *policy_description;
    enum starpu_worker_collection_type worker_type;
};

/** The built-in policies, NULL-terminated: each structure has policy_name and
 * policy_description (its methods are MPC's own and left NULL); given in
 * starpu_conf::sched_policy it selects that policy, as its name would. */
struct starpu_sched_policy **starpu_sched_get_predefined_policies(void);
/** A policy's push_task calls it once the task is queued. Returns 0. */
int starpu_push_task_end(struct starpu_task *task);
/** Gives a ready task (one the policy was handed by push_task) to worker workerid's own queue,
 * which the worker serves before calling pop_task: at its front when back is 0, else at its
 * back. Returns 0, or -EINVAL for a bad worker or a task that is not ready. */
int starpu_push_local_task(int workerid, struct starpu_task *task, int back);
/** Wakes workerid if it sleeps and makes it call pop_task again. Returns 1 when it was asleep,
 * else 0 (all four are the same here: the runtime holds no per-worker lock for the policy). */
int starpu_wake_worker_relax(int workerid);
int starpu_wake_worker_no_relax(int workerid);
int starpu_wake_worker_locked(int workerid);
int starpu_wake_worker_relax_light(int workerid);
/** Whether workerid can run the task's codelet (a CPU implementation: every worker is a CPU). */
int starpu_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl);
int starpu_worker_can_execute_task_impl(unsigned workerid, struct starpu_task *task, unsigned *impl_mask);
int starpu_worker_can_execute_task_first_impl(unsigned workerid, struct starpu_task *task, unsigned *nimpl);
/** Calls the application policy's do_schedule, if any. */
void starpu_do_schedule(void);

/** The footprint indexing the task in `model`'s history (the model's footprint function, else
 * the data footprint). */
uint32_t starpu_task_footprint(struct starpu_perfmodel *model, struct starpu_task *task,
                               struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** A hash of the task's data layout (interface kinds and sizes). */
uint32_t starpu_task_data_footprint(struct starpu_task *task);
/** Expected duration in µs from the codelet's model: NaN while it is not calibrated, 0 without
 * a model. */
double starpu_task_expected_length(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Expected data transfer times (µs): 0, every worker reads main memory (node 0). */
double starpu_task_expected_data_transfer_time(unsigned memory_node, struct starpu_task *task);
double starpu_task_expected_data_transfer_time_for(struct starpu_task *task, unsigned worker);
double starpu_data_expected_transfer_time(starpu_data_handle_t handle, unsigned memory_node,
                                          enum starpu_data_access_mode mode);
/** Expected conversion time of multiformat handles: 0 (CPU workers only: their data is never converted). */
double starpu_task_expected_conversion_time(struct starpu_task *task, struct starpu_perfmodel_arch *arch,
                                            unsigned nimpl);
/** Input prefetch for a task on a node (or a worker's node): main memory holds the data, so
 * nothing moves; 0, or -EINVAL (reported) for a node or worker that does not exist. */
int starpu_prefetch_task_input_on_node(struct starpu_task *task, unsigned node);
int starpu_prefetch_task_input_on_node_prio(struct starpu_task *task, unsigned node, int prio);
int starpu_idle_prefetch_task_input_on_node(struct starpu_task *task, unsigned node);
int starpu_idle_prefetch_task_input_on_node_prio(struct starpu_task *task, unsigned node, int prio);
int starpu_prefetch_task_input_for(struct starpu_task *task, unsigned worker);
int starpu_prefetch_task_input_for_prio(struct starpu_task *task, unsigned worker, int prio);
int starpu_idle_prefetch_task_input_for(struct starpu_task *task, unsigned worker);
int starpu_idle_prefetch_task_input_for_prio(struct starpu_task *task, unsigned worker, int prio);
/** Expected energy from the codelet's energy_model (fed with starpu_perfmodel_update_history):
 * NaN while uncalibrated, 0 without one. */
double starpu_task_expected_energy(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Speed of an architecture relative to a CPU core (1 for CPUs). */
double starpu_worker_get_relative_speedup(struct starpu_perfmodel_arch *perf_arch);

/** A number that identifies the task's record: unique among the tasks of the run, given at the
 * first call (thread-safe), kept while the task is not submitted again. */
unsigned long starpu_task_get_job_id(struct starpu_task *task);

/** Called as f(data, task, delay) when a task starts whose duration is known (its model or
 * cost function predicts it) for each submitted task whose last unmet dependency it is: that
 * task should be ready in about delay µs. Called on the worker, before the task runs; it must
 * not block. One function at a time; NULL: none. */
typedef void (*starpu_notify_ready_soon_func)(void *data, struct starpu_task *task, double delay);
void starpu_task_notify_ready_soon_register(starpu_notify_ready_soon_func f, void *data);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_SCHEDULER_H */
