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
#include "starpu_disk.h"
#include "starpu_stdlib.h"
#include "starpu_perfmodel.h"
#include "starpu_task.h"
#include "starpu_task_dep.h"
#include "starpu_task_util.h"
#include "starpu_worker.h"
#include "starpu_driver.h"
#include "starpu_scheduler.h"
#include "starpu_expert.h"
#include "starpu_sched_ctx.h"
#include "starpu_openmp.h"
#include "starpu_bound.h"
#include "starpu_task_list.h"
#include "starpu_task_bundle.h"
#include "starpu_profiling.h"
#include "starpu_hash.h"
#include "starpu_helper.h"
#include "starpu_rand.h"
#include "starpu_cuda.h"
#include "starpu_cublas.h"
#include "starpu_simgrid_wrap.h"

#ifdef __cplusplus
extern "C" {
#endif


/** Configuration of starpu_init(); set it up with starpu_conf_init(), which reads the STARPU_*
 * variables into it as StarPU does. The fields StarPU also takes from the environment
 * (STARPU_NCPU, STARPU_SCHED, STARPU_CALIBRATE, ..., and MPC_TG_NCPU, MPC_TG_SCHED,
 * MPC_TG_CALIBRATE, which win over them) are overridden by it at starpu_init() unless
 * precedence_over_environment_variables is set. StarPU 1.3.10's fields, in its order; only CPU
 * workers exist here, so the fields about devices are accepted and change nothing (a StarPU
 * built without those drivers ignores them too). */
struct starpu_conf {
    /** Set by starpu_conf_init(); starpu_init() refuses a configuration without it. */
    int magic;
    /** Tells StarPU that MPI will be initialised later: no effect (MPC's MPI is its own). */
    int will_use_mpi;
    /** Scheduling policy by name (see starpu_scheduler.h); STARPU_SCHED wins over it. */
    const char *sched_policy_name;
    /** The application's own policy: when set, it wins over every name. */
    struct starpu_sched_policy *sched_policy;
    /** Called with the context (0) while the heteroprio policy starts, to set up its buckets
     * with the starpu_heteroprio_set_* calls (starpu_heteroprio.h); other policies ignore it. */
    void (*sched_policy_init)(unsigned);
    /** When set, these fields win over the environment variables. */
    int precedence_over_environment_variables;
    /** CPU workers; -1 (default): one per VP. */
    int ncpus;
    /** CPUs (VPs) to leave to the application: that many fewer workers than ncpus, or than the
     * default; none left: starpu_init() fails with -ENODEV. Workers take the last VPs, so the
     * reserved ones are the first (VP 0 runs the program). STARPU_RESERVE_NCPU. -1: none. */
    int reserve_ncpus;
    /** GPU devices: none exist here; -1 (default) and 0 start CPU workers only (more: logged). */
    int ncuda;
    int nopencl;
    /** MIC and MPI master-slave devices: none exist here either (-1 default, 0 accepted). */
    int nmic;
    int nmpi_ms;
    /** When set, worker i runs on VP workers_bindid[i] (a logical CPU is a VP here: what
     * starpu_worker_get_bindid reports). STARPU_WORKERS_CPUID ("1 0", "0-3") wins unless
     * precedence_over_environment_variables; its list is used cyclically. A VP that does not
     * exist makes starpu_init() fail with -EINVAL (StarPU wraps or crashes). When starpu_init()
     * starts the engine, it makes enough VPs for the largest id, up to the allowed PUs. */
    unsigned use_explicit_workers_bindid;
    unsigned workers_bindid[STARPU_NMAXWORKERS];
    /** Device ids of the CUDA, OpenCL, MIC and MPI master-slave workers: no such worker here,
     * so they are accepted and unused. */
    unsigned use_explicit_workers_cuda_gpuid;
    unsigned workers_cuda_gpuid[STARPU_NMAXWORKERS];
    unsigned use_explicit_workers_opencl_gpuid;
    unsigned workers_opencl_gpuid[STARPU_NMAXWORKERS];
    unsigned use_explicit_workers_mic_deviceid;
    unsigned workers_mic_deviceid[STARPU_NMAXWORKERS];
    unsigned use_explicit_workers_mpi_ms_deviceid;
    unsigned workers_mpi_ms_deviceid[STARPU_NMAXWORKERS];
    /** STARPU_BUS_CALIBRATE: accepted; main memory is the only node, there is no bus to measure. */
    int bus_calibrate;
    /** Performance-model calibration, as STARPU_CALIBRATE (which wins unless
     * precedence_over_environment_variables): 0 until calibrated, 1 always, 2 from scratch;
     * -1: the default (0). */
    int calibrate;
    /** One parallel task at a time: no effect (no combined workers, so no parallel tasks). */
    int single_combined_worker;
    /** The MIC kernel: no MIC device; unused. */
    char *mic_sink_program_path;
    /** Disable asynchronous copies (all, or to CUDA, OpenCL, MIC, MPI master-slave devices):
     * reported by starpu_asynchronous_*copy_disabled(); there is no copy between memory nodes
     * here either way. */
    int disable_asynchronous_copy;
    int disable_asynchronous_cuda_copy;
    int disable_asynchronous_opencl_copy;
    int disable_asynchronous_mic_copy;
    int disable_asynchronous_mpi_ms_copy;
    /** CUDA devices to set up for OpenGL interoperation: no CUDA device; unused. */
    unsigned *cuda_opengl_interoperability;
    unsigned n_cuda_opengl_interoperability;
    /** CPU workers the application runs in threads of its own (starpu_driver.h): the runtime
     * starts no thread for them. */
    struct starpu_driver *not_launched_drivers;
    unsigned n_not_launched_drivers;
    /** FxT's buffer size in bytes (STARPU_TRACE_BUFFER_SIZE, in MiB): no FxT traces here
     * (MPC_TG_TRACE writes its own); unused. */
    uint64_t trace_buffer_size;
    /** The priority range starpu_sched_get_min/max_priority() and
     * starpu_sched_ctx_get_min/max_priority() report (STARPU_MIN_PRIO / STARPU_MAX_PRIO);
     * -1: the policy's (as in StarPU, -1 itself cannot be asked for). Policies order tasks by
     * their priority values either way. */
    int global_sched_ctx_min_priority;
    int global_sched_ctx_max_priority;
#ifdef STARPU_WORKER_CALLBACKS
    /** Called by a worker (on its VP) just before it parks for lack of work, and when it is
     * woken; must not block. Not called while paused (starpu_pause). */
    void (*callback_worker_going_to_sleep)(unsigned workerid);
    void (*callback_worker_waking_up)(unsigned workerid);
#endif
    /** StarPU catches SIGINT/SIGSEGV/SIGTRAP to flush its FxT trace: no FxT trace here, so no
     * handler is installed either way (STARPU_CATCH_SIGNALS). */
    int catch_signals;
    /** StarPU's driver polling backoff: MPC's idle workers spin for MPC_TG_SPIN_US and then
     * park instead; unused (STARPU_BACKOFF_MIN / STARPU_BACKOFF_MAX). */
    unsigned driver_spinning_backoff_min;
    unsigned driver_spinning_backoff_max;
};

/** Fills conf with StarPU's defaults, reading the STARPU_* variables StarPU reads there
 * (STARPU_NCPU, STARPU_RESERVE_NCPU, STARPU_CALIBRATE, STARPU_MIN_PRIO...). Returns 0. */
int starpu_conf_init(struct starpu_conf *conf);
/** Starts the runtime (and MPC's engine when the program is a plain executable). conf may be
 * NULL. Returns 0; -ENODEV when no worker is configured; -EINVAL for a bad configuration.
 * Calls nest: each needs a starpu_shutdown(). */
int starpu_init(struct starpu_conf *conf) STARPU_WARN_UNUSED_RESULT;
/** starpu_init(), ignoring the command line. */
int starpu_initialize(struct starpu_conf *user_conf, int *argc, char ***argv);
int starpu_is_initialized(void);
/** Blocks until a starpu_init() (of another thread) has finished. May block. */
void starpu_wait_initialized(void);
/** Waits for every task, then stops the workers (and the engine if starpu_init started it).
 * A pause still in force is lifted first (logged), else the wait would never end. */
void starpu_shutdown(void);

/** Workers stop taking tasks until the matching starpu_resume(): the tasks running finish,
 * submission goes on, a task taken by a worker after the pause waits in its hands. Pauses nest
 * (two pauses need two resumes); a resume without a pause is ignored (logged). Waiting for
 * tasks while paused waits until another thread resumes. Does not block. */
void starpu_pause(void);
void starpu_resume(void);

/** starpu_get_next_bindid() / starpu_bind_thread_on(): the thread will keep its CPU busy and
 * wants one of its own. */
#define STARPU_THREAD_ACTIVE (1 << 0)
/** A binding id (a VP: a kernel thread pinned to a core, as starpu_worker_get_bindid reports)
 * for an application thread: one listed in preferred (by core) that is free, or, for a thread
 * that is not STARPU_THREAD_ACTIVE, one already shared; else the next one that no worker and
 * no active thread holds (those starpu_conf::reserve_ncpus leaves); when none is left, the
 * first again (the application asked for overloading), as in StarPU. */
unsigned starpu_get_next_bindid(unsigned flags, unsigned *preferred, unsigned npreferred);
/** Binds the calling thread to binding id cpuid: a user-level thread (the program's main, a
 * rank) moves to that VP and stays there; a plain thread is pinned to the VP's PU. Returns 0,
 * or -1 with a warning when a worker or another thread (of another name) holds it already (the
 * binding is still made). cpuid < 0: nothing done, 0. */
int starpu_bind_thread_on(int cpuid, unsigned flags, const char *name);

/** Prints on f each worker with the VP (and the PU it is pinned to, when known) it runs on. */
void starpu_topology_print(FILE *f);
/** Whether asynchronous data copies are disabled: starpu_conf's disable_asynchronous_*copy
 * fields as starpu_init() took them (the STARPU_DISABLE_ASYNCHRONOUS_COPY variables winning
 * unless precedence_over_environment_variables); before any starpu_init(), the variables.
 * Main memory is the only memory node here, so no copy between nodes happens either way. */
int starpu_asynchronous_copy_disabled(void);
int starpu_asynchronous_cuda_copy_disabled(void);
int starpu_asynchronous_opencl_copy_disabled(void);
int starpu_asynchronous_mic_copy_disabled(void);
int starpu_asynchronous_mpi_ms_copy_disabled(void);

/** Prints on stderr the workers' profiling summary and the (empty) bus summary, as
 * starpu_profiling_worker_helper_display_summary() and
 * starpu_profiling_bus_helper_display_summary() do. */
void starpu_display_stats(void);

void starpu_get_version(int *major, int *minor, int *release);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_H */
