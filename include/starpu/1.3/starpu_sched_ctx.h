/* StarPU 1.3 API on MPC: scheduling contexts (taskgraph/context.cpp, starpu_sched.cpp).
 *
 * Context 0 holds every worker, under the policy chosen at starpu_init; its workers are fixed.
 * starpu_sched_ctx_create makes a context of some workers with a policy of its own (a
 * predefined one by name, or the application's struct starpu_sched_policy); tasks submitted to
 * it (starpu_task_submit_to_ctx, STARPU_SCHED_CTX, the task's sched_ctx field, or the thread's
 * context set by starpu_sched_ctx_set_context) run on its workers only. A worker may belong to
 * several contexts and serves them in turn. A context created without a policy runs its tasks
 * on its first worker (StarPU's master), or on every worker with STARPU_SCHED_CTX_AWAKE_WORKERS
 * (each runs the function, starpu_sched_ctx_get_worker_rank tells which it is). What StarPU's hypervisor, CUDA streams and parallel (combined-worker) execution use
 * is not declared: task counters, booking workers, SM partitions. */
#ifndef MPC_STARPU_SCHED_CTX_H
#define MPC_STARPU_SCHED_CTX_H

#include <stdio.h>

#include "starpu_config.h"
#include "starpu_worker.h"

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_sched_policy;
struct starpu_task;

/* Arguments of starpu_sched_ctx_create (StarPU's values). */
#define STARPU_SCHED_CTX_POLICY_NAME (1 << 16)     /* a const char*: a predefined policy; "": the default */
#define STARPU_SCHED_CTX_POLICY_STRUCT (2 << 16)   /* a struct starpu_sched_policy* */
#define STARPU_SCHED_CTX_POLICY_MIN_PRIO (3 << 16) /* an int */
#define STARPU_SCHED_CTX_POLICY_MAX_PRIO (4 << 16) /* an int */
#define STARPU_SCHED_CTX_HIERARCHY_LEVEL (5 << 16) /* an unsigned, kept for starpu_sched_ctx_get_hierarchy_level */
#define STARPU_SCHED_CTX_NESTED (6 << 16)          /* an unsigned: the context it is nested in (recorded) */
#define STARPU_SCHED_CTX_AWAKE_WORKERS (7 << 16)   /* no value */
#define STARPU_SCHED_CTX_POLICY_INIT (8 << 16)     /* a void (*)(unsigned) */
#define STARPU_SCHED_CTX_USER_DATA (9 << 16)       /* a void* */
#define STARPU_SCHED_CTX_CUDA_NSMS (10 << 16)      /* an int: GPU SMs; accepted, no GPU worker here */
#define STARPU_SCHED_CTX_SUB_CTXS (11 << 16)       /* an int* and an int; accepted, unused */

/** A new context of workerids[0..nworkers_ctx) (NULL and -1: every worker), named
 * sched_ctx_name, then pairs of the arguments above, ending with 0. Without a policy argument
 * the context has none (its tasks run on its first worker). Returns its id (1 ..
 * STARPU_NMAX_SCHED_CTXS-1); more contexts than that end the program with a message, as
 * StarPU's assertion does. Create contexts from one thread at a time. */
unsigned starpu_sched_ctx_create(int *workerids_ctx, int nworkers_ctx, const char *sched_ctx_name, ...);
/** A context of between min_ncpus and max_ncpus CPU workers, those in no other context first
 * (others too when allow_overlap). */
unsigned starpu_sched_ctx_create_inside_interval(const char *policy_name, const char *sched_ctx_name, int min_ncpus,
                                                 int max_ncpus, int min_ngpus, int max_ngpus, unsigned allow_overlap);
/** close_callback(id, args) runs when the context is done: starpu_sched_ctx_finished_submit was
 * called and its last task ended, with an inheritor set (before its workers move there). */
void starpu_sched_ctx_register_close_callback(unsigned sched_ctx_id, void (*close_callback)(unsigned sched_ctx_id, void *args),
                                              void *args);
/** Adds workers (the tasks the context's policy holds are given to its new version). Context 0
 * has every worker already. */
void starpu_sched_ctx_add_workers(int *workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id);
/** Removes workers; refused (logged) for context 0, whose workers are fixed. */
void starpu_sched_ctx_remove_workers(int *workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id);
void starpu_sched_ctx_display_workers(unsigned sched_ctx_id, FILE *f);
/** Gives the context's workers to its inheritor (if any), waits for its tasks, removes it. */
void starpu_sched_ctx_delete(unsigned sched_ctx_id);
void starpu_sched_ctx_set_inheritor(unsigned sched_ctx_id, unsigned inheritor);
/** STARPU_NMAX_SCHED_CTXS when it has none. */
unsigned starpu_sched_ctx_get_inheritor(unsigned sched_ctx_id);
unsigned starpu_sched_ctx_get_hierarchy_level(unsigned sched_ctx_id);
/** The calling thread's context for the tasks it submits without one (NULL: none). */
void starpu_sched_ctx_set_context(unsigned *sched_ctx_id);
/** The calling thread's context, STARPU_NMAX_SCHED_CTXS when none was set. */
unsigned starpu_sched_ctx_get_context(void);
/** For StarPU's hypervisor: nothing to do here. */
void starpu_sched_ctx_stop_task_submission(void);
/** No more tasks will be submitted to the context: once its last task ends, its workers join
 * its inheritor (at once when its tasks have all ended already; StarPU's moves them only at the
 * end of a task, so that calling this after the last one has ended would leave them). */
void starpu_sched_ctx_finished_submit(unsigned sched_ctx_id);
/** A malloc'ed array of the context's worker ids in *workerids (the caller frees it); returns
 * their number. */
unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int **workerids);
/** The context's collection's array (not to be freed). */
unsigned starpu_sched_ctx_get_workers_list_raw(unsigned sched_ctx_id, int **workerids);
unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id);
/** The priority of the given workers in the context (0 by default): a worker in several
 * contexts looks for tasks in its higher-priority contexts first, in turn among equals. A new
 * context starts with every worker at 0. get: a worker's priority there. */
void starpu_sched_ctx_set_priority(int *workers, int nworkers, unsigned sched_ctx_id, unsigned priority);
unsigned starpu_sched_ctx_get_priority(int worker, unsigned sched_ctx_id);
unsigned starpu_sched_ctx_get_nshared_workers(unsigned sched_ctx_id, unsigned sched_ctx_id2);
unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id);
unsigned starpu_sched_ctx_contains_type_of_worker(enum starpu_worker_archtype arch, unsigned sched_ctx_id);
/** The calling worker's id if it is in the context, else (unsigned)-1. */
unsigned starpu_sched_ctx_worker_get_id(unsigned sched_ctx_id);
unsigned starpu_sched_ctx_get_ctx_for_task(struct starpu_task *task);
/** 1 when the worker is in more than one context (context 0 counts). */
unsigned starpu_sched_ctx_overlapping_ctxs_on_worker(int workerid);
void *starpu_sched_ctx_get_user_data(unsigned sched_ctx_id);
void starpu_sched_ctx_set_user_data(unsigned sched_ctx_id, void *user_data);
/** The policy's private data (set by its init_sched), or NULL. */
void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void *policy_data);
void *starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id);
/** The application's policy running the context, or NULL under one of MPC's built-in policies. */
struct starpu_sched_policy *starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id);
/** Runs func(param) on the caller and returns its result. StarPU blocks the context's other
 * workers meanwhile so that func's threads may use their CPUs; here they keep working. */
void *starpu_sched_ctx_exec_parallel_code(void *(*func)(void *), void *param, unsigned sched_ctx_id);
/** The binding ids of the context's workers (all for its first worker or a thread that is no
 * worker, its own for another worker) in a malloc'ed *cpuids. */
void starpu_sched_ctx_get_available_cpuids(unsigned sched_ctx_id, int **cpuids, int *ncpuids);
/** Binds the calling thread to that binding id's CPU (a ULT moves to that VP). */
void starpu_sched_ctx_bind_current_thread_to_cpuid(unsigned cpuid);
/** In a task of a context without policy whose workers are awake: the caller's index among the
 * context's workers; -1 otherwise. */
int starpu_sched_ctx_get_worker_rank(unsigned sched_ctx_id);
/** STARPU_SCHED_CTX_POLICY_INIT (context 0: starpu_conf::sched_policy_init), or NULL. */
void (*starpu_sched_ctx_get_sched_policy_init(unsigned sched_ctx_id))(unsigned);
/** 1 when the context has a policy; *awake_workers: STARPU_SCHED_CTX_AWAKE_WORKERS was given. */
unsigned starpu_sched_ctx_has_starpu_scheduler(unsigned sched_ctx_id, unsigned *awake_workers);
/** The context's priorities: as set (STARPU_SCHED_CTX_POLICY_MIN/MAX_PRIO, _set_min/max_priority),
 * else the policy's range (context 0: starpu_sched_get_min_priority / _max_priority). */
int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id);
int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id);
int starpu_sched_ctx_set_min_priority(unsigned sched_ctx_id, int min_prio);
int starpu_sched_ctx_set_max_priority(unsigned sched_ctx_id, int max_prio);
int starpu_sched_ctx_min_priority_is_set(unsigned sched_ctx_id);
int starpu_sched_ctx_max_priority_is_set(unsigned sched_ctx_id);
/** The context's workers (valid while the context lives and its workers do not change). */
struct starpu_worker_collection *starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_SCHED_CTX_H */
