/* StarPU 1.3 API on MPC's task-graph runtime (issue 8; docs/taskgraph.md).
 *
 * Source compatibility: a StarPU 1.3 program that uses only the subset declared here compiles
 * unchanged against these headers (pkg-config starpu-1.3, or mpc_cc) and runs on MPC's
 * workers, user-level threads on MPC's virtual processors. What is not implemented is not
 * declared, so such a program fails to compile or link instead of running wrongly.
 * STARPU_USE_CUDA and STARPU_USE_OPENCL stay undefined (CPU workers only). */
#ifndef MPC_STARPU_H
#define MPC_STARPU_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "starpu_config.h"
#include "starpu_util.h"
#include "starpu_thread.h"
#include "starpu_thread_util.h"
#include "starpu_bitmap.h"
#include "starpu_data.h"
#include "starpu_data_interfaces.h"
#include "starpu_data_filters.h"
#include "starpu_stdlib.h"
#include "starpu_perfmodel.h"
#include "starpu_task.h"
#include "starpu_task_dep.h"
#include "starpu_task_util.h"
#include "starpu_worker.h"
#include "starpu_scheduler.h"
#include "starpu_sched_ctx.h"
#include "starpu_task_list.h"
#include "starpu_profiling.h"
#include "starpu_hash.h"
#include "starpu_helper.h"
#include "starpu_rand.h"
#include "starpu_cublas.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Configuration of starpu_init(); set it up with starpu_conf_init(). The environment
 * (STARPU_NCPU, STARPU_SCHED, and MPC_TG_NCPU, MPC_TG_SCHED, which win over them) overrides it
 * unless precedence_over_environment_variables is set. */
struct starpu_conf {
    int magic;
    /** Scheduling policy by name (see starpu_scheduler.h); STARPU_SCHED wins over it. */
    const char *sched_policy_name;
    /** The application's own policy: when set, it wins over every name. */
    struct starpu_sched_policy *sched_policy;
    /** Called with the context (0) while the heteroprio policy starts, to set up its buckets
     * with the starpu_heteroprio_set_* calls (starpu_heteroprio.h); other policies ignore it. */
    void (*sched_policy_init)(unsigned);
    int precedence_over_environment_variables;
    /** CPU workers; -1 (default): one per VP. */
    int ncpus;
    /** GPU devices: none exist here; only -1 (default) and 0 are accepted. */
    int ncuda;
    int nopencl;
    /** MIC and MPI master-slave devices: none exist here either (-1 default, 0 accepted). */
    int nmic;
    int nmpi_ms;
};

/** Fills conf with the defaults. Returns 0. */
int starpu_conf_init(struct starpu_conf *conf);
/** Starts the runtime (and MPC's engine when the program is a plain executable). conf may be
 * NULL. Returns 0; -ENODEV when no worker is configured; -EINVAL for a bad configuration.
 * Calls nest: each needs a starpu_shutdown(). */
int starpu_init(struct starpu_conf *conf) STARPU_WARN_UNUSED_RESULT;
/** starpu_init(), ignoring the command line. */
int starpu_initialize(struct starpu_conf *user_conf, int *argc, char ***argv);
int starpu_is_initialized(void);
/** Waits for every task, then stops the workers (and the engine if starpu_init started it). */
void starpu_shutdown(void);

/** Prints on f each worker with the VP (and the PU it is pinned to, when known) it runs on. */
void starpu_topology_print(FILE *f);
void starpu_get_version(int *major, int *minor, int *release);
/** Whether asynchronous data copies are disabled (STARPU_DISABLE_ASYNCHRONOUS_COPY, and the
 * _CUDA_, _OPENCL_, _MIC_, _MPI_MS_ variants, read at each call). Main memory is the only
 * memory node here, so no copy between nodes happens either way. */
int starpu_asynchronous_copy_disabled(void);
int starpu_asynchronous_cuda_copy_disabled(void);
int starpu_asynchronous_opencl_copy_disabled(void);
int starpu_asynchronous_mic_copy_disabled(void);
int starpu_asynchronous_mpi_ms_copy_disabled(void);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_H */
