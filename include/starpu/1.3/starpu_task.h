/* StarPU 1.3 API on MPC: codelets and tasks.
 *
 * The structures keep StarPU's field names for what MPC implements; fields of features not
 * implemented yet (CUDA/OpenCL implementations,
 * scheduling contexts) are absent, so a program that sets them does not compile rather than
 * silently running without them. */
#ifndef MPC_STARPU_TASK_H
#define MPC_STARPU_TASK_H

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "starpu_config.h"
#include "starpu_data.h"
#include "starpu_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a codelet can run (StarPU's values). Only CPU workers exist: a codelet that can run
 * nowhere else makes starpu_task_submit() return -ENODEV, as with a StarPU without GPUs. */
#define STARPU_NOWHERE ((1ULL) << 0)
#define STARPU_CPU ((1ULL) << 1)
#define STARPU_CUDA ((1ULL) << 3)
#define STARPU_OPENCL ((1ULL) << 6)
#define STARPU_MIC ((1ULL) << 7)
#define STARPU_MPI_MS ((1ULL) << 9)

/** The memory node of main memory (the only one). */
#define STARPU_MAIN_RAM 0

/* A codelet's kind: sequential, or parallel on a combined worker (starpu_worker.h's
 * starpu_combined_worker_*): SPMD (every member runs the function; starpu_combined_worker_get_rank
 * and _get_size split the work) or fork-join (the master runs it, the others' CPUs are left to
 * the threads it starts). Parallel runs happen under the parallel policies (peager, pheft) or
 * when the task names a combined worker (execute_on_a_specific_worker); elsewhere a parallel
 * codelet runs on one worker, with a size of 1. */
enum starpu_codelet_type { STARPU_SEQ = 0, STARPU_SPMD, STARPU_FORKJOIN };

typedef void (*starpu_cpu_func_t)(void **, void *);
/* GPU implementations: accepted in a codelet, as by a StarPU built without CUDA or OpenCL, and
 * never run (no such worker exists); a codelet with no CPU implementation gets -ENODEV at
 * submission. */
typedef void (*starpu_cuda_func_t)(void **, void *);
typedef void (*starpu_opencl_func_t)(void **, void *);
/** starpu_codelet::cuda_flags / opencl_flags: the kernel is asynchronous (StarPU's value). */
#define STARPU_CUDA_ASYNC (1 << 0)
#define STARPU_OPENCL_ASYNC (1 << 0)
/** starpu_codelet::flags: run the codelet under SimGrid (StarPU's value; no effect here). */
#define STARPU_CODELET_SIMGRID_EXECUTE (1 << 0)

/** starpu_codelet::nodes values (StarPU's): the node of the worker running the task, a CPU
 * node, a slow node, a fast node. StarPU 1.3.10 refuses STARPU_SPECIFIC_NODE_FAST at
 * submission; so does MPC. */
#define STARPU_SPECIFIC_NODE_LOCAL (-1)
#define STARPU_SPECIFIC_NODE_CPU (-2)
#define STARPU_SPECIFIC_NODE_SLOW (-3)
#define STARPU_SPECIFIC_NODE_FAST (-4)
/** starpu_codelet::nbuffers: the number of buffers is given by each task (starpu_task::nbuffers). */
#define STARPU_VARIABLE_NBUFFERS (-1)

/** A task's state (starpu_task::status). */
enum starpu_task_status {
    STARPU_TASK_INIT,
#define STARPU_TASK_INIT 0
#define STARPU_TASK_INVALID STARPU_TASK_INIT
    STARPU_TASK_BLOCKED,
    STARPU_TASK_READY,
    STARPU_TASK_RUNNING,
    STARPU_TASK_FINISHED,
    STARPU_TASK_BLOCKED_ON_TAG,
    STARPU_TASK_BLOCKED_ON_TASK,
    STARPU_TASK_BLOCKED_ON_DATA,
    STARPU_TASK_STOPPED
};

/** starpu_task::type */
#define STARPU_TASK_TYPE_NORMAL 0
#define STARPU_TASK_TYPE_INTERNAL (1 << 0)
#define STARPU_TASK_TYPE_DATA_ACQUIRE (1 << 1)

struct starpu_perfmodel;
struct starpu_task;
struct starpu_profiling_task_info;

/** A tag: the name of a task's end (starpu_task_dep.h). */
typedef uint64_t starpu_tag_t;

/** Deprecated single-implementation fields (starpu_codelet::cpu_func...): this value says the
 * implementations are in the arrays instead. */
#define STARPU_MULTIPLE_CPU_IMPLEMENTATIONS ((starpu_cpu_func_t)-1)
#define STARPU_MULTIPLE_CUDA_IMPLEMENTATIONS ((starpu_cuda_func_t)-1)
#define STARPU_MULTIPLE_OPENCL_IMPLEMENTATIONS ((starpu_opencl_func_t)-1)

struct starpu_codelet {
    /** Where it can run (STARPU_CPU); 0: deduced from the implementations given. */
    uint32_t where;
    /** When set, a worker for which it returns 0 never gets the codelet's tasks (checked for
     * each worker at submission, implementation 0; -ENODEV when no worker can). */
    int (*can_execute)(unsigned workerid, struct starpu_task *task, unsigned nimpl);
    enum starpu_codelet_type type;
    /** For parallel (SPMD/fork-join) codelets: the largest combined worker to use (0 or 1:
     * none). */
    int max_parallelism;
    /** Deprecated (StarPU 1.0): the implementation when cpu_funcs[0] is NULL (CUDA and OpenCL
     * ones never run here). */
    starpu_cpu_func_t cpu_func STARPU_DEPRECATED;
    starpu_cuda_func_t cuda_func STARPU_DEPRECATED;
    starpu_opencl_func_t opencl_func STARPU_DEPRECATED;
    /** CPU implementations (cpu_funcs[0] is needed; more: the worker picks one for each run, see
     * starpu_task_set_implementation). */
    starpu_cpu_func_t cpu_funcs[STARPU_MAXIMPLEMENTATIONS];
    /** Names of the CPU implementations (informative). */
    const char *cpu_funcs_name[STARPU_MAXIMPLEMENTATIONS];
    /** CUDA and OpenCL implementations and their flags: kept, never run (see above). */
    starpu_cuda_func_t cuda_funcs[STARPU_MAXIMPLEMENTATIONS];
    char cuda_flags[STARPU_MAXIMPLEMENTATIONS];
    starpu_opencl_func_t opencl_funcs[STARPU_MAXIMPLEMENTATIONS];
    char opencl_flags[STARPU_MAXIMPLEMENTATIONS];
    /** Number of buffers of each task, or STARPU_VARIABLE_NBUFFERS. */
    int nbuffers;
    /** Access modes of the buffers (beyond STARPU_NMAXBUFS: dyn_modes). */
    enum starpu_data_access_mode modes[STARPU_NMAXBUFS];
    enum starpu_data_access_mode *dyn_modes;
    /** 1: buffer i's memory node is nodes[i] (dyn_nodes[i] when set): STARPU_MAIN_RAM or a
     * STARPU_SPECIFIC_NODE_* value, all main memory here (the only node); any other node
     * makes starpu_task_submit() return -EINVAL, with the reason logged. */
    unsigned specific_nodes;
    int nodes[STARPU_NMAXBUFS];
    int *dyn_nodes;
    /** Performance model (starpu_perfmodel.h): calibrated from the runs, used by dm/dmda/dmdas. */
    struct starpu_perfmodel *model;
    /** Energy model (fed by the application with starpu_perfmodel_update_history). */
    struct starpu_perfmodel *energy_model;
    /** Tasks of the codelet each worker has run (counted as they end). */
    unsigned long per_worker_stats[STARPU_NMAXWORKERS];
    const char *name;
    /** Colour of the codelet's tasks in traces (0: none), and StarPU's codelet flags. */
    unsigned color;
    /** Called at a task's end when the task has no callback_func of its own, with the task's
     * callback_arg (StarPU's rule). */
    void (*callback_func)(void *);
    int flags;
    /** Set once the deprecated cpu_func has been folded into cpu_funcs (first submission). */
    int checked;
};

struct starpu_task {
    const char *name;
    struct starpu_codelet *cl;
    /** Where the task may run (STARPU_CPU...); -1: the codelet's where. Without STARPU_CPU the
     * submission returns -ENODEV (CPU workers are the only ones). */
    int32_t where;
    /** Buffers of the task when the codelet has STARPU_VARIABLE_NBUFFERS. */
    int nbuffers;
    /** Handles and modes beyond STARPU_NMAXBUFS (malloc'ed; freed by starpu_task_clean()). */
    starpu_data_handle_t *dyn_handles;
    enum starpu_data_access_mode *dyn_modes;
    starpu_data_handle_t handles[STARPU_NMAXBUFS];
    /** Per-task modes, used when the codelet has STARPU_VARIABLE_NBUFFERS. */
    enum starpu_data_access_mode modes[STARPU_NMAXBUFS];
    /** Per buffer: 0 when the task takes no inferred dependency on it (NULL: the handles' flags). */
    unsigned char *handles_sequential_consistency;
    void *cl_arg;
    size_t cl_arg_size;
    /** Runs on the worker once the task has run, before starpu_task_wait() returns. */
    void (*callback_func)(void *);
    void *callback_arg;
    /** Runs in starpu_task_submit(), before the task can start. */
    void (*prologue_callback_func)(void *);
    void *prologue_callback_arg;
    /** Runs on the worker that took the task, just before its codelet. */
    void (*prologue_callback_pop_func)(void *);
    void *prologue_callback_pop_arg;
    /** With use_tag, the task carries tag_id: the tag is done when the task ends. */
    starpu_tag_t tag_id;
    /** free() cl_arg / callback_arg when the task is destroyed. */
    unsigned cl_arg_free : 1;
    unsigned callback_arg_free : 1;
    unsigned prologue_callback_arg_free : 1;
    unsigned prologue_callback_pop_arg_free : 1;
    unsigned use_tag : 1;
    /** 0: the task takes no inferred dependency on its data. */
    unsigned sequential_consistency : 1;
    /** starpu_task_submit() returns once the task has finished. */
    unsigned synchronous : 1;
    /** 1: nobody waits for the task with starpu_task_wait(). */
    unsigned detach : 1;
    /** 1: freed automatically once finished (detached) or waited for. */
    unsigned destroy : 1;
    /** 1: submitted again automatically once it has ended (after its callback, which may clear
     * the flag); must not be set together with destroy. */
    unsigned regenerate : 1;
    /** 1: only worker `workerid` runs the task. */
    unsigned execute_on_a_specific_worker : 1;
    /** No submission-order number (STARPU_TASK_NO_SUBMITORDER): accepted; tasks carry none here. */
    unsigned no_submitorder : 1;
    /** StarPU's conversion flag for multiformat handles: never set (CPU workers only, no conversion). */
    unsigned char mf_skip;
    /** StarPU sets it when a policy has taken the task; not kept here (0). */
    unsigned char scheduled;
    unsigned workerid;
    /** With execute_on_a_specific_worker, the task's place (1, 2, ...) in the order in which
     * that worker runs such tasks, whatever their submission order: the task of order k + 1
     * starts once the one of order k has run (0: no order). Orders count from 1 for the
     * whole run, as in StarPU. */
    unsigned workerorder;
    /** With workerids_len != 0: a bitmap (32 workers per element) of the workers that may run
     * the task (workerid, when set, takes precedence). */
    uint32_t *workerids;
    unsigned workerids_len;
    int priority;
    /** The task's state: STARPU_TASK_INIT until submitted, then BLOCKED (waiting for its
     * dependencies), READY, RUNNING and FINISHED as the runtime moves it on. */
    enum starpu_task_status status;
    int magic;
    /** STARPU_TASK_TYPE_NORMAL for the program's tasks. */
    unsigned type;
    /** The scheduling context the task is submitted to (starpu_sched_ctx.h); STARPU_NMAX_SCHED_CTXS
     * (the default): the submitting thread's context (starpu_sched_ctx_set_context), else 0. The
     * submission sets it to the context chosen. */
    unsigned sched_ctx;
    /** For StarPU's hypervisor, which does not exist here: accepted, unused. */
    int hypervisor_tag;
    /** For parallel tasks, which do not exist here: accepted, unused. */
    unsigned possibly_parallel;
    /** Free for the scheduling policy; the userchoice component pushes the task to its child
     * number (uintptr_t)sched_data. */
    void *sched_data;
    /** Links of a struct starpu_task_list (starpu_task_list.h): free for the scheduling policy
     * while it holds the task. */
    struct starpu_task *prev;
    struct starpu_task *next;
    /** Expected duration and data-transfer time in µs, written by scheduling components
     * (starpu_sched_component.h) when they place the task; NAN when unknown. */
    double predicted;
    double predicted_transfer;
    double predicted_start;
    /** 1 once a scheduler asked for the task's data to be prefetched (nothing to fetch here). */
    unsigned char prefetched;
    /** Colour in traces (0: the codelet's); floating-point operations of the task (informative). */
    unsigned color;
    double flops;
    /** Dates of the task's last profiled run (starpu_profiling.h): made at its submission while
     * profiling is enabled, freed by starpu_task_clean/destroy. */
    struct starpu_profiling_task_info *profiling_info;
    /** StarPU's own record of the buffers' interfaces during a run: not filled here (the
     * codelet gets them as its first argument). */
    void **dyn_interfaces;
    void *interfaces[STARPU_NMAXBUFS];
    /** StarPU's count of end calls still needed: 0 here (end dependencies are the runtime's). */
    unsigned nb_termination_call_required;
    /** The bundle holding the task (starpu_task_bundle.h), or NULL. */
    struct mpc_starpu_task_bundle *bundle;
    /** The runtime's record of the task. */
    void *starpu_private;
};

#define STARPU_TASK_INITIALIZER                                                                              \
    {                                                                                                        \
        .name = NULL, .cl = NULL, .where = -1, .nbuffers = 0, .dyn_handles = NULL, .dyn_modes = NULL, .cl_arg = NULL,    \
        .cl_arg_size = 0, .callback_func = NULL, .callback_arg = NULL, .cl_arg_free = 0,                    \
        .callback_arg_free = 0, .use_tag = 0, .sequential_consistency = 1, .synchronous = 0, .detach = 1,          \
        .destroy = 0, .execute_on_a_specific_worker = 0, .workerid = 0, .priority = 0, .magic = 42,               \
        .sched_ctx = STARPU_NMAX_SCHED_CTXS,                                                                 \
        .predicted = NAN, .predicted_transfer = NAN, .predicted_start = NAN, .prefetched = 0,                \
        .starpu_private = NULL                                                                               \
    }

#define STARPU_TASK_GET_NBUFFERS(task) \
    ((unsigned)((task)->cl->nbuffers == STARPU_VARIABLE_NBUFFERS ? ((task)->nbuffers) : ((task)->cl->nbuffers)))
#define STARPU_TASK_GET_HANDLE(task, i) (((task)->dyn_handles) ? (task)->dyn_handles[i] : (task)->handles[i])
#define STARPU_TASK_GET_HANDLES(task) (((task)->dyn_handles) ? (task)->dyn_handles : (task)->handles)
#define STARPU_TASK_SET_HANDLE(task, handle, i)     \
    do {                                            \
        if ((task)->dyn_handles)                    \
            (task)->dyn_handles[i] = handle;        \
        else                                        \
            (task)->handles[i] = handle;            \
    } while (0)
#define STARPU_CODELET_GET_MODE(codelet, i) \
    (((codelet)->dyn_modes) ? (codelet)->dyn_modes[i] : (assert((i) < STARPU_NMAXBUFS), (codelet)->modes[i]))
#define STARPU_CODELET_SET_MODE(codelet, mode, i)   \
    do {                                            \
        if ((codelet)->dyn_modes)                   \
            (codelet)->dyn_modes[i] = mode;         \
        else                                        \
            (codelet)->modes[i] = mode;             \
    } while (0)
#define STARPU_CODELET_GET_NODE(codelet, i) (((codelet)->dyn_nodes) ? (codelet)->dyn_nodes[i] : (codelet)->nodes[i])
#define STARPU_CODELET_SET_NODE(codelet, __node, i) \
    do {                                            \
        if ((codelet)->dyn_nodes)                   \
            (codelet)->dyn_nodes[i] = __node;       \
        else                                        \
            (codelet)->nodes[i] = __node;           \
    } while (0)
#define STARPU_TASK_GET_MODE(task, i)                                                              \
    ((task)->cl->nbuffers == STARPU_VARIABLE_NBUFFERS || (task)->dyn_modes                          \
         ? (((task)->dyn_modes) ? (task)->dyn_modes[i] : (task)->modes[i])                          \
         : STARPU_CODELET_GET_MODE((task)->cl, i))
#define STARPU_TASK_SET_MODE(task, mode, i)                                                             \
    do {                                                                                                \
        if ((task)->cl->nbuffers == STARPU_VARIABLE_NBUFFERS || (task)->cl->nbuffers > STARPU_NMAXBUFS) \
            if ((task)->dyn_modes)                                                                      \
                (task)->dyn_modes[i] = mode;                                                            \
            else                                                                                        \
                (task)->modes[i] = mode;                                                                \
        else                                                                                            \
            STARPU_CODELET_SET_MODE((task)->cl, mode, i);                                               \
    } while (0)

/** Zeroes a codelet. */
void starpu_codelet_init(struct starpu_codelet *cl);

/** Sets a task structure to the defaults of STARPU_TASK_INITIALIZER. */
void starpu_task_init(struct starpu_task *task);
/** Releases what the runtime holds for the task (and dyn_handles/dyn_modes), keeping the
 * structure: it may be submitted again. Call once the task has finished. */
void starpu_task_clean(struct starpu_task *task);
/** A new task with the defaults and destroy = 1. */
struct starpu_task *starpu_task_create(void) STARPU_ATTRIBUTE_MALLOC;
/** The task whose codelet or callback the calling worker runs; NULL elsewhere. */
struct starpu_task *starpu_task_get_current(void);
/** A codelet with several CPU implementations (cpu_funcs[1...]): the worker running the task
 * picks one just before the run: the one set here (by a policy, after submission), else, with
 * a performance model, the one with the lowest expected length on that worker (an
 * implementation not calibrated yet first, so that it gets calibrated: models keep each
 * implementation apart), else the first one can_execute allows, as StarPU's drivers do. */
void starpu_task_set_implementation(struct starpu_task *task, unsigned impl);
/** The implementation set for the task, or the one its last run used (0 before any). */
unsigned starpu_task_get_implementation(struct starpu_task *task);
/** The memory node of buffer i of the task the calling worker runs: STARPU_MAIN_RAM. */
unsigned starpu_task_get_current_data_node(unsigned i);
/** Frees a task made by starpu_task_create() (after starpu_task_clean()). */
void starpu_task_destroy(struct starpu_task *task);
/** A new task (starpu_task_create's pool) with task's fields: its dyn_handles/dyn_modes
 * copied, its arguments shared but not owned (cl_arg_free, callback_arg_free 0: the original
 * frees them), no runtime record and no profiling record. NULL on no memory. */
struct starpu_task *starpu_task_dup(struct starpu_task *task);
/** The task's name, else its performance model's symbol, else its codelet's name (NULL for no
 * task); starpu_task_get_model_name: the model's symbol, else the codelet's name. */
const char *starpu_task_get_name(struct starpu_task *task);
const char *starpu_task_get_model_name(struct starpu_task *task);
/** Iteration numbers for tracing tools (nested push/pop around a submission loop): accepted
 * and unused (MPC's traces carry no iteration numbers). */
void starpu_iteration_push(unsigned long iteration);
void starpu_iteration_pop(void);
/** Submits the task; it runs once its dependencies are met. Returns 0, -ENODEV when no worker
 * can run its codelet, -EINVAL for a malformed task (the reason is logged), -ENOMEM when its
 * scratch or redux memory does not fit under STARPU_LIMIT_CPU_MEM and cannot come free. With
 * STARPU_LIMIT_MAX_SUBMITTED_TASKS set, it first waits while that many tasks are in flight,
 * until STARPU_LIMIT_MIN_SUBMITTED_TASKS are. A synchronous task
 * has finished when it returns. */
int starpu_task_submit(struct starpu_task *task) STARPU_WARN_UNUSED_RESULT;
/** Waits for a task submitted with detach = 0 (destroying it if destroy = 1). Returns 0,
 * -EINVAL for a detached task, -EDEADLK from inside a task. */
int starpu_task_wait(struct starpu_task *task) STARPU_WARN_UNUSED_RESULT;
int starpu_task_wait_array(struct starpu_task **tasks, unsigned nb_tasks) STARPU_WARN_UNUSED_RESULT;
/** Submits the task to scheduling context sched_ctx_id (starpu_sched_ctx.h). */
int starpu_task_submit_to_ctx(struct starpu_task *task, unsigned sched_ctx_id) STARPU_WARN_UNUSED_RESULT;
/** Waits until every submitted task has finished; when the thread has set a scheduling
 * context (starpu_sched_ctx_set_context), the tasks of that context. Returns 0, or -EDEADLK
 * from a task. */
int starpu_task_wait_for_all(void);
/** Waits until at most n submitted tasks (of the thread's context, when it set one) have not
 * finished: keeps a submission loop's tasks in flight bounded. Returns 0, or -EDEADLK from a
 * task. */
int starpu_task_wait_for_n_submitted(unsigned n);
/** The same for the tasks of context sched_ctx_id. */
int starpu_task_wait_for_all_in_ctx(unsigned sched_ctx_id);
int starpu_task_wait_for_n_submitted_in_ctx(unsigned sched_ctx_id, unsigned n);
/** 1 when the (non-detached) task has finished, 0 otherwise. */
int starpu_task_finished(struct starpu_task *task) STARPU_WARN_UNUSED_RESULT;
/** Tasks submitted and not finished. */
int starpu_task_nsubmitted(void);
/** Tasks whose dependencies are met, queued or running, and not finished (not counting
 * acquisitions and tasks with nothing to run). */
int starpu_task_nready(void);
/** The watchdog: with STARPU_WATCHDOG_TIMEOUT (microseconds; MPC_TG_WATCHDOG_TIMEOUT wins)
 * set, when tasks are in flight and none ended for that long, StarPU calls hook(hook_arg) from
 * a thread of its own, or without a hook logs a warning (with how many tasks are in flight and
 * ready, and how many workers sleep); STARPU_WATCHDOG_CRASH=1 then aborts the program, and
 * STARPU_WATCHDOG_DELAY (microseconds) delays its first look. NULL: the warning again. */
void starpu_task_watchdog_set_hook(void (*hook)(void *), void *hook_arg);
/** Waits until starpu_task_nready() is 0; -EDEADLK from a task or callback. */
int starpu_task_wait_for_no_ready(void);
/** Submits a task without codelet whose callback calls callback(callback_arg). */
void starpu_create_callback_task(void (*callback)(void *), void *callback_arg);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_TASK_H */
