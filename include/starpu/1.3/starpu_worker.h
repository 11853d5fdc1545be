/* StarPU 1.3 API on MPC: worker queries. Workers are user-level threads on MPC's virtual
 * processors, one per VP by default (STARPU_NCPU / MPC_TG_NCPU). */
#ifndef MPC_STARPU_WORKER_H
#define MPC_STARPU_WORKER_H

#include <stddef.h>
#include <stdio.h>

#include "starpu_config.h"

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

/** The workers of a scheduling context (starpu_sched_ctx_get_worker_collection()): walk it with
 * init_iterator, has_next and get_next. Both types are a list of every worker in id order here
 * (one context, no hierarchy of workers to follow); add and remove are refused (-1). */
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
/** "CPU <id>" (with the VP it runs on), truncated to maxlen. */
void starpu_worker_get_name(int id, char *dst, size_t maxlen);
/** Prints on output the number of workers of the given type and their names (nothing useful for
 * a type without workers: "No ... worker"). */
void starpu_worker_display_names(FILE *output, enum starpu_worker_archtype type);

#ifdef __cplusplus
}
#endif

#endif /* MPC_STARPU_WORKER_H */
