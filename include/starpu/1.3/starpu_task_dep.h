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

/** task ends (callback, dependents, waiters, its data) only once each task of task_array has
 * ended too; call before task ends. */
void starpu_task_declare_end_deps_array(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
void starpu_task_declare_end_deps(struct starpu_task *task, unsigned ndeps, ...);
/** Adds nb_deps end dependencies to t: it ends only after that many calls of
 * starpu_task_end_dep_release() (and its own run). */
void starpu_task_end_dep_add(struct starpu_task *t, int nb_deps);
void starpu_task_end_dep_release(struct starpu_task *t);

/* Tags: a tag is done when the first task carrying it (starpu_task::use_tag, tag_id, or
 * STARPU_TAG in starpu_task_insert) has ended, or when the application notifies it. A task
 * carrying a done tag leaves it done, unless it is the same task submitted again: then the tag
 * starts over (no starpu_tag_restart needed). */

/** Tag id's tasks will wait for the ndeps tags given (starpu_tag_t arguments); each use of the
 * tag waits for a new completion of each of them. */
void starpu_tag_declare_deps(starpu_tag_t id, unsigned ndeps, ...);
void starpu_tag_declare_deps_array(starpu_tag_t id, unsigned ndeps, starpu_tag_t *array);
/** Submits an empty task carrying tag sync_tag that waits for the ndeps tags in deps, then
 * calls callback(callback_arg) (may be NULL). */
/** The tasks waiting for task (explicit and data dependencies), while it has not finished:
 * returns their count and puts the first ndeps in task_array (NULL when ndeps is 0). Tasks
 * of the runtime's own (acquisitions, reduction steps) are not listed. */
int starpu_task_get_task_succs(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
/** The same, without the successors that do not go through the policy (no codelet, or run
 * on a given worker). */
int starpu_task_get_task_scheduled_succs(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
void starpu_create_sync_task(starpu_tag_t sync_tag, unsigned ndeps, starpu_tag_t *deps, void (*callback)(void *),
                             void *callback_arg);
/** Waits until the tag is done. Returns 0, or -EDEADLK from inside a task. */
int starpu_tag_wait(starpu_tag_t id);
int starpu_tag_wait_array(unsigned ntags, starpu_tag_t *id);
/** Marks the tag done (nothing happens if it is done already). */
void starpu_tag_notify_from_apps(starpu_tag_t id);
/** Marks the tag done if it is not, and starts it over. */
void starpu_tag_notify_restart_from_apps(starpu_tag_t id);
/** The last task that carried the tag (NULL: none), valid while that task exists. */
struct starpu_task *starpu_tag_get_task(starpu_tag_t id);
/** Makes a done tag usable again (its next task or notification is waited for anew). */
void starpu_tag_restart(starpu_tag_t id);
/** Forgets the tag. */
void starpu_tag_remove(starpu_tag_t id);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_DEP_H */
