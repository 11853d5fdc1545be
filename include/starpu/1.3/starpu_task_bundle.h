/* StarPU 1.3 API on MPC: task bundles, tasks that should run on one worker when possible. */
#ifndef MPC_STARPU_TASK_BUNDLE_H
#define MPC_STARPU_TASK_BUNDLE_H

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;
struct starpu_perfmodel_arch;

/** A list of tasks to be scheduled on the same worker whenever possible: a hint. The
 * model-based policies (dm, dmda, dmdas) place each task of a bundle for the expected length
 * of the bundle's tasks that are not placed yet, as StarPU's dmda does, so they tend to go to
 * one worker; the other policies ignore bundles. */
typedef struct mpc_starpu_task_bundle *starpu_task_bundle_t;

void starpu_task_bundle_create(starpu_task_bundle_t *bundle);
/** Appends task (not submitted yet) to bundle: 0, -EPERM when the bundle is closed, -EINVAL
 * when the task has been submitted. */
int starpu_task_bundle_insert(starpu_task_bundle_t bundle, struct starpu_task *task);
/** Takes task out of bundle: 0, or -ENOENT when it is not in it. Cleaning or destroying a task
 * takes it out of its bundle. */
int starpu_task_bundle_remove(starpu_task_bundle_t bundle, struct starpu_task *task);
/** No more insertions: the bundle is freed once it is empty (now, if it is). */
void starpu_task_bundle_close(starpu_task_bundle_t bundle);
/** Expected µs of the bundle's tasks not placed yet (uncalibrated ones count 0). */
double starpu_task_bundle_expected_length(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Expected energy of the bundle's tasks (from their codelets' energy models). */
double starpu_task_bundle_expected_energy(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Time to bring the data the bundle's tasks read to memory_node: 0 (main memory is the only
 * node). */
double starpu_task_bundle_expected_data_transfer_time(starpu_task_bundle_t bundle, unsigned memory_node);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_BUNDLE_H */
