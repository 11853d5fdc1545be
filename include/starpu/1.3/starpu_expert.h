/* MPC's StarPU 1.3 compatibility: expert mode (starpu_expert.h). */
#ifndef MPC_STARPU_EXPERT_H
#define MPC_STARPU_EXPERT_H

#ifdef __cplusplus
extern "C" {
#endif

/** Wakes every sleeping worker, so that each looks at its policy again. */
void starpu_wake_all_blocked_workers(void);
/** Progression hooks: func(arg) is called by every idle worker each time it finds no task, before
 * it would sleep; a hook that returns 0 keeps the workers from sleeping (they keep polling and
 * calling the hooks), nonzero lets them sleep. Returns the hook's id (>= 0), or -1 when the 16
 * slots are taken. Deregister: from then on the hook is not called (a call running now ends). */
int starpu_progression_hook_register(unsigned (*func)(void *arg), void *arg);
void starpu_progression_hook_deregister(int hook_id);
/** Idle hooks: the same table, for the same moment (StarPU calls both when a worker idles). */
int starpu_idle_hook_register(unsigned (*func)(void *arg), void *arg);
void starpu_idle_hook_deregister(int hook_id);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_EXPERT_H */
