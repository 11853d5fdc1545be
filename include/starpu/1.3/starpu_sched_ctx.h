/* StarPU 1.3 API on MPC: the scheduling context, as a scheduling policy sees it. MPC has one
 * context, 0 (STARPU_NMAX_SCHED_CTXS is StarPU's value for layout compatibility), holding every
 * worker; creating more contexts is not provided. */
#ifndef MPC_STARPU_SCHED_CTX_H
#define MPC_STARPU_SCHED_CTX_H

#include "starpu_config.h"
#include "starpu_worker.h"

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_sched_policy;

/** The context of the caller: 0. */
unsigned starpu_sched_ctx_get_context(void);
/** The policy's private data (set by its init_sched), or NULL. */
void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void *policy_data);
void *starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id);
/** The policy running the context: the application's (starpu_conf::sched_policy), or NULL under
 * one of MPC's built-in policies. */
struct starpu_sched_policy *starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id);
/** The workers of the context: every worker, in id order (valid while the runtime runs). */
struct starpu_worker_collection *starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id);
unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id);
/** A malloc'ed array of the context's worker ids in *workerids (the caller frees it); returns
 * their number. */
unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int **workerids);
unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id);
/** starpu_conf::sched_policy_init as given to starpu_init() (heteroprio calls it), or NULL. */
void (*starpu_sched_ctx_get_sched_policy_init(unsigned sched_ctx_id))(unsigned);
/** The context's priorities: starpu_sched_get_min_priority() / starpu_sched_get_max_priority(). */
int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id);
int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_SCHED_CTX_H */
