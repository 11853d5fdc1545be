/* StarPU 1.3 API on MPC: explicit dependencies between tasks. (Tags are not implemented yet.) */
#ifndef MPC_STARPU_TASK_DEP_H
#define MPC_STARPU_TASK_DEP_H

#include "starpu_task.h"

#ifdef __cplusplus
extern "C" {
#endif

/** task will run after every task of task_array has finished. Call before submitting task; the
 * tasks of the array may be submitted later, but must not have been destroyed. A task of the
 * array that has finished is waited for at its next submission (StarPU refuses dependencies on
 * terminated tasks: a program names one only to submit it again). */
void starpu_task_declare_deps_array(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
/** Same, with the tasks as ndeps arguments. */
void starpu_task_declare_deps(struct starpu_task *task, unsigned ndeps, ...);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_DEP_H */
