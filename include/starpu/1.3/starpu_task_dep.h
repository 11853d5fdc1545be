/* StarPU 1.3 API on MPC: explicit dependencies between tasks, and tags. */
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

/* Tags: a tag is done when the task carrying it (starpu_task::use_tag, tag_id, or STARPU_TAG in
 * starpu_task_insert) has ended, or when the application notifies it. */

/** Tag id's task will wait for the ndeps tags given (starpu_tag_t arguments). Declare before
 * submitting that task. */
void starpu_tag_declare_deps(starpu_tag_t id, unsigned ndeps, ...);
void starpu_tag_declare_deps_array(starpu_tag_t id, unsigned ndeps, starpu_tag_t *array);
/** Waits until the tag is done. Returns 0, or -EDEADLK from inside a task. */
int starpu_tag_wait(starpu_tag_t id);
int starpu_tag_wait_array(unsigned ntags, starpu_tag_t *id);
/** Marks a tag that no task carries done. */
void starpu_tag_notify_from_apps(starpu_tag_t id);
/** Makes a done tag usable again (its next task or notification is waited for anew). */
void starpu_tag_restart(starpu_tag_t id);
/** Forgets the tag. */
void starpu_tag_remove(starpu_tag_t id);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_DEP_H */
