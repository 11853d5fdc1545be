/* StarPU 1.3 API on MPC: worker queries. Workers are user-level threads on MPC's virtual
 * processors, one per VP by default (STARPU_NCPU / MPC_TG_NCPU). */
#ifndef MPC_STARPU_WORKER_H
#define MPC_STARPU_WORKER_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "starpu_config.h"

#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif
struct starpu_task;
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum starpu_worker_archtype {
    STARPU_CPU_WORKER = 0,
    STARPU_CUDA_WORKER = 1,
    STARPU_OPENCL_WORKER = 2,
    STARPU_MIC_WORKER = 3,    /* (no such worker here: count 0, as in a StarPU built without them) */
    STARPU_MPI_MS_WORKER = 5,
    STARPU_ANY_WORKER = 6
};

/** A cursor over a struct starpu_worker_collection (StarPU's layout). */
struct starpu_sched_ctx_iterator {
    int cursor;
    void *value;
    void *possible_value;
    char visited[STARPU_NMAXWORKERS];
    int possibly_parallel;
};

enum starpu_worker_collection_type {
    STARPU_WORKER_TREE,
    STARPU_WORKER_LIST
};

/** A set of workers. A scheduling context's (starpu_sched_ctx_get_worker_collection()) is every
 * worker in id order, of either type (one context, no hierarchy of workers to follow); its add
 * and remove are refused (-1). starpu_worker_list is one the application fills: copy its
 * methods into a collection, call init, then add (returns the worker, or -1 when already
 * there) and remove (the worker, or -1 when absent); deinit frees it. Walk any of them with
 * init_iterator, has_next and get_next; has_next returns 0 at the end and rewinds the cursor,
 * as StarPU's lists do. starpu_worker_tree is the same, kept in the machine's order (the
 * workers' PUs depth first in the topology), so that a walk visits neighbours in turn. */
struct starpu_worker_collection {
    int *workerids;
    void *collection_private;
    unsigned nworkers;
    void *unblocked_workers;
    unsigned nunblocked_workers;
    void *masters;
    unsigned nmasters;
    char present[STARPU_NMAXWORKERS];
    char is_unblocked[STARPU_NMAXWORKERS];
    char is_master[STARPU_NMAXWORKERS];
    enum starpu_worker_collection_type type;
    unsigned (*has_next)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it);
    int (*get_next)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it);
    int (*add)(struct starpu_worker_collection *workers, int worker);
    int (*remove)(struct starpu_worker_collection *workers, int worker);
    void (*init)(struct starpu_worker_collection *workers);
    void (*deinit)(struct starpu_worker_collection *workers);
    void (*init_iterator)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it);
    void (*init_iterator_for_parallel_tasks)(struct starpu_worker_collection *workers,
                                             struct starpu_sched_ctx_iterator *it, struct starpu_task *task);
};

extern struct starpu_worker_collection starpu_worker_list;
extern struct starpu_worker_collection starpu_worker_tree;

/** Kinds of memory node (StarPU's values); main memory (STARPU_CPU_RAM) is the only node. */
enum starpu_node_kind {
    STARPU_UNUSED = 0,
    STARPU_CPU_RAM = 1,
    STARPU_CUDA_RAM = 2,
    STARPU_OPENCL_RAM = 3,
    STARPU_DISK_RAM = 4,
    STARPU_MIC_RAM = 5,
    STARPU_MPI_MS_RAM = 6
};

/** Number of workers (all CPU workers). */
unsigned starpu_worker_get_count(void);
unsigned starpu_cpu_worker_get_count(void);
/** 0: no CUDA or OpenCL worker exists. */
unsigned starpu_cuda_worker_get_count(void);
unsigned starpu_opencl_worker_get_count(void);
int starpu_worker_get_count_by_type(enum starpu_worker_archtype type);
/** The calling worker's id, or -1 outside a worker. */
int starpu_worker_get_id(void);
/** starpu_worker_get_id() for a caller that must be a worker: stops the program otherwise. */
unsigned starpu_worker_get_id_check(void);
/** The memory node of a worker: STARPU_MAIN_RAM (0) for every worker. */
unsigned starpu_worker_get_memory_node(unsigned workerid);
/** A worker's relaxed state (StarPU lets a worker blocked on a lock be signalled meanwhile):
 * nothing to do here; the state reads 1. */
void starpu_worker_relax_on(void);
void starpu_worker_relax_off(void);
int starpu_worker_get_relax_state(void);
enum starpu_worker_archtype starpu_worker_get_type(int id);
/** MIC and MPI master-slave workers, MIC devices: none here (0). */
unsigned starpu_mic_worker_get_count(void);
unsigned starpu_mpi_ms_worker_get_count(void);
unsigned starpu_mic_device_get_count(void);
/** The ids of the workers of a type (STARPU_ANY_WORKER: all) into workerids, in id order;
 * returns how many, or (unsigned)-ERANGE when more than maxsize exist (the first maxsize
 * written), as StarPU does. */
unsigned starpu_worker_get_ids_by_type(enum starpu_worker_archtype type, int *workerids, unsigned maxsize);
/** The num-th worker of a type, or -1. */
int starpu_worker_get_by_type(enum starpu_worker_archtype type, int num);
/** The worker of a type driving device devid (a CPU worker's device id is its rank among the
 * CPU workers), or -1. */
int starpu_worker_get_by_devid(enum starpu_worker_archtype type, int devid);
/** A worker's device id (a CPU worker's: its rank among the CPU workers), or -1. */
int starpu_worker_get_devid(int id);
/** The distinct device ids of the workers of a type, at most num, into devids; returns how many. */
int starpu_worker_get_devids(enum starpu_worker_archtype type, int *devids, int num);
/** The binding unit of a worker: the VP it runs on (-1 for a bad worker). */
int starpu_worker_get_bindid(int workerid);
/** The scheduling contexts the worker is in, in a malloc'ed *sched_ctx (the caller frees it);
 * returns their number. */
unsigned starpu_worker_get_sched_ctx_list(int worker, unsigned **sched_ctx);
/** StarPU's older way for a policy to wake a worker: a mutex and a condition per worker. The
 * workers here do not wait on them (the runtime wakes a worker when its policy holds work for
 * it, see starpu_wake_worker_relax), so signalling the condition is harmless and not needed. */
void starpu_worker_get_sched_condition(int workerid, pthread_mutex_t **sched_mutex, pthread_cond_t **sched_cond);
/** A worker's scheduling mutex (the one of starpu_worker_get_sched_condition), for policies
 * that guard per-worker state with it. The runtime itself never holds it. trylock: 0 when
 * taken, else nonzero. _self: the calling worker's (a caller that is not a worker is stopped
 * with a message). */
void starpu_worker_lock(int workerid);
int starpu_worker_trylock(int workerid);
void starpu_worker_unlock(int workerid);
void starpu_worker_lock_self(void);
void starpu_worker_unlock_self(void);

/* Combined workers: groups of workers that run a parallel task together (codelet types
 * STARPU_SPMD and STARPU_FORKJOIN). Their ids follow the workers' (starpu_worker_get_count()
 * + i). The parallel policies (peager, pheft) make the default ones at starpu_init: all the
 * workers, each NUMA node's when there are several, then halves of each group down to
 * STARPU_MIN_WORKERSIZE (2), up to STARPU_MAX_WORKERSIZE; other policies make none. */
unsigned starpu_combined_worker_get_count(void);
unsigned starpu_worker_is_combined_worker(int id);
/** In a task's function: the combined worker running it (a worker's own id when it runs a task
 * alone; -1 outside workers). */
int starpu_combined_worker_get_id(void);
/** In a task's function: the number of workers running it (SPMD) or reserved for it
 * (fork-join); 1 for a task run by one worker. */
int starpu_combined_worker_get_size(void);
/** In an SPMD task's function: the caller's rank among the combined worker's members. */
int starpu_combined_worker_get_rank(void);
/** A new combined worker of these workers (the first is its master): its id, or -EINVAL. An
 * existing combination gives its id. */
int starpu_combined_worker_assign_workerid(int nworkers, int workerid_array[]);
/** Its size and members (an array of the runtime's, valid until starpu_shutdown); -EINVAL for
 * an id that is no combined worker. */
int starpu_combined_worker_get_description(int workerid, int *worker_size, int **combined_workerid);
/** Whether the (combined) worker may run the task: a combined worker needs a parallel codelet
 * whose max_parallelism is at least its size. */
int starpu_combined_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl);
/** Makes the default combined workers (above) if they are not made yet. */
void starpu_sched_find_all_worker_combinations(void);
/** A copy of the cpuset of the PU a worker's VP is pinned to (free it with hwloc_bitmap_free);
 * empty when the VPs are not pinned (MPC_SCHED_BIND=0) or for a bad worker. */
hwloc_cpuset_t starpu_worker_get_hwloc_cpuset(int workerid);
/** The hwloc object (a PU) of a worker's VP in starpu_get_hwloc_topology(), or NULL. */
hwloc_obj_t starpu_worker_get_hwloc_obj(int workerid);
/** "STARPU_CPU_WORKER", ... (StarPU's names). */
char *starpu_worker_get_type_as_string(enum starpu_worker_archtype type);
/** The workers bound to binding id (VP) bindid: their count, and in *workerids an array of
 * their ids that stays valid until starpu_shutdown (NULL and 0 for none). */
int starpu_bindid_get_workerids(int bindid, int **workerids);
/** The memory node of the calling worker: STARPU_MAIN_RAM. */
unsigned starpu_worker_get_local_memory_node(void);
/** One memory node (main memory). */
unsigned starpu_memory_nodes_get_count(void);
/** STARPU_CPU_RAM for node 0, STARPU_UNUSED for any other. */
enum starpu_node_kind starpu_node_get_kind(unsigned node);
/** NUMA memory nodes: one (main memory, device id 0; its OS node id is 0 here). */
int starpu_memory_nodes_get_numa_count(void);
/** A memory node's device id: 0 for main memory, -1 (logged) for another. */
int starpu_memory_node_get_devid(unsigned node);
/** The NUMA device id of OS NUMA node osid (0 for 0, else -1), and the reverse. */
int starpu_memory_nodes_numa_id_to_devid(int osid);
int starpu_memory_nodes_numa_devid_to_id(unsigned id);
/** "NUMA 0" for node 0 (as StarPU names main memory); returns snprintf's count, -1 for another node. */
int starpu_memory_node_get_name(unsigned node, char *name, size_t size);
/** "CPU <id>" (with the VP it runs on), truncated to maxlen. */
void starpu_worker_get_name(int id, char *dst, size_t maxlen);
/** Prints on output the number of workers of the given type and their names (nothing useful for
 * a type without workers: "No ... worker"). */
void starpu_worker_display_names(FILE *output, enum starpu_worker_archtype type);

#ifdef STARPU_WORKER_CALLBACKS
/** Replace starpu_conf::callback_worker_going_to_sleep / _waking_up while StarPU runs (NULL:
 * none): a worker calls them around each park, on its own thread; they must not block. */
void starpu_worker_set_going_to_sleep_callback(void (*callback)(unsigned workerid));
void starpu_worker_set_waking_up_callback(void (*callback)(unsigned workerid));
#endif

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_WORKER_H */
